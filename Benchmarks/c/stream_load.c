/*
 * stream_load: the load client of workload 4 (Benchmarks/README.md), live streams.
 *
 * Opens N concurrent `POST /v1/streams?speed=1` connections from one process (epoll,
 * non-blocking sockets, RLIMIT_NOFILE raised to its hard limit), each streaming a one-tween
 * document at FPS for DURATION seconds, and decodes the chunked NDJSON as it arrives. Every
 * frame line's `time` gives its due time: stream start + time. The stream start is the
 * server's, which the client cannot see; it is estimated per stream as the earliest
 * (arrival - time) over the stream's frames, the tightest bound the arrivals allow (the
 * server cannot have sent frame k before start + time_k). Lateness = arrival - due, so the
 * least-late frame of each stream counts 0 and the figures never over-state lateness by
 * more than that frame's delivery delay (microseconds on loopback).
 *
 * Reports frames delivered vs. due (due: every frame of every stream, N x frames per
 * stream, within DURATION + GRACE of the stream's request), p50/p99/max lateness, the
 * share of frames later than one frame interval, time to first frame, the server's CPU
 * (utime + stime from /proc/PID/stat over the steady part, when every stream is open and
 * none has ended; also per frame received over that part) and RSS (VmRSS from /proc/PID/status, sampled every 250 ms, peak), and
 * the client's own CPU (so a saturated client is visible). One `SAMPLE` line for run.sh,
 * then a human summary.
 *
 * Session mode (-S SESSIONS): first creates SESSIONS live sessions one after another
 * (`POST /v1/sessions?speed=1`, one connection each, the same one-tween document lasting
 * SECONDS + LEAD, LEAD = 1 s + the time the watchers take to connect), then opens the N
 * connections as watchers (`GET /v1/sessions/ID/frames`), spread round-robin over the
 * sessions (N = 1000, S = 100: ten watchers each). A watcher gets the frame at the
 * session's current time when it joins, then each frame of the session's 60 Hz grid up to
 * the end, then the end line. Due: per watcher, that first frame, every grid frame after
 * it and the end frame (the session's end; frames a watcher cannot have had are not
 * counted). Lateness is measured as for streams, but against the session's start, the
 * earliest (arrival - time) over all the watchers of the session (they share one clock),
 * leaving out each watcher's first frame (due when it joined, not on the schedule).
 * The SAMPLE line's key defaults to session.N; the figures are the same as for streams.
 *
 * Usage: stream_load -p PORT [-h 127.0.0.1] [-n STREAMS] [-d SECONDS] [-f FPS]
 *                    [-r CONNECTS_PER_S] [-g GRACE_S] [-s SERVER_PID] [-k KEY] [-S SESSIONS]
 * Build: gcc -O2 -o stream_load stream_load.c   (run.sh does this)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum state { IDLE, CONNECTING, SENDING, HEADERS, CHUNK_SIZE, CHUNK_DATA, CHUNK_CRLF, DONE, FAILED };

struct stream {
    int fd;
    enum state state;
    int status;
    size_t sent;
    size_t chunk_left;
    uint64_t requested_ns, first_frame_ns;
    /* Header bytes, then the current NDJSON line (bounded; longer lines are skipped). */
    char line[1024];
    size_t line_len;
    int line_overflow;
    char size_line[32];
    size_t size_len;
    int ended;          /* saw the {"end":true,...} line */
    int chunked;
    /* (arrival - time) in ns relative to the run's start, one per frame. */
    int64_t *offsets;
    size_t frames, capacity;
    /* Session mode: the session watched (index), and the time of the first frame. */
    long session;
    double first_time;
    int have_first_time;
};

