/* rsp/rsp_internal.h -- the session object and what the rsp/ files share.
 *
 * Not installed.  The public API is include/rspwalk/rsp.h; transports are
 * rsp/transport.h; the codec and cursor are pure (codec.h, cursor.h).
 */
#ifndef RSPWALK_RSP_INTERNAL_H
#define RSPWALK_RSP_INTERNAL_H

#include "rspwalk/rsp.h"

#include "rsp/codec.h"
#include "rsp/cursor.h"
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

/* A reply asked for ahead of time (rsp/prefetch.c), under its request. */
struct rsp_prefetched {
    char *req; /* owned: the payload as sent */
    size_t req_len;
    char *reply; /* owned: the reply's payload */
    size_t len;
};

/* Registers of one thread read with 'g' during the current stop. */
struct rsp_regcache {
    struct rsp_thread_id id;
    uint8_t *buf; /* owned */
    size_t len;
};

/* The default per-read timeout (rsp_session_config.timeout_ms == 0). */
#define RSP_DEFAULT_TIMEOUT_MS 5000
/* Retransmissions after a '-' (ours or the stub's) before giving up. */
#define RSP_MAX_RETRIES 3

struct rsp_session {
    struct rsp_transport *t; /* owned */
    struct rsp_session_config cfg;
    struct sw_errbuf err;
    bool trace;

    struct rsp_dec dec;
    uint8_t rbuf[4096]; /* bytes read from the transport, not yet decoded */
    size_t rpos, rlen;
    struct sw_buf raw;     /* trace only: the current frame as it came on the wire */
    int raw_state;         /* trace only: 0 between frames, 1 data, 2-3 checksum */
    struct sw_buf out;     /* the frame being sent */
    struct sw_buf pending; /* a stop reply that arrived while we waited for an ack */
    bool has_pending;

    bool noack;
    bool pipeline; /* two requests may go in one write (rsp_request_pair) */
    bool feat[RSP_FEAT__COUNT];
    bool unsup[RSP_PKT__COUNT]; /* an empty reply was seen: never sent again */
    int vcont;                  /* -1 unknown, 0 no, 1 yes ('vCont?' probe) */
    size_t packet_size;
    size_t mem_cap; /* the stub's own 'm' limit, 0 if none known */
    struct rsp_stats stats;

    struct rsp_stop last_stop;
    bool has_stop;
    struct rsp_tdesc *tdesc; /* owned, may be NULL */
    char *tdesc_xml;         /* owned: target.xml as fetched, may be NULL */

    /* The stub's general thread (what 'g' and 'm' read), when known: set by
     * our 'Hg', or by a stop on a stub known to select the stopped thread
     * (stop_selects_hg; notes/rsp.md 2.6).  HG_SENT: an 'Hg' went out since
     * the last stop reply, so a '?' on QEMU (which leaves the selection
     * alone) does not say which thread is selected. */
    bool hg_valid;
    bool hg_sent;
    struct rsp_thread_id hg;
    bool stop_selects_hg;      /* gdbserver, QEMU: a stop reply selects its thread */
    bool query_selects_hg;     /* gdbserver: so does the reply to '?' */
    bool no_cache;             /* cfg.no_cache or RSPWALK_NO_CACHE: no 'g' cache, no inferred Hg */
    struct rsp_regcache *regs; /* owned: nregs entries, dropped on resume */
    size_t nregs;
    struct rsp_prefetched *pre; /* owned: npre replies asked for with '?', dropped on resume */
    size_t npre;
    struct sw_buf pre_out; /* the copy of a prefetched reply rsp_request handed out */

    bool vfile_fs_valid; /* vfile_fs was sent with vFile:setfs and accepted */
    int64_t vfile_fs;

    /* Non-stop mode (rsp/nonstop.c). */
    bool nonstop;    /* QNonStop:1 was accepted */
    bool ns_ack_due; /* a %Stop came: vStopped not sent yet */
    bool ns_waiting; /* in rsp_recv_notify: a %Stop ends the wait */
    /* All-stop: a 0x03 went out since the last resume.  QEMU 7.2 user mode
     * ignores it while the guest runs and answers it with a second stop
     * reply at its next stop: such a reply in place of another packet's is
     * dropped once (session.c). */
    bool intr_unanswered;
    struct rsp_stop *events;       /* owned: stops taken in, not yet returned */
    size_t nevents, capevents;     /* events[0..nevents), oldest first */
    struct rsp_thread_id *stopped; /* owned: threads known stopped */
    size_t nstopped, capstopped;

