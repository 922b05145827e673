/* rsp/connect.c -- opening and closing a session: qSupported, no-ack mode, the first
 * stop, target.xml; the plug-ins (non-stop, prefetch) join here.
 *
 * The top of rsp/: it calls every file below it and nothing calls it.  The
 * object is rsp/session.c's; the packets go through rsp/exchange.c.
 */
#include "rsp/session.h"

#include <string.h>

#include "rsp/cursor.h"
#include "rsp/event_fd.h"
#include "rsp/nonstop.h"
#include "rsp/prefetch.h"
#include "rsp/xfer.h"

/* GDB's default when a stub gives no PacketSize. */
#define DEFAULT_PACKET_SIZE 400

/* ---- qSupported ------------------------------------------------------------ */

static const struct {
    const char *name;
    enum rsp_feat feat;
} feat_names[] = {
    { "QStartNoAckMode", RSP_FEAT_NOACK },
    { "multiprocess", RSP_FEAT_MULTIPROCESS },
    { "qXfer:features:read", RSP_FEAT_XFER_FEATURES },
    { "qXfer:threads:read", RSP_FEAT_XFER_THREADS },
    { "qXfer:libraries-svr4:read", RSP_FEAT_XFER_LIBS_SVR4 },
    { "qXfer:auxv:read", RSP_FEAT_XFER_AUXV },
    { "qXfer:exec-file:read", RSP_FEAT_XFER_EXEC_FILE },
    { "QPassSignals", RSP_FEAT_QPASS_SIGNALS },
    { "vContSupported", RSP_FEAT_VCONT },
    { "binary-upload", RSP_FEAT_BINARY_UPLOAD },
    { "QNonStop", RSP_FEAT_NON_STOP },
    { "qXfer:memory-map:read", RSP_FEAT_XFER_MEMORY_MAP },
};

/* "name+", "name-", "name?", "name=value" separated by ';'.  Unknown names
 * are skipped (stubs add features all the time). */
static int
parse_qsupported(struct rsp_session *s, const char *p, size_t len)
{
    struct rsp_cur c;
    rsp_cur_init(&c, "qSupported reply", p, len);
    while (!rsp_cur_eof(&c) && !c.failed) {
        struct rsp_span f = rsp_cur_until(&c, ';');
        rsp_cur_accept(&c, ';');
        if (f.len == 0)
            continue;
        const char *eq = memchr(f.p, '=', f.len);
        if (eq != NULL) {
            size_t nlen = (size_t)(eq - f.p);
            if (nlen == 10 && memcmp(f.p, "PacketSize", 10) == 0) {
                struct rsp_cur v;
                rsp_cur_init(&v, "PacketSize", eq + 1, f.len - nlen - 1);
                uint64_t ps = rsp_cur_hex(&v, 16);
                if (v.failed || !rsp_cur_eof(&v) || ps < 64)
                    return sw_fail(&s->err, SW_EPROTO,
                                   "qSupported reply: bad PacketSize '%.*s' at offset %zu",
                                   (int)(f.len > 40 ? 40 : f.len), f.p, (size_t)(f.p - c.start));
                s->x.packet_size = ps > RSP_REPLY_MAX_LIMIT ? RSP_REPLY_MAX_LIMIT : (size_t)ps;
            }
            continue;
        }
        char sign = f.p[f.len - 1];
        if (sign != '+' && sign != '-' && sign != '?')
            continue;
        for (size_t i = 0; i < sizeof feat_names / sizeof feat_names[0]; i++) {
            size_t n = strlen(feat_names[i].name);
            if (n == f.len - 1 && memcmp(f.p, feat_names[i].name, n) == 0)
                s->x.feat[feat_names[i].feat] = sign == '+';
        }
    }
    return 0;
}

/* As gdb connects (gdb manual, "Remote Protocol"): qSupported,
 * QStartNoAckMode if offered, '?' (before any qXfer:features: gdbserver
 * 13.1 aborts otherwise); target.xml follows (connect_sequence).
 * *QSUP_REPLY: the qSupported reply, caller frees with sw_free. */
