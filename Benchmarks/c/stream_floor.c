/*
 * stream_floor: the floor of workload 4 (live streams), the least a server can spend to
 * deliver the frames motion-server delivers.
 *
 * One thread, epoll. Accepts any number of connections; each sends a request like
 * `POST /v1/streams?speed=1` (any target, any body; the body's "fps" and "duration" are read
 * when present, default 60 and 1). The answer is motion-server's: the same status line and
 * headers, then chunked NDJSON with the same lines (`{"frame":k,"time":t,"values":{"x":v}}`
 * for a linear 0 -> 320 tween, numbers in their shortest round-trip form; the started and
 * completed events and the end line with the first and last frames), so every frame has the
 * size of motion-server's. Frames are written on one clock of ticks at -f fps (60): a
 * stream starts at the next tick, and at every tick each stream gets its next frame as one
 * chunk written with one `send` (when the loop falls behind on a busy machine, the frames of
 * the ticks it missed go together in one chunk and one send, as motion-server does). The frame
 * lines of one (duration, fps) are formatted once and copied from then on (the numbers'
 * formatting was 97 % of the floor's own instructions). Nothing else happens per frame: no encoder, no suspend or
 * resume, no per-stream timer. That is the floor: the kernel's cost of sending the frame
 * plus a loop over the streams.
 *
 * Sessions: `POST /v1/sessions` (any query) creates a session: its clock starts at the next
 * tick, with the body's fps and duration; the answer is a 201 with `{"id":"fN",...}` and
 * `Connection: close`. `GET /v1/sessions/ID/frames` watches it like a stream: the head of a
 * stream, then from the next tick the session's frame of each tick (the frame lines of a
 * stream, the completed event on the last one) and the end line
 * `{"end":true,"session":ID,"state":"completed","time":D}`, as motion-server's watchers
 * write them. Sessions are never freed (at most MAX_SESSIONS; then 503).
 *
 * The streams workload of run.sh runs it beside motion-server, measured by the same
 * stream_load, and reports server CPU per delivered frame of each and their ratio.
 *
 * Usage: stream_floor [-h 127.0.0.1] [-p PORT]   (port 0: ephemeral; prints its address as
 *        "listening on http://HOST:PORT" like motion-server)
 * Build: gcc -O2 -o stream_floor stream_floor.c -lm   (run.sh does this)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MAX_STREAMS = 65536, REQUEST_MAX = 8192, OUT_MAX = 65536, MAX_BATCH = 64, MAX_SESSIONS = 65536 };

/* A session: a clock that starts at a tick, with its frames. */
struct session {
    double fps, duration;
    long frames;
    uint64_t start_tick;
};
static struct session sessions[MAX_SESSIONS];
static long session_count;

struct stream {
    int fd;
    int reading;            /* still reading the request */
    char request[REQUEST_MAX];
    size_t request_len;
    double fps, duration;
    long frames, next;      /* frames in all; the next one to send */
    uint64_t start_tick;    /* the tick of frame 0 */
    char out[OUT_MAX];      /* bytes a full socket did not take (rare on loopback) */
    size_t out_len;
    int finished;           /* the last chunk is queued; close once out is empty */
    long session;           /* the session watched, or -1 for a stream */
};

static struct stream *streams[MAX_STREAMS];
static long active_streams;
static int max_fd;  /* the highest descriptor a stream has had */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The shortest %.Ng that reads back as the same double (Swift's description gives the same
 * digits for these values; what matters here is the length). */
static int shortest(char *out, size_t size, double value) {
    if (value == 0) return snprintf(out, size, "0");
    if (value == floor(value) && fabs(value) < 1e15) return snprintf(out, size, "%.0f", value);
    for (int precision = 1; precision <= 17; precision++) {
        int n = snprintf(out, size, "%.*g", precision, value);
        if (strtod(out, NULL) == value) {
            /* Swift writes 320.0 as 320 and 1e-05 as 1e-05; %g agrees for these. */
            return n;
        }
    }
    return snprintf(out, size, "%.17g", value);
}

/* Frames of a window of `duration` at `fps` (k/fps while more than 1 us before the end,
 * plus the end itself), as the service samples. */
static long frame_count(double duration, double fps) {
    double limit = duration - 1e-6;
    long k = 0;
    while ((double)k / fps < limit && k < 100000000) k++;
    return k + 1;
}

static double frame_time(const struct stream *s, long k) {
    return k == s->frames - 1 ? s->duration : (double)k / s->fps;
}

static void close_stream(int epoll_fd, struct stream *s) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    streams[s->fd] = NULL;
    free(s);
    active_streams--;
}

static int epoll_fd;

