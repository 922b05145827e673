/* server/sampler.c -- a sample run's thread: one long request to each target's link, events.
 *
 * The run posts one SRV_REQ_SAMPLE_RUN to every target's link: each link
 * samples its target with the library's sampler for the whole run and
 * stores its samples as it goes (server/sample_link.c), so the targets are
 * sampled at once and each as fast as its own link allows.  This thread
 * only waits, sends progress events, ends the run early when asked and
 * records how it ended.
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
    struct srv_req **reqs; /* owned, N: each target's share (NULL: not posted) */
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
send_event(struct srv_run *run, uint64_t ticks, uint64_t stored, uint64_t t0, const char *state)
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

/* The samples taken and stored so far over every link.  Reads the counters
 * of requests still posted, under their target's lock. */
static void
progress(struct srv_run *run, uint64_t *ticks, uint64_t *stored)
{
    *ticks = *stored = 0;
    for (size_t i = 0; i < run->n; i++) {
        if (run->reqs[i] == NULL)
            continue;
        pthread_mutex_lock(&run->t[i]->mu);
        *ticks += run->reqs[i]->sample.samples;
        *stored += run->reqs[i]->sample.stored;
        pthread_mutex_unlock(&run->t[i]->mu);
    }
}

/* Ask every link still sampling to end at its next sample. */
static void
cancel_all(struct srv_run *run)
{
    for (size_t i = 0; i < run->n; i++) {
        if (run->reqs[i] == NULL)
            continue;
        pthread_mutex_lock(&run->t[i]->mu);
        run->reqs[i]->sample.cancel = true;
        pthread_mutex_unlock(&run->t[i]->mu);
    }
}

static size_t
pending(struct srv_waiter *w)
{
    pthread_mutex_lock(&w->mu);
    size_t n = w->pending;
    pthread_mutex_unlock(&w->mu);
    return n;
}

static void *
run_main(void *arg)
{
    struct srv_run *run = arg;
    struct srv_waiter w;
    char err[320];
    uint64_t t0 = srv_now_us(), last_event = t0, ticks = 0, stored = 0;
    /* Each link ends by itself at SECONDS; past that, one walk deadline for
     * its last stop and its leaving the target as found. */
    uint64_t hard = t0 + (uint64_t)(run->seconds * 1e6) + (uint64_t)run->deadline_ms * 1000u;
    bool failed = false, cancelled = false;

    srv_waiter_init(&w);
    for (size_t i = 0; i < run->n; i++) {
        struct srv_req *q = srv_req_new(SRV_REQ_SAMPLE_RUN, NULL);
        if (q == NULL) {
            failed = true;
            continue;
        }
        q->sample.run_id = run->id;
        q->sample.hz = run->hz;
        q->sample.seconds = run->seconds;
        if (srv_target_post(run->t[i], q, &w, err, sizeof err) < 0) {
            srv_log("sample %" PRId64 ": %s", run->id, err);
            srv_req_free(q);
            failed = true;
            continue;
        }
        run->reqs[i] = q;
    }
    send_event(run, 0, 0, t0, "running");
    while (pending(&w) > 0) {
        uint64_t now = srv_now_us();
        if (now >= hard)
            break;
        uint64_t until = now + EVENT_INTERVAL_US;
        srv_waiter_wait(&w, until < hard ? until : hard);
        if (!cancelled && stopping(run)) {
            cancelled = true;
            cancel_all(run);
            now = srv_now_us();
            if (now + (uint64_t)run->deadline_ms * 1000u < hard)
                hard = now + (uint64_t)run->deadline_ms * 1000u;
        }
        now = srv_now_us();
        if (now - last_event >= EVENT_INTERVAL_US) {
            progress(run, &ticks, &stored);
            send_event(run, ticks, stored, t0, "running");
            last_event = now;
        }
    }
    cancel_all(run); /* a link past the deadline: it ends at its next sample */
    progress(run, &ticks, &stored);
    for (size_t i = 0; i < run->n; i++) {
        struct srv_req *q = run->reqs[i];
        run->reqs[i] = NULL;
        if (q == NULL)
            continue;
        if (!srv_req_settle(run->t[i], q)) {
            failed = true; /* a hung link: it frees the request when it is done */
            continue;
        }
        if (q->rc < 0) {
            failed = true;
            srv_log("sample %" PRId64 ": %s", run->id, q->err);
        }
        srv_req_free(q);
    }
    srv_waiter_fini(&w);
    const char *state = cancelled ? "interrupted" : stored == 0 && failed ? "failed" : "done";
    if (run->env->store != NULL &&
        srv_store_sample_finish(run->env->store, run->id, state, srv_wall_us()) < 0)
        srv_log("sample %" PRId64 ": finishing: %s", run->id, srv_store_errmsg(run->env->store));
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
    run->reqs = calloc(n ? n : 1, sizeof *run->reqs);
    if (run->reqs == NULL) {
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

int64_t
srv_run_id(const struct srv_run *run)
{
    return run->id;
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
