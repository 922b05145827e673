/* util/debug.c -- debug channels and the clock they print.
 *
 * RSPWALK_DEBUG=pkt,step,cache,time,all is read once, by whichever thread
 * asks first (pthread_once); the library writes to stderr only through
 * sw_debug_printf.
 */
#include "util/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Written once under DEBUG_ONCE, read-only afterwards. */
static unsigned debug_mask;
static uint64_t debug_t0;
static pthread_once_t debug_once = PTHREAD_ONCE_INIT;

static void
debug_read(void)
{
    const char *v = getenv("RSPWALK_DEBUG");
    debug_t0 = sw_now_us();
    if (v == NULL)
        return;
    if (strstr(v, "pkt"))
        debug_mask |= SW_DBG_PKT;
    if (strstr(v, "step"))
        debug_mask |= SW_DBG_STEP;
    if (strstr(v, "cache"))
        debug_mask |= SW_DBG_CACHE;
    if (strstr(v, "time"))
        debug_mask |= SW_DBG_TIME;
    if (strstr(v, "all"))
        debug_mask |= SW_DBG_PKT | SW_DBG_STEP | SW_DBG_CACHE;
}

unsigned
sw_debug_mask(void)
{
    pthread_once(&debug_once, debug_read);
    return debug_mask;
}

void
sw_debug_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (sw_debug_mask() & SW_DBG_TIME)
        fprintf(stderr, "[%9.3f] ", (double)(sw_now_us() - debug_t0) / 1000.0);
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