/* Session mode: the sessions created before the watchers connect. */
struct session {
    char id[80];
    uint64_t created_ns;   /* when the 201 arrived */
    char request[512];     /* the watcher's request */
    int request_len;
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Frames received so far, all streams (for the server's CPU per frame). */
static uint64_t frames_received;

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Server process figures from /proc. */
static int read_cpu_ticks(int pid, unsigned long long *ticks) {
    char path[64], buffer[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buffer, 1, sizeof buffer - 1, f);
    fclose(f);
    buffer[n] = 0;
    char *p = strrchr(buffer, ')');
    if (!p) return -1;
    /* Fields after the command: state(3) ... utime(14) stime(15). */
    unsigned long long utime = 0, stime = 0;
    int field = 2;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
        field++;
        if (field == 14) utime = strtoull(tok, NULL, 10);
        if (field == 15) { stime = strtoull(tok, NULL, 10); break; }
    }
    *ticks = utime + stime;
    return 0;
}

static long read_rss_kb(int pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) { kb = strtol(line + 6, NULL, 10); break; }
    }
    fclose(f);
    return kb;
}

static void usage(const char *name) {
    fprintf(stderr, "usage: %s -p PORT [-h HOST] [-n STREAMS] [-d SECONDS] [-f FPS] [-r CONNECTS_PER_S] [-g GRACE_S] [-s SERVER_PID] [-k KEY] [-S SESSIONS]\n", name);
    exit(2);
}

/* Frames a window of `duration` at `fps` has (docs/documents.md: k/fps while more than 1 us before
 * the end, plus the end itself). */
static long expected_frames(double duration, double fps) {
    double limit = duration - 1e-6;
    long k = 0;
    while ((double)k / fps < limit) k++;
    return k + 1;
}

/* Session mode: creates one session with a blocking connection (`Connection: close`, read to
 * the end); fills in its id. Returns -1 on failure. */
static int create_session(const struct sockaddr_in *address, const char *host, int port, const char *body,
                          int body_len, struct session *out) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (const struct sockaddr *)address, sizeof *address) < 0) { close(fd); return -1; }
    char request[1024];
    int n = snprintf(request, sizeof request,
        "POST /v1/sessions?speed=1 HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
        "Connection: close\r\nContent-Length: %d\r\n\r\n%s", host, port, body_len, body);
    for (int sent = 0; sent < n;) {
        ssize_t w = write(fd, request + sent, (size_t)(n - sent));
        if (w <= 0) { close(fd); return -1; }
        sent += (int)w;
    }
    char answer[8192];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, answer + len, sizeof answer - 1 - len);
        if (r <= 0) break;
        len += (size_t)r;
        if (len + 1 >= sizeof answer) break;
    }
    close(fd);
    answer[len] = 0;
    out->created_ns = now_ns();
    int status = 0;
    if (sscanf(answer, "HTTP/1.%*d %d", &status) != 1 || status != 201) {
        fprintf(stderr, "stream_load: POST /v1/sessions answered %d: %.200s\n", status, answer);
        return -1;
    }
    char *id = strstr(answer, "\"id\":\"");
    if (!id) return -1;
    id += 6;
    size_t k = 0;
    while (id[k] && id[k] != '"' && k + 1 < sizeof out->id) { out->id[k] = id[k]; k++; }
    out->id[k] = 0;
    if (id[k] != '"') return -1;
    out->request_len = snprintf(out->request, sizeof out->request,
        "GET /v1/sessions/%s/frames HTTP/1.1\r\nHost: %s:%d\r\nAccept: application/x-ndjson\r\n\r\n",
        out->id, host, port);
    return 0;
}

/* Session mode: the frames due to a watcher whose first frame was at session time t0, for a
 * session of `duration` at `fps`: that frame, the grid frames k/fps after it and before the
 * end (more than 1 us before it), and the end frame. */
static long watcher_due(double t0, double duration, double fps) {
    if (t0 >= duration - 1e-6) return 1;
    double limit = duration - 1e-6;
    long k = (long)floor(t0 * fps) + 1;
    while ((double)k / fps <= t0 + 1e-9) k++;
    long count = 1;
    while ((double)k / fps < limit) { count++; k++; }
    return count + 1;
}

