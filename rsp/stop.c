/* rsp/stop.c -- stop replies: parsed, and taken in as the session's last stop.
 *
 * rsp_stop_parse is pure (S, T with expedited registers and thread:, W, X,
 * N; gdb manual, "Stop Reply Packets").  Asking for stops and resuming is
 * rsp/run.c's; non-stop notifications are rsp/nonstop.c's.
 */
#include "rsp/stop.h"

#include <string.h>

#include "rsp/cursor.h"
#include "rsp/threads.h"

static bool
all_hex(struct rsp_span s)
{
    for (size_t i = 0; i < s.len; i++)
        if (sw_hex_val((unsigned char)s.p[i]) < 0)
            return false;
    return s.len > 0;
}

/* "n:r" with n a register number: raw bytes in target order.  "xx..." (the
 * value is unavailable) and values past 64 bytes are not kept. */
static void
add_expedited(struct rsp_stop *out, struct rsp_cur *c, struct rsp_span key, struct rsp_span val)
{
    struct rsp_cur k;
    rsp_cur_init(&k, c->what, key.p, key.len);
    uint64_t regnum = rsp_cur_hex(&k, 8);
    if (k.failed || !rsp_cur_eof(&k) || val.len % 2 != 0) {
        c->p = key.p; /* report the register's offset */
        rsp_cur_fail(c);
        return;
    }
    if (val.len / 2 > sizeof out->expedited[0].bytes || out->nexpedited >= RSP_MAX_EXPEDITED)
        return;
    if (val.len >= 2 && (val.p[0] == 'x' || val.p[0] == 'X'))
        return;
    struct rsp_expedited *e = &out->expedited[out->nexpedited];
    if (sw_hex_decode(val.p, val.len / 2, e->bytes) != 0) {
        c->p = val.p;
        rsp_cur_fail(c);
        return;
    }
    e->regnum = (unsigned)regnum;
    e->len = (uint8_t)(val.len / 2);
    out->nexpedited++;
}

static void
parse_pairs(struct rsp_cur *c, struct rsp_stop *out)
{
    while (!c->failed && !rsp_cur_eof(c)) {
        struct rsp_span key, val;
        if (!rsp_cur_kv(c, &key, &val))
            break;
        if (rsp_span_eq(key, "thread")) {
            struct rsp_cur v;
            rsp_cur_init(&v, c->what, val.p, val.len);
            if (!rsp_thread_id_read(&v, &out->thread) || !rsp_cur_eof(&v)) {
                c->p = val.p + rsp_cur_offset(&v);
                rsp_cur_fail(c);
                break;
            }
            out->has_thread = true;
        } else if (rsp_span_eq(key, "core")) {
            struct rsp_cur v;
            rsp_cur_init(&v, c->what, val.p, val.len);
            uint64_t core = rsp_cur_hex(&v, 8);
            if (!v.failed && rsp_cur_eof(&v) && core <= INT32_MAX)
                out->core = (int)core;
        } else if (rsp_span_eq(key, "swbreak")) {
            out->swbreak = true;
        } else if (rsp_span_eq(key, "hwbreak")) {
            out->hwbreak = true;
        } else if (rsp_span_eq(key, "library")) {
            out->library = true;
        } else if (all_hex(key)) {
            add_expedited(out, c, key, val);
        }
        /* Anything else (watch:, syscall_entry:, fork:, ...) is skipped. */
    }
}

int
rsp_stop_parse(const char *pkt, size_t len, struct rsp_stop *out, struct sw_errbuf *err)
{
    struct rsp_cur c;
    memset(out, 0, sizeof *out);
    out->core = -1;
    rsp_cur_init(&c, "stop reply", pkt, len);
    if (len == 0)
        return sw_fail(err, SW_EPROTO, "stop reply: empty");
    char kind = pkt[0];
    c.p++;
    switch (kind) {
    case 'S':
    case 'T':
        out->kind = RSP_STOP_SIGNAL;
        /* exactly two digits: "T0506:..." is signal 5, then register 6 */
        if (c.end - c.p < 2 || sw_hex_val((unsigned char)c.p[0]) < 0 ||
            sw_hex_val((unsigned char)c.p[1]) < 0) {
            rsp_cur_fail(&c);
            break;
        }
        out->signal = (int)rsp_cur_hex(&c, 2);
        if (kind == 'T')
            parse_pairs(&c, out);
        else if (!rsp_cur_eof(&c))
            rsp_cur_fail(&c);
        break;
    case 'W':
    case 'X': {
        out->kind = kind == 'W' ? RSP_STOP_EXITED : RSP_STOP_KILLED;
        int v = (int)rsp_cur_hex(&c, 8);
        if (kind == 'W')
            out->code = v;
        else
            out->signal = v;
        if (rsp_cur_accept(&c, ';')) {
            if (rsp_cur_accept_str(&c, "process:")) {
                out->thread.pid = rsp_cur_shex(&c, 16);
                out->thread.tid = -1;
                out->has_thread = true;
            } else {
                rsp_cur_rest(&c); /* unknown extension: skipped */
            }
        }
        if (!rsp_cur_eof(&c))
            rsp_cur_fail(&c);
        break;
    }
    case 'N':
        out->kind = RSP_STOP_NO_RESUMED;
        if (!rsp_cur_eof(&c))
            rsp_cur_fail(&c);
        break;
    default:
        c.p--;
        rsp_cur_fail(&c);
        break;
    }
    if (c.failed) {
        memset(out, 0, sizeof *out);
        out->core = -1;
        return sw_fail(err, SW_EPROTO, "stop reply: cannot parse at offset %zu in '%.*s'",
                       rsp_cur_offset(&c), (int)(len > 80 ? 80 : len), pkt);
    }
    return 0;
}

int
rsp_take_stop(struct rsp_session *s, const struct rsp_reply *r, const char *label, bool query,
              struct rsp_stop *out)
{
    struct rsp_stop st;
    int rc = rsp_stop_parse(r->p, r->len, &st, &s->err);
    if (rc < 0)
        return sw_err_prefix(&s->err, "reply to '%s': ", label);
    s->last_stop = st;
    s->has_stop = true;
    rsp_thread_stop_taken(s, &st, query);
    if (out != NULL)
        *out = st;
    return 0;
}
