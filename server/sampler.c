/* server/sampler.c -- a sample run's thread: ticks over the targets' links, storage, events.
 *
 * Each tick posts one sample request to every target still sampled and
 * waits for all of them (the links walk at once), then stores each stack
 * (committed before the next tick begins).  A target that exits, loses its
 * link or misses a tick's deadline is dropped from the run.  The walks are
 * the links' (server/walk.c); the run only paces them.
 */
#include "server/sampler.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/store.h"

/* Progress events at most this often: a run at 1000 Hz would otherwise
 * send a thousand a second to every events client. */
#define EVENT_INTERVAL_US 100000u

struct srv_run {
    const struct srv_link_env *env; /* borrowed */
    int deadline_ms;
    int64_t id;
    struct srv_target **t; /* owned references, N */
    size_t n;
    bool *was_stopped;     /* owned, N: stopped when the run began */
    bool *active;          /* owned, N: still sampled */
    struct srv_req **reqs; /* owned, N: one tick's requests */
    double hz, seconds;
    pthread_t thread;
    bool started;

    pthread_mutex_t mu; /* below */
    pthread_cond_t cv;
    bool stop, finished;
};

static bool
stopping(struct srv_run *run)
{
    pthread_mutex_lock(&run->mu);
    bool s = run->stop;
    pthread_mutex_unlock(&run->mu);
    return s;
}

static void
sleep_until(struct srv_run *run, uint64_t deadline_us)
{
    pthread_mutex_lock(&run->mu);
    while (!run->stop && srv_now_us() < deadline_us)
        if (!srv_cond_wait_until(&run->cv, &run->mu, deadline_us))
            break;
    pthread_mutex_unlock(&run->mu);
}

static void
send_event(struct srv_run *run, int64_t ticks, int64_t stored, uint64_t t0, const char *state)
{
    if (run->env->event == NULL)
        return;
    json_t *o = json_pack("{s:I, s:I, s:I, s:f, s:s}", "id", (json_int_t)run->id, "ticks",
                          (json_int_t)ticks, "stored", (json_int_t)stored, "elapsed",
                          (double)(srv_now_us() - t0) / 1e6, "state", state);
    char *s = o ? json_dumps(o, JSON_REAL_PRECISION(6)) : NULL;
    json_decref(o);
    if (s != NULL)
        run->env->event(run->env->event_arg, "sample", s);
    free(s);
}

/* Whether a request failed because its target cannot be sampled any more
 * (exited, link lost, deleted), rather than for this tick alone. */
static bool
target_gone(int rc)
{
    return rc == SRV_ECONFLICT || rc == SRV_ENOTFOUND;
}

/* One tick: every active target stopped, walked and resumed at once; the
 * stacks stored.  Returns the number of targets still active. */
static size_t
tick(struct srv_run *run, int64_t *stored, bool *failed)
{
    struct srv_store *store = run->env->store;
    struct srv_waiter w;
    char err[320];
    size_t active = 0;

    srv_waiter_init(&w);
    for (size_t i = 0; i < run->n; i++) {
        run->reqs[i] = NULL;
        if (!run->active[i])
            continue;
        struct srv_req *q = srv_req_new(SRV_REQ_SAMPLE, NULL);
        if (q == NULL) {
            *failed = true;
            continue;
        }
        int rc = srv_target_post(run->t[i], q, &w, err, sizeof err);
        if (rc < 0) {
            srv_req_free(q);
            *failed = true;
            if (target_gone(rc))
                run->active[i] = false;
            continue;
        }
        run->reqs[i] = q;
    }
    srv_waiter_wait(&w, srv_now_us() + (uint64_t)run->deadline_ms * 1000u);
    for (size_t i = 0; i < run->n; i++) {
        struct srv_req *q = run->reqs[i];
        if (q == NULL)
            continue;
        if (!srv_req_settle(run->t[i], q)) {
            run->active[i] = false; /* a hung link: the rest of the run goes on without it */
            *failed = true;
            continue;
        }
        if (q->rc == 0 && store != NULL && run->t[i]->persisted) {
            if (srv_store_sample_add(store, run->id, run->t[i]->id, q->time_us, q->doc) == 0)
                (*stored)++;
            else
                fprintf(stderr, "rspwalkd: sample %" PRId64 ": storing a stack: %s\n", run->id,
                        srv_store_errmsg(store));
        } else if (q->rc == 0) {
            (*stored)++;
        } else {
            *failed = true;
            if (target_gone(q->rc))
                run->active[i] = false;
        }
        srv_req_free(q);
    }
    srv_waiter_fini(&w);
    for (size_t i = 0; i < run->n; i++)
        active += run->active[i];
    return active;
}