static void handle_line(struct stream *s, uint64_t arrival, uint64_t run_start) {
    if (s->line_overflow) return;
    s->line[s->line_len] = 0;
    if (strncmp(s->line, "{\"frame\":", 9) == 0) {
        char *t = strstr(s->line, "\"time\":");
        if (!t) return;
        double time = strtod(t + 7, NULL);
        if (!s->have_first_time) { s->first_time = time; s->have_first_time = 1; }
        if (s->frames == s->capacity) {
            s->capacity = s->capacity ? s->capacity * 2 : 64;
            s->offsets = realloc(s->offsets, s->capacity * sizeof(int64_t));
            if (!s->offsets) { perror("realloc"); exit(1); }
        }
        s->offsets[s->frames++] = (int64_t)(arrival - run_start) - (int64_t)llround(time * 1e9);
        frames_received++;
        if (s->first_frame_ns == 0) s->first_frame_ns = arrival;
    } else if (strncmp(s->line, "{\"end\":true", 11) == 0) {
        s->ended = 1;
    }
}

/* Feeds body bytes (after de-chunking) to the NDJSON line splitter. */
static void body_bytes(struct stream *s, const char *data, size_t n, uint64_t arrival, uint64_t run_start) {
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (c == '\n') {
            handle_line(s, arrival, run_start);
            s->line_len = 0;
            s->line_overflow = 0;
        } else if (s->line_len + 1 < sizeof s->line) {
            s->line[s->line_len++] = c;
        } else {
            s->line_overflow = 1;
        }
    }
}