static int
connect_steps(struct rsp_session *s, char **qsup_reply, size_t *qsup_len)
{
    static const char qsup[] = "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;"
                               "no-resumed+;xmlRegisters=i386";
    struct rsp_reply r;
    int rc = rsp_request(&s->x, RSP_PKT_QSUPPORTED, qsup, sizeof qsup - 1, &r);
    if (rc < 0)
        return rc;
    /* QEMU system mode stops a running VM when a client connects and reports it at once,
     * unasked, before it reads anything (gdb_vm_state_change: "T02thread:01;"): the reply
     * to qSupported is the packet after it.  No qSupported reply starts "T"/"S" + 2 hex. */
    bool stop = r.len >= 3 && (r.p[0] == 'T' || r.p[0] == 'S') &&
                sw_hex_val((unsigned char)r.p[1]) >= 0 && sw_hex_val((unsigned char)r.p[2]) >= 0;
    if (stop && (rc = rsp_recv_stop(&s->x, s->cfg.timeout_ms, &r)) < 0)
        return rc;
    if ((rc = parse_qsupported(s, r.p, r.len)) < 0)
        return rc;
    /* Kept for the target-description cache's key: the reply lives in the
     * exchange's buffer only until the next packet. */
    if ((*qsup_reply = sw_strndup(r.p, r.len)) == NULL)
        return sw_fail(&s->err, SW_ENOMEM, "connecting: out of memory");
    *qsup_len = r.len;
    if (s->x.packet_size == 0)
        s->x.packet_size = DEFAULT_PACKET_SIZE;
    /* QEMU lists PacketSize=1000 and never QStartNoAckMode. */
    if (!s->x.feat[RSP_FEAT_NOACK] && s->x.packet_size == 0x1000)
        s->mem_cap = RSP_QEMU_MEM_CAP;
    if (rsp_exchange_limit_replies(&s->x) < 0)
        return sw_fail(&s->err, SW_ENOMEM, "connecting: out of memory");

    if (s->x.feat[RSP_FEAT_NOACK] && !s->cfg.keep_acks) {
        rc = rsp_request(&s->x, RSP_PKT_NOACK, "QStartNoAckMode", 15, &r);
        if (rc == 0 && r.len == 2 && memcmp(r.p, "OK", 2) == 0)
            s->x.noack = true; /* our '+' for that OK was the last ack */
        else if (rc < 0 && rc != SW_EUNSUP && rc != SW_ESTUB)
            return rc;
    }
    /* Pipelining: only in no-ack mode, and only where the stub offers
     * qXfer:threads and multiprocess, as gdbserver does: gdbserver serves
     * back-to-back requests from its buffer in order (measured on gdbserver
     * 13.1, docs/design.md); QEMU user offers neither and never leaves ack
     * mode, where it re-sends replies to pipelined input. */
    bool gdbserver =
        s->x.noack && s->x.feat[RSP_FEAT_XFER_THREADS] && s->x.feat[RSP_FEAT_MULTIPROCESS];
    s->x.pipeline = gdbserver && !s->cfg.no_pipeline;
    /* Which stubs select the stopped thread for 'g' by themselves (measured,
     * rsp/threads.c rsp_thread_stop_taken): gdbserver, and QEMU (PacketSize
     * 0x1000 and no no-ack mode, as above).  Other stubs get an 'Hg' first. */
    s->stop_selects_hg = gdbserver || s->mem_cap == RSP_QEMU_MEM_CAP;
    s->query_selects_hg = gdbserver;

    /* Non-stop only when asked (gdb manual, "Remote Non-Stop"), before '?'
     * as gdb does: the plug-in installs its notification hook. */
    if (s->cfg.non_stop && s->x.feat[RSP_FEAT_NON_STOP] && (rc = rsp_ns_enter(s)) < 0)
        return rc;
    struct rsp_stop st;
    rc = rsp_prefetch_wanted(s) ? rsp_prefetch_stop(s, &st) : rsp_query_stop(s, &st);
    return rc < 0 ? rc : 0;
}

/* As gdb connects, then target.xml, keyed for the cache by the qSupported reply. */
static int
connect_sequence(struct rsp_session *s)
{
    char *qsup = NULL;
    size_t qsup_len = 0;
    int rc = connect_steps(s, &qsup, &qsup_len);
    if (rc == 0 && s->x.feat[RSP_FEAT_XFER_FEATURES])
        rc = rsp_tdesc_fetch(s, qsup, qsup_len);
    sw_free(qsup);
    return rc < 0 ? rc : 0;
}

int
rsp_session_connect(struct rsp_transport *t, const struct rsp_session_config *cfg,
                    struct rsp_session **out, struct sw_errbuf *err)
{
    struct rsp_session *s;
    *out = NULL;
    if (t == NULL)
        return sw_fail(err, SW_EINVAL, "connecting: no transport");
    int rc = rsp_session_new(t, cfg, &s, err);
    if (rc < 0)
        return rc;
    s->no_cache = s->cfg.no_cache;
    rc = connect_sequence(s);
    if (rc < 0) {
        sw_err_copy(err, &s->err);
        if (t->name != NULL)
            sw_err_prefix(err, "%s: ", t->name);
        rsp_session_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

int
rsp_session_open(const char *spec, const struct rsp_session_config *cfg, struct rsp_session **out,
                 struct sw_errbuf *err)
{
    struct rsp_transport *t;
    int timeout = cfg != NULL && cfg->timeout_ms > 0 ? cfg->timeout_ms : RSP_DEFAULT_TIMEOUT_MS;
    *out = NULL;
    int rc = rsp_transport_open(spec, timeout, &t, err);
    if (rc < 0)
        return rc;
    return rsp_session_connect(t, cfg, out, err);
}

void
rsp_session_close(struct rsp_session *s)
{
    if (s == NULL)
        return;
    rsp_event_fd_close(s);
    rsp_ns_fini(s);
    rsp_session_free(s);
}
