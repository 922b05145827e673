/* rsp/exchange.h -- the request/reply engine: send a packet, read its reply.
 *
 * The exchange owns the low part of a session: the transport, the decoder
 * and its buffers, acks and retransmits, no-ack mode, PacketSize, the
 * features and packets the stub refused, the counters and the packet trace.
 * It knows the packets only as rows of rsp/packets.def and calls nothing
 * above it: what the session adds (replies asked for ahead, non-stop
 * notifications, the event descriptor) comes in through its hooks.  Not
 * installed; the session object is rsp/session.h's.
 */
#ifndef RSPWALK_RSP_EXCHANGE_H
#define RSPWALK_RSP_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/rsp.h"

#include "rsp/codec.h"
#include "rsp/transport.h"
#include "util/util.h"

#define RSP_GATE_NONE (-1)

enum rsp_reply_kind {
    RSP_R_OK,   /* "OK" */
    RSP_R_TEXT, /* free text */
    RSP_R_HEX,  /* hex bytes */
    RSP_R_STOP, /* a stop reply; 'O' console packets before it are skipped */
    RSP_R_XFER, /* 'm'/'l' + binary data */
    RSP_R_NONE, /* no reply (resumes) */
};

enum rsp_pkt {
#define RSP_PKT(id, wire, gate, reply) RSP_PKT_##id,
#include "rsp/packets.def"
#undef RSP_PKT
    RSP_PKT__COUNT
};

/* The default per-request timeout (rsp_session_config.timeout_ms == 0). */
#define RSP_DEFAULT_TIMEOUT_MS 5000
/* The longest reply accepted: the first qSupported reply can be long
 * (gdbserver: ~600 bytes), so never less than 64 KiB, nor more than 4 MiB
 * whatever PacketSize says. */
#define RSP_REPLY_MIN_LIMIT (64u * 1024)
#define RSP_REPLY_MAX_LIMIT (4u * 1024 * 1024)
/* Retransmissions after a '-' (ours or the stub's) before giving up. */
#define RSP_MAX_RETRIES 3

/* The reply span of the last request: valid until the next exchange. */
struct rsp_reply {
    const char *p;
    size_t len;
};

/* What the layer above adds to the exchange.  Every member OPTIONAL (NULL:
 * nothing happens there); each is called with ARG, set once by whoever
 * installs the first hook (the session, itself).  A hook must not send or
 * read on the exchange. */
struct rsp_exchange_hooks {
    /* A '%' notification P of LEN bytes arrived, whatever was waited for.
     * Returns true when it is one rsp_recv_notify waits for (a Stop, taken
     * in): that wait then ends.  Default: ignored. */
    bool (*notify)(void *arg, const uint8_t *p, size_t len);
    /* The reply to exactly PAYLOAD of LEN bytes, known without asking (asked
     * for ahead): true with *R set (valid until the next request), and the
     * request costs no packet and no round trip (counted in
     * rsp_stats.cached_replies).  Default: every request is sent. */
    bool (*lookup_reply)(void *arg, const char *payload, size_t len, struct rsp_reply *r);
    /* A stop reply P of LEN bytes came in place of the reply to a request
     * no stop reply answers ('m', 'g', 'p', qXfer, Hg, qfThreadInfo...):
     * QEMU 7.2 user mode sends a second stop reply after an interrupt
     * reached a thread blocked in a system call.  It is counted in
     * rsp_stats.stray_stops and the request's own reply is read next,
     * within the same deadline.  Default: only counted. */
    void (*stray_stop)(void *arg, const uint8_t *p, size_t len);
    /* After every read of the link and whenever what the exchange holds
     * unread changes (rsp_exchange_unread), or rsp_exchange_changed is
     * called.  Default: nothing. */
    void (*changed)(void *arg);
    void *arg; /* borrowed */
};

struct rsp_exchange {
    struct rsp_transport *t; /* owned */
    struct sw_errbuf *err;   /* borrowed: where every failure is written */
    int timeout_ms;          /* per request: from its write to the end of its reply */
    /* The whole run's deadline (rsp_exchange_set_deadline): sw_now_us() by
     * which every reply must be in, 0 for none; and the length it was set
     * with, for messages. */
    uint64_t run_deadline_us;
    int run_deadline_ms;
    uint64_t wait_deadline_us; /* the deadline of the wait under way (its acks'), 0 between */
    bool trace;                /* the packet trace on (RSPWALK_DEBUG=pkt or the config) */
    struct rsp_exchange_hooks hooks;

    struct rsp_dec dec;
    uint8_t rbuf[4096]; /* bytes read from the transport, not yet decoded */
    size_t rpos, rlen;
    struct sw_buf raw;     /* trace only: the current frame as it came on the wire */
    int raw_state;         /* trace only: 0 between frames, 1 data, 2-3 checksum */
    struct sw_buf out;     /* the frame being sent */
    struct sw_buf pending; /* a stop reply that arrived while we waited for an ack */
    bool has_pending;

    bool noack;
    bool pipeline; /* several requests may go in one write (rsp_request_batch) */
    bool feat[RSP_FEAT__COUNT];
    bool unsup[RSP_PKT__COUNT]; /* an empty reply was seen: never sent again */
    size_t packet_size;
    struct rsp_stats stats;

    /* All-stop: a 0x03 went out since the last resume.  QEMU 7.2 user mode
     * ignores it while the guest runs and answers it with a second stop
     * reply at its next stop: such a reply in place of another packet's is
     * dropped once. */
    bool intr_unanswered;
    bool notify_waiting; /* in rsp_recv_notify: a notification the hook takes ends the wait */
};

