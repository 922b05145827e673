/* server/deadline.c -- a call on its own thread, waited for until a deadline (server/deadline.h).
 *
 * One mutex per pool guards every job's state: jobs are few (one per request
 * in flight) and short-lived, so one lock costs nothing measurable and keeps
 * the hand-over between the waiter and the worker simple.
 */
#include "server/deadline.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct srv_deadline_pool {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a job ended, or the running count fell */
    unsigned running;
};

struct job {
    struct srv_deadline_pool *pool;
    void (*run)(void *arg);
    void (*drop)(void *arg);
    void *arg;
    bool done;
    bool abandoned; /* the waiter gave up: the worker drops ARG and frees the job */
};

int
srv_deadline_pool_new(struct srv_deadline_pool **out)
{
    struct srv_deadline_pool *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, &ca);
    pthread_condattr_destroy(&ca);
    *out = p;
    return 0;
}

void
srv_deadline_pool_free(struct srv_deadline_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    while (p->running > 0)
        pthread_cond_wait(&p->changed, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static void *
job_main(void *v)
{
    struct job *j = v;
    struct srv_deadline_pool *p = j->pool;
    j->run(j->arg);
    pthread_mutex_lock(&p->lock);
    j->done = true;
    bool abandoned = j->abandoned;
    if (abandoned) {
        j->drop(j->arg);
        free(j);
    }
    p->running--;
    /* Broadcast under the lock: the pool may be freed as soon as it is
     * released with running at 0. */
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int
srv_deadline_run(struct srv_deadline_pool *p, void (*run)(void *arg), void (*drop)(void *arg),
                 void *arg, int timeout_ms)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return -1;
    *j = (struct job){ .pool = p, .run = run, .drop = drop, .arg = arg };
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    pthread_mutex_lock(&p->lock);
    p->running++;
    if (pthread_create(&t, &attr, job_main, j) != 0) {
        p->running--;
        pthread_mutex_unlock(&p->lock);
        pthread_attr_destroy(&attr);
        free(j);
        return -1;
    }
    pthread_attr_destroy(&attr);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    while (!j->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&p->changed, &p->lock, &until);
    int result;
    if (j->done) {
        free(j);
        result = 0;
    } else {
        j->abandoned = true;
        result = 1;
    }
    pthread_mutex_unlock(&p->lock);
    return result;
}
