// libmicrohttpd's own refusals as problem+json (docs/reliability.md, "The library's refusals").
//
// libmicrohttpd 0.9.75 answers some malformed requests itself, before the service sees them:
// headers too large (431) or a URI too long (414) for its connection pool, a malformed
// request line or header (400), a missing Host in HTTP/1.1 (400), bad chunked framing (400),
// a chunk or Content-Length too large (413), an unparsable Content-Length (400), an unknown
// HTTP version (505). Its bodies are fixed HTML pages without a Content-Type, and it has no
// option to replace them.
//
// All of those go through one internal function, transmit_error_response_len(), which makes
// the page with MHD_create_response_from_buffer(MHD_RESPMEM_PERSISTENT) and queues it with
// MHD_queue_response() — both exported functions that the library calls through its PLT
// (checked with `objdump -d libmicrohttpd.so.12`: those are the only PLT calls to them in
// the library). This file defines both in the executable, which exports them
// (Package.swift: --export-dynamic-symbol), so the dynamic linker binds the library's calls
// here. A page the library makes from one of its HTML constants is remembered per thread;
// when that same response is queued, a problem+json response for its status is queued in
// its place. Every other call goes straight to the library's functions (dlsym RTLD_NEXT).
// If a future libmicrohttpd changes its pages or stops calling through the PLT, nothing
// breaks: its HTML answers simply come back (the test in HTTPHardeningTests then fails).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <microhttpd.h>

#include "library_refusals.h"

typedef struct MHD_Response *(*create_fn)(size_t, void *, enum MHD_ResponseMemoryMode);
typedef enum MHD_Result (*queue_fn)(struct MHD_Connection *, unsigned int, struct MHD_Response *);

static _Thread_local struct MHD_Response *pending_page;  // the library's page being made
static _Thread_local const char *pending_text;           // its HTML constant
static create_fn real_create(void) {
    static _Atomic(create_fn) cached;
    create_fn fn = atomic_load(&cached);
    if (!fn) { fn = (create_fn)dlsym(RTLD_NEXT, "MHD_create_response_from_buffer"); atomic_store(&cached, fn); }
    return fn;
}

static queue_fn real_queue(void) {
    static _Atomic(queue_fn) cached;
    queue_fn fn = atomic_load(&cached);
    if (!fn) { fn = (queue_fn)dlsym(RTLD_NEXT, "MHD_queue_response"); atomic_store(&cached, fn); }
    return fn;
}

/// The problem for a refusal: its type, title and a detail in plain words. `text` is the
/// library's HTML page, which tells apart refusals that share a status.
struct refusal { const char *type, *title, *detail; };

static struct refusal describe(unsigned int status, const char *text) {
    int chunked = text && strstr(text, "chunked encoding") != NULL;
    int chunk = text && strstr(text, "chunk size") != NULL;
    int length = text && strstr(text, "Content-Length") != NULL;
    int host = text && strstr(text, "Host:") != NULL;
    switch (status) {
    case 400:
        if (host) return (struct refusal){"/problems/bad-request", "Bad request",
            "an HTTP/1.1 request must carry a Host header"};
        if (chunked) return (struct refusal){"/problems/bad-request", "Bad request",
            "the chunked transfer coding of the body is malformed"};
        if (length) return (struct refusal){"/problems/bad-request", "Bad request",
            "the Content-Length header is not a valid length"};
        return (struct refusal){"/problems/bad-request", "Bad request",
            "the request line or a header field is malformed"};
    case 413:
        if (chunk) return (struct refusal){"/problems/payload-too-large", "Payload too large",
            "a chunk size of the chunked body is too large"};
        return (struct refusal){"/problems/payload-too-large", "Payload too large",
            "the Content-Length is too large"};
    case 414:
        return (struct refusal){"/problems/uri-too-long", "URI too long",
            "the request target does not fit the connection's memory limit"};
    case 431:
        return (struct refusal){"/problems/header-fields-too-large", "Request header fields too large",
            "the request head does not fit the connection's memory limit"};
    case 505:
        return (struct refusal){"/problems/http-version-not-supported", "HTTP version not supported",
            "only HTTP/1.0 and HTTP/1.1 are served"};
    default:
        return (struct refusal){"/problems/internal-error", "Internal error",
            "the server could not process the request"};
    }
}

/// A request id like the service's own (32 random lowercase hexadecimal digits), for the
/// problem's `requestId` and its `X-Request-Id` header: the refused request never reached
/// the service, so this is the only id it gets. Should the kernel's random source fail,
/// the clock and a counter stand in (an id need only be unlikely to repeat).
static void new_request_id(char out[33]) {
    unsigned char bytes[16];
    if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
        static atomic_ulong counter;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        unsigned long long words[2] = {(unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec,
                                       (unsigned long long)atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull};
        memcpy(bytes, words, sizeof bytes);
    }
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xF];
    }
    out[32] = 0;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode) {
    struct MHD_Response *response = real_create()(size, buffer, mode);
    // The library's pages are its persistent "<html><head><title>" constants.
    if (response && mode == MHD_RESPMEM_PERSISTENT && buffer && size > 19 &&
        memcmp(buffer, "<html><head><title>", 19) == 0) {
        pending_page = response;
        pending_text = (const char *)buffer;
    }
    return response;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
    if (response == NULL || response != pending_page)
        return real_queue()(connection, status_code, response);
    const char *text = pending_text;
    pending_page = NULL;
    pending_text = NULL;

    struct refusal refusal = describe(status_code, text);
    char id[33];
    new_request_id(id);
    char body[512];
    int length = snprintf(body, sizeof body,
                          "{\"requestId\":\"%s\",\"type\":\"%s\",\"title\":\"%s\",\"status\":%u,\"detail\":\"%s\"}\n",
                          id, refusal.type, refusal.title, status_code, refusal.detail);
    if (length <= 0 || (size_t)length >= sizeof body)
        return real_queue()(connection, status_code, response);
    struct MHD_Response *problem = real_create()((size_t)length, body, MHD_RESPMEM_MUST_COPY);
    if (problem == NULL)
        return real_queue()(connection, status_code, response);
    MHD_add_response_header(problem, MHD_HTTP_HEADER_CONTENT_TYPE, "application/problem+json");
    MHD_add_response_header(problem, "X-Request-Id", id);
    // The library closes the connection after its refusals; say so.
    MHD_add_response_header(problem, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result result = real_queue()(connection, status_code, problem);
    MHD_destroy_response(problem);  // the connection holds its own reference
    return result;
}