/* Set up X (zeroed) over transport T, writing its messages to ERR
 * (borrowed, outlives X).  X owns T from here on: rsp_exchange_fini closes
 * it, also after a failure here.  Returns 0 or SW_ENOMEM (no message). */
int rsp_exchange_init(struct rsp_exchange *x, struct rsp_transport *t, struct sw_errbuf *err,
                      int timeout_ms, bool trace);
/* Every reply from now on must be in within MS milliseconds of this call
 * (the run's deadline, on top of each request's timeout_ms); 0 or less:
 * no such deadline.  Past it, requests fail with SW_ETIMEDOUT naming it. */
void rsp_exchange_set_deadline(struct rsp_exchange *x, int ms);
/* Release what X owns, the transport included.  A zeroed X is a no-op. */
void rsp_exchange_fini(struct rsp_exchange *x);
/* Bound replies by what X->packet_size implies: four PacketSizes, within
 * [RSP_REPLY_MIN_LIMIT, RSP_REPLY_MAX_LIMIT].  Returns 0 or SW_ENOMEM (no
 * message: the caller names what it was doing). */
int rsp_exchange_limit_replies(struct rsp_exchange *x);
/* Whether X holds something not handed out yet: bytes read ahead, or a
 * stop reply that came before an ack. */
bool rsp_exchange_unread(const struct rsp_exchange *x);
/* Call the changed hook (a layer above changed what it holds unread). */
void rsp_exchange_changed(struct rsp_exchange *x);

/* Send PAYLOAD as packet KIND and wait for its reply.  Returns 0 with the
 * payload in *R; SW_EUNSUP (empty reply, remembered, or gated off without
 * sending); SW_ESTUB for "E NN"/"E.text" (message "'<pkt>': stub replied
 * E01", *R still set); SW_ETIMEDOUT, SW_ECONN, SW_EPROTO naming the packet. */
int rsp_request(struct rsp_exchange *x, enum rsp_pkt kind, const char *payload, size_t len,
                struct rsp_reply *r);
/* The same with a printf-formatted payload. */
int rsp_requestf(struct rsp_exchange *x, enum rsp_pkt kind, struct rsp_reply *r, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));
/* One request of a batch, and what is done with its reply: RC as
 * rsp_request gives it for R (0, SW_EUNSUP, SW_ESTUB); a negative return
 * ends the batch (after its replies in flight are read) with that code. */
struct rsp_batch_item {
    enum rsp_pkt kind;
    const char *payload;
    size_t len;
};
typedef int (*rsp_batch_fn)(void *arg, size_t i, int rc, const struct rsp_reply *r);
/* Send ITEMS and hand each reply to FN in order.  Where x->pipeline, as many
 * requests as fit in one PacketSize go in one write (one round trip for all
 * of them); elsewhere one request at a time.  Returns 0, a link error, or
 * FN's first negative code. */
int rsp_request_batch(struct rsp_exchange *x, const struct rsp_batch_item *items, size_t n,
                      rsp_batch_fn fn, void *arg);
/* The same, doing the caller's work while the first write's replies are on
 * their way: WHILE_FN(WHILE_ARG) (when not NULL) is called again and again,
 * each call a bounded piece of work, until it returns false (nothing left)
 * or a reply starts to arrive; the pieces not done then are not done. */
int rsp_request_batch_while(struct rsp_exchange *x, const struct rsp_batch_item *items, size_t n,
                            rsp_batch_fn fn, void *arg, bool (*while_fn)(void *), void *while_arg);
/* Two requests in one write, both replies read in order: one round trip.
 * Only where x->pipeline (no-ack mode on a stub known to serve its input in
 * sequence).  The first reply is copied to R1 (at most R1CAP bytes,
 * *R1LEN); the second is *R2 as with rsp_request.  Returns rsp_request's
 * codes for the first reply (the second is then read and dropped), else for
 * the second. */
int rsp_request_pair(struct rsp_exchange *x, enum rsp_pkt k1, const char *p1, size_t l1, char *r1,
                     size_t r1cap, size_t *r1len, enum rsp_pkt k2, const char *p2, size_t l2,
                     struct rsp_reply *r2);
/* Send a resume, which has no immediate reply: waits only for the ack.  A
 * stop from then on is the resume's: an interrupt not answered so far is
 * forgotten. */
int rsp_send_resume(struct rsp_exchange *x, enum rsp_pkt kind, const char *payload, size_t len);
/* Send the interrupt byte 0x03 (all-stop), traced and counted as a round
 * trip (rsp_stats.interrupts too): the stop reply it brings is its reply. */
int rsp_send_interrupt(struct rsp_exchange *x);
/* Wait up to TIMEOUT_MS for a stop reply (after a resume), skipping 'O'. */
int rsp_recv_stop(struct rsp_exchange *x, int timeout_ms, struct rsp_reply *r);
/* Wait up to TIMEOUT_MS for a notification the notify hook takes (a
 * %Stop).  SW_ETIMEDOUT when none came; SW_EPROTO for a '$' packet. */
int rsp_recv_notify(struct rsp_exchange *x, int timeout_ms);

/* The name of KIND ("m"), and a quoted short form of PAYLOAD for messages. */
const char *rsp_pkt_wire(enum rsp_pkt kind);
void rsp_pkt_label(const char *payload, size_t len, char *buf, size_t cap);

#endif /* RSPWALK_RSP_EXCHANGE_H */
