/* server/link.c -- one target's link thread: connect, supervise, serve requests.
 *
 * The link thread is the only thread that uses the target's walker (and so
 * its session): one conversation at a time on the link, and a stub that
 * hangs or dies holds up its own thread alone.  Other threads post requests
 * (srv_target_post) and read the state and cached documents under the
 * target's lock.  The walks themselves are in server/walk.c.
 */
#include "server/link.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"
#include "server/walk.h"

/* Reconnect backoff: the first retry soon (a stub restarted at once is
 * back within a few hundred ms), then doubling, capped so that a stub
 * restarted later is found within seconds without polling a dead port
 * often. */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
/* gdb's number for SIGINT: the stop an interrupt (0x03) brings. */
#define GDB_SIGINT 2

uint64_t
srv_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int64_t
srv_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int
srv_fail(char *buf, size_t len, int code, const char *fmt, ...)
{
    if (buf != NULL && len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* On CLOCK_MONOTONIC, so that deadlines survive changes of the wall clock. */
void
srv_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
}

bool
srv_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t deadline_us)
{
    if (deadline_us == 0) {
        pthread_cond_wait(cv, mu);
        return true;
    }
    struct timespec ts = { .tv_sec = (time_t)(deadline_us / 1000000u),
                           .tv_nsec = (long)(deadline_us % 1000000u) * 1000 };
    return pthread_cond_timedwait(cv, mu, &ts) != ETIMEDOUT;
}

/* ---- requests and waiters ------------------------------------------------ */

static bool
key_eq(const struct srv_walk_key *a, const struct srv_walk_key *b)
{
    if ((a->thread == NULL) != (b->thread == NULL))
        return false;
    if (a->thread != NULL && strcmp(a->thread, b->thread) != 0)
        return false;
    return a->locals == b->locals && a->max_frames == b->max_frames;
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
static void
req_complete_locked(struct srv_target *t, struct srv_req *q)
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

static void
req_complete(struct srv_target *t, struct srv_req *q)
{
    pthread_mutex_lock(&t->mu);
    req_complete_locked(t, q);
    pthread_mutex_unlock(&t->mu);
}

static void
wake(struct srv_target *t)
{
    uint64_t one = 1;
    ssize_t n = write(t->wake_fd, &one, sizeof one);
    (void)n; /* a full counter is already a pending wakeup */
}

/* The message for a request that finds no link. */
static int
no_link_locked(struct srv_target *t, char *err, size_t errlen)
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

int
srv_target_post(struct srv_target *t, struct srv_req *q, struct srv_waiter *w, char *err,
                size_t errlen)
{
    int rc = 0;
    pthread_mutex_lock(&t->mu);
    if (t->quit)
        rc = srv_fail(err, errlen, SRV_ENOTFOUND, "target %" PRId64 " was deleted", t->id);
    else if (t->state != SRV_STOPPED && t->state != SRV_RUNNING)
        rc = no_link_locked(t, err, errlen);
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
        wake(t);
    return rc;
}

/* The next request that someone still waits for, or NULL.  Link thread. */
static struct srv_req *
dequeue(struct srv_target *t)
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
    pthread_mutex_unlock(&t->mu);
    return q;
}

/* Take out every queued walk with KEY: one walk answers them all, since it
 * begins after each of them was asked.  Returns the list (linked by next). */
