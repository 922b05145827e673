/* rsp/reg_write.c -- writing one register of a stopped thread: 'P', else 'g' patched into 'G'.
 *
 * The one write rspwalk makes to a target (targets/rsp_debug.c steps a thread
 * over a breakpoint instruction compiled into the program).  Reads are
 * rsp/regs_mem.c's; memory is never written.
 */
#include "rsp/session.h"

#include <stdio.h>
#include <string.h>

#include "rsp/threads.h"

/* The longest register a write takes (AArch64's 512-bit vectors are the
 * widest in the arch tables' target descriptions). */
#define RSP_REG_WRITE_MAX 64

/* REGNUM as messages name it: "rip (register 16)" where the target
 * description names it, else "register 16". */
static void
reg_label(const struct rsp_session *s, unsigned regnum, char *buf, size_t cap)
{
    const struct rsp_tdesc *td = s->tdesc;
    for (size_t i = 0; td != NULL && i < td->nregs; i++)
        if (td->regs[i].regnum == regnum) {
            snprintf(buf, cap, "%s (register %u)", td->regs[i].name, regnum);
            return;
        }
    snprintf(buf, cap, "register %u", regnum);
}

/* Forget the 'g' reply of ID kept this stop: it no longer holds. */
static void
regs_forget(struct rsp_session *s, struct rsp_thread_id id)
{
    for (size_t i = 0; i < s->nregs; i++)
        if (s->regs[i].id.pid == id.pid && s->regs[i].id.tid == id.tid) {
            sw_free(s->regs[i].buf);
            s->regs[i] = s->regs[--s->nregs];
            return;
        }
}

/* The verdict on reply R (code RC from rsp_request) to a write of register
 * NAME of thread TID with packet WIRE: 0 for OK. */
static int
write_verdict(struct rsp_session *s, int rc, const struct rsp_reply *r, const char *wire,
              const char *name, const char *tid)
{
    if (rc == SW_ESTUB)
        return sw_fail(&s->err, SW_ENOREG,
                       "writing %s of thread %s: '%s' refused, stub replied %.*s", name, tid, wire,
                       (int)(r->len > 40 ? 40 : r->len), r->p);
    if (rc < 0)
        return sw_err_prefix(&s->err, "writing %s of thread %s: ", name, tid);
    if (r->len != 2 || memcmp(r->p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO,
                       "writing %s of thread %s: reply to '%s': expected OK, got '%.*s'", name, tid,
                       wire, (int)(r->len > 40 ? 40 : r->len), r->p);
    return 0;
}

/*
 * 'P' packet (gdb manual, "Packets"):  P <regnum hex> = <value, target byte order, hex>
 * 'G' packet:                          G <every register, as 'g' gives them, hex>
 */
int
rsp_reg_write(struct rsp_session *s, struct rsp_thread_id id, unsigned regnum, size_t g_offset,
              const uint8_t *val, size_t len)
{
    char name[96], tid[64];
    struct rsp_reply r;
    int rc;

    reg_label(s, regnum, name, sizeof name);
    if (len == 0 || len > RSP_REG_WRITE_MAX)
        return sw_fail(&s->err, SW_EINVAL, "writing %s: %zu bytes (1 to %d)", name, len,
                       RSP_REG_WRITE_MAX);
    id = rsp_thread_resolve(s, id);
    rsp_thread_id_format(s, id, tid, sizeof tid);
    if ((rc = rsp_thread_select(s, id)) < 0)
        return rc;
    if (!s->x.unsup[RSP_PKT_WRITE_REG]) {
        char p[32 + 2 * RSP_REG_WRITE_MAX];
        int n = snprintf(p, sizeof p, "P%x=", regnum);
        sw_hex_encode(val, len, p + n);
        rc = rsp_request(&s->x, RSP_PKT_WRITE_REG, p, (size_t)n + 2 * len, &r);
        if (rc != SW_EUNSUP) {
            regs_forget(s, id);
            return write_verdict(s, rc, &r, "P", name, tid);
        }
        /* Empty: no 'P' (gdbserver on x86-64), remembered by the exchange. */
    }

    /* All of them with 'G': this stop's 'g' (cached, else read now), patched. */
    const uint8_t *g;
    size_t glen;
    if ((rc = rsp_regs_read(s, id, &g, &glen)) < 0)
        return sw_err_prefix(&s->err, "writing %s (no 'P'): ", name);
    if (g_offset > glen || len > glen - g_offset)
        return sw_fail(&s->err, SW_ENOREG,
                       "writing %s of thread %s: bytes %zu-%zu are past the 'g' reply (%zu bytes)",
                       name, tid, g_offset, g_offset + len - 1, glen);
    char *p = sw_malloc(1 + 2 * glen);
    if (p == NULL)
        return sw_fail(&s->err, SW_ENOMEM, "writing %s of thread %s: out of memory", name, tid);
    p[0] = 'G';
    sw_hex_encode(g, g_offset, p + 1);
    sw_hex_encode(val, len, p + 1 + 2 * g_offset);
    sw_hex_encode(g + g_offset + len, glen - g_offset - len, p + 1 + 2 * (g_offset + len));
    /* The 'g' read may have sent an 'Hg' of its own; the selection is ID's either way. */
    rc = rsp_request(&s->x, RSP_PKT_WRITE_REGS, p, 1 + 2 * glen, &r);
    sw_free(p);
    regs_forget(s, id);
    if (rc == SW_EUNSUP)
        return sw_fail(&s->err, SW_EUNSUP,
                       "writing %s of thread %s: the stub has neither 'P' nor 'G'", name, tid);
    return write_verdict(s, rc, &r, "G", name, tid);
}
