/* server/http.h -- rspwalkd's HTTP server: the door every request comes through.
 *
 * On libmicrohttpd, one thread per connection: a request waits for a stub
 * without holding up any other.  Before a request reaches the API
 * (server/api.h) it passes the checks below, each answered with a JSON error:
 * the Host header on an open loopback server (403), the bearer token (401),
 * the Origin of a browser's cross-site request (403), the number of requests
 * in flight (503 with Retry-After), the body's size (413).  /v1/events is
 * served here as a stream (server/events.h); every other path outside /v1 is
 * a file of the built-in web page (server/assets.h).
 */
#ifndef RSPWALK_SERVER_HTTP_H
#define RSPWALK_SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct srv_api_config;
struct srv_events;
struct srv_http;

/* Parse HOSTPORT ("HOST:PORT", "[V6ADDR]:PORT"; port 0: one the kernel
 * picks), bind and listen.  Returns 0 with *FD, the URL clients use
 * ("http://127.0.0.1:7411/", the address and port as bound) in URL and
 * *LOOPBACK; or -1 with a one-line message in ERR. */
int srv_http_listen(const char *hostport, int *fd, char *url, size_t urllen, bool *loopback,
                    char *err, size_t errlen);

struct srv_http_config {
    int listen_fd;                    /* from srv_http_listen; taken (closed by srv_http_stop) */
    const char *token;                /* borrowed; NULL: no token asked */
    bool check_host;                  /* refuse Host headers that are not loopback names */
    size_t max_body;                  /* bytes of a request body */
    unsigned max_requests;            /* requests in flight (event streams not counted) */
    unsigned max_streams;             /* event streams at once */
    unsigned idle_timeout_s;          /* a connection silent this long is closed */
    const struct srv_api_config *api; /* borrowed */
    struct srv_events *events;        /* borrowed */
};

/* Start serving on CFG->listen_fd.  Returns 0 and *OUT (srv_http_stop), or
 * -1 with a message in ERR (the descriptor is closed either way). */
int srv_http_start(const struct srv_http_config *cfg, struct srv_http **out, char *err,
                   size_t errlen);

/* Stop accepting, wait for every connection's thread, free.  Event streams
 * must have been ended first (srv_events_close).  NULL is a no-op. */
void srv_http_stop(struct srv_http *h);

#endif /* RSPWALK_SERVER_HTTP_H */