static struct srv_req *
take_same_walks(struct srv_target *t, const struct srv_walk_key *key)
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
static void
fail_queued(struct srv_target *t, int code, const char *msg)
{
    pthread_mutex_lock(&t->mu);
    struct srv_req *q = t->head;
    t->head = t->tail = NULL;
    t->nqueued = 0;
    while (q != NULL) {
        struct srv_req *next = q->next;
        q->rc = code;
        snprintf(q->err, sizeof q->err, "%s", msg);
        req_complete_locked(t, q);
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
srv_link_publish(struct srv_target *t, enum srv_state state, const char *error, int signal)
{
    char *ev = NULL;
    pthread_mutex_lock(&t->mu);
    bool changed = t->state != state;
    t->state = state;
    if (error != NULL) {
        changed = changed || t->error == NULL || strcmp(t->error, error) != 0;
        char *e = strdup(error);
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
srv_link_drop(struct srv_target *t, int code, const char *msg)
{
    struct sw_walker *w = t->w;
    pthread_mutex_lock(&t->mu);
    t->w = NULL;
    if (t->state == SRV_RUNNING || t->state == SRV_STOPPED)
        t->was_running = t->state == SRV_RUNNING;
    pthread_mutex_unlock(&t->mu);
    sw_walker_free(w);
    srv_link_publish(t, code == SW_EEXITED ? SRV_EXITED : SRV_LINK_LOST, msg, -1);
}

/* ---- connecting ------------------------------------------------------------ */

/* Which stub the session speaks to, from what it offered: gdbserver offers
 * no-ack mode, qXfer:threads and multiprocess; QEMU's gdbstub PacketSize
 * 0x1000 and no no-ack mode (as rsp/connect.c tells them apart). */
static const char *
stub_kind(const struct rsp_session *s)
{
    if (rsp_has_feature(s, RSP_FEAT_NOACK) && rsp_has_feature(s, RSP_FEAT_XFER_THREADS) &&
        rsp_has_feature(s, RSP_FEAT_MULTIPROCESS))
        return "gdbserver";
    if (!rsp_has_feature(s, RSP_FEAT_NOACK) && rsp_packet_size(s) == 0x1000)
        return "qemu";
    return NULL;
}

static int
link_connect(struct srv_target *t, char *err, size_t errlen)
{
    const struct srv_link_env *env = t->env;
    struct rsp_session_config scfg;
    struct rsp_session *s = NULL;
    struct sw_proc *p = NULL;
    struct sw_walker *w = NULL;
    struct sw_errbuf e = { 0 };
    int rc;

    rsp_session_config_init(&scfg);
    scfg.timeout_ms = env->timeout_ms;
    if ((rc = rsp_session_open(t->target, &scfg, &s, &e)) < 0)
        return srv_fail(err, errlen, rc, "%s", e.msg);
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = t->exe;
    if ((rc = sw_proc_rsp_new(s, &pcfg, &p, &e)) < 0) /* closes S */
        return srv_fail(err, errlen, rc, "%s", e.msg);
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.sysroot = t->sysroot;
    wcfg.exe = t->exe;
    wcfg.cache_dir = env->cache_dir;
    wcfg.modcache = env->mc;
    if ((rc = sw_walker_new(p, &wcfg, &w, &e)) < 0) /* frees P */
        return srv_fail(err, errlen, rc, "%s", e.msg);
    pthread_mutex_lock(&t->mu);
    t->w = w;
    t->epoch++;
    t->arch = p->arch->name;
    t->stub = stub_kind(s);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

/* The link is up: say what the target is doing.  gdbserver stops a running
 * target when a client asks '?' and reports signal 0 for it (gdbserver's
 * handle_status); a target found so was running, and runs again.  So does
 * one that ran when its link was lost and is found stopped by SIGINT: the
 * interrupt of a walk that the stub took after the link broke. */
static void
link_up(struct srv_target *t)
{
    struct sw_proc *p = sw_walker_proc(t->w);
    struct rsp_session *s = sw_proc_rsp_session(p);
    const struct rsp_stop *st = rsp_last_stop(s);

    pthread_mutex_lock(&t->mu);
    free(t->error);
    t->error = NULL;
    pthread_mutex_unlock(&t->mu);
    if (p->debug != NULL && p->debug->is_terminated(p)) {
        srv_link_drop(t, SW_EEXITED, "the target had exited before the server connected");
        return;
    }
    bool gdbserver = t->stub != NULL && strcmp(t->stub, "gdbserver") == 0;
    bool ran = t->was_running;
    t->was_running = false;
    if (p->debug != NULL && st != NULL && st->kind == RSP_STOP_SIGNAL &&
        ((gdbserver && st->signal == 0) || (ran && st->signal == GDB_SIGINT))) {
        int rc = p->debug->resume(p, SW_TID_DEFAULT, 0);
        if (rc < 0) {
            srv_link_drop(t, rc, sw_proc_errmsg(p));
            return;
        }
        srv_link_publish(t, SRV_RUNNING, NULL, -1);
        return;
    }
    srv_link_publish(t, SRV_STOPPED, NULL, st != NULL ? st->signal : -1);
}

/* ---- serving ------------------------------------------------------------- */

static void
serve_walks(struct srv_target *t, struct srv_req *first)
{
    first->next = take_same_walks(t, &first->key);
    char *doc = NULL;
    int64_t time_us = 0;
    char err[320] = "";
    bool fresh = false;
    int rc = 0;

    if (!srv_target_cached(t, &first->key, &doc)) {
        rc = srv_walk_run(t, &first->key, SRV_REQ_WALK, false, &doc, &time_us, err, sizeof err);
        fresh = rc == 0;
    }
    if (fresh && t->env->store != NULL && t->persisted)
        srv_walk_store(t, time_us, doc);
    pthread_mutex_lock(&t->mu);
    for (struct srv_req *q = first, *next; q != NULL; q = next) {
        next = q->next;
        q->rc = rc;
        q->time_us = time_us;
        q->fresh = fresh && q == first;
        if (rc < 0)
            snprintf(q->err, sizeof q->err, "%s", err);
        else if (q == first)
            q->doc = doc, doc = NULL;
        else if ((q->doc = strdup(first->doc ? first->doc : "")) == NULL)
            q->rc = srv_fail(q->err, sizeof q->err, SRV_EINTERNAL, "out of memory");
        req_complete_locked(t, q);
    }
    pthread_mutex_unlock(&t->mu);
    free(doc);
}

static void
serve(struct srv_target *t, struct srv_req *q)
{
    switch (q->kind) {
    case SRV_REQ_WALK:
        serve_walks(t, q);
        return;
    case SRV_REQ_SAMPLE:
        q->rc = srv_walk_run(t, &q->key, SRV_REQ_SAMPLE, q->leave_stopped, &q->doc, &q->time_us,
                             q->err, sizeof q->err);
        q->fresh = q->rc == 0;
        break;
    case SRV_REQ_PAUSE:
    case SRV_REQ_RESUME:
        q->rc = srv_walk_control(t, q->kind == SRV_REQ_RESUME, q->err, sizeof q->err);
        break;
    }
    req_complete(t, q);
}

/* Wait for a request, a quit or a stub's event (a stop, an exit, a
 * hang-up) and take the event in.  Link thread, with a link. */
static void
wait_event(struct srv_target *t)
{
    struct sw_proc *p = sw_walker_proc(t->w);
    int nfd = p->debug != NULL ? p->debug->notification_fd(p) : -1;
    struct pollfd fds[2] = { { .fd = t->wake_fd, .events = POLLIN },
                             { .fd = nfd, .events = POLLIN } };

    if (poll(fds, nfd >= 0 ? 2 : 1, -1) < 0)
        return; /* EINTR: look again */
    if (fds[0].revents & POLLIN) {
        uint64_t v;
        ssize_t n = read(t->wake_fd, &v, sizeof v);
        (void)n;
    }
    if (nfd < 0 || fds[1].revents == 0)
        return;
    int rc = p->debug->handle_debug_event(p, false);
    if (rc == SW_ETIMEDOUT)
        return; /* a wakeup without a stop: console output, an ack */
    if (rc < 0) {
        srv_link_drop(t, rc, sw_proc_errmsg(p));
        return;
    }
    const struct rsp_stop *st = rsp_last_stop(sw_proc_rsp_session(p));
    srv_link_publish(t, SRV_STOPPED, NULL, st != NULL ? st->signal : -1);
}

static bool
quitting(struct srv_target *t)
{
    pthread_mutex_lock(&t->mu);
    bool q = t->quit;
    pthread_mutex_unlock(&t->mu);
    return q;
}

/* Sleep until DEADLINE_US or a wakeup (a post, a quit). */
static void
nap(struct srv_target *t, uint64_t deadline_us)
{
    uint64_t now = srv_now_us();
    if (now >= deadline_us)
        return;
    struct pollfd fd = { .fd = t->wake_fd, .events = POLLIN };
    if (poll(&fd, 1, (int)((deadline_us - now + 999) / 1000)) > 0) {
        uint64_t v;
        ssize_t n = read(t->wake_fd, &v, sizeof v);
        (void)n;
    }
}

static void *
link_main(void *arg)
{
    struct srv_target *t = arg;
    uint64_t backoff_ms = BACKOFF_MIN_MS, next_try_us = 0;
    bool ever = false;
    char err[320];

    while (!quitting(t)) {
        if (t->w == NULL) {
            pthread_mutex_lock(&t->mu);
            no_link_locked(t, err, sizeof err);
            bool exited = t->state == SRV_EXITED;
            pthread_mutex_unlock(&t->mu);
            fail_queued(t, SRV_ECONFLICT, err);
            if (srv_now_us() < next_try_us) {
                nap(t, next_try_us);
                continue;
            }
            int rc = link_connect(t, err, sizeof err);
            if (rc == 0) {
                if (ever) {
                    pthread_mutex_lock(&t->mu);
                    t->reconnects++;
                    pthread_mutex_unlock(&t->mu);
                }
                ever = true;
                backoff_ms = BACKOFF_MIN_MS;
                link_up(t);
                if (t->w == NULL) /* found exited */
                    next_try_us = srv_now_us() + BACKOFF_MAX_MS * 1000u;
                continue;
            }
            /* An exited target stays exited (with its exit as the error)
             * until a stub answers again. */
            if (rc == SW_EEXITED)
                srv_link_publish(t, SRV_EXITED, err, -1);
            else if (!exited)
                srv_link_publish(t, ever ? SRV_LINK_LOST : SRV_CONNECTING, err, -1);
            next_try_us = srv_now_us() + backoff_ms * 1000u;
            backoff_ms = backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff_ms * 2;
            continue;
        }
        struct srv_req *q = dequeue(t);
        if (q != NULL) {
            serve(t, q);
            if (t->w == NULL) /* lost while serving: retry soon */
                next_try_us = srv_now_us() + BACKOFF_MIN_MS * 1000u;
            continue;
        }
        wait_event(t);
        if (t->w == NULL)
            next_try_us = srv_now_us() + BACKOFF_MIN_MS * 1000u;
    }
    /* As found: a walk resumes what it stopped before it answers, so the
     * target is as the last request left it; closing the link does not
     * detach (rsp_session_close). */
    pthread_mutex_lock(&t->mu);
    struct sw_walker *w = t->w;
    t->w = NULL;
    pthread_mutex_unlock(&t->mu);
    sw_walker_free(w);
    snprintf(err, sizeof err, "target %" PRId64 " was deleted", t->id);
    fail_queued(t, SRV_ENOTFOUND, err);
    pthread_mutex_lock(&t->mu);
    t->done = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return NULL;
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
srv_target_start(const struct srv_link_env *env, const struct srv_target_spec *spec, int64_t id,
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
    int rc = pthread_create(&t->thread, NULL, link_main, t);
    if (rc != 0) {
        target_free(t);
        return srv_fail(err, errlen, SRV_ELIMIT, "adding target: no thread for its link: %s",
                        strerror(rc));
    }
    t->thread_started = true;
    *out = t;
    return 0;
}

void
srv_target_quit(struct srv_target *t)
{
    pthread_mutex_lock(&t->mu);
    t->quit = true;
    pthread_mutex_unlock(&t->mu);
    wake(t);
}

bool
srv_target_done(struct srv_target *t)
{
    pthread_mutex_lock(&t->mu);
    bool d = t->done;
    pthread_mutex_unlock(&t->mu);
    return d;
}

bool
srv_target_wait_done(struct srv_target *t, uint64_t deadline_us)
{
    pthread_mutex_lock(&t->mu);
    while (!t->done)
        if (!srv_cond_wait_until(&t->cv, &t->mu, deadline_us))
            break;
    bool d = t->done;
    pthread_mutex_unlock(&t->mu);
    return d;
}

void
srv_target_join(struct srv_target *t)
{
    if (t->thread_started) {
        pthread_join(t->thread, NULL);
        t->thread_started = false;
    }
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
        "{s:I, s:s?, s:s, s:s?, s:s?, s:s?, s:s?, s:s, s:s?, s:o, s:{s:I, s:I, s:I, s:I, s:I}}",
        "id", (json_int_t)t->id, "name", t->name, "target", t->target, "exe", t->exe, "sysroot",
        t->sysroot, "arch", t->arch, "stub", t->stub, "state", srv_state_name(t->state), "error",
        t->error, "signal",
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
    if (t->state == SRV_STOPPED) {
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
srv_link_cache_put(struct srv_target *t, const struct srv_walk_key *key, const char *doc,
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
