/* server/http.c -- rspwalkd's HTTP server on libmicrohttpd (server/http.h).
 *
 * Each request goes through on_request three ways: the first call (headers
 * read) runs the door's checks; the next calls hand in body bytes; the last
 * one (no more bytes) answers.  The API itself is server/api.c's; this file
 * knows HTTP: headers, statuses, streams and files.
 */
#define _GNU_SOURCE /* NI_MAXHOST, NI_NUMERICHOST */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/api.h"
#include "server/assets.h"
#include "server/auth.h"
#include "server/events.h"
#include "server/util.h"

/* Query parameters in one request: more is not a query but an attack on the
 * parser. */
#define ARGS_MAX 32
/* A keep-alive comment on an event stream at least this often (ms), and
 * well within the idle timeout. */
#define KEEPALIVE_MS 15000
/* Body bytes read and thrown away after a body went over the limit, before
 * the connection is cut: enough to answer 413 to a client that keeps sending
 * a little too much, not an invitation to upload gigabytes. */
#define DISCARD_MAX (1u << 20)

struct srv_http {
    struct MHD_Daemon *mhd;
    struct srv_http_config cfg;
    atomic_uint in_flight;
};

/* One request's state, from its headers to its completion. */
struct req {
    bool counted;  /* holds a slot of max_requests */
    bool answered; /* a reply was queued at the door; the body is discarded */
    bool too_large;
    char *body;
    size_t len, cap, discarded;
};

/* ---- listening ---------------------------------------------------------- */

