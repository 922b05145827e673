/* server/target.h -- one target of rspwalkd: its state, request queue and cached documents.
 *
 * Each target has one link thread (server/link.h), the only thread that
 * talks to its stub.  Other threads post requests to it (walk, pause,
 * resume, a whole sample run) and read its state and cached documents, all
 * under the target's lock, through what this header declares.
 */
#ifndef RSPWALK_SERVER_TARGET_H
#define RSPWALK_SERVER_TARGET_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/registry_types.h"
#include "server/util.h"

struct srv_store;
struct sw_modcache;
struct sw_walker;
struct rsp_tdesc_cache;

/* What every link of one registry shares; owned by the registry, which
 * outlives its links. */
struct srv_link_env {
    struct srv_store *store;     /* borrowed; NULL: none */
    struct sw_modcache *mc;      /* the one module cache of every walker */
    struct rsp_tdesc_cache *tdc; /* the target descriptions of every link's connects */
    int timeout_ms;              /* per protocol read */
    /* Each request's whole conversation with the stub (a walk, a pause, a
     * resume; a sample run's its seconds on top), and each connect's:
     * rsp_session_set_deadline.  0: none. */
    int deadline_ms;
    size_t max_threads;    /* rsp_session_config.max_threads: 0 the library's default */
    const char *cache_dir; /* borrowed; NULL: the library's default */
    srv_event_fn event;    /* NULL: none */
    void *event_arg;
};

/* The options a document was walked with: the key of the cached documents. */
struct srv_walk_key {
    char *thread; /* owned; NULL: every thread */
    bool locals;
    bool lines;
    size_t max_frames;
};

/* Waits for several requests at once (one srv_stacks_all, one sample run).
 * Lives on the waiting thread's stack; a link touches it only for a request
 * that was not abandoned, under that target's lock. */
struct srv_waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t pending; /* requests posted and not done */
};

enum srv_req_kind {
    SRV_REQ_WALK, /* the document; a running target is stopped and resumed */
    SRV_REQ_PAUSE,
    SRV_REQ_RESUME,
    SRV_REQ_SAMPLE_RUN, /* a whole sample run (struct srv_sample_req) */
    SRV_REQ_DOOR,       /* a whole door session on the link (struct srv_door_req) */
};

/* A door session's share of the link (server/doors.h): the link thread
 * serves the front end on FD (gdb, lldb, or a DAP session's own link)
 * until it leaves, with the target stopped for it and resumed after if it
 * was running (or the front end detached). */
struct srv_door_req {
    int fd;       /* the front end's connected socket; the poster's, not closed */
    char who[96]; /* for messages: "gdb from 127.0.0.1:40312", "DAP session" */
    bool shut;    /* under the target's lock: FD was shut down by srv_target_quit */
};

/* A sample run's share on one link: what it asks, how to end it early,
 * and how far it has come. */
struct srv_sample_req {
    int64_t run_id;
    double hz, seconds;
    /* The run ends at its next sample once set: by the run (stopped), by
     * srv_target_quit (the target deleted, the server shutting down). */
    volatile bool cancel;
    /* Progress, under the target's lock: samples taken; of those, stored
     * (committed to the store, or taken when there is none). */
    uint64_t samples, stored;
};

/* One request to a link.  Owned by the poster until posted; then by the
 * link until done, by the poster again after srv_req_settle says so, or by
 * the link for good once abandoned (it frees it). */
struct srv_req {
    struct srv_req *next; /* in the target's queue */
    enum srv_req_kind kind;
    struct srv_walk_key key;
    struct srv_waiter *waiter; /* borrowed while posted */
    bool done, abandoned;      /* under the target's lock */
    /* Results, valid once done. */
    int rc;                       /* SRV_OK or an enum srv_err */
    char err[320];                /* the message when RC is not SRV_OK */
    char *doc;                    /* owned: the document (WALK, SAMPLE) */
    int64_t time_us;              /* CLOCK_REALTIME microseconds the walk began */
    bool fresh;                   /* walked now, not answered from the cache */
    struct srv_sample_req sample; /* SAMPLE_RUN */
    struct srv_door_req door;     /* DOOR */
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
    char *rtos;                          /* owned, may be NULL: srv_target_spec.rtos */
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
    /* The sample run the link thread serves (NULL: none): while it runs,
     * other requests are refused with SRV_ECONFLICT ("sampling"). */
    struct srv_req *sampling;
    /* The door session the link thread serves (NULL: none): while it goes,
     * other requests are refused with SRV_ECONFLICT (the link is the
     * session's), and srv_target_quit ends it by shutting its socket. */
    struct srv_req *door;

    /* The link thread's alone. */
    struct sw_walker *w;
    bool was_running; /* running (or stopped for a walk) when its link was lost */
};

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
 * the last failure; or a sample run holds the link, or one is queued and Q
 * is another), SRV_ENOTFOUND (deleted), SRV_ELIMIT (queue full) with the
 * message in ERR; Q stays the caller's then. */
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

/* A target from SPEC with ID, no link thread yet (server/link.c starts it).
 * Returns 0, or a code with the message in ERR.  *OUT holds one reference. */
int srv_target_new(const struct srv_link_env *env, const struct srv_target_spec *spec, int64_t id,
                   bool persisted, struct srv_target **out, char *err, size_t errlen);

/* Wake the link thread from its wait (a post, a quit). */
void srv_target_wake(struct srv_target *t);

/* The next request that someone still waits for, or NULL. */
struct srv_req *srv_target_dequeue(struct srv_target *t);

/* Take out every queued walk with KEY's options: one walk answers them all,
 * since it begins after each was asked.  The list is linked by next. */
struct srv_req *srv_target_take_walks(struct srv_target *t, const struct srv_walk_key *key);

/* Answer every queued request with CODE and MSG. */
void srv_target_fail_queued(struct srv_target *t, int code, const char *msg);

/* Q is answered: back to its waiter, or freed when abandoned.  _locked:
 * with T's lock held. */
void srv_req_complete(struct srv_target *t, struct srv_req *q);
void srv_req_complete_locked(struct srv_target *t, struct srv_req *q);

/* The message for a request that finds no link (T's state and its last
 * failure), into ERR; returns SRV_ECONFLICT.  With T's lock held. */
int srv_target_no_link_locked(struct srv_target *t, char *err, size_t errlen);

/* Set T's state (and its last failure ERROR, and the last stop's SIGNAL,
 * when not NULL and not negative), and send a "target" event when that
 * changes anything. */
void srv_target_publish(struct srv_target *t, enum srv_state state, const char *error, int signal);

/* Close T's link after failure CODE (SW_EEXITED: the target exited) with
 * MSG (which may point into the link's objects: it is copied first), and
 * publish the state that follows (exited or link-lost). */
void srv_target_drop_link(struct srv_target *t, int code, const char *msg);

/* Keep DOC, walked with KEY at STOP_GEN of the live link, for walks that
 * come before the target resumes. */
void srv_target_cache_put(struct srv_target *t, const struct srv_walk_key *key, const char *doc,
                          uint64_t stop_gen);

#endif /* RSPWALK_SERVER_TARGET_H */