/* Consumes bytes read from the socket; returns -1 on a protocol error. */
static int consume(struct stream *s, const char *data, size_t n, uint64_t arrival, uint64_t run_start) {
    size_t i = 0;
    while (i < n) {
        switch (s->state) {
        case HEADERS: {
            /* Collect until the blank line. */
            char c = data[i++];
            if (s->line_len + 1 < sizeof s->line) s->line[s->line_len++] = c;
            else return -1;
            if (s->line_len >= 4 && memcmp(s->line + s->line_len - 4, "\r\n\r\n", 4) == 0) {
                s->line[s->line_len] = 0;
                if (sscanf(s->line, "HTTP/1.%*d %d", &s->status) != 1) return -1;
                if (s->status != 200) return -1;
                for (char *p = s->line; *p; p++) *p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
                s->chunked = strstr(s->line, "transfer-encoding: chunked") != NULL;
                if (!s->chunked) return -1;
                s->line_len = 0;
                s->state = CHUNK_SIZE;
                s->size_len = 0;
            }
            break;
        }
        case CHUNK_SIZE: {
            char c = data[i++];
            if (c == '\n') {
                s->size_line[s->size_len] = 0;
                unsigned long size = strtoul(s->size_line, NULL, 16);
                s->size_len = 0;
                if (size == 0) { s->state = DONE; return 0; }
                s->chunk_left = size;
                s->state = CHUNK_DATA;
            } else if (c != '\r' && s->size_len + 1 < sizeof s->size_line) {
                s->size_line[s->size_len++] = c;
            }
            break;
        }
        case CHUNK_DATA: {
            size_t take = n - i < s->chunk_left ? n - i : s->chunk_left;
            body_bytes(s, data + i, take, arrival, run_start);
            i += take;
            s->chunk_left -= take;
            if (s->chunk_left == 0) { s->state = CHUNK_CRLF; s->size_len = 0; }
            break;
        }
        case CHUNK_CRLF: {
            char c = data[i++];
            if (c == '\n') s->state = CHUNK_SIZE;
            break;
        }
        default:
            return 0;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *key = NULL;
    int port = 0, server_pid = 0;
    long streams = 100, session_count = 0;
    double duration = 30, fps = 60, ramp = 2000, grace = 5;
    int opt;
    while ((opt = getopt(argc, argv, "h:p:n:d:f:r:g:s:k:S:")) != -1) {
        switch (opt) {
        case 'h': host = optarg; break;
        case 'p': port = atoi(optarg); break;
        case 'n': streams = atol(optarg); break;
        case 'd': duration = atof(optarg); break;
        case 'f': fps = atof(optarg); break;
        case 'r': ramp = atof(optarg); break;
        case 'g': grace = atof(optarg); break;
        case 's': server_pid = atoi(optarg); break;
        case 'k': key = optarg; break;
        case 'S': session_count = atol(optarg); break;
        default: usage(argv[0]);
        }
    }
    if (port <= 0 || streams <= 0 || duration <= 0 || fps <= 0 || ramp <= 0 || session_count < 0 || session_count > streams)
        usage(argv[0]);
    char default_key[64];
    if (!key) {
        snprintf(default_key, sizeof default_key, session_count ? "session.%ld" : "stream.%ld", streams);
        key = default_key;
    }
    /* Session mode: the session outlasts the watchers' connecting by LEAD. */
    double lead = session_count ? 1.0 + (double)streams / ramp : 0;

    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
        getrlimit(RLIMIT_NOFILE, &limit);
        if ((long)limit.rlim_cur < streams + 16) {
            fprintf(stderr, "stream_load: RLIMIT_NOFILE is %ld, too low for %ld streams\n", (long)limit.rlim_cur, streams);
            return 1;
        }
    }

    char body[512];
    int body_len = snprintf(body, sizeof body,
        "{\"fps\":%.17g,\"target\":{\"x\":0},\"motion\":{\"type\":\"tween\",\"duration\":%.17g,"
        "\"easing\":\"linear\",\"properties\":[{\"path\":\"x\",\"to\":320}]}}", fps, duration + lead);
    char request[1024];
    int request_len = snprintf(request, sizeof request,
        "POST /v1/streams?speed=1 HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
        "Accept: application/x-ndjson\r\nContent-Length: %d\r\n\r\n%s", host, port, body_len, body);
    long per_stream = expected_frames(duration, fps);

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1) { fprintf(stderr, "bad IPv4 host %s\n", host); return 2; }

    struct stream *all = calloc((size_t)streams, sizeof *all);
    if (!all) { perror("calloc"); return 1; }
    struct session *sessions = NULL;
    if (session_count) {
        sessions = calloc((size_t)session_count, sizeof *sessions);
        if (!sessions) { perror("calloc"); return 1; }
        for (long i = 0; i < session_count; i++) {
            if (create_session(&address, host, port, body, body_len, &sessions[i]) < 0) {
                fprintf(stderr, "stream_load: could not create session %ld of %ld\n", i + 1, session_count);
                return 1;
            }
        }
        for (long i = 0; i < streams; i++) all[i].session = i % session_count;
    }
    int ep = epoll_create1(0);
    if (ep < 0) { perror("epoll_create1"); return 1; }

    long ticks_per_s = sysconf(_SC_CLK_TCK);
    struct rusage usage_start;
    getrusage(RUSAGE_SELF, &usage_start);
    uint64_t run_start = now_ns();
    uint64_t next_sample = run_start;
    long opened = 0, finished = 0, connect_errors = 0, http_errors = 0, dropped = 0;
    long active = 0, streaming = 0;
    long peak_rss_kb = 0;
    /* CPU samples: (time, ticks, streams streaming, any ended). */
    enum { MAX_SAMPLES = 100000 };
    static uint64_t sample_time[MAX_SAMPLES];
    static unsigned long long sample_ticks[MAX_SAMPLES];
    static int sample_steady[MAX_SAMPLES];
    static uint64_t sample_frames[MAX_SAMPLES];
    int samples = 0;
    long ended_count = 0;
    uint64_t deadline_all = 0;
    static char buffer[1 << 16];
    struct epoll_event events[1024];

    for (;;) {
        uint64_t now = now_ns();
        /* Open connections at the ramp rate. */
        long should_have = (long)((double)(now - run_start) / 1e9 * ramp) + 1;
        if (should_have > streams) should_have = streams;
        while (opened < should_have) {
            struct stream *s = &all[opened];
            s->requested_ns = now;
            s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (s->fd < 0) { s->state = FAILED; connect_errors++; finished++; opened++; continue; }
            int one = 1;
            setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            int rc = connect(s->fd, (struct sockaddr *)&address, sizeof address);
            if (rc < 0 && errno != EINPROGRESS) {
                close(s->fd); s->fd = -1; s->state = FAILED; connect_errors++; finished++; opened++; continue;
            }
            s->state = CONNECTING;
            struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.u64 = (uint64_t)opened };
            epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
            active++;
            opened++;
        }
        if (opened == streams && deadline_all == 0) {
            deadline_all = now + (uint64_t)((duration + lead + grace) * 1e9);
        }
        if (finished == streams) break;
        if (deadline_all && now >= deadline_all) break;

        if (server_pid > 0 && now >= next_sample) {
            unsigned long long ticks;
            if (samples < MAX_SAMPLES && read_cpu_ticks(server_pid, &ticks) == 0) {
                sample_time[samples] = now;
                sample_ticks[samples] = ticks;
                sample_frames[samples] = frames_received;
                sample_steady[samples] = (opened == streams && streaming == streams - connect_errors - http_errors && ended_count == 0);
                samples++;
            }
            long rss = read_rss_kb(server_pid);
            if (rss > peak_rss_kb) peak_rss_kb = rss;
            next_sample = now + 250000000ull;
        }

        int timeout_ms = 5;
        if (opened == streams) timeout_ms = 50;
        int n = epoll_wait(ep, events, 1024, timeout_ms);
        if (n < 0) { if (errno == EINTR) continue; perror("epoll_wait"); break; }
        uint64_t arrival = now_ns();
        for (int e = 0; e < n; e++) {
            long index = (long)events[e].data.u64;
            struct stream *s = &all[index];
            if (s->state == DONE || s->state == FAILED) continue;
            if (s->state == CONNECTING) {
                int error = 0;
                socklen_t len = sizeof error;
                getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &error, &len);
                if (error != 0) {
                    close(s->fd); s->fd = -1; s->state = FAILED; connect_errors++; finished++; active--;
                    continue;
                }
                s->state = SENDING;
            }
            if (s->state == SENDING) {
                const char *req = session_count ? sessions[s->session].request : request;
                size_t req_len = session_count ? (size_t)sessions[s->session].request_len : (size_t)request_len;
                ssize_t w = write(s->fd, req + s->sent, req_len - s->sent);
                if (w > 0) s->sent += (size_t)w;
                else if (w < 0 && errno != EAGAIN) {
                    close(s->fd); s->fd = -1; s->state = FAILED; connect_errors++; finished++; active--;
                    continue;
                }
                if (s->sent == req_len) {
                    s->state = HEADERS;
                    s->line_len = 0;
                    struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u64 = (uint64_t)index };
                    epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
                }
                continue;
            }
            /* Read everything available. */
            int closed = 0, error = 0;
            for (;;) {
                ssize_t r = read(s->fd, buffer, sizeof buffer);
                if (r > 0) {
                    int was_headers = s->state == HEADERS;
                    if (consume(s, buffer, (size_t)r, arrival, run_start) < 0) { error = 1; break; }
                    if (was_headers && s->state != HEADERS) streaming++;
                    if (s->state == DONE) break;
                    if ((size_t)r < sizeof buffer) break;
                } else if (r == 0) {
                    closed = 1; break;
                } else {
                    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
                    error = 1; break;
                }
            }
            if (error || closed || s->state == DONE) {
                if (s->ended) ended_count++;
                else if (s->state == HEADERS || s->state == SENDING) http_errors++;
                else dropped++;  /* closed (or broken) in the middle of the stream */
                epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
                close(s->fd);
                s->fd = -1;
                s->state = s->state == DONE || s->ended ? DONE : FAILED;
                finished++;
                active--;
            }
        }
    }
    uint64_t run_end = now_ns();
    struct rusage usage_end;
    getrusage(RUSAGE_SELF, &usage_end);
    for (long i = 0; i < streams; i++) if (all[i].fd > 0) close(all[i].fd);

    /* Lateness per frame. */
    size_t total_frames = 0;
    for (long i = 0; i < streams; i++) total_frames += all[i].frames;
    int64_t *lateness = malloc((total_frames + 1) * sizeof(int64_t));
    uint64_t *first = malloc(((size_t)streams + 1) * sizeof(uint64_t));
    size_t m = 0, firsts = 0, late_frames = 0;
    uint64_t interval_ns = (uint64_t)(1e9 / fps);
    /* Session mode: one start per session, the earliest over its watchers. A watcher's first
     * frame is the session's frame at the moment it joined, due then and not on the session's
     * schedule (a watcher that joins before the clock's first tick gets time 0 early), so it
     * is left out of the start and of the lateness (it is counted as delivered). */
    int64_t *session_base = NULL;
    size_t skip = session_count ? 1 : 0;
    if (session_count) {
        session_base = malloc((size_t)session_count * sizeof(int64_t));
        for (long j = 0; j < session_count; j++) session_base[j] = INT64_MAX;
        for (long i = 0; i < streams; i++) {
            struct stream *s = &all[i];
            for (size_t k = 1; k < s->frames; k++)
                if (s->offsets[k] < session_base[s->session]) session_base[s->session] = s->offsets[k];
        }
    }
    double due = 0;
    for (long i = 0; i < streams; i++) {
        struct stream *s = &all[i];
        if (!session_count) { due += (double)per_stream; continue; }
        /* The session time the watcher joined at: its first frame's, or (none arrived) the
         * time since the session was created. */
        double t0 = s->have_first_time ? s->first_time
                    : (double)(s->requested_ns - sessions[s->session].created_ns) / 1e9;
        due += (double)watcher_due(t0 < 0 ? 0 : t0, duration + lead, fps);
    }
    for (long i = 0; i < streams; i++) {
        struct stream *s = &all[i];
        if (s->frames == 0) continue;
        int64_t base = s->offsets[0];
        for (size_t k = 1; k < s->frames; k++) if (s->offsets[k] < base) base = s->offsets[k];
        if (session_count) base = session_base[s->session];
        for (size_t k = skip; k < s->frames; k++) {
            int64_t late = s->offsets[k] - base;
            lateness[m++] = late;
            if ((uint64_t)late > interval_ns) late_frames++;
        }
        first[firsts++] = s->first_frame_ns - s->requested_ns;
    }
    qsort(lateness, m, sizeof(int64_t), compare_i64);
    qsort(first, firsts, sizeof(uint64_t), compare_u64);
    double p50 = m ? (double)lateness[(size_t)(0.50 * (double)(m - 1))] / 1e6 : NAN;
    double p99 = m ? (double)lateness[(size_t)(0.99 * (double)(m - 1))] / 1e6 : NAN;
    double p999 = m ? (double)lateness[(size_t)(0.999 * (double)(m - 1))] / 1e6 : NAN;
    double lmax = m ? (double)lateness[m - 1] / 1e6 : NAN;
    double ttfb50 = firsts ? (double)first[(size_t)(0.50 * (double)(firsts - 1))] / 1e6 : NAN;
    double ttfb99 = firsts ? (double)first[(size_t)(0.99 * (double)(firsts - 1))] / 1e6 : NAN;
    double delivered = (double)total_frames;

    /* Server CPU over the steady part (or the whole run when it was too short). */
    double cpu_pct = NAN, cpu_all_pct = NAN, cpu_us_per_frame = NAN;
    if (samples >= 2) {
        cpu_all_pct = (double)(sample_ticks[samples - 1] - sample_ticks[0]) / (double)ticks_per_s
                      / ((double)(sample_time[samples - 1] - sample_time[0]) / 1e9) * 100;
        int a = -1, b = -1;
        for (int i = 0; i < samples; i++) if (sample_steady[i]) { if (a < 0) a = i; b = i; }
        if (a >= 0 && b > a && sample_time[b] - sample_time[a] >= 1000000000ull) {
            cpu_pct = (double)(sample_ticks[b] - sample_ticks[a]) / (double)ticks_per_s
                      / ((double)(sample_time[b] - sample_time[a]) / 1e9) * 100;
            /* Server CPU per frame received over the same part: a server that falls behind
             * (fewer frames a second) is not flattered by it. */
            if (sample_frames[b] > sample_frames[a])
                cpu_us_per_frame = (double)(sample_ticks[b] - sample_ticks[a]) / (double)ticks_per_s * 1e6
                                   / (double)(sample_frames[b] - sample_frames[a]);
        } else {
            cpu_pct = cpu_all_pct;
        }
    }
    double client_cpu = ((double)(usage_end.ru_utime.tv_sec - usage_start.ru_utime.tv_sec) +
                         (double)(usage_end.ru_stime.tv_sec - usage_start.ru_stime.tv_sec) +
                         (double)(usage_end.ru_utime.tv_usec - usage_start.ru_utime.tv_usec) / 1e6 +
                         (double)(usage_end.ru_stime.tv_usec - usage_start.ru_stime.tv_usec) / 1e6)
                        / ((double)(run_end - run_start) / 1e9) * 100;

    printf("SAMPLE %s delivered_ratio=%.17g delivered=%.0f due=%.0f p50_ms=%.6f p99_ms=%.6f p999_ms=%.6f max_ms=%.6f "
           "late_ratio=%.17g ttff_p50_ms=%.6f ttff_p99_ms=%.6f server_cpu_pct=%.3f server_cpu_all_pct=%.3f "
           "server_cpu_us_per_frame=%.4f server_rss_mb=%.3f client_cpu_pct=%.3f connect_errors=%ld http_errors=%ld dropped=%ld streams=%ld sessions=%ld\n",
           key, due > 0 ? delivered / due : 0, delivered, due, p50, p99, p999, lmax,
           m ? (double)late_frames / (double)m : 0, ttfb50, ttfb99, cpu_pct, cpu_all_pct,
           cpu_us_per_frame, (double)peak_rss_kb / 1024.0, client_cpu, connect_errors, http_errors, dropped, streams, session_count);
    if (session_count) printf("%ld watchers of %ld sessions (%.0f s each), ", streams, session_count, duration + lead);
    printf("%ld streams x %ld frames at %g fps: delivered %.0f of %.0f (%.4f%%); lateness p50 %.3f ms, p99 %.3f ms, "
           "p99.9 %.3f ms, max %.3f ms; %.4f%% later than one frame; first frame p50 %.1f ms, p99 %.1f ms; "
           "server CPU %.1f%% (steady), %.2f us a frame, RSS peak %.1f MB; client CPU %.1f%%; errors: %ld connect, %ld http, %ld dropped mid-stream\n",
           streams, per_stream, fps, delivered, due, due > 0 ? 100 * delivered / due : 0, p50, p99, p999, lmax,
           m ? 100.0 * (double)late_frames / (double)m : 0, ttfb50, ttfb99, cpu_pct, cpu_us_per_frame, (double)peak_rss_kb / 1024.0,
           client_cpu, connect_errors, http_errors, dropped);
    fflush(stdout);
    (void)active;
    return 0;
}
