/* util/debug.c -- debug channels and the clock they print.
 *
 * The channels come from RSPWALK_DEBUG, read with the rest of the
 * environment once, by whichever thread asks first (util/env.c,
 * pthread_once); the library writes to stderr only through sw_debug_printf.
 */
#include "util/util.h"

#include <stdio.h>
#include <time.h>

unsigned
sw_debug_mask(void)
{
    return sw_env_get()->debug;
}

void
sw_debug_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const struct sw_env *e = sw_env_get();
    if (e->debug & SW_DBG_TIME)
        fprintf(stderr, "[%9.3f] ", (double)(sw_now_us() - e->t0_us) / 1000.0);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

uint64_t
sw_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
