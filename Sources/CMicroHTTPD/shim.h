// Thin C surface over libmicrohttpd for Swift: the variadic calls Swift cannot make, and
// constants that do not import. No logic lives here.
#ifndef MOTION_CMICROHTTPD_SHIM_H
#define MOTION_CMICROHTTPD_SHIM_H

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

/// Implemented in Swift (MotionHTTP, `@_cdecl`): receives libmicrohttpd's messages.
extern void motion_mhd_log(void *cls, const char *message);

/// libmicrohttpd's logger: formats the message and hands it to the service's logger.
static void cmhd_log_trampoline(void *cls, const char *format, va_list arguments) {
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    motion_mhd_log(cls, message);
}

/// The URI logger's signature (libmicrohttpd declares it only inside a variadic option).
typedef void *(*cmhd_uri_logger)(void *cls, const char *uri, struct MHD_Connection *connection);

/// MHD_start_daemon with the options MotionServer uses (all non-variadic arguments).
/// `uri_logger` sees each request line's target before it is decoded; `notify` sees each
/// connection open and close; `per_address_limit` 0 means no per-address limit.
static inline struct MHD_Daemon *cmhd_start_daemon(unsigned int flags, uint16_t port,
        const struct sockaddr *bind_address,
        MHD_AccessHandlerCallback handler, void *handler_cls,
        MHD_RequestCompletedCallback completed, void *completed_cls,
        cmhd_uri_logger uri_logger, MHD_NotifyConnectionCallback notify, void *cls,
        unsigned int thread_pool_size, unsigned int connection_timeout,
        unsigned int connection_limit, unsigned int per_address_limit,
        size_t connection_memory_limit, unsigned int listen_backlog) {
    // The logger comes first: libmicrohttpd prints messages about options given before it
    // with its own logger, raw to stderr.
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
        MHD_OPTION_EXTERNAL_LOGGER, cmhd_log_trampoline, cls,
        MHD_OPTION_SOCK_ADDR, bind_address,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, uri_logger, cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify, cls,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, listen_backlog,
        MHD_OPTION_END);
}

/// The per-connection pointer set in the connection notifier, or NULL.
static inline void *cmhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/// The port the daemon listens on (after binding port 0).
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// The socket of a connection, or -1.
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/// Whether a connection notification is the opening one (the enum imports awkwardly).
static inline int cmhd_notify_is_start(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

/// The calling thread's id (Linux).
static inline int cmhd_gettid(void) { return (int) syscall(SYS_gettid); }

/// Sets the calling thread's nice value (Linux: nice is per thread, and a thread created
/// later inherits its creator's). Raising it (a lower priority) is always allowed; lowering
/// it below the current value needs CAP_SYS_NICE or RLIMIT_NICE. 0 on success, else errno.
static inline int cmhd_nice_this_thread(int nice) {
    return setpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid), nice) == 0 ? 0 : errno;
}

/// Gives the allocator's free memory back to the system, from every arena and from the
/// middle of each heap as well as its top (glibc `malloc_trim`). 1 if memory was released.
static inline int cmhd_malloc_trim(void) { return malloc_trim(0); }

/// Turns glibc's fastbins off (`M_MXFAST` 0; small blocks still come from the per-thread
/// cache). A freed small block left in a fastbin just below an arena's top keeps the large
/// free block under it out of the top; `malloc_trim` then merges the three into the top of
/// that (non-main) arena, which it never gives back: 6 to 20 MB of 100 MB of request bodies
/// stayed resident in 4 of 10 runs on a loaded machine, none in 12 with fastbins off.
/// Costs no instructions on the request path (177,903 and 177,910 per small document under
/// callgrind). 1 on success.
static inline int cmhd_disable_fastbins(void) { return mallopt(M_MXFAST, 0); }

/// CPU time the calling thread has used, in nanoseconds.
static inline uint64_t cmhd_thread_cpu_nanos(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
    return (uint64_t) now.tv_sec * 1000000000u + (uint64_t) now.tv_nsec;
}

static inline uint64_t cmhd_size_unknown(void) { return MHD_SIZE_UNKNOWN; }
static inline ssize_t cmhd_content_reader_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }
static inline ssize_t cmhd_content_reader_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }

/// Sets one connection's idle timeout, in seconds (MHD_set_connection_option is variadic).
static inline void cmhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

#endif
