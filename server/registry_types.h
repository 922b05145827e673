/* server/registry_types.h -- the registry's codes, states and target specs.
 *
 * Part of the registry's contract (server/registry.h includes it), apart so
 * that the files under the registry (a target, its link, its walks) use
 * them without depending on the registry itself.
 */
#ifndef RSPWALK_SERVER_REGISTRY_TYPES_H
#define RSPWALK_SERVER_REGISTRY_TYPES_H

/* Failures, each a fitting HTTP status in server/http.c. */
enum srv_err {
    SRV_OK = 0,
    SRV_EINVAL = -1,    /* bad argument from the client: 400 */
    SRV_ENOTFOUND = -2, /* no such target or sample: 404 */
    SRV_ECONFLICT = -3, /* the target cannot do that now (exited, link lost): 409 */
    SRV_ELIMIT = -4,    /* too many targets, samples or requests: 429 */
    SRV_ESTUB = -5,     /* the stub failed or broke the protocol: 502 */
    SRV_ETIMEOUT = -6,  /* no answer before the deadline: 504 */
    SRV_EINTERNAL = -7, /* out of memory, store failure: 500 */
};

/* A target's link state. */
enum srv_state {
    SRV_CONNECTING, /* first connection not made yet */
    SRV_STOPPED,
    SRV_RUNNING,
    SRV_EXITED,
    SRV_LINK_LOST, /* reconnecting with backoff */
};

/* "connecting", "stopped", "running", "exited", "link-lost". */
const char *srv_state_name(enum srv_state s);

/* Receives server events, from any thread: TYPE is the SSE event name
 * ("target", "sample"), JSON its data object (borrowed for the call). */
typedef void (*srv_event_fn)(void *arg, const char *type, const char *json);

/* What a client or the command line registers.  Strings borrowed. */
struct srv_target_spec {
    const char *target;  /* TARGET as the CLI takes it (HOST:PORT, unix:PATH, ...) */
    const char *exe;     /* NULL: ask the stub */
    const char *sysroot; /* NULL: none */
    const char *name;    /* NULL: the target string */
    const char *rtos;    /* NULL: none; "freertos" or "auto": the board's RTOS tasks as threads,
                          * read with EXE (rspwalk/rtos.h) */
};

#endif /* RSPWALK_SERVER_REGISTRY_TYPES_H */