int
srv_http_listen(const char *hostport, int *fd, char *url, size_t urllen, bool *loopback, char *err,
                size_t errlen)
{
    char host[256];
    const char *port;
    if (hostport[0] == '[') {
        const char *close = strchr(hostport, ']');
        if (!close || close[1] != ':' || (size_t)(close - hostport) > sizeof host) {
            snprintf(err, errlen, "--listen %s: expected [V6ADDR]:PORT", hostport);
            return -1;
        }
        memcpy(host, hostport + 1, (size_t)(close - hostport - 1));
        host[close - hostport - 1] = '\0';
        port = close + 2;
    } else {
        const char *colon = strrchr(hostport, ':');
        if (!colon || (size_t)(colon - hostport) >= sizeof host || strchr(hostport, ':') != colon) {
            snprintf(err, errlen, "--listen %s: expected HOST:PORT or [V6ADDR]:PORT", hostport);
            return -1;
        }
        memcpy(host, hostport, (size_t)(colon - hostport));
        host[colon - hostport] = '\0';
        port = colon + 1;
    }
    char *end;
    long pnum = strtol(port, &end, 10);
    if (!*port || *end || pnum < 0 || pnum > 65535) {
        snprintf(err, errlen, "--listen %s: '%s' is not a port (0 to 65535)", hostport, port);
        return -1;
    }
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
    int gai = getaddrinfo(host[0] ? host : "127.0.0.1", port, &hints, &ai);
    if (gai != 0) {
        snprintf(err, errlen, "--listen %s: %s", hostport, gai_strerror(gai));
        return -1;
    }
    int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (s < 0) {
        snprintf(err, errlen, "--listen %s: socket: %s", hostport, strerror(errno));
        freeaddrinfo(ai);
        return -1;
    }
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ai->ai_family == AF_INET6)
        setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    /* A backlog as large as the kernel allows: a burst of clients waits in
     * the queue instead of being refused. */
    if (bind(s, ai->ai_addr, ai->ai_addrlen) < 0 || listen(s, SOMAXCONN) < 0) {
        snprintf(err, errlen, "--listen %s: %s", hostport, strerror(errno));
        close(s);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char nhost[NI_MAXHOST], nport[NI_MAXSERV];
    if (getsockname(s, (struct sockaddr *)&ss, &sl) < 0 ||
        getnameinfo((struct sockaddr *)&ss, sl, nhost, sizeof nhost, nport, sizeof nport,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(err, errlen, "--listen %s: getsockname: %s", hostport, strerror(errno));
        close(s);
        return -1;
    }
    *loopback = srv_addr_is_loopback((struct sockaddr *)&ss);
    if (ss.ss_family == AF_INET6)
        snprintf(url, urllen, "http://[%s]:%s/", nhost, nport);
    else
        snprintf(url, urllen, "http://%s:%s/", nhost, nport);
    *fd = s;
    return 0;
}

/* ---- replies ------------------------------------------------------------ */

/* Queue REPLY (its body taken) with the headers every API answer carries. */
static enum MHD_Result
queue_reply(struct MHD_Connection *c, struct srv_reply *reply, unsigned retry_after)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(reply->len, reply->body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        srv_reply_fini(reply);
        return MHD_NO;
    }
    reply->body = NULL;
    if (reply->type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, reply->type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (reply->allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, reply->allow);
    if (reply->location[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, reply->location);
    if (reply->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"rspwalkd\"");
    if (retry_after) {
        char ra[16];
        snprintf(ra, sizeof ra, "%u", retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)reply->status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result
queue_error(struct MHD_Connection *c, int status, unsigned retry_after, const char *allow,
            const char *msg)
{
    struct srv_reply r = { 0 };
    srv_reply_error(&r, status, "%s", msg);
    r.allow = allow;
    return queue_reply(c, &r, retry_after);
}

/* ---- the web page ------------------------------------------------------- */

static enum MHD_Result
serve_asset(struct MHD_Connection *c, const char *url, const char *method)
{
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return queue_error(c, 405, 0, "GET, HEAD", "the web page's files are read-only");
    const struct srv_asset *a = srv_asset_find(url);
    if (!a) {
        char msg[300];
        snprintf(msg, sizeof msg, "no such page: %.200s", url);
        return queue_error(c, 404, 0, NULL, msg);
    }
    const char *etag = srv_asset_etag(a);
    const char *inm =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    bool same = inm && strcmp(inm, etag) == 0;
    struct MHD_Response *resp =
        same ? MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT)
             : MHD_create_response_from_buffer(a->size, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    if (!same)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
    /* Revalidate every time: a new build of the server serves new files at
     * the same paths. */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "Content-Security-Policy", "frame-ancestors 'none'");
    enum MHD_Result rc = MHD_queue_response(c, same ? 304 : 200, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* ---- the event stream --------------------------------------------------- */

static ssize_t
events_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    ssize_t n = srv_events_read(cls, buf, max, KEEPALIVE_MS);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void
events_done(void *cls)
{
    srv_events_unsubscribe(cls);
}

static enum MHD_Result
serve_events(struct srv_http *h, struct MHD_Connection *c, const char *method)
{
    if (strcmp(method, "GET") != 0)
        return queue_error(c, 405, 0, "GET", "the event stream is read with GET");
    struct srv_events_client *ec = srv_events_subscribe(h->cfg.events);
    if (!ec) {
        char msg[128];
        snprintf(msg, sizeof msg, "too many event streams (at most %u) or shutting down",
                 h->cfg.max_streams);
        return queue_error(c, 503, 5, NULL, msg);
    }
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, events_reader, ec, events_done);
    if (!resp) {
        srv_events_unsubscribe(ec);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    enum MHD_Result rc = MHD_queue_response(c, 200, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* ---- the door ----------------------------------------------------------- */

static bool
is_api(const char *url)
{
    return strncmp(url, "/v1/", 4) == 0 || strcmp(url, "/v1") == 0;
}

/* Whether the Origin header, when a browser sends one, is this server's own
 * page: "http://" followed by the Host header. */
static bool
same_origin(struct MHD_Connection *c)
{
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (!origin)
        return true;
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    return host && strncmp(origin, "http://", 7) == 0 && strcmp(origin + 7, host) == 0;
}

/* The first call of a request: 1 when it may go on, 0 when an answer was
 * queued (*RC its result). */
static int
door(struct srv_http *h, struct MHD_Connection *c, const char *url, const char *method,
     struct req *r, enum MHD_Result *rc)
{
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (h->cfg.check_host && !srv_host_is_loopback(host)) {
        /* A name that resolved to 127.0.0.1 from a browser's page is how DNS
         * rebinding reaches a loopback server. */
        *rc = queue_error(c, 403, 0, NULL,
                          "Host header is not a loopback name (localhost, 127.0.0.1, [::1]); "
                          "start rspwalkd with --token-file to serve other names");
        return 0;
    }
    if (is_api(url)) {
        if (h->cfg.token) {
            const char *auth =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
            bool ok = srv_auth_bearer_ok(h->cfg.token, auth);
            /* EventSource cannot send headers: the event stream also takes
             * the token as ?access_token= (RFC 6750, section 2.3). */
            const char *qt = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "access_token");
            if (!ok && !auth && qt && strcmp(url, "/v1/events") == 0)
                ok = srv_token_equal(h->cfg.token, qt);
            if (!ok) {
                *rc = queue_error(c, 401, 0, NULL,
                                  auth ? "wrong bearer token"
                                       : "this server needs 'Authorization: Bearer TOKEN'");
                return 0;
            }
        }
        if (!same_origin(c)) {
            *rc = queue_error(c, 403, 0, NULL,
                              "cross-origin request refused (Origin is not this server)");
            return 0;
        }
    }
    if (strcmp(url, "/v1/events") == 0)
        return 1;
    unsigned n = atomic_fetch_add(&h->in_flight, 1) + 1;
    r->counted = true;
    if (n > h->cfg.max_requests) {
        char msg[128];
        snprintf(msg, sizeof msg, "too many requests in flight (at most %u): try again",
                 h->cfg.max_requests);
        *rc = queue_error(c, 503, 1, NULL, msg);
        return 0;
    }
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > h->cfg.max_body) {
        char msg[128];
        snprintf(msg, sizeof msg, "request body larger than %zu bytes", h->cfg.max_body);
        *rc = queue_error(c, 413, 0, NULL, msg);
        return 0;
    }
    (void)method;
    return 1;
}

struct args {
    struct srv_arg v[ARGS_MAX];
    size_t n;
    bool overflow;
};

static enum MHD_Result
collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    struct args *a = cls;
    if (a->n == ARGS_MAX) {
        a->overflow = true;
        return MHD_NO;
    }
    a->v[a->n++] = (struct srv_arg){ key, value };
    return MHD_YES;
}

static enum MHD_Result
answer(struct srv_http *h, struct MHD_Connection *c, const char *url, const char *method,
       struct req *r)
{
    if (r->too_large) {
        char msg[128];
        snprintf(msg, sizeof msg, "request body larger than %zu bytes", h->cfg.max_body);
        return queue_error(c, 413, 0, NULL, msg);
    }
    if (!is_api(url))
        return serve_asset(c, url, method);
    struct args a = { .n = 0 };
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
    if (a.overflow)
        return queue_error(c, 400, 0, NULL, "more than 32 query parameters");
    struct srv_request rq = {
        .method = method,
        .path = url,
        .args = a.v,
        .nargs = a.n,
        .content_type =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
        .body = r->body,
        .body_len = r->len,
    };
    struct srv_reply reply;
    srv_api_handle(h->cfg.api, &rq, &reply);
    return queue_reply(c, &reply, reply.status == 503 ? 1 : 0);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
           const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)version;
    struct srv_http *h = cls;
    struct req *r = *con_cls;
    if (!r) {
        if (!(r = calloc(1, sizeof *r)))
            return MHD_NO;
        *con_cls = r;
        enum MHD_Result rc = MHD_YES;
        if (!door(h, c, url, method, r, &rc)) {
            r->answered = true;
            return rc;
        }
        if (strcmp(url, "/v1/events") == 0) {
            r->answered = true;
            return serve_events(h, c, method);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->answered)
            return MHD_YES;
        if (r->too_large || r->len + n > h->cfg.max_body) {
            /* Chunked bodies have no Content-Length to refuse up front: read
             * and drop a bounded amount, then answer 413 or cut. */
            r->too_large = true;
            r->discarded += n;
            return r->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
        }
        if (r->len + n > r->cap) {
            size_t cap = r->cap ? r->cap : 1024;
            while (cap < r->len + n)
                cap *= 2;
            char *b = realloc(r->body, cap);
            if (!b)
                return MHD_NO;
            r->body = b;
            r->cap = cap;
        }
        memcpy(r->body + r->len, upload_data, n);
        r->len += n;
        return MHD_YES;
    }
    if (r->answered)
        return MHD_YES;
    r->answered = true;
    return answer(h, c, url, method, r);
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)c, (void)t;
    struct srv_http *h = cls;
    struct req *r = *con_cls;
    if (!r)
        return;
    if (r->counted)
        atomic_fetch_sub(&h->in_flight, 1);
    free(r->body);
    free(r);
    *con_cls = NULL;
}

/* libmicrohttpd's own complaints (a client that broke HTTP), one line each. */
static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    srv_log("http: %s", msg);
}

int
srv_http_start(const struct srv_http_config *cfg, struct srv_http **out, char *err, size_t errlen)
{
    struct srv_http *h = calloc(1, sizeof *h);
    if (!h) {
        close(cfg->listen_fd);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->cfg = *cfg;
    atomic_init(&h->in_flight, 0);
    /* Connections beyond the requests in flight and the streams are let in
     * so that they can be told 503 rather than left in the backlog. */
    unsigned conn_limit = cfg->max_requests * 2 + cfg->max_streams + 16;
    h->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                                  MHD_USE_AUTO | MHD_USE_ERROR_LOG,
                              0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log,
                              NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)cfg->listen_fd,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->idle_timeout_s,
                              MHD_OPTION_CONNECTION_LIMIT, conn_limit, MHD_OPTION_NOTIFY_COMPLETED,
                              on_completed, h, MHD_OPTION_END);
    if (!h->mhd) {
        close(cfg->listen_fd);
        free(h);
        snprintf(err, errlen, "libmicrohttpd did not start");
        return -1;
    }
    *out = h;
    return 0;
}

void
srv_http_stop(struct srv_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->mhd);
    free(h);
}
