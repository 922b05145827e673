/* rsp/connect.c -- opening a session: qSupported, no-ack mode, the first stop, target.xml;
 * the session's lifetime and what it learned about the stub.
 *
 * The packets themselves go through rsp/session.c's request machinery.
 */
#include "rsp/rsp_internal.h"

#include <stdlib.h>
#include <string.h>

/* The first qSupported reply can be long (gdbserver: ~600 bytes); replies are
 * bounded by four PacketSizes, never less than 64 KiB nor more than 4 MiB. */
#define DEC_MIN_LIMIT (64u * 1024)
#define DEC_MAX_LIMIT (4u * 1024 * 1024)
/* GDB's default when a stub gives no PacketSize. */
#define DEFAULT_PACKET_SIZE 400
/* QEMU: handle_read_mem refuses len > MAX_PACKET_LENGTH/2 with E22 (notes §1.6). */
#define QEMU_MEM_CAP 0x800

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
                s->packet_size = ps > DEC_MAX_LIMIT ? DEC_MAX_LIMIT : (size_t)ps;
            }
            continue;
        }
        char sign = f.p[f.len - 1];
        if (sign != '+' && sign != '-' && sign != '?')
            continue;
        for (size_t i = 0; i < sizeof feat_names / sizeof feat_names[0]; i++) {
            size_t n = strlen(feat_names[i].name);
            if (n == f.len - 1 && memcmp(f.p, feat_names[i].name, n) == 0)
                s->feat[feat_names[i].feat] = sign == '+';
        }
    }
    return 0;
}

static int
set_decoder_limit(struct rsp_session *s)
{
    size_t lim = s->packet_size * 4;
    if (lim < DEC_MIN_LIMIT)
        lim = DEC_MIN_LIMIT;
    if (lim > DEC_MAX_LIMIT)
        lim = DEC_MAX_LIMIT;
    rsp_dec_fini(&s->dec);
    if (rsp_dec_init(&s->dec, lim) != 0)
        return sw_fail(&s->err, SW_ENOMEM, "connecting: out of memory");
    return 0;
}

/* notes/rsp.md §0.2: qSupported, QStartNoAckMode if offered, '?' (before
 * any qXfer:features: gdbserver 13.1 aborts otherwise), target.xml. */
static int
connect_sequence(struct rsp_session *s)
{
    static const char qsup[] = "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;"
                               "no-resumed+;xmlRegisters=i386";
    struct rsp_reply r;
    int rc = rsp_request(s, RSP_PKT_QSUPPORTED, qsup, sizeof qsup - 1, &r);
    if (rc < 0)
        return rc;
    /* QEMU system mode stops a running VM when a client connects and reports it at once,
     * unasked, before it reads anything (gdb_vm_state_change: "T02thread:01;"): the reply
     * to qSupported is the packet after it.  No qSupported reply starts "T"/"S" + 2 hex. */
    bool stop = r.len >= 3 && (r.p[0] == 'T' || r.p[0] == 'S') &&
                sw_hex_val((unsigned char)r.p[1]) >= 0 && sw_hex_val((unsigned char)r.p[2]) >= 0;
    if (stop && (rc = rsp_recv_stop(s, s->cfg.timeout_ms, &r)) < 0)
        return rc;
    if ((rc = parse_qsupported(s, r.p, r.len)) < 0)
        return rc;
    if (s->packet_size == 0)
        s->packet_size = DEFAULT_PACKET_SIZE;
    /* QEMU lists PacketSize=1000 and never QStartNoAckMode (notes §3). */
    if (!s->feat[RSP_FEAT_NOACK] && s->packet_size == 0x1000)
        s->mem_cap = QEMU_MEM_CAP;
    if ((rc = set_decoder_limit(s)) < 0)
        return rc;

    if (s->feat[RSP_FEAT_NOACK] && s->cfg.allow_noack) {
        rc = rsp_request(s, RSP_PKT_NOACK, "QStartNoAckMode", 15, &r);
        if (rc == 0 && r.len == 2 && memcmp(r.p, "OK", 2) == 0)
            s->noack = true; /* our '+' for that OK was the last ack */
        else if (rc < 0 && rc != SW_EUNSUP && rc != SW_ESTUB)
            return rc;
    }
    /* Pipelining: only in no-ack mode, and only where the stub offers
     * qXfer:threads and multiprocess, as gdbserver does: gdbserver serves
     * back-to-back requests from its buffer in order (notes/rsp.md 4.3);
     * QEMU user offers neither and never leaves ack mode, where it
     * re-sends replies to pipelined input. */
    bool gdbserver = s->noack && s->feat[RSP_FEAT_XFER_THREADS] && s->feat[RSP_FEAT_MULTIPROCESS];
    s->pipeline = gdbserver && getenv("RSPWALK_NO_PIPELINE") == NULL;
    /* Which stubs select the stopped thread for 'g' by themselves (measured,
     * rsp/threads.c rsp_thread_stop_taken): gdbserver, and QEMU (PacketSize
     * 0x1000 and no no-ack mode, as above).  Other stubs get an 'Hg' first. */
    s->stop_selects_hg = gdbserver || s->mem_cap == QEMU_MEM_CAP;
    s->query_selects_hg = gdbserver;

    /* Non-stop only when asked (notes/rsp.md §1.5), before '?' as gdb does. */
    if (s->cfg.non_stop && s->feat[RSP_FEAT_NON_STOP] && (rc = rsp_ns_enter(s)) < 0)
        return rc;
    struct rsp_stop st;
    rc = rsp_prefetch_wanted(s) ? rsp_prefetch_stop(s, &st) : rsp_query_stop(s, &st);
    if (rc < 0)
        return rc;
    if (s->feat[RSP_FEAT_XFER_FEATURES] && (rc = rsp_tdesc_fetch(s)) < 0)
        return rc;
    return 0;
}

