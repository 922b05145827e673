/* server/link.c -- one target's link thread: connect, supervise, serve requests.
 *
 * The link thread is the only thread that uses the target's walker (and so
 * its session): one conversation at a time on the link, and a stub that
 * hangs or dies holds up its own thread alone.  Other threads post requests
 * (srv_target_post) and read the state and cached documents under the
 * target's lock.  The walks themselves are in server/walk.c.
 */
#include "server/link.h"

#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/* A target registered with "rtos": its tasks as threads over the CPU's state *P, which the
 * task layer takes over.  Returns 1 when it did, 0 when "auto" found no RTOS or could not read
 * its tasks (the CPU walked alone, said on stderr), or a negative code with the reason in ERR
 * (*P freed), as rspwalk --rtos does. */
static int
link_rtos(struct srv_target *t, struct sw_proc **p, char *err, size_t errlen)
{
    bool is_auto = strcmp(t->rtos, "auto") == 0;
    struct sw_errbuf e = { 0 };
    struct sw_proc *tasks;
    int rc = sw_proc_rtos_new(*p, is_auto ? SW_RTOS_AUTO : SW_RTOS_FREERTOS, t->exe, &tasks, &e);
    if (rc == SW_ENOENT && is_auto)
        return 0;
    if (rc < 0 && is_auto && rc != SW_ECONN && rc != SW_ETIMEDOUT && rc != SW_EEXITED &&
        rc != SW_ENOMEM) {
        fprintf(stderr, "rspwalkd: target %" PRId64 ": rtos auto: walking the CPU alone: %s\n",
                t->id, e.msg);
        return 0;
    }
    if (rc < 0) {
        sw_proc_free(*p);
        return srv_fail(err, errlen, rc, "rtos: %s", e.msg);
    }
    *p = tasks;
    return 1;
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
    scfg.deadline_ms = env->deadline_ms; /* the connect's; each request sets its own */
    scfg.max_threads = env->max_threads;
    scfg.tdesc_cache = env->tdc;
    if ((rc = rsp_session_open(t->target, &scfg, &s, &e)) < 0)
        return srv_fail(err, errlen, rc, "%s", e.msg);
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = t->exe;
    if ((rc = sw_proc_rsp_new(s, &pcfg, &p, &e)) < 0) /* closes S */
        return srv_fail(err, errlen, rc, "%s", e.msg);
    int tasks = t->rtos != NULL ? link_rtos(t, &p, err, errlen) : 0;
    if (tasks < 0)
        return tasks;
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.sysroot = t->sysroot;
    wcfg.exe = t->exe;
    wcfg.cache_dir = env->cache_dir;
    wcfg.modcache = env->mc;
    if ((rc = sw_walker_new(p, &wcfg, &w, &e)) < 0) /* frees P */
        return srv_fail(err, errlen, rc, "%s", e.msg);
    /* A task's walk ends at its entry function. */
    if (tasks == 1 && sw_add_stepper(w, sw_rtos_stepper_new(sw_walker_proc(w))) < 0) {
        rc = srv_fail(err, errlen, SW_ENOMEM, "rtos: %s", sw_walker_errmsg(w));
        sw_walker_free(w);
        return rc;
    }
    rsp_session_set_deadline(s, 0); /* waiting for stops has none */
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
        srv_target_drop_link(t, SW_EEXITED, "the target had exited before the server connected");
        return;
    }
    bool gdbserver = t->stub != NULL && strcmp(t->stub, "gdbserver") == 0;
    bool ran = t->was_running;
    t->was_running = false;
    if (p->debug != NULL && st != NULL && st->kind == RSP_STOP_SIGNAL &&
        ((gdbserver && st->signal == 0) || (ran && st->signal == GDB_SIGINT))) {
        int rc = p->debug->resume(p, SW_TID_DEFAULT, 0);
        if (rc < 0) {
            srv_target_drop_link(t, rc, sw_proc_errmsg(p));
            return;
        }
        srv_target_publish(t, SRV_RUNNING, NULL, -1);
        return;
    }
    srv_target_publish(t, SRV_STOPPED, NULL, st != NULL ? st->signal : -1);
}

/* ---- serving ------------------------------------------------------------- */

static void serve_request(struct srv_target *t, struct srv_req *q);

