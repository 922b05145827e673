/* rsp/session.c -- the session object: made, freed, asked; its per-stop caches.
 *
 * The object is rsp/session.h's; the connect sequence and rsp_session_close
 * are rsp/connect.c's, the packets the other rsp/ files'.  Everything here
 * reads or frees what the object holds and sends nothing.
 */
#include "rsp/session.h"

#include <string.h>

void
rsp_session_config_init(struct rsp_session_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->timeout_ms = RSP_DEFAULT_TIMEOUT_MS;
    cfg->no_cache = sw_env_get()->no_cache;
    cfg->no_pipeline = sw_env_get()->no_pipeline;
}

int
rsp_session_new(struct rsp_transport *t, const struct rsp_session_config *cfg,
                struct rsp_session **out, struct sw_errbuf *err)
{
    *out = NULL;
    struct rsp_session *s = sw_calloc(1, sizeof *s);
    if (s == NULL) {
        rsp_transport_close(t);
        return sw_fail(err, SW_ENOMEM, "connecting: out of memory");
    }
    if (cfg != NULL)
        s->cfg = *cfg;
    else
        rsp_session_config_init(&s->cfg);
    if (s->cfg.timeout_ms <= 0)
        s->cfg.timeout_ms = RSP_DEFAULT_TIMEOUT_MS;
    s->vcont = -1;
    s->ev.ev_fd = s->ev.ep_fd = -1;
    sw_buf_init(&s->pre_out);
    bool trace = s->cfg.trace || (sw_debug_mask() & SW_DBG_PKT);
    if (rsp_exchange_init(&s->x, t, &s->err, s->cfg.timeout_ms, trace) < 0) {
        sw_fail(err, SW_ENOMEM, "connecting: out of memory");
        if (t->name != NULL)
            sw_err_prefix(err, "%s: ", t->name);
        rsp_session_free(s);
        return SW_ENOMEM;
    }
    rsp_exchange_set_deadline(&s->x, s->cfg.deadline_ms);
    *out = s;
    return 0;
}

void
rsp_session_set_deadline(struct rsp_session *s, int ms)
{
    s->cfg.deadline_ms = ms > 0 ? ms : 0;
    rsp_exchange_set_deadline(&s->x, ms);
}

void
rsp_caches_drop(struct rsp_session *s)
{
    for (size_t i = 0; i < s->nregs; i++)
        sw_free(s->regs[i].buf);
    sw_free(s->regs);
    s->regs = NULL;
    s->nregs = s->regs_cap = 0;
    sw_idmap_fini(&s->regs_idx);
    for (size_t i = 0; i < s->npre; i++) {
        sw_free(s->pre[i].req);
        sw_free(s->pre[i].reply);
    }
    sw_free(s->pre);
    s->pre = NULL;
    s->npre = 0;
    for (size_t i = 0; i < s->ninfo; i++)
        sw_free(s->info[i].reply);
    sw_free(s->info);
    s->info = NULL;
    s->ninfo = 0;
    sw_free(s->info_ids);
    s->info_ids = NULL;
    s->ninfo_ids = 0;
    s->info_done = false;
    s->info_cut = false;
    s->hg_valid = false;
}

void
rsp_session_forget_stop(struct rsp_session *s)
{
    rsp_caches_drop(s);
}

void
rsp_session_free(struct rsp_session *s)
{
    if (s == NULL)
        return;
    rsp_caches_drop(s);
    rsp_exchange_fini(&s->x);
    sw_buf_fini(&s->pre_out);
    rsp_tdesc_free(s->tdesc);
    sw_free(s->tdesc_xml);
    sw_free(s->memmap);
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
    return f < RSP_FEAT__COUNT && s->x.feat[f];
}

size_t
rsp_packet_size(const struct rsp_session *s)
{
    return s->x.packet_size;
}

size_t
rsp_mem_chunk(const struct rsp_session *s)
{
    /* 'm' replies are 2 hex digits a byte: (PacketSize-4)/2 keeps one reply
     * within the stub's buffer (gdbserver 13 crashes far beyond it).
     * Rounded down to 64 bytes, GDB's cache line, to keep reads aligned. */
    size_t c = (s->x.packet_size - 4) / 2;
    if (c >= 64)
        c &= ~(size_t)63;
    if (s->mem_cap != 0 && (s->mem_cap == RSP_QEMU_MEM_CAP || c > s->mem_cap))
        c = s->mem_cap;
    return c ? c : 1;
}

bool
rsp_session_pipelined(const struct rsp_session *s)
{
    return s->x.pipeline && s->x.noack;
}

const struct rsp_stats *
rsp_session_stats(const struct rsp_session *s)
{
    return &s->x.stats;
}

const char *
rsp_packet_name(size_t i)
{
    return i < RSP_PKT__COUNT ? rsp_pkt_wire((enum rsp_pkt)i) : NULL;
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
    return s != NULL && s->x.t != NULL ? s->x.t->fd : -1;
}
