/* server/link.h -- one target of rspwalkd and the thread that keeps its link.
 *
 * Each target has one link thread, the only thread that talks to its stub:
 * it connects (and reconnects with backoff), takes the stops the stub
 * reports, and serves the requests other threads post to it (walk, pause,
 * resume, one sample tick), one at a time.  Other threads read its state and
 * its cached documents under the target's lock.  Not the registry's list of
 * targets (server/registry.c) nor the HTTP layer.
 */
#ifndef RSPWALK_SERVER_LINK_H
#define RSPWALK_SERVER_LINK_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/registry.h"

struct sw_modcache;
struct sw_walker;

/* What every link of one registry shares; owned by the registry, which
 * outlives its links. */
struct srv_link_env {
    struct srv_store *store; /* borrowed; NULL: none */
    struct sw_modcache *mc;  /* the one module cache of every walker */
    int timeout_ms;          /* per protocol read */
    const char *cache_dir;   /* borrowed; NULL: the library's default */
    srv_event_fn event;      /* NULL: none */
    void *event_arg;
};

/* The options a document was walked with: the key of the cached documents. */
struct srv_walk_key {
    char *thread; /* owned; NULL: every thread */
    bool locals;
    size_t max_frames;
};

/* Waits for several requests at once (one srv_stacks_all, one sample tick).
 * Lives on the waiting thread's stack; a link touches it only for a request
 * that was not abandoned, under that target's lock. */
struct srv_waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t pending; /* requests posted and not done */
};

enum srv_req_kind {
    SRV_REQ_WALK,   /* the document; a running target is stopped and resumed */
    SRV_REQ_SAMPLE, /* the same, every thread; resumed unless LEAVE_STOPPED */
    SRV_REQ_PAUSE,
    SRV_REQ_RESUME,
};

/* One request to a link.  Owned by the poster until posted; then by the
 * link until done, by the poster again after srv_req_settle says so, or by
 * the link for good once abandoned (it frees it). */
struct srv_req {
    struct srv_req *next; /* in the target's queue */
    enum srv_req_kind kind;
    struct srv_walk_key key;
    bool leave_stopped;
    struct srv_waiter *waiter; /* borrowed while posted */
    bool done, abandoned;      /* under the target's lock */
    /* Results, valid once done. */
    int rc;          /* SRV_OK or an enum srv_err */
    char err[320];   /* the message when RC is not SRV_OK */
    char *doc;       /* owned: the document (WALK, SAMPLE) */
    int64_t time_us; /* CLOCK_REALTIME microseconds the walk began */
    bool fresh;      /* walked now, not answered from the cache */
};

/* How many requests may wait on one link; more are refused (SRV_ELIMIT). */
#define SRV_LINK_MAX_QUEUE 256

/* Documents kept per target for walks with different options. */
#define SRV_LINK_CACHE 4

struct srv_cached_doc {
    struct srv_walk_key key;
    char *doc; /* owned; NULL: empty slot */
    uint64_t epoch, stop_gen;
};

struct srv_target {
    int64_t id;
    char *name, *target, *exe, *sysroot; /* owned; exe, sysroot may be NULL */
    bool persisted;                      /* kept in the store */
    const struct srv_link_env *env;      /* borrowed */
    atomic_int refs;                     /* srv_target_unref frees at 0 */
    pthread_t thread;
    bool thread_started;
    int wake_fd; /* eventfd: posts and quit wake the link thread */

    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cv;  /* DONE */
    enum srv_state state;
    char *error;       /* owned: the last link failure, NULL: none */
    int signal;        /* the last stop's signal (gdb numbering), -1: none */
    const char *arch;  /* static: the arch table's name; NULL until connected */
    const char *stub;  /* static: "gdbserver", "qemu"; NULL: not known */
    bool quit;         /* the link thread should end */
    bool done;         /* the link thread has ended (its link closed) */
    uint64_t epoch;    /* links made so far: a document from another link is stale */
    uint64_t stop_gen; /* the live link's sw_proc.stop_gen, as of its last request */
    struct srv_req *head, *tail;
    size_t nqueued;
    struct srv_cached_doc cache[SRV_LINK_CACHE];
    size_t cache_next;
    uint64_t walks, cached_walks, reconnects;
    uint64_t round_trips;      /* over every link of this target */
    uint64_t last_round_trips; /* of the last walk that talked to the stub */

