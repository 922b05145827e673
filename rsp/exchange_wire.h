/* rsp/exchange_wire.h -- the exchange's wire: frames out, one wait for a packet in.
 *
 * Below rsp/exchange.c (which builds requests, batches and resumes on it):
 * the trace, writes with their deadline, and the wait loop with its one
 * deadline per wait.  Not installed; nothing above the exchange uses it.
 */
#ifndef RSPWALK_RSP_EXCHANGE_WIRE_H
#define RSPWALK_RSP_EXCHANGE_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "rsp/exchange.h"

/* Wait for a packet (not an ack) after having sent LABEL.  RETRANSMIT
 * re-sends our packet on '-' (NULL: a '-' is unexpected).  SKIP_CONSOLE
 * skips 'O' packets.  ACK_ONLY returns as soon as our packet is acked.
 * NO_STOP: no stop reply answers the request (a 'T'/'S' packet is a stray
 * stop, a 'W'/'X' the process's end, an 'O' console output).  BARE: LABEL
 * names what is waited for ("stop reply") rather than a request. */
struct rsp_waiter {
    const char *label;
    const char *payload; /* for retransmits; NULL if none */
    size_t len;
    bool skip_console;
    bool ack_only;
    int timeout_ms;
    bool no_stop;
    bool bare;
};

/* Wait for what W says on X: a packet (*GOT_PACKET true, in x->dec), or
 * the ack of a resume.  One deadline for the whole wait (w->timeout_ms,
 * cut to the run's); what else comes meanwhile is counted for the message
 * of its expiry and does not move it.  Returns 0 or a code with the message
 * on x->err naming W's request.  The changed hook is called afterwards. */
int rsp_wire_wait(struct rsp_exchange *x, const struct rsp_waiter *w, bool *got_packet);
/* Frame PAYLOAD into x->out and write it (traced, counted). */
int rsp_wire_send_frame(struct rsp_exchange *x, const char *payload, size_t len, const char *label);
/* Write LEN bytes of BUF for request LABEL, within the request's timeout
 * (or the wait's deadline, during a wait), never past the run's deadline. */
int rsp_wire_write(struct rsp_exchange *x, const void *buf, size_t len, const char *label);
/* One trace line: DIR then the payload, non-printable bytes and '\' as
 * \xNN (the transcript format of tests/tools/fake_transport.c). */
void rsp_wire_trace_line(const char *dir, const void *payload, size_t len);
/* RSPWALK_DEBUG=time without pkt: a short line per packet. */
void rsp_wire_trace_short(const struct rsp_exchange *x, const char *dir, const char *payload,
                          size_t len);

#endif /* RSPWALK_RSP_EXCHANGE_WIRE_H */