    /* rsp_session_event_fd (rsp/event_fd.c), made on first use; -1 before. */
    int ev_fd;     /* owned: eventfd, readable while ev_ready */
    int ep_fd;     /* owned: epoll over the transport's fd and ev_fd */
    bool ev_ready; /* something is read ahead: bytes, a stop, a queued stop */
};

/* The reply span of the last request: valid until the next exchange. */
struct rsp_reply {
    const char *p;
    size_t len;
};

/* Send PAYLOAD as packet KIND and wait for its reply.  Returns 0 with the
 * payload in *R; SW_EUNSUP (empty reply, remembered, or gated off without
 * sending); SW_ESTUB for "E NN"/"E.text" (message "'<pkt>': stub replied
 * E01", *R still set); SW_ETIMEDOUT, SW_ECONN, SW_EPROTO naming the packet. */
int rsp_request(struct rsp_session *s, enum rsp_pkt kind, const char *payload, size_t len,
                struct rsp_reply *r);
/* The same with a printf-formatted payload. */
int rsp_requestf(struct rsp_session *s, enum rsp_pkt kind, struct rsp_reply *r, const char *fmt,
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
/* Send ITEMS and hand each reply to FN in order.  Where s->pipeline, as many
 * requests as fit in one PacketSize go in one write (one round trip for all
 * of them, notes/rsp.md 4.3); elsewhere one request at a time.  Returns 0, a
 * link error, or FN's first negative code. */
int rsp_request_batch(struct rsp_session *s, const struct rsp_batch_item *items, size_t n,
                      rsp_batch_fn fn, void *arg);
/* The same, doing the caller's work while the first write's replies are on
 * their way: WHILE_FN(WHILE_ARG) (when not NULL) is called again and again,
 * each call a bounded piece of work, until it returns false (nothing left)
 * or a reply starts to arrive; the pieces not done then are not done. */
int rsp_request_batch_while(struct rsp_session *s, const struct rsp_batch_item *items, size_t n,
                            rsp_batch_fn fn, void *arg, bool (*while_fn)(void *), void *while_arg);
/* Two requests in one write, both replies read in order: one round trip.
 * Only where s->pipeline (no-ack mode on a stub known to serve its input in
 * sequence, notes/rsp.md 4.3).  The first reply is copied to R1 (at most
 * R1CAP bytes, *R1LEN); the second is *R2 as with rsp_request.  Returns
 * rsp_request's codes for the first reply (the second is then read and
 * dropped), else for the second. */
int rsp_request_pair(struct rsp_session *s, enum rsp_pkt k1, const char *p1, size_t l1, char *r1,
                     size_t r1cap, size_t *r1len, enum rsp_pkt k2, const char *p2, size_t l2,
                     struct rsp_reply *r2);
/* Send a packet that has no immediate reply (resumes): waits only for the ack. */
int rsp_send_noreply(struct rsp_session *s, enum rsp_pkt kind, const char *payload, size_t len);
/* Wait up to TIMEOUT_MS for a stop reply (after a resume), skipping 'O'. */
int rsp_recv_stop(struct rsp_session *s, int timeout_ms, struct rsp_reply *r);
/* Wait up to TIMEOUT_MS for a %Stop notification (non-stop), taken in by
 * rsp_ns_notified.  SW_ETIMEDOUT when none came; SW_EPROTO for a '$' packet. */
int rsp_recv_notify(struct rsp_session *s, int timeout_ms);
/* Write raw bytes (the interrupt), counted and traced. */
int rsp_send_raw(struct rsp_session *s, const void *buf, size_t len, const char *what);

/* The name of KIND ("m"), and a quoted short form of PAYLOAD for messages. */
const char *rsp_pkt_wire(enum rsp_pkt kind);
void rsp_pkt_label(const char *payload, size_t len, char *buf, size_t cap);

/* Drop the per-stop state: register caches, prefetched replies and the Hg selection. */
void rsp_caches_drop(struct rsp_session *s);

/* stop.c: take in stop reply R to LABEL (QUERY: the reply to '?') as the
 * session's last stop; *OUT (may be NULL) gets it too. */
int rsp_take_stop(struct rsp_session *s, const struct rsp_reply *r, const char *label, bool query,
                  struct rsp_stop *out);

/* prefetch.c: whether this link gets the first stop's objects with '?'
 * (pipelined, no-ack, all-stop, caches on, cfg.prefetch). */
bool rsp_prefetch_wanted(const struct rsp_session *s);
/* prefetch.c: '?' and the first chunk of target.xml, the library list, auxv
 * and the thread list (where offered), in one write; the stop in *ST as
 * rsp_query_stop gives it, the other replies kept for rsp_request. */
int rsp_prefetch_stop(struct rsp_session *s, struct rsp_stop *st);
/* prefetch.c: the kept reply to exactly PAYLOAD, copied into the session
 * (valid until the next request) in *R; false when there is none. */
bool rsp_prefetch_lookup(struct rsp_session *s, const char *payload, size_t len,
                         struct rsp_reply *r);
void rsp_prefetch_drop(struct rsp_session *s);

/* xfer.c: the request for OBJECT/ANNEX at OFFSET, as rsp_xfer_read sends it,
 * into BUF of CAP bytes; its length, or -1 when it does not fit. */
int rsp_xfer_request(const struct rsp_session *s, const char *object, const char *annex,
                     size_t offset, char *buf, size_t cap);

/* threads.c: thread-id syntax and the Hg selection. */
bool rsp_thread_id_read(struct rsp_cur *c, struct rsp_thread_id *out);
int rsp_thread_select(struct rsp_session *s, struct rsp_thread_id id);
/* ID with {0,0} replaced by the thread of the last stop, when known. */
struct rsp_thread_id rsp_thread_resolve(const struct rsp_session *s, struct rsp_thread_id id);
/* Stop reply ST was taken in (QUERY: the reply to '?', else to a resume):
 * what it tells about the stub's general thread. */
void rsp_thread_stop_taken(struct rsp_session *s, const struct rsp_stop *st, bool query);
/* Whether the stub's general thread is known to be ID (no 'Hg' needed). */
bool rsp_thread_is_selected(const struct rsp_session *s, struct rsp_thread_id id);

/* nonstop.c: a notification P of LEN bytes arrived (session.c calls this
 * in non-stop mode); true when it was a Stop, now queued. */
bool rsp_ns_notified(struct rsp_session *s, const uint8_t *p, size_t len);
/* nonstop.c: QNonStop:1 (connect, when asked and offered). */
int rsp_ns_enter(struct rsp_session *s);
/* nonstop.c: the non-stop halves of '?', rsp_wait_stop and rsp_resume
 * (PKT of LEN bytes is the vCont built by rsp_resume). */
int rsp_ns_query_stop(struct rsp_session *s, struct rsp_stop *out);
int rsp_ns_wait(struct rsp_session *s, int timeout_ms, struct rsp_stop *out);
int rsp_ns_resume(struct rsp_session *s, const char *pkt, size_t len, struct rsp_thread_id id,
                  bool only_one);
/* nonstop.c: forget the stopped threads of PID (detached). */
void rsp_ns_forget(struct rsp_session *s, int64_t pid);
/* nonstop.c: free the queues (rsp_session_close). */
void rsp_ns_fini(struct rsp_session *s);

/* event_fd.c: make the event descriptor readable while the session holds
 * unread bytes or stops not yet returned (no-op before rsp_session_event_fd). */
void rsp_event_fd_update(struct rsp_session *s);
void rsp_event_fd_close(struct rsp_session *s);

/* tdesc.c via xfer.c: fetch target.xml and its includes, parse, keep. */
int rsp_tdesc_fetch(struct rsp_session *s);

#endif /* RSPWALK_RSP_INTERNAL_H */
