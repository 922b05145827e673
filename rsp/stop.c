/* rsp/stop.c -- stop replies and run control: '?', resume, wait, interrupt, detach.
 *
 * All-stop here; the non-stop halves (notifications, vStopped) in nonstop.c.
 * rsp_stop_parse is pure (S, T with expedited registers and thread:, W, X, N).
 * Resumption drops every per-stop cache.  Never 'k': it kills QEMU and may
 * reset bare-metal boards (notes/rsp.md §0.7).
 */
#include "rsp/rsp_internal.h"

#include <stdio.h>
#include <string.h>

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

int
rsp_query_stop(struct rsp_session *s, struct rsp_stop *out)
{
    struct rsp_reply r;
    if (s->nonstop)
        return rsp_ns_query_stop(s, out);
    int rc = rsp_request(s, RSP_PKT_HALT_REASON, "?", 1, &r);
    if (rc < 0)
        return rc;
    return rsp_take_stop(s, &r, "?", true, out);
}

int
rsp_wait_stop(struct rsp_session *s, int timeout_ms, struct rsp_stop *out)
{
    struct rsp_reply r;
    if (timeout_ms < 0)
        timeout_ms = s->cfg.timeout_ms;
    if (s->nonstop)
        return rsp_ns_wait(s, timeout_ms, out);
    int rc = rsp_recv_stop(s, timeout_ms, &r);
    if (rc < 0)
        return rc;
    if (r.len == 0)
        return sw_fail(&s->err, SW_EUNSUP, "waiting for a stop: empty reply (resume refused)");
    if (r.len == 3 && r.p[0] == 'E')
        return sw_fail(&s->err, SW_ESTUB, "waiting for a stop: stub replied %.3s", r.p);
    return rsp_take_stop(s, &r, "stop reply", false, out);
}

int
rsp_interrupt(struct rsp_session *s)
{
    static const uint8_t ctrl_c = 0x03;
    if (s->nonstop) /* 0x03 is all-stop only; every thread */
        return rsp_stop_thread(s, (struct rsp_thread_id){ .pid = 0, .tid = -1 });
    s->intr_unanswered = true;
    return rsp_send_raw(s, &ctrl_c, 1, "interrupt");
}

/* 'vCont?' once: "vCont;c;C;s;S[;t][;r]" means we may use vCont;c/C. */
static int
probe_vcont(struct rsp_session *s)
{
    struct rsp_reply r;
    if (s->vcont >= 0)
        return 0;
    int rc = rsp_request(s, RSP_PKT_VCONT_QUERY, "vCont?", 6, &r);
    if (rc == SW_EUNSUP || rc == SW_ESTUB) {
        s->vcont = 0;
        return 0;
    }
    if (rc < 0)
        return rc;
    bool c = false, C = false;
    struct rsp_cur cur;
    rsp_cur_init(&cur, "vCont? reply", r.p, r.len);
    if (rsp_cur_accept_str(&cur, "vCont")) {
        while (rsp_cur_accept(&cur, ';')) {
            struct rsp_span a = rsp_cur_until(&cur, ';');
            c |= rsp_span_eq(a, "c");
            C |= rsp_span_eq(a, "C");
        }
    }
    s->vcont = c && C;
    return 0;
}

int
rsp_resume(struct rsp_session *s, struct rsp_thread_id id, bool only_one, int sig)
{
    char buf[128], tid[64];
    int rc, n;
    if (sig < 0 || sig > 0xff)
        return sw_fail(&s->err, SW_EINVAL, "resuming: bad signal %d", sig);
    if ((rc = probe_vcont(s)) < 0)
        return rc;
    id = rsp_thread_resolve(s, id);
    rsp_thread_id_format(s, id, tid, sizeof tid);
    enum rsp_pkt kind = RSP_PKT_VCONT;
    if (s->vcont == 1) {
        if (only_one && sig)
            n = snprintf(buf, sizeof buf, "vCont;C%02x:%s", sig, tid);
        else if (only_one)
            n = snprintf(buf, sizeof buf, "vCont;c:%s", tid);
        else if (sig)
            n = snprintf(buf, sizeof buf, "vCont;C%02x:%s;c", sig, tid);
        else
            n = snprintf(buf, sizeof buf, "vCont;c");
    } else if (sig) {
        kind = RSP_PKT_CONTINUE_SIG;
        n = snprintf(buf, sizeof buf, "C%02x", sig);
    } else {
        kind = RSP_PKT_CONTINUE;
        n = snprintf(buf, sizeof buf, "c");
    }
    if (s->nonstop) {
        if (kind != RSP_PKT_VCONT)
            return sw_fail(&s->err, SW_EUNSUP, "resuming in non-stop mode: the stub has no vCont");
        return rsp_ns_resume(s, buf, (size_t)n, id, only_one);
    }
    rsp_caches_drop(s);
    s->has_stop = false;
    rc = rsp_send_noreply(s, kind, buf, (size_t)n);
    s->intr_unanswered = false; /* a stop from now on is the resume's */
    return rc;
}

int
rsp_detach(struct rsp_session *s)
{
    struct rsp_reply r;
    int rc;
    const struct rsp_stop *st = rsp_last_stop(s);
    if (s->feat[RSP_FEAT_MULTIPROCESS] && st != NULL && st->has_thread && st->thread.pid > 0)
        rc = rsp_requestf(s, RSP_PKT_DETACH, &r, "D;%llx", (unsigned long long)st->thread.pid);
    else
        rc = rsp_request(s, RSP_PKT_DETACH, "D", 1, &r);
    if (rc < 0)
        return rc;
    rsp_caches_drop(s);
    s->has_stop = false;
    rsp_ns_forget(s, 0);
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to 'D': expected OK, got '%.*s'",
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    return 0;
}

int
rsp_pass_signals(struct rsp_session *s, const int *sigs, size_t n)
{
    struct sw_buf b;
    struct rsp_reply r;
    int rc = 0;
    sw_buf_init(&b);
    rc = sw_buf_append(&b, "QPassSignals:", 13);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (sigs[i] <= 0 || sigs[i] > 0xff) {
            sw_buf_fini(&b);
            return sw_fail(&s->err, SW_EINVAL, "QPassSignals: bad signal %d", sigs[i]);
        }
        rc = sw_buf_printf(&b, i ? ";%x" : "%x", (unsigned)sigs[i]);
    }
    if (rc < 0) {
        sw_buf_fini(&b);
        return sw_fail(&s->err, SW_ENOMEM, "QPassSignals: out of memory");
    }
    rc = rsp_request(s, RSP_PKT_PASS_SIGNALS, b.data, b.len, &r);
    sw_buf_fini(&b);
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to 'QPassSignals': expected OK, got '%.*s'",
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    return 0;
}
