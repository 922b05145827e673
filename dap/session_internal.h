/* dap/session_internal.h -- what the files of a DAP session share.
 *
 * dap/session.c: the session, its messages and the requests that change
 * the target's state (attach, continue, pause, disconnect); dap/stacks.c:
 * the requests that look at a stop (threads, stackTrace, scopes, variables,
 * readMemory); dap/value.c: printed values split into their members;
 * dap/text.c: one-line failures and JSON strings.
 */
#ifndef RSPWALK_DAP_SESSION_INTERNAL_H
#define RSPWALK_DAP_SESSION_INTERNAL_H

#include <jansson.h>

#include "dap/dap.h"
#include "dap/text.h"
#include "dap/wire.h"
#include "rspwalk/rspwalk.h"

enum dap_state {
    DAP_NO_TARGET = 0, /* before attach */
    DAP_STOPPED,       /* the target is stopped: every thread can be walked */
    DAP_RUNNING,       /* resumed by continue; its fd is watched for the stop */
    DAP_EXITED,        /* it exited or was killed */
    DAP_LOST,          /* the link failed */
};

/* A thread seen at some stop; its DAP id stays the same for the session. */
struct dap_thread {
    sw_tid tid;
    int id;       /* DAP threadId: its place in the session's list, from 1 */
    bool present; /* listed at the current stop */
    bool walked;  /* ST holds its walk of the current stop */
    int walk_rc;  /* the walk's code (0: ST valid) */
    char walk_err[320];
    struct sw_stack st;
    int64_t frame_base; /* frameId of ST's frame 0 */
};

enum dap_ref_kind {
    DAP_REF_ARGS = 0, /* the parameters of frame FRAME_ID */
    DAP_REF_LOCALS,   /* its locals */
    DAP_REF_VALUE,    /* the members of the printed aggregate VALUE */
};

/* One variablesReference (its index + 1), valid during one stop. */
struct dap_ref {
    enum dap_ref_kind kind;
    int64_t frame_id;
    char *value; /* owned: DAP_REF_VALUE's printed value */
};

struct dap_session {
    struct dap_config cfg;
    dap_write_fn write;
    void *write_arg;
    struct dap_wire wire;
    int64_t seq; /* of the last message sent */
    bool ended;  /* disconnect answered, or the client gone */
    bool write_failed;
    bool configured;   /* configurationDone answered */
    bool stop_pending; /* a stopped event waits for configurationDone */
    enum dap_state state;
    struct sw_walker *w;        /* owned, NULL before attach; owns the process and link */
    char *target;               /* owned: the target as attach named it */
    json_t *after;              /* owned: events to send after the current response */
    struct dap_thread *threads; /* owned: NTHREADS, CAP */
    size_t nthreads, cap;
    int64_t next_frame_id; /* the next walk's frame_base */
    struct dap_ref *refs;  /* owned: NREFS, REFS_CAP */
    size_t nrefs, refs_cap;
};

/* A request handler: ARGS is the request's "arguments" (an object, maybe
 * empty).  Returns 0 with *BODY (owned by the caller; may stay NULL) or -1
 * with one line in ERR. */
typedef int (*dap_handler)(struct dap_session *s, json_t *args, json_t **body, char *err,
                           size_t errlen);

/* dap/session.c */
/* Queue event EVENT with BODY (taken) to be sent after the current response. */
void dap_event_after(struct dap_session *s, const char *event, json_t *body);
/* Log one line on the configuration's log. */
void dap_log(struct dap_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* dap/stacks.c */
int dap_req_threads(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen);
int dap_req_stack_trace(struct dap_session *s, json_t *args, json_t **body, char *err,
                        size_t errlen);
int dap_req_scopes(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen);
int dap_req_variables(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen);
int dap_req_read_memory(struct dap_session *s, json_t *args, json_t **body, char *err,
                        size_t errlen);
/* The DAP id of thread TID, added to the list if new; 0 when out of memory. */
int dap_thread_id(struct dap_session *s, sw_tid tid);
/* Forget everything of the current stop: walks, frame ids, variable refs. */
void dap_stop_forget(struct dap_session *s);
/* Free the thread list and refs (session end). */
void dap_stacks_free(struct dap_session *s);

/* dap/value.c */
/* One member of a printed aggregate: NAME ("x", or "[2]" for the third of a
 * list without names) and VALUE, both owned. */
struct dap_member {
    char *name;
    char *value;
};
/* Split gdb's print of an aggregate, "{x = 1, y = {2, 3}}", into its members
 * (nested braces and quoted strings kept whole).  Returns the number of
 * members (0: VALUE is not an aggregate, or "{}") with *OUT (caller frees with
 * dap_members_free), or -1 when out of memory. */
long dap_value_split(const char *value, struct dap_member **out);
void dap_members_free(struct dap_member *m, size_t n);
/* Whether VALUE prints an aggregate with members to show. */
bool dap_value_expandable(const char *value);

#endif /* RSPWALK_DAP_SESSION_INTERNAL_H */