/* Asks for EPOLLOUT only while bytes wait (else every ACK would wake the loop). */
static void want_write(struct stream *s, int on) {
    struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0), .data.fd = s->fd };
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, s->fd, &ev);
}

/* Writes what is queued; returns -1 when the peer is gone. */
static int flush_out(struct stream *s) {
    while (s->out_len > 0) {
        ssize_t w = send(s->fd, s->out, s->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
        memmove(s->out, s->out + w, s->out_len - (size_t)w);
        s->out_len -= (size_t)w;
    }
    want_write(s, 0);
    return 0;
}

/* Sends `data` with one send; keeps what the socket did not take. Returns -1 when the
 * peer is gone. */
static int send_bytes(struct stream *s, const char *data, size_t n) {
    if (s->out_len == 0) {
        ssize_t w = send(s->fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
            w = 0;
        }
        data += w;
        n -= (size_t)w;
    }
    if (n == 0) return 0;
    if (s->out_len + n > sizeof s->out) return -1;  /* a reader this far behind is dropped */
    if (s->out_len == 0) want_write(s, 1);
    memcpy(s->out + s->out_len, data, n);
    s->out_len += n;
    return 0;
}

/* The frame lines of one (duration, fps), formatted once: the floor spends nothing per frame
 * on numbers (formatting them with snprintf/strtod per frame cost about 75,000 instructions a
 * frame under callgrind, 97 % of the floor's own work, and made it no floor at all). */
enum { MAX_TABLES = 16, MAX_TABLE_FRAMES = 1000000 };
struct line_table {
    double duration, fps;
    long frames;
    char **lines;
    unsigned short *lengths;
};
static struct line_table tables[MAX_TABLES];
static int table_count;

static const struct line_table *line_table_for(const struct stream *s) {
    for (int i = 0; i < table_count; i++)
        if (tables[i].duration == s->duration && tables[i].fps == s->fps && tables[i].frames == s->frames) return &tables[i];
    if (table_count == MAX_TABLES || s->frames > MAX_TABLE_FRAMES) return NULL;
    struct line_table *table = &tables[table_count];
    table->lines = calloc((size_t)s->frames, sizeof *table->lines);
    table->lengths = calloc((size_t)s->frames, sizeof *table->lengths);
    if (!table->lines || !table->lengths) { free(table->lines); free(table->lengths); return NULL; }
    for (long k = 0; k < s->frames; k++) {
        char number[64], value[64], line[256];
        double t = frame_time(s, k);
        shortest(number, sizeof number, t);
        shortest(value, sizeof value, 320.0 * (t / s->duration));
        int n = snprintf(line, sizeof line, "{\"frame\":%ld,\"time\":%s,\"values\":{\"x\":%s}}\n", k, number, value);
        table->lines[k] = strdup(line);
        table->lengths[k] = (unsigned short)n;
        if (!table->lines[k]) return NULL;  /* out of memory: formatted per frame from here on */
    }
    table->duration = s->duration;
    table->fps = s->fps;
    table->frames = s->frames;
    table_count++;
    return table;
}

/* Appends frame k's line (with the started event, or the completed event and the end line,
 * on the first and last frames) to line; returns its length. */
static size_t frame_line(const struct stream *s, long k, char *line, size_t size) {
    char number[64];
    size_t len = 0;
    const struct line_table *table = line_table_for(s);
    if (table && table->lengths[k] < size) {
        memcpy(line, table->lines[k], table->lengths[k]);
        len = table->lengths[k];
    } else {
        double t = frame_time(s, k);
        double x = 320.0 * (t / s->duration);
        char value[64];
        shortest(number, sizeof number, t);
        shortest(value, sizeof value, x);
        len += (size_t)snprintf(line + len, size - len, "{\"frame\":%ld,\"time\":%s,\"values\":{\"x\":%s}}\n",
                                k, number, value);
    }
    if (k == 0 && s->session < 0)
        len += (size_t)snprintf(line + len, size - len,
                                "{\"event\":\"started\",\"time\":0,\"frame\":0,\"motion\":\"/motion\"}\n");
    if (k == s->frames - 1 && s->session >= 0) {
        char d[64];
        shortest(d, sizeof d, s->duration);
        len += (size_t)snprintf(line + len, size - len,
                                "{\"event\":\"completed\",\"time\":%s,\"frame\":%ld,\"motion\":\"/motion\"}\n"
                                "{\"end\":true,\"session\":\"f%ld\",\"state\":\"completed\",\"time\":%s}\n",
                                d, k, s->session, d);
    } else if (k == s->frames - 1) {
        char d[64];
        shortest(d, sizeof d, s->duration);
        len += (size_t)snprintf(line + len, size - len,
                                "{\"event\":\"completed\",\"time\":%s,\"frame\":%ld,\"motion\":\"/motion\"}\n"
                                "{\"end\":true,\"frames\":%ld,\"duration\":%s}\n", d, k, s->frames, d);
    }
    return len;
}

/* Frames next..last as one chunk (one frame when the loop keeps up; the frames of the ticks
 * it missed when it falls behind, as motion-server does), with one send. */
static int send_frames(struct stream *s, long last) {
    static char lines[MAX_BATCH * 512], chunk[MAX_BATCH * 512 + 32];
    size_t len = 0;
    for (long k = s->next; k <= last; k++) len += frame_line(s, k, lines + len, sizeof lines - len);
    int n = snprintf(chunk, sizeof chunk, "%zX\r\n", len);
    memcpy(chunk + n, lines, len);
    n += (int)len;
    n += snprintf(chunk + n, sizeof chunk - (size_t)n, "\r\n%s", last == s->frames - 1 ? "0\r\n\r\n" : "");
    return send_bytes(s, chunk, (size_t)n);
}

static double body_number(const char *body, const char *key, double fallback) {
    const char *p = strstr(body, key);
    if (!p) return fallback;
    double v = strtod(p + strlen(key), NULL);
    return v > 0 && isfinite(v) ? v : fallback;
}

/* Reads the request; once it is whole, sends the head and schedules the stream. Returns -1
 * when the connection is to be closed. */
static int read_request(struct stream *s, uint64_t next_tick, double tick_fps) {
    for (;;) {
        if (s->request_len + 1 >= sizeof s->request) return -1;
        ssize_t r = recv(s->fd, s->request + s->request_len, sizeof s->request - 1 - s->request_len, MSG_DONTWAIT);
        if (r == 0) return -1;
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            return -1;
        }
        s->request_len += (size_t)r;
    }
    s->request[s->request_len] = 0;
    char *end = strstr(s->request, "\r\n\r\n");
    if (!end) return 0;
    long content_length = 0;
    for (char *p = s->request; p < end; p++) {
        if ((p == s->request || p[-1] == '\n') && strncasecmp(p, "content-length:", 15) == 0) {
            content_length = strtol(p + 15, NULL, 10);
        }
    }
    char *body = end + 4;
    if ((long)(s->request + s->request_len - body) < content_length) return 0;
    s->reading = 0;
    char date[64], head[512];
    time_t wall = time(NULL);
    struct tm tm;
    gmtime_r(&wall, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    s->session = -1;
    if (strncmp(s->request, "POST /v1/sessions", 17) == 0) {
        /* A new session: answered, then the connection closes. */
        s->finished = 1;
        if (session_count == MAX_SESSIONS) {
            int n = snprintf(head, sizeof head, "HTTP/1.1 503 Service Unavailable\r\nDate: %s\r\nContent-Length: 0\r\n"
                             "Connection: close\r\n\r\n", date);
            return send_bytes(s, head, (size_t)n);
        }
        struct session *session = &sessions[session_count];
        session->fps = tick_fps;  /* the floor runs one clock */
        session->duration = body_number(body, "\"duration\":", 1);
        session->frames = frame_count(session->duration, session->fps);
        session->start_tick = next_tick;
        char json[256];
        int json_len = snprintf(json, sizeof json,
                                "{\"id\":\"f%ld\",\"state\":\"running\",\"time\":0,\"frames\":\"/v1/sessions/f%ld/frames\"}",
                                session_count, session_count);
        int n = snprintf(head, sizeof head, "HTTP/1.1 201 Created\r\nDate: %s\r\nContent-Type: application/json\r\n"
                         "Location: /v1/sessions/f%ld\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
                         date, session_count, json_len, json);
        session_count++;
        return send_bytes(s, head, (size_t)n);
    }
    if (strncmp(s->request, "GET /v1/sessions/f", 18) == 0) {
        /* A watcher: the session's frames from the next tick on. */
        char *number_end;
        long index = strtol(s->request + 18, &number_end, 10);
        if (index < 0 || index >= session_count || strncmp(number_end, "/frames", 7) != 0) {
            s->finished = 1;
            int n = snprintf(head, sizeof head, "HTTP/1.1 404 Not Found\r\nDate: %s\r\nContent-Length: 0\r\n"
                             "Connection: close\r\n\r\n", date);
            return send_bytes(s, head, (size_t)n);
        }
        const struct session *session = &sessions[index];
        s->session = index;
        s->fps = session->fps;
        s->duration = session->duration;
        s->frames = session->frames;
        s->start_tick = session->start_tick;
        long joined = next_tick > session->start_tick ? (long)(next_tick - session->start_tick) : 0;
        s->next = joined < s->frames ? joined : s->frames - 1;
        /* Frame `next` goes out at the next tick, as for a stream. */
        s->start_tick = next_tick - (uint64_t)s->next;
    } else {
        s->fps = body_number(body, "\"fps\":", 60);
        s->duration = body_number(body, "\"duration\":", 1);
        if (s->fps != tick_fps) s->fps = tick_fps;  /* the floor runs one clock */
        s->frames = frame_count(s->duration, s->fps);
        s->next = 0;
        s->start_tick = next_tick;
    }
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nDate: %s\r\nContent-Type: application/x-ndjson\r\nCache-Control: no-cache\r\n"
                     "X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n", date);
    return send_bytes(s, head, (size_t)n);
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1";
    int port = 0, opt;
    double fps = 60;
    while ((opt = getopt(argc, argv, "h:p:f:")) != -1) {
        switch (opt) {
        case 'h': host = optarg; break;
        case 'p': port = atoi(optarg); break;
        case 'f': fps = atof(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-h HOST] [-p PORT] [-f FPS]\n", argv[0]);
            return 2;
        }
    }
    if (!(fps > 0 && fps <= 1000)) { fprintf(stderr, "fps must be in (0, 1000]\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1) { fprintf(stderr, "bad IPv4 host %s\n", host); return 2; }
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0 || listen(listener, 4096) < 0) {
        perror("bind/listen");
        return 1;
    }
    socklen_t alen = sizeof address;
    getsockname(listener, (struct sockaddr *)&address, &alen);
    printf("stream_floor listening on http://%s:%d\n", host, ntohs(address.sin_port));
    fflush(stdout);

    int ep = epoll_create1(EPOLL_CLOEXEC);
    epoll_fd = ep;
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener };
    epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
    struct epoll_event events[1024];
    uint64_t origin = now_ns();
    double tick_ns = 1e9 / fps;
    uint64_t tick = 1;  /* the next tick to serve */

    for (;;) {
        uint64_t now = now_ns();
        uint64_t due = origin + (uint64_t)llround((double)tick * tick_ns);
        int timeout_ms = due > now ? (int)((due - now + 999999) / 1000000) : 0;
        int n = epoll_wait(ep, events, 1024, timeout_ms);
        if (n < 0 && errno != EINTR) { perror("epoll_wait"); return 1; }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                for (;;) {
                    int c = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (c < 0) break;
                    if (c >= MAX_STREAMS) { close(c); continue; }
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct stream *s = calloc(1, sizeof *s);
                    if (!s) { close(c); continue; }
                    s->fd = c;
                    s->reading = 1;
                    streams[c] = s;
                    if (c > max_fd) max_fd = c;
                    active_streams++;
                    struct epoll_event cev = { .events = EPOLLIN | EPOLLRDHUP, .data.fd = c };
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
                }
                continue;
            }
            struct stream *s = streams[fd];
            if (!s) continue;
            if (events[i].events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)) { close_stream(ep, s); continue; }
            if (s->reading && (events[i].events & EPOLLIN)) {
                if (read_request(s, tick, fps) < 0) { close_stream(ep, s); continue; }
            } else if (events[i].events & EPOLLIN) {  /* bytes after the request: dropped */
                char spare[512];
                ssize_t r = recv(fd, spare, sizeof spare, MSG_DONTWAIT);
                if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) { close_stream(ep, s); continue; }
            }
            if ((events[i].events & EPOLLOUT) && s->out_len > 0) {
                if (flush_out(s) < 0) { close_stream(ep, s); continue; }
            }
            if (s->finished && s->out_len == 0) close_stream(ep, s);
        }
        now = now_ns();
        if (now < origin + (uint64_t)llround((double)tick * tick_ns)) continue;
        /* The ticks that have come (one when the loop keeps up). */
        uint64_t current = (uint64_t)((double)(now - origin) / tick_ns);
        if (current < tick) current = tick;
        /* Every stream its due frames, one send each. */
        for (int fd = 0; fd <= max_fd && active_streams > 0; fd++) {
            struct stream *s = streams[fd];
            if (!s || s->reading || s->finished || current < s->start_tick) continue;
            long last = (long)(current - s->start_tick);
            if (last >= s->frames) last = s->frames - 1;
            if (last - s->next >= MAX_BATCH) last = s->next + MAX_BATCH - 1;
            if (last < s->next) continue;
            if (send_frames(s, last) < 0) { close_stream(ep, s); continue; }
            s->next = last + 1;
            if (s->next == s->frames) {
                s->finished = 1;
                if (s->out_len == 0) close_stream(ep, s);
            }
        }
        tick = current + 1;
    }
}
