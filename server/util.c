/* server/util.c -- clocks, messages and timed waits that every file of server/ uses.
 *
 * Nothing here knows targets or links.
 */
#include "server/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rspwalk/render.h"

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

void
srv_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *safe = sw_text_vescapef(0, fmt, ap);
    va_end(ap);
    /* One write per line: other threads log too. */
    flockfile(stderr);
    fputs("rspwalkd: ", stderr);
    fputs(safe != NULL ? safe : "out of memory writing a log line", stderr);
    fputc('\n', stderr);
    funlockfile(stderr);
    free(safe);
}
