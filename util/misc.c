/* util/misc.c -- debug channels, hex digits, growable buffers, the clock.
 *
 * RSPWALK_DEBUG=pkt,step,cache,time,all is read once; the library writes to
 * stderr only through sw_debug_printf.
 */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned debug_mask;
static bool debug_read;
static uint64_t debug_t0;

unsigned
sw_debug_mask(void)
{
    if (!debug_read) {
        const char *v = getenv("RSPWALK_DEBUG");
        debug_read = true;
        debug_t0 = sw_now_us();
        if (v != NULL) {
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
    }
    return debug_mask;
}

void
sw_debug_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (debug_mask & SW_DBG_TIME)
        fprintf(stderr, "[%9.3f] ", (double)(sw_now_us() - debug_t0) / 1000.0);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int
sw_hex_val(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int
sw_hex_decode(const char *s, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        int hi = sw_hex_val((unsigned char)s[2 * i]);
        int lo = sw_hex_val((unsigned char)s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

void
sw_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
}

void
sw_buf_init(struct sw_buf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void
sw_buf_fini(struct sw_buf *b)
{
    sw_free(b->data);
    sw_buf_init(b);
}

static int
buf_reserve(struct sw_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = sw_realloc(b->data, cap);
    if (d == NULL)
        return SW_ENOMEM;
    b->data = d;
    b->cap = cap;
    return 0;
}

int
sw_buf_append(struct sw_buf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n) < 0)
        return SW_ENOMEM;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int
sw_buf_printf(struct sw_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return SW_EINVAL;
    if (buf_reserve(b, (size_t)n) < 0)
        return SW_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int
sw_buf_terminate(struct sw_buf *b)
{
    if (buf_reserve(b, 0) < 0)
        return SW_ENOMEM;
    b->data[b->len] = '\0';
    return 0;
}

uint64_t
sw_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
