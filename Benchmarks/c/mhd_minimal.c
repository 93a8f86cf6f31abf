/*
 * mhd_minimal: the floor for one HTTP request on libmicrohttpd (Benchmarks/README.md, issue #14):
 * a libmicrohttpd server with the same threading mode as motion-server (internal polling
 * thread per core, epoll) that reads a POST body and answers fixed bytes from one persistent
 * response. `make bench-instructions` counts its instructions per request under callgrind
 * beside motion-server's and nginx's.
 *
 * Usage: mhd_minimal PORT FILE [POOL_BYTES]   (answers FILE's bytes as application/json to any
 *        request; POOL_BYTES: libmicrohttpd's per-connection memory pool, as motion-server's
 *        --connection-memory; default 65536)
 * Build: gcc -O2 -o mhd_minimal mhd_minimal.c -lmicrohttpd
 */
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *answer;

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload;
    static int marker;
    if (*state == NULL) { *state = &marker; return MHD_YES; }   /* headers seen */
    if (*upload_size != 0) { *upload_size = 0; return MHD_YES; } /* body consumed */
    return MHD_queue_response(connection, MHD_HTTP_OK, answer);
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) { fprintf(stderr, "usage: mhd_minimal PORT FILE [POOL_BYTES]\n"); return 2; }
    size_t pool = argc == 4 ? (size_t)strtoul(argv[3], NULL, 10) : 65536;
    FILE *file = fopen(argv[2], "rb");
    if (!file) { perror(argv[2]); return 1; }
    static char body[1 << 20];
    size_t length = fread(body, 1, sizeof body, file);
    fclose(file);
    /* SIGTERM/SIGINT blocked here, before libmicrohttpd's thread exists, so that only the
     * main thread's sigwait receives them. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    answer = MHD_create_response_from_buffer(length, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(answer, "Content-Type", "application/json");
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)atoi(argv[1]), NULL, NULL,
        handle, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool, MHD_OPTION_END);
    if (!daemon) { fprintf(stderr, "mhd_minimal: cannot listen on %s\n", argv[1]); return 1; }
    printf("mhd_minimal listening on http://127.0.0.1:%s\n", argv[1]);
    fflush(stdout);
    int received;
    sigwait(&stop_signals, &received);
    MHD_stop_daemon(daemon);
    MHD_destroy_response(answer);
    return 0;
}