/* Stop again every target that was stopped when the run began. */
static void
leave_as_found(struct srv_run *run)
{
    struct srv_waiter w;
    char err[320];
    srv_waiter_init(&w);
    for (size_t i = 0; i < run->n; i++) {
        run->reqs[i] = NULL;
        if (!run->was_stopped[i])
            continue;
        struct srv_req *q = srv_req_new(SRV_REQ_PAUSE, NULL);
        if (q != NULL && srv_target_post(run->t[i], q, &w, err, sizeof err) == 0)
            run->reqs[i] = q;
        else
            srv_req_free(q);
    }
    srv_waiter_wait(&w, srv_now_us() + (uint64_t)run->deadline_ms * 1000u);
    for (size_t i = 0; i < run->n; i++)
        if (run->reqs[i] != NULL && srv_req_settle(run->t[i], run->reqs[i]))
            srv_req_free(run->reqs[i]);
    srv_waiter_fini(&w);
}

static void *
run_main(void *arg)
{
    struct srv_run *run = arg;
    uint64_t t0 = srv_now_us();
    uint64_t end = t0 + (uint64_t)(run->seconds * 1e6);
    uint64_t period = (uint64_t)(1e6 / run->hz), next = t0, last_event = 0;
    int64_t ticks = 0, stored = 0;
    bool failed = false;

    for (size_t i = 0; i < run->n; i++) {
        struct srv_target *t = run->t[i];
        pthread_mutex_lock(&t->mu);
        run->was_stopped[i] = t->state == SRV_STOPPED;
        run->active[i] = t->state == SRV_STOPPED || t->state == SRV_RUNNING;
        pthread_mutex_unlock(&t->mu);
    }
    send_event(run, 0, 0, t0, "running");
    while (!stopping(run) && srv_now_us() < end) {
        size_t active = tick(run, &stored, &failed);
        ticks++;
        uint64_t now = srv_now_us();
        if (now - last_event >= EVENT_INTERVAL_US) {
            send_event(run, ticks, stored, t0, "running");
            last_event = now;
        }
        if (active == 0)
            break;
        next += period;
        if (next < now)
            next = now; /* behind: as fast as the links allow, no burst to catch up */
        sleep_until(run, next < end ? next : end);
    }
    leave_as_found(run);
    const char *state = stopping(run) ? "interrupted" : stored == 0 && failed ? "failed" : "done";
    if (run->env->store != NULL &&
        srv_store_sample_finish(run->env->store, run->id, state, srv_wall_us()) < 0)
        fprintf(stderr, "rspwalkd: sample %" PRId64 ": finishing: %s\n", run->id,
                srv_store_errmsg(run->env->store));
    send_event(run, ticks, stored, t0, state);
    pthread_mutex_lock(&run->mu);
    run->finished = true;
    pthread_mutex_unlock(&run->mu);
    return NULL;
}

static void
run_release(struct srv_run *run)
{
    for (size_t i = 0; i < run->n; i++)
        srv_target_unref(run->t[i]);
    free(run->t);
    free(run->was_stopped);
    free(run->active);
    free(run->reqs);
    pthread_cond_destroy(&run->cv);
    pthread_mutex_destroy(&run->mu);
    free(run);
}

int
srv_run_start(const struct srv_link_env *env, int deadline_ms, int64_t id, struct srv_target **t,
              size_t n, double hz, double seconds, struct srv_run **out, char *err, size_t errlen)
{
    struct srv_run *run = calloc(1, sizeof *run);
    struct srv_target **tt = calloc(n ? n : 1, sizeof *tt);
    if (run == NULL || tt == NULL) {
        free(run);
        free(tt);
        for (size_t i = 0; i < n; i++)
            srv_target_unref(t[i]);
        return srv_fail(err, errlen, SRV_EINTERNAL, "sampling: out of memory");
    }
    for (size_t i = 0; i < n; i++)
        tt[i] = t[i];
    run->env = env;
    run->deadline_ms = deadline_ms;
    run->id = id;
    run->t = tt;
    run->n = n;
    run->hz = hz;
    run->seconds = seconds;
    pthread_mutex_init(&run->mu, NULL);
    srv_cond_init(&run->cv);
    run->was_stopped = calloc(n ? n : 1, sizeof *run->was_stopped);
    run->active = calloc(n ? n : 1, sizeof *run->active);
    run->reqs = calloc(n ? n : 1, sizeof *run->reqs);
    if (run->was_stopped == NULL || run->active == NULL || run->reqs == NULL) {
        run_release(run);
        return srv_fail(err, errlen, SRV_EINTERNAL, "sampling: out of memory");
    }
    int rc = pthread_create(&run->thread, NULL, run_main, run);
    if (rc != 0) {
        run_release(run);
        return srv_fail(err, errlen, SRV_ELIMIT, "sampling: no thread for the run");
    }
    run->started = true;
    *out = run;
    return 0;
}

void
srv_run_stop(struct srv_run *run)
{
    pthread_mutex_lock(&run->mu);
    run->stop = true;
    pthread_cond_broadcast(&run->cv);
    pthread_mutex_unlock(&run->mu);
}

bool
srv_run_finished(struct srv_run *run)
{
    pthread_mutex_lock(&run->mu);
    bool f = run->finished;
    pthread_mutex_unlock(&run->mu);
    return f;
}

void
srv_run_free(struct srv_run *run)
{
    if (run == NULL)
        return;
    if (run->started)
        pthread_join(run->thread, NULL);
    run_release(run);
}
