/* rsp/resync.c -- putting a link back in step with a stub that lost it.
 *
 * QEMU 7.2's user-mode stub can end with two guest threads reading its
 * socket at once (sample/sampler.c says when): one waits for the ack of a
 * packet the other one's read took, and replies come twice.  These are the
 * two moves that untangle it from our side: take in and ack whatever is
 * on its way, and send a bare ack.
 */
#include "rsp/session.h"

#include "rsp/exchange.h"
#include "rspwalk/errors.h"
#include "util/util.h"

/* A drain ends there: a stub that never stops sending is no stub in step. */
#define RSP_DRAIN_MAX_MS      2000
#define RSP_DRAIN_MAX_PACKETS 1024

int
rsp_session_drain(struct rsp_session *s, int quiet_ms)
{
    int n = 0;
    struct rsp_reply r;
    uint64_t give_up = sw_now_us() + (uint64_t)RSP_DRAIN_MAX_MS * 1000;
    /* Each packet rsp_recv_stop takes in is acked there (ack mode). */
    for (;;) {
        if (sw_now_us() >= give_up || n >= RSP_DRAIN_MAX_PACKETS)
            return sw_fail(s->x.err, SW_EPROTO,
                           "the stub still sends after %d packets in %d ms of taking in strays", n,
                           RSP_DRAIN_MAX_MS);
        int rc = rsp_recv_stop(&s->x, quiet_ms, &r);
        if (rc == SW_ETIMEDOUT)
            return n;
        if (rc < 0)
            return rc;
        n++;
    }
}

int
rsp_session_send_ack(struct rsp_session *s)
{
    static const char ack = '+';
    if (s->x.noack)
        return 0;
    int rc = s->x.t->ops->write(s->x.t, &ack, 1);
    if (rc < 0)
        return sw_fail(s->x.err, rc, "sending an ack: %s", s->x.t->err.msg);
    s->x.stats.bytes_sent++;
    return 0;
}

void
rsp_session_note_interrupt(struct rsp_session *s)
{
    s->x.stats.round_trips++;
    s->x.stats.interrupts++;
}
