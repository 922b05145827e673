/* server/target.c -- one target of rspwalkd: its state, request queue and cached documents.
 *
 * What the threads that ask (HTTP requests, sample runs) and the target's
 * link thread (server/link.c) share, all under the target's lock: the
 * state they read, the requests they post and the link answers, and the
 * documents kept per stop.  Not the link thread itself nor the walks.
 */
#include "server/target.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"

/* ---- requests and waiters ------------------------------------------------ */

static bool
key_eq(const struct srv_walk_key *a, const struct srv_walk_key *b)
{
    if ((a->thread == NULL) != (b->thread == NULL))
        return false;
    if (a->thread != NULL && strcmp(a->thread, b->thread) != 0)
        return false;
    return a->locals == b->locals && a->lines == b->lines && a->max_frames == b->max_frames;
}

static int
key_copy(struct srv_walk_key *dst, const struct srv_walk_key *src)
{
    *dst = (struct srv_walk_key){ 0 };
    if (src == NULL)
        return 0;
    if (src->thread != NULL && (dst->thread = strdup(src->thread)) == NULL)
        return -1;
    dst->locals = src->locals;
    dst->lines = src->lines;
    dst->max_frames = src->max_frames;
    return 0;
}

struct srv_req *
srv_req_new(enum srv_req_kind kind, const struct srv_walk_key *key)
{
    struct srv_req *q = calloc(1, sizeof *q);
    if (q == NULL)
        return NULL;
    q->kind = kind;
    q->door.fd = -1;
    if (key_copy(&q->key, key) < 0) {
        free(q);
        return NULL;
    }
    return q;
}

void
srv_req_free(struct srv_req *q)
{
    if (q == NULL)
        return;
    free(q->key.thread);
    free(q->doc);
    free(q);
}

void
srv_waiter_init(struct srv_waiter *w)
{
    pthread_mutex_init(&w->mu, NULL);
    srv_cond_init(&w->cv);
    w->pending = 0;
}

