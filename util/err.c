/* util/err.c -- error codes and the per-object message buffer.
 *
 * The message is written once by the layer that found the failure; layers
 * above only prefix context.  Not a logger: nothing is printed here.
 */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

struct err_row {
    int code;
    const char *name;
    const char *msg;
};

static const struct err_row err_rows[] = {
#define SW_ERR_ROW(name, num, msg) { -(num), #name, msg },
    SW_ERRORS(SW_ERR_ROW)
#undef SW_ERR_ROW
};

static const struct err_row *
err_find(int code)
{
    for (size_t i = 0; i < sizeof err_rows / sizeof err_rows[0]; i++)
        if (err_rows[i].code == code)
            return &err_rows[i];
    return NULL;
}

const char *
sw_strerror(int code)
{
    const struct err_row *r = err_find(code);
    return r ? r->msg : "unknown error";
}

const char *
sw_errname(int code)
{
    const struct err_row *r = err_find(code);
    return r ? r->name : "EUNKNOWN";
}

int
sw_vfail(struct sw_errbuf *e, int code, const char *fmt, va_list ap)
{
    if (e == NULL)
        return code;
    e->code = code;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    return code;
}

int
sw_fail(struct sw_errbuf *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sw_vfail(e, code, fmt, ap);
    va_end(ap);
    return code;
}

int
sw_err_prefix(struct sw_errbuf *e, const char *fmt, ...)
{
    char pre[sizeof e->msg];
    char old[sizeof e->msg];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t n = strnlen(pre, sizeof pre - 1);
    memcpy(e->msg, pre, n);
    size_t room = sizeof e->msg - 1 - n;
    size_t m = strnlen(old, room);
    memcpy(e->msg + n, old, m);
    e->msg[n + m] = '\0';
    return e->code;
}

int
sw_err_copy(struct sw_errbuf *dst, const struct sw_errbuf *src)
{
    if (dst != src)
        memcpy(dst, src, sizeof *dst);
    return src->code;
}

void
sw_err_clear(struct sw_errbuf *e)
{
    e->code = 0;
    e->msg[0] = '\0';
}
