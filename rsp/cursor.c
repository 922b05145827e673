/* rsp/cursor.c -- a reply cursor whose first failure is sticky.
 *
 * libbacktrace's dwarf_buf pattern: parsers read straight through and check
 * `failed` once at the end.  Borrowed views only; nothing is allocated.
 */
#include "rsp/cursor.h"

#include <string.h>

#include "util/util.h"

void
rsp_cur_init(struct rsp_cur *c, const char *what, const char *buf, size_t len)
{
    c->what = what;
    c->start = c->p = buf;
    c->end = buf + len;
    c->failed = false;
}

bool
rsp_cur_eof(const struct rsp_cur *c)
{
    return c->p >= c->end;
}

size_t
rsp_cur_offset(const struct rsp_cur *c)
{
    return (size_t)(c->p - c->start);
}

void
rsp_cur_fail(struct rsp_cur *c)
{
    c->failed = true;
}

uint64_t
rsp_cur_hex(struct rsp_cur *c, size_t max_digits)
{
    uint64_t v = 0;
    size_t n = 0;
    if (c->failed)
        return 0;
    while (n < max_digits && c->p < c->end) {
        int d = sw_hex_val((unsigned char)*c->p);
        if (d < 0)
            break;
        if (v >> 60) {
            c->failed = true; /* a 17th significant digit */
            return 0;
        }
        v = v << 4 | (uint64_t)d;
        c->p++;
        n++;
    }
    if (n == 0) {
        c->failed = true;
        return 0;
    }
    return v;
}

int64_t
rsp_cur_shex(struct rsp_cur *c, size_t max_digits)
{
    bool neg = rsp_cur_accept(c, '-');
    uint64_t v = rsp_cur_hex(c, max_digits);
    if (c->failed)
        return 0;
    if (v > (uint64_t)INT64_MAX) {
        c->failed = true;
        return 0;
    }
    return neg ? -(int64_t)v : (int64_t)v;
}

bool
rsp_cur_lit(struct rsp_cur *c, char ch)
{
    if (c->failed)
        return false;
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    c->failed = true;
    return false;
}

bool
rsp_cur_accept(struct rsp_cur *c, char ch)
{
    if (c->failed || c->p >= c->end || *c->p != ch)
        return false;
    c->p++;
    return true;
}

bool
rsp_cur_accept_str(struct rsp_cur *c, const char *s)
{
    size_t n = strlen(s);
    if (c->failed || (size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
        return false;
    c->p += n;
    return true;
}

struct rsp_span
rsp_cur_until(struct rsp_cur *c, char delim)
{
    struct rsp_span s = { c->p, 0 };
    if (c->failed)
        return s;
    const char *q = c->p;
    while (q < c->end && *q != delim)
        q++;
    s.len = (size_t)(q - c->p);
    c->p = q;
    return s;
}

struct rsp_span
rsp_cur_rest(struct rsp_cur *c)
{
    struct rsp_span s = { c->p, 0 };
    if (c->failed)
        return s;
    s.len = (size_t)(c->end - c->p);
    c->p = c->end;
    return s;
}

bool
rsp_cur_bytes(struct rsp_cur *c, uint8_t *out, size_t n)
{
    if (c->failed)
        return false;
    if ((size_t)(c->end - c->p) / 2 < n || sw_hex_decode(c->p, n, out) != 0) {
        c->failed = true;
        return false;
    }
    c->p += 2 * n;
    return true;
}

bool
rsp_cur_kv(struct rsp_cur *c, struct rsp_span *key, struct rsp_span *val)
{
    if (c->failed)
        return false;
    const char *q = c->p;
    while (q < c->end && *q != ':' && *q != ';')
        q++;
    key->p = c->p;
    key->len = (size_t)(q - c->p);
    if (key->len == 0 || q == c->end) {
        c->failed = true;
        return false;
    }
    c->p = q + 1;
    if (*q == ';') {
        /* "key;" without a value: tolerated, so unknown keys can be skipped. */
        val->p = c->p;
        val->len = 0;
        return true;
    }
    *val = rsp_cur_until(c, ';');
    rsp_cur_accept(c, ';');
    return true;
}

bool
rsp_span_eq(struct rsp_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.len == n && memcmp(s.p, lit, n) == 0;
}