void
rsp_session_config_init(struct rsp_session_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->timeout_ms = RSP_DEFAULT_TIMEOUT_MS;
    cfg->allow_noack = true;
    cfg->prefetch = true;
}

int
rsp_session_connect(struct rsp_transport *t, const struct rsp_session_config *cfg,
                    struct rsp_session **out, struct sw_errbuf *err)
{
    *out = NULL;
    if (t == NULL)
        return sw_fail(err, SW_EINVAL, "connecting: no transport");
    struct rsp_session *s = sw_calloc(1, sizeof *s);
    if (s == NULL) {
        rsp_transport_close(t);
        return sw_fail(err, SW_ENOMEM, "connecting: out of memory");
    }
    s->t = t;
    if (cfg != NULL)
        s->cfg = *cfg;
    else
        rsp_session_config_init(&s->cfg);
    if (s->cfg.timeout_ms <= 0)
        s->cfg.timeout_ms = RSP_DEFAULT_TIMEOUT_MS;
    s->trace = s->cfg.trace || (sw_debug_mask() & SW_DBG_PKT);
    s->no_cache = s->cfg.no_cache || getenv("RSPWALK_NO_CACHE") != NULL;
    s->vcont = -1;
    s->ev_fd = s->ep_fd = -1;
    sw_buf_init(&s->raw);
    sw_buf_init(&s->out);
    sw_buf_init(&s->pending);
    sw_buf_init(&s->pre_out);
    int rc = rsp_dec_init(&s->dec, DEC_MIN_LIMIT);
    if (rc < 0)
        rc = sw_fail(&s->err, SW_ENOMEM, "connecting: out of memory");
    else
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
rsp_caches_drop(struct rsp_session *s)
{
    for (size_t i = 0; i < s->nregs; i++)
        sw_free(s->regs[i].buf);
    sw_free(s->regs);
    s->regs = NULL;
    s->nregs = 0;
    rsp_prefetch_drop(s);
    s->hg_valid = false;
}

void
rsp_session_close(struct rsp_session *s)
{
    if (s == NULL)
        return;
    rsp_caches_drop(s);
    rsp_transport_close(s->t);
    rsp_dec_fini(&s->dec);
    sw_buf_fini(&s->raw);
    sw_buf_fini(&s->out);
    sw_buf_fini(&s->pending);
    sw_buf_fini(&s->pre_out);
    rsp_ns_fini(s);
    rsp_event_fd_close(s);
    rsp_tdesc_free(s->tdesc);
    sw_free(s->tdesc_xml);
    sw_free(s);
}

const char *
rsp_session_errmsg(const struct rsp_session *s)
{
    return s != NULL ? s->err.msg : "no session";
}

bool
rsp_has_feature(const struct rsp_session *s, enum rsp_feat f)
{
    return f < RSP_FEAT__COUNT && s->feat[f];
}

size_t
rsp_packet_size(const struct rsp_session *s)
{
    return s->packet_size;
}

size_t
rsp_mem_chunk(const struct rsp_session *s)
{
    /* 'm' replies are 2 hex digits a byte: (PacketSize-4)/2 keeps one reply
     * within the stub's buffer (gdbserver 13 crashes far beyond it, §0.4).
     * Rounded down to 64 bytes, GDB's cache line, to keep reads aligned. */
    size_t c = (s->packet_size - 4) / 2;
    if (c >= 64)
        c &= ~(size_t)63;
    if (s->mem_cap != 0 && (s->mem_cap == QEMU_MEM_CAP || c > s->mem_cap))
        c = s->mem_cap;
    return c ? c : 1;
}

bool
rsp_session_pipelined(const struct rsp_session *s)
{
    return s->pipeline && s->noack;
}

const struct rsp_stats *
rsp_session_stats(const struct rsp_session *s)
{
    return &s->stats;
}

const struct rsp_tdesc *
rsp_session_tdesc(const struct rsp_session *s)
{
    return s->tdesc;
}

const struct rsp_stop *
rsp_last_stop(const struct rsp_session *s)
{
    return s->has_stop ? &s->last_stop : NULL;
}

int
rsp_session_fd(const struct rsp_session *s)
{
    return s != NULL && s->t != NULL ? s->t->fd : -1;
}
