/* rsp/run.c -- run control: '?', resume, wait, interrupt, detach, passed signals.
 *
 * All-stop here; in non-stop mode each entry hands over to the non-stop half
 * in rsp/nonstop.c.  Resumption drops every per-stop cache.  Never 'k': it
 * kills QEMU and may reset bare-metal boards.
 */
#include "rsp/session.h"

#include <stdio.h>
#include <string.h>

#include "rsp/cursor.h"
#include "rsp/nonstop.h"
#include "rsp/stop.h"
#include "rsp/threads.h"

int
rsp_query_stop(struct rsp_session *s, struct rsp_stop *out)
{
    struct rsp_reply r;
    if (s->nonstop)
        return rsp_ns_query_stop(s, out);
    int rc = rsp_request(&s->x, RSP_PKT_HALT_REASON, "?", 1, &r);
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
    int rc = rsp_recv_stop(&s->x, timeout_ms, &r);
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
    if (s->nonstop) /* 0x03 is all-stop only; every thread */
        return rsp_stop_thread(s, (struct rsp_thread_id){ .pid = 0, .tid = -1 });
    return rsp_send_interrupt(&s->x);
}

/* 'vCont?' once: "vCont;c;C;s;S[;t][;r]" means we may use vCont;c/C. */
static int
probe_vcont(struct rsp_session *s)
{
    struct rsp_reply r;
    if (s->vcont >= 0)
        return 0;
    int rc = rsp_request(&s->x, RSP_PKT_VCONT_QUERY, "vCont?", 6, &r);
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
    return rsp_send_resume(&s->x, kind, buf, (size_t)n);
}

int
rsp_detach(struct rsp_session *s)
{
    struct rsp_reply r;
    int rc;
    const struct rsp_stop *st = rsp_last_stop(s);
    if (s->x.feat[RSP_FEAT_MULTIPROCESS] && st != NULL && st->has_thread && st->thread.pid > 0)
        rc = rsp_requestf(&s->x, RSP_PKT_DETACH, &r, "D;%llx", (unsigned long long)st->thread.pid);
    else
        rc = rsp_request(&s->x, RSP_PKT_DETACH, "D", 1, &r);
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
    rc = rsp_request(&s->x, RSP_PKT_PASS_SIGNALS, b.data, b.len, &r);
    sw_buf_fini(&b);
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to 'QPassSignals': expected OK, got '%.*s'",
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    return 0;
}
