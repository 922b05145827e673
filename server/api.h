/* server/api.h -- the /v1 endpoints of rspwalkd's HTTP API, over the registry and the store.
 *
 * A request comes in already let through the door by server/http.c (Host,
 * token, limits, body read); this layer routes it, checks its parameters and
 * body, calls the registry or the store and writes the reply: JSON, or the
 * tree's dot and folded text.  No HTTP library here, so every endpoint is
 * callable from a test as a function.  docs/openapi.json describes what each
 * endpoint takes and answers; /v1/events is server/http.c's (a stream).
 */
#ifndef RSPWALK_SERVER_API_H
#define RSPWALK_SERVER_API_H

#include <stddef.h>

struct srv_registry;
struct srv_store;
struct srv_deadline_pool;
struct srv_policy;

struct srv_api_config {
    struct srv_registry *registry;   /* borrowed, required */
    struct srv_store *store;         /* borrowed; NULL: no history (503 on those endpoints) */
    struct srv_deadline_pool *pool;  /* borrowed, required */
    const struct srv_policy *policy; /* borrowed, required */
    int request_timeout_ms;          /* a call to a stub answered 504 after this */
};

/* One query parameter, both strings borrowed. */
struct srv_arg {
    const char *key;
    const char *value;
};

/* A request; every member borrowed for the call. */
struct srv_request {
    const char *method;
    const char *path; /* decoded, without the query */
    const struct srv_arg *args;
    size_t nargs;
    const char *content_type; /* NULL: none */
    const char *body;         /* BODY_LEN bytes, not NUL-terminated; NULL when empty */
    size_t body_len;
};

/* A reply.  BODY owned (srv_reply_fini); TYPE and ALLOW static. */
struct srv_reply {
    int status;
    const char *type; /* Content-Type; NULL with no body */
    char *body;
    size_t len;
    const char *allow; /* the Allow header of a 405 */
    char location[64]; /* the Location header of a 201, or "" */
};

/* Answer RQ into *OUT (zeroed first).  Always fills *OUT, errors included:
 * {"error": "one line"} with its status. */
void srv_api_handle(const struct srv_api_config *api, const struct srv_request *rq,
                    struct srv_reply *out);

/* *OUT = {"error": MESSAGE} with STATUS; MESSAGE printf-formatted, its
 * newlines made spaces. */
void srv_reply_error(struct srv_reply *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void srv_reply_fini(struct srv_reply *r);

#endif /* RSPWALK_SERVER_API_H */
