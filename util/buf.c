/* util/buf.c -- growable byte buffers (struct sw_buf). */
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