static void
serve_walks(struct srv_target *t, struct srv_req *first)
{
    first->next = srv_target_take_walks(t, &first->key);
    char *doc = NULL;
    int64_t time_us = 0;
    char err[320] = "";
    bool fresh = false;
    int rc = 0;

    if (!srv_target_cached(t, &first->key, &doc)) {
        rc = srv_walk_run(t, &first->key, &doc, &time_us, err, sizeof err);
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
        srv_req_complete_locked(t, q);
    }
    pthread_mutex_unlock(&t->mu);
    free(doc);
}

/* The link's deadline for Q (rsp_session_set_deadline): a request holds the
 * link for so long at most, however the stub trickles its replies; a door
 * session has none (a front end drives it, each packet within timeout_ms). */
static void
set_deadline(struct srv_target *t, const struct srv_req *q)
{
    int ms = t->env->deadline_ms;
    if (ms <= 0 || q->kind == SRV_REQ_DOOR)
        return;
    if (q->kind == SRV_REQ_SAMPLE_RUN) {
        double all = ms + q->sample.seconds * 1000.0;
        ms = all > INT_MAX / 2 ? INT_MAX / 2 : (int)all;
    }
    rsp_session_set_deadline(sw_proc_rsp_session(sw_walker_proc(t->w)), ms);
}

static void
serve(struct srv_target *t, struct srv_req *q)
{
    set_deadline(t, q);
    serve_request(t, q);
    if (t->w != NULL) /* not dropped: waiting for events has no deadline */
        rsp_session_set_deadline(sw_proc_rsp_session(sw_walker_proc(t->w)), 0);
}

static void
serve_request(struct srv_target *t, struct srv_req *q)
{
    switch (q->kind) {
    case SRV_REQ_WALK:
        serve_walks(t, q);
        return;
    case SRV_REQ_PAUSE:
    case SRV_REQ_RESUME:
        q->rc = srv_walk_control(t, q->kind == SRV_REQ_RESUME, q->err, sizeof q->err);
        break;
    case SRV_REQ_SAMPLE_RUN:
        q->rc = srv_walk_sample(t, q, q->err, sizeof q->err);
        pthread_mutex_lock(&t->mu);
        t->sampling = NULL;
        pthread_mutex_unlock(&t->mu);
        break;
    case SRV_REQ_DOOR:
        q->rc = srv_walk_door(t, q, q->err, sizeof q->err);
        pthread_mutex_lock(&t->mu);
        t->door = NULL;
        pthread_mutex_unlock(&t->mu);
        break;
    }
    srv_req_complete(t, q);
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
        srv_target_drop_link(t, rc, sw_proc_errmsg(p));
        return;
    }
    const struct rsp_stop *st = rsp_last_stop(sw_proc_rsp_session(p));
    srv_target_publish(t, SRV_STOPPED, NULL, st != NULL ? st->signal : -1);
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
            srv_target_no_link_locked(t, err, sizeof err);
            bool exited = t->state == SRV_EXITED;
            pthread_mutex_unlock(&t->mu);
            srv_target_fail_queued(t, SRV_ECONFLICT, err);
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
                srv_target_publish(t, SRV_EXITED, err, -1);
            else if (!exited)
                srv_target_publish(t, ever ? SRV_LINK_LOST : SRV_CONNECTING, err, -1);
            next_try_us = srv_now_us() + backoff_ms * 1000u;
            backoff_ms = backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff_ms * 2;
            continue;
        }
        struct srv_req *q = srv_target_dequeue(t);
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
    srv_target_fail_queued(t, SRV_ENOTFOUND, err);
    pthread_mutex_lock(&t->mu);
    t->done = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int
srv_target_start(const struct srv_link_env *env, const struct srv_target_spec *spec, int64_t id,
                 bool persisted, struct srv_target **out, char *err, size_t errlen)
{
    struct srv_target *t;
    int rc = srv_target_new(env, spec, id, persisted, &t, err, errlen);
    if (rc < 0)
        return rc;
    if ((rc = pthread_create(&t->thread, NULL, link_main, t)) != 0) {
        srv_target_unref(t);
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
    if (t->sampling != NULL)
        t->sampling->sample.cancel = true;
    /* A door session ends as when its front end leaves. */
    if (t->door != NULL && !t->door->door.shut) {
        shutdown(t->door->door.fd, SHUT_RDWR);
        t->door->door.shut = true;
    }
    pthread_mutex_unlock(&t->mu);
    srv_target_wake(t);
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