    /* The link thread's alone. */
    struct sw_walker *w;
    bool was_running; /* running (or stopped for a walk) when its link was lost */
};

/* A new target from SPEC with ID, its link thread started (connecting in
 * the background).  Returns 0, or a code with the message in ERR.  *OUT
 * holds one reference: srv_target_unref after srv_target_join. */
int srv_target_start(const struct srv_link_env *env, const struct srv_target_spec *spec, int64_t id,
                     bool persisted, struct srv_target **out, char *err, size_t errlen);

/* Ask the link thread to end: it fails what is queued, leaves the target
 * as found (running if it ran, stopped if it was stopped) and closes the
 * link without detaching.  Does not wait. */
void srv_target_quit(struct srv_target *t);

/* Whether the link thread has ended (srv_target_join will not block). */
bool srv_target_done(struct srv_target *t);

/* Wait for the link thread to end, at most until DEADLINE_US (CLOCK_MONOTONIC
 * microseconds; 0: no limit).  Returns true when it has. */
bool srv_target_wait_done(struct srv_target *t, uint64_t deadline_us);

/* Join the link thread (after srv_target_quit).  Once per target. */
void srv_target_join(struct srv_target *t);

void srv_target_ref(struct srv_target *t);
/* Drop a reference; the last one frees T (its thread joined before). */
void srv_target_unref(struct srv_target *t);

/* The target's description as GET /v1/targets lists it.  New reference. */
json_t *srv_target_info(struct srv_target *t);

/* A request of KIND with KEY's options copied (KEY may be NULL: every
 * thread).  NULL when out of memory.  Free with srv_req_free. */
struct srv_req *srv_req_new(enum srv_req_kind kind, const struct srv_walk_key *key);
void srv_req_free(struct srv_req *q);

/* A copy of the cached document for KEY when T is stopped and has not
 * resumed or stopped again since it was walked: true and *DOC (caller frees
 * with free()).  Counts the cached walk. */
bool srv_target_cached(struct srv_target *t, const struct srv_walk_key *key, char **doc);

/* Post Q to T's link, to be answered through W (W->pending counted here).
 * Returns 0, or SRV_ECONFLICT (no link: the message names the state and
 * the last failure), SRV_ENOTFOUND (deleted), SRV_ELIMIT (queue full) with
 * the message in ERR; Q stays the caller's then. */
int srv_target_post(struct srv_target *t, struct srv_req *q, struct srv_waiter *w, char *err,
                    size_t errlen);

void srv_waiter_init(struct srv_waiter *w);
void srv_waiter_fini(struct srv_waiter *w);
/* Wait until every posted request is done or DEADLINE_US (CLOCK_MONOTONIC
 * microseconds) has passed. */
void srv_waiter_wait(struct srv_waiter *w, uint64_t deadline_us);

/* After srv_waiter_wait: true when Q (posted to T) is done and the
 * caller's again; false when it was not done, is now abandoned, and
 * belongs to the link (the caller must not touch it again). */
bool srv_req_settle(struct srv_target *t, struct srv_req *q);

/* ---- for the link thread alone (server/link.c, server/walk.c) ---- */

/* Set T's state (and its last failure ERROR, and the last stop's SIGNAL,
 * when not NULL and not negative), and send a "target" event when that
 * changes anything. */
void srv_link_publish(struct srv_target *t, enum srv_state state, const char *error, int signal);

/* Close T's link after failure CODE (SW_EEXITED: the target exited) with
 * MSG, and publish the state that follows (exited or link-lost). */
void srv_link_drop(struct srv_target *t, int code, const char *msg);

/* Keep DOC, walked with KEY at STOP_GEN of the live link, for walks that
 * come before the target resumes. */
void srv_link_cache_put(struct srv_target *t, const struct srv_walk_key *key, const char *doc,
                        uint64_t stop_gen);

/* CLOCK_MONOTONIC and CLOCK_REALTIME in microseconds. */
uint64_t srv_now_us(void);
int64_t srv_wall_us(void);

/* A condition variable on CLOCK_MONOTONIC, and a wait on it until
 * DEADLINE_US (CLOCK_MONOTONIC microseconds; 0: no limit) that returns false
 * once the deadline has passed. */
void srv_cond_init(pthread_cond_t *cv);
bool srv_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t deadline_us);

/* Copy a formatted message into BUF of LEN bytes; returns CODE. */
int srv_fail(char *buf, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* RSPWALK_SERVER_LINK_H */