void
srv_waiter_fini(struct srv_waiter *w)
{
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

void
srv_waiter_wait(struct srv_waiter *w, uint64_t deadline_us)
{
    pthread_mutex_lock(&w->mu);
    while (w->pending > 0)
        if (!srv_cond_wait_until(&w->cv, &w->mu, deadline_us))
            break;
    pthread_mutex_unlock(&w->mu);
}

bool
srv_req_settle(struct srv_target *t, struct srv_req *q)
{
    pthread_mutex_lock(&t->mu);
    bool done = q->done;
    if (!done)
        q->abandoned = true;
    pthread_mutex_unlock(&t->mu);
    return done;
}

/* Q is answered: hand it back to its waiter, or free it when abandoned.
 * Called with T's lock held; the waiter is touched only under it, which is
 * what lets srv_req_settle abandon a request safely. */
void
srv_req_complete_locked(struct srv_target *t, struct srv_req *q)
{
    (void)t;
    if (q->abandoned) {
        srv_req_free(q);
        return;
    }
    q->done = true;
    struct srv_waiter *w = q->waiter;
    pthread_mutex_lock(&w->mu);
    w->pending--;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void
srv_req_complete(struct srv_target *t, struct srv_req *q)
{
    pthread_mutex_lock(&t->mu);
    srv_req_complete_locked(t, q);
    pthread_mutex_unlock(&t->mu);
}

void
srv_target_wake(struct srv_target *t)
{
    uint64_t one = 1;
    ssize_t n = write(t->wake_fd, &one, sizeof one);
    (void)n; /* a full counter is already a pending wakeup */
}

/* The message for a request that finds no link. */
int
srv_target_no_link_locked(struct srv_target *t, char *err, size_t errlen)
{
    const char *why = t->error ? t->error : "no reason given";
    switch (t->state) {
    case SRV_CONNECTING:
        return srv_fail(err, errlen, SRV_ECONFLICT, "target %" PRId64 " (%s): connecting: %s",
                        t->id, t->target, t->error ? t->error : "not connected yet");
    case SRV_EXITED:
        return srv_fail(err, errlen, SRV_ECONFLICT, "target %" PRId64 " (%s): exited: %s", t->id,
                        t->target, why);
    default:
        return srv_fail(err, errlen, SRV_ECONFLICT,
                        "target %" PRId64 " (%s): link lost: %s; reconnecting", t->id, t->target,
                        why);
    }
}

/* Whether a request of KIND (a sample run, a door session: each holds the
 * link) waits in T's queue.  With T's lock held. */
static bool
kind_queued(struct srv_target *t, enum srv_req_kind kind)
{
    for (struct srv_req *q = t->head; q != NULL; q = q->next)
        if (q->kind == kind && !q->abandoned)
            return true;
    return false;
}

int
srv_target_post(struct srv_target *t, struct srv_req *q, struct srv_waiter *w, char *err,
                size_t errlen)
{
    int rc = 0;
    pthread_mutex_lock(&t->mu);
    if (t->quit)
        rc = srv_fail(err, errlen, SRV_ENOTFOUND, "target %" PRId64 " was deleted", t->id);
    else if (t->state != SRV_STOPPED && t->state != SRV_RUNNING)
        rc = srv_target_no_link_locked(t, err, errlen);
    else if (t->sampling != NULL)
        rc = srv_fail(err, errlen, SRV_ECONFLICT,
                      "target %" PRId64 ": sampling (run %" PRId64 "); try again when it ends",
                      t->id, t->sampling->sample.run_id);
    else if (t->door != NULL || (q->kind == SRV_REQ_DOOR && kind_queued(t, SRV_REQ_DOOR)))
        rc = srv_fail(err, errlen, SRV_ECONFLICT,
                      "target %" PRId64 ": its link is held by a door session (%s); try again "
                      "when it ends",
                      t->id, t->door != NULL ? t->door->door.who : "about to start");
    else if (q->kind == SRV_REQ_SAMPLE_RUN && kind_queued(t, SRV_REQ_SAMPLE_RUN))
        rc = srv_fail(err, errlen, SRV_ECONFLICT,
                      "target %" PRId64 ": another sample run is about to start on it", t->id);
    else if (t->nqueued >= SRV_LINK_MAX_QUEUE)
        rc = srv_fail(err, errlen, SRV_ELIMIT,
                      "target %" PRId64 ": %d requests already wait for its link", t->id,
                      SRV_LINK_MAX_QUEUE);
    if (rc == 0) {
        q->next = NULL;
        q->waiter = w;
        q->done = q->abandoned = false;
        if (t->tail)
            t->tail->next = q;
        else
            t->head = q;
        t->tail = q;
        t->nqueued++;
        pthread_mutex_lock(&w->mu);
        w->pending++;
        pthread_mutex_unlock(&w->mu);
    }
    pthread_mutex_unlock(&t->mu);
    if (rc == 0)
        srv_target_wake(t);
    return rc;
}

/* The next request that someone still waits for, or NULL.  Link thread. */
struct srv_req *
srv_target_dequeue(struct srv_target *t)
{
    struct srv_req *q;
    pthread_mutex_lock(&t->mu);
    while ((q = t->head) != NULL) {
        t->head = q->next;
        if (t->head == NULL)
            t->tail = NULL;
        t->nqueued--;
        q->next = NULL;
        if (!q->abandoned)
            break;
        srv_req_free(q);
    }
    if (q != NULL && q->kind == SRV_REQ_DOOR) {
        t->door = q;
        /* The session may write registers and memory without a new stop:
         * no document from before it answers after it. */
        for (size_t i = 0; i < SRV_LINK_CACHE; i++) {
            free(t->cache[i].doc);
            free(t->cache[i].key.thread);
            t->cache[i].doc = NULL;
            t->cache[i].key.thread = NULL;
        }
        if (t->quit) { /* quit before the session began: it ends at once */
            shutdown(q->door.fd, SHUT_RDWR);
            q->door.shut = true;
        }
    }
    if (q != NULL && q->kind == SRV_REQ_SAMPLE_RUN) {
        t->sampling = q;
        if (t->quit)
            q->sample.cancel = true;
    }
    pthread_mutex_unlock(&t->mu);
    return q;
}

/* Take out every queued walk with KEY: one walk answers them all, since it
 * begins after each of them was asked.  Returns the list (linked by next). */
struct srv_req *
srv_target_take_walks(struct srv_target *t, const struct srv_walk_key *key)
{
    struct srv_req *out = NULL, **tail = &out, **pp;
    pthread_mutex_lock(&t->mu);
    t->tail = NULL;
    for (pp = &t->head; *pp != NULL;) {
        struct srv_req *q = *pp;
        if (q->kind == SRV_REQ_WALK && key_eq(&q->key, key)) {
            *pp = q->next;
            t->nqueued--;
            q->next = NULL;
            if (q->abandoned) {
                srv_req_free(q);
                continue;
            }
            *tail = q;
            tail = &q->next;
            continue;
        }
        t->tail = q;
        pp = &q->next;
    }
    pthread_mutex_unlock(&t->mu);
    return out;
}

/* Answer every queued request with CODE and MSG.  Link thread. */
void
srv_target_fail_queued(struct srv_target *t, int code, const char *msg)
{
    pthread_mutex_lock(&t->mu);
    struct srv_req *q = t->head;
    t->head = t->tail = NULL;
    t->nqueued = 0;
    while (q != NULL) {
        struct srv_req *next = q->next;
        q->rc = code;
        snprintf(q->err, sizeof q->err, "%s", msg);
        srv_req_complete_locked(t, q);
        q = next;
    }
    pthread_mutex_unlock(&t->mu);
}

/* ---- state and events ---------------------------------------------------- */

static char *
event_json_locked(struct srv_target *t)
{
    json_t *o = json_pack("{s:I, s:s}", "id", (json_int_t)t->id, "state", srv_state_name(t->state));
    if (o == NULL)
        return NULL;
    if (t->error != NULL && t->state != SRV_STOPPED && t->state != SRV_RUNNING)
        json_object_set_new(o, "error", json_string(t->error));
    if (t->state == SRV_STOPPED && t->signal >= 0)
        json_object_set_new(o, "signal", json_integer(t->signal));
    char *s = json_dumps(o, 0);
    json_decref(o);
    return s;
}

void
srv_target_publish(struct srv_target *t, enum srv_state state, const char *error, int signal)
{
    char *ev = NULL;
    pthread_mutex_lock(&t->mu);
    bool changed = t->state != state;
    t->state = state;
    if (error != NULL) {
        /* The message may quote the stub's bytes: escaped (render.h's
         * sw_text_escape), it is valid UTF-8, which jansson requires. */
        char *e = sw_text_escape(error, 0);
        changed = changed || t->error == NULL || e == NULL || strcmp(t->error, e) != 0;
        if (e != NULL) {
            free(t->error);
            t->error = e;
        }
    }
    if (signal >= 0) {
        changed = changed || t->signal != signal;
        t->signal = signal;
    }
    if (t->w != NULL)
        t->stop_gen = sw_walker_proc(t->w)->stop_gen;
    if (changed && t->env->event != NULL)
        ev = event_json_locked(t);
    pthread_mutex_unlock(&t->mu);
    if (ev != NULL) {
        t->env->event(t->env->event_arg, "target", ev);
        free(ev);
    }
}

void
srv_target_drop_link(struct srv_target *t, int code, const char *msg)
{
    struct sw_walker *w = t->w;
    char copy[sizeof((struct sw_errbuf *)0)->msg];
    snprintf(copy, sizeof copy, "%s", msg); /* MSG may live in the walker freed below */
    pthread_mutex_lock(&t->mu);
    t->w = NULL;
    if (t->state == SRV_RUNNING || t->state == SRV_STOPPED)
        t->was_running = t->state == SRV_RUNNING;
    pthread_mutex_unlock(&t->mu);
    sw_walker_free(w);
    srv_target_publish(t, code == SW_EEXITED ? SRV_EXITED : SRV_LINK_LOST, copy, -1);
}

/* ---- lifetime -------------------------------------------------------------- */

static char *
dup_or_null(const char *s, bool *oom)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *oom = true;
    return d;
}

static void
target_free(struct srv_target *t)
{
    free(t->name);
    free(t->target);
    free(t->exe);
    free(t->sysroot);
    free(t->rtos);
    free(t->error);
    for (size_t i = 0; i < SRV_LINK_CACHE; i++) {
        free(t->cache[i].doc);
        free(t->cache[i].key.thread);
    }
    if (t->wake_fd >= 0)
        close(t->wake_fd);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
int
srv_target_new(const struct srv_link_env *env, const struct srv_target_spec *spec, int64_t id,
               bool persisted, struct srv_target **out, char *err, size_t errlen)
{
    struct srv_target *t = calloc(1, sizeof *t);
    if (t == NULL)
        return srv_fail(err, errlen, SRV_EINTERNAL, "adding target: out of memory");
    bool oom = false;
    t->id = id;
    t->env = env;
    t->persisted = persisted;
    t->target = dup_or_null(spec->target, &oom);
    t->name = dup_or_null(spec->name ? spec->name : spec->target, &oom);
    t->exe = dup_or_null(spec->exe, &oom);
    t->sysroot = dup_or_null(spec->sysroot, &oom);
    t->rtos = dup_or_null(spec->rtos, &oom);
    t->state = SRV_CONNECTING;
    t->signal = -1;
    atomic_init(&t->refs, 1);
    pthread_mutex_init(&t->mu, NULL);
    srv_cond_init(&t->cv);
    t->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (oom || t->wake_fd < 0) {
        int e = errno;
        target_free(t);
        return oom ? srv_fail(err, errlen, SRV_EINTERNAL, "adding target: out of memory")
                   : srv_fail(err, errlen, SRV_EINTERNAL, "adding target: eventfd: %s",
                              strerror(e));
    }
    *out = t;
    return 0;
}

void
srv_target_ref(struct srv_target *t)
{
    atomic_fetch_add(&t->refs, 1);
}

void
srv_target_unref(struct srv_target *t)
{
    if (t != NULL && atomic_fetch_sub(&t->refs, 1) == 1)
        target_free(t);
}

/* ---- what others read ------------------------------------------------------ */

json_t *
srv_target_info(struct srv_target *t)
{
    pthread_mutex_lock(&t->mu);
    json_t *o = json_pack(
        "{s:I, s:s?, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:s, s:s?, s:o, s:{s:I, s:I, s:I, s:I, "
        "s:I}}",
        "id", (json_int_t)t->id, "name", t->name, "target", t->target, "exe", t->exe, "sysroot",
        t->sysroot, "rtos", t->rtos, "arch", t->arch, "stub", t->stub, "state",
        srv_state_name(t->state), "error", t->error, "signal",
        t->state == SRV_STOPPED && t->signal >= 0 ? json_integer(t->signal) : json_null(), "stats",
        "walks", (json_int_t)t->walks, "cached_walks", (json_int_t)t->cached_walks, "round_trips",
        (json_int_t)t->round_trips, "last_walk_round_trips", (json_int_t)t->last_round_trips,
        "reconnects", (json_int_t)t->reconnects);
    pthread_mutex_unlock(&t->mu);
    return o;
}

bool
srv_target_cached(struct srv_target *t, const struct srv_walk_key *key, char **doc)
{
    bool hit = false;
    pthread_mutex_lock(&t->mu);
    /* A door session moves the target without the cache knowing. */
    if (t->state == SRV_STOPPED && t->door == NULL) {
        for (size_t i = 0; i < SRV_LINK_CACHE && !hit; i++) {
            struct srv_cached_doc *c = &t->cache[i];
            if (c->doc != NULL && c->epoch == t->epoch && c->stop_gen == t->stop_gen &&
                key_eq(&c->key, key) && (*doc = strdup(c->doc)) != NULL)
                hit = true;
        }
    }
    if (hit) {
        t->walks++;
        t->cached_walks++;
    }
    pthread_mutex_unlock(&t->mu);
    return hit;
}

void
srv_target_cache_put(struct srv_target *t, const struct srv_walk_key *key, const char *doc,
                     uint64_t stop_gen)
{
    struct srv_walk_key k;
    char *d = strdup(doc);
    if (d == NULL || key_copy(&k, key) < 0) {
        free(d);
        return; /* not cached: the next walk talks to the stub */
    }
    pthread_mutex_lock(&t->mu);
    size_t slot = t->cache_next;
    for (size_t i = 0; i < SRV_LINK_CACHE; i++)
        if (t->cache[i].doc != NULL && key_eq(&t->cache[i].key, key)) {
            slot = i;
            break;
        }
    if (slot == t->cache_next)
        t->cache_next = (t->cache_next + 1) % SRV_LINK_CACHE;
    struct srv_cached_doc *c = &t->cache[slot];
    free(c->doc);
    free(c->key.thread);
    c->doc = d;
    c->key = k;
    c->epoch = t->epoch;
    c->stop_gen = stop_gen;
    pthread_mutex_unlock(&t->mu);
}
