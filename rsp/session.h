/* rsp/session.h -- the session object, which the rsp/ files above the exchange take.
 *
 * Not installed.  The public API is include/rspwalk/rsp.h.  The session
 * holds the exchange (rsp/exchange.h: the link, framing, acks, counters)
 * and what the stub has told about the target: the last stop, the target
 * description, the stub's general thread, the per-stop caches, and the
 * state of non-stop mode and of the event descriptor.  Each group says
 * which file keeps it; rsp/session.c makes and frees the object.
 */
#ifndef RSPWALK_RSP_SESSION_H
#define RSPWALK_RSP_SESSION_H

#include "rspwalk/rsp.h"

#include "rsp/exchange.h"
#include "util/idmap.h"
#include "util/util.h"

/* QEMU: handle_read_mem refuses len > MAX_PACKET_LENGTH/2 with E22
 * (gdbstub.c); set as mem_cap when the stub looks like QEMU. */
#define RSP_QEMU_MEM_CAP 0x800

/* A reply asked for ahead of time (rsp/prefetch.c), under its request. */
struct rsp_prefetched {
    char *req; /* owned: the payload as sent */
    size_t req_len;
    char *reply; /* owned: the reply's payload */
    size_t len;
};

/* Registers of one thread read with 'g' during the current stop (rsp/regs_mem.c). */
struct rsp_regcache {
    struct rsp_thread_id id;
    uint8_t *buf; /* owned */
    size_t len;
};

/* Non-stop mode's queues (rsp/nonstop.c). */
struct rsp_ns_state {
    bool ack_due;                  /* a %Stop came: vStopped not sent yet */
    struct rsp_stop *events;       /* owned: stops taken in, not yet returned */
    size_t nevents, capevents;     /* events[0..nevents), oldest first */
    struct rsp_thread_id *stopped; /* owned: threads known stopped */
    size_t nstopped, capstopped;
};

/* rsp_session_event_fd (rsp/event_fd.c), made on first use; -1 before. */
struct rsp_event_fd {
    int ev_fd;  /* owned: eventfd, readable while ready */
    int ep_fd;  /* owned: epoll over the transport's fd and ev_fd */
    bool ready; /* something is read ahead: bytes, a stop, a queued stop */
};

struct rsp_session {
    struct rsp_exchange x; /* the request/reply engine; its messages go to err */
    struct rsp_session_config cfg;
    struct sw_errbuf err;

    int vcont;      /* -1 unknown, 0 no, 1 yes ('vCont?' probe, rsp/run.c) */
    size_t mem_cap; /* the stub's own 'm' limit, 0 if none known */

    struct rsp_stop last_stop;
    bool has_stop;
    struct rsp_tdesc *tdesc; /* owned, may be NULL */
    char *tdesc_xml;         /* owned: target.xml as fetched, may be NULL */

    /* The stub's general thread (what 'g' and 'm' read), when known
     * (rsp/threads.c): set by our 'Hg', or by a stop on a stub known to
     * select the stopped thread (stop_selects_hg).  HG_SENT: an 'Hg' went
     * out since the last stop reply, so a '?' on QEMU (which leaves the
     * selection alone) does not say which thread is selected. */
    bool hg_valid;
    bool hg_sent;
    struct rsp_thread_id hg;
    bool stop_selects_hg;  /* gdbserver, QEMU: a stop reply selects its thread */
    bool query_selects_hg; /* gdbserver: so does the reply to '?' */
    bool no_cache;         /* cfg.no_cache: no 'g' cache, no inferred Hg */

    /* The per-stop caches, dropped by rsp_caches_drop (resume, detach, a
     * new process). */
    struct rsp_regcache *regs; /* owned: nregs entries of regs_cap */
    size_t nregs, regs_cap;
    /* (pid, tid) to a row of REGS: 60000 threads are not searched row by
     * row; stale after a compaction elsewhere, checked and rebuilt on use. */
    struct sw_idmap regs_idx;
    struct rsp_prefetched *pre; /* owned: npre replies asked for with '?' */
    size_t npre;
    struct sw_buf pre_out; /* the copy of a prefetched reply handed out */
    /* The replies to the qfThreadInfo and qsThreadInfo a stop's first write
     * asked (rsp/prefetch.c), in order (their req unused), for rsp_threads. */
    struct rsp_prefetched *info; /* owned: ninfo replies */
    size_t ninfo;
    /* The list those replies gave (and the qsThreadInfo after them, which
     * cannot be asked twice), for a second rsp_threads of the same stop. */
    struct rsp_thread_id *info_ids; /* owned: ninfo_ids, valid when info_done */
    size_t ninfo_ids;
    bool info_done;
    bool info_cut; /* that list was cut at cfg.max_threads */
    /* Threads in the last list rsp_threads returned (rsp/threads.c): how
     * many qsThreadInfo the next stop's first write asks (not per stop). */
    size_t last_nthreads;
    /* A front end passed qXfer:threads through (rsp/pass.c): the stops'
     * first writes ask for the list that way, which answers it. */
    bool list_by_xfer;

    bool vfile_fs_valid; /* vfile_fs was sent with vFile:setfs and accepted (rsp/vfile.c) */
    int64_t vfile_fs;

    bool threads_cut;              /* the last thread list had more than cfg.max_threads */
    bool qsymbol_done;             /* rsp_qsymbol_serve ran (rsp/symbols.c) */
    bool memmap_read;              /* rsp_memory_map asked the stub (rsp/symbols.c) */
    struct rsp_mem_region *memmap; /* owned: nmemmap regions, sorted by start */
    size_t nmemmap;

    bool nonstop; /* QNonStop:1 was accepted (rsp/nonstop.c) */
    struct rsp_ns_state ns;
    struct rsp_event_fd ev;
};

/* rsp_session_open over an open transport T (rsp/transport.h; tests hand
 * it one end of a socketpair), which the session takes over (closed on
 * failure too).  Defined in rsp/connect.c.  *OUT: rsp_session_close. */
int rsp_session_connect(struct rsp_transport *t, const struct rsp_session_config *cfg,
                        struct rsp_session **out, struct sw_errbuf *err);

/* A session over transport T (taken over: closed by rsp_session_free, also
 * when this fails) with CFG (NULL: the defaults), its exchange set up, not
 * connected yet.  Returns 0 or SW_ENOMEM with the message in ERR.
 * *OUT: rsp_session_free. */
int rsp_session_new(struct rsp_transport *t, const struct rsp_session_config *cfg,
                    struct rsp_session **out, struct sw_errbuf *err);
/* Free S and what the object itself owns (the exchange and its transport,
 * the caches, the target description).  What a plug-in keeps is released
 * first by its own fini (rsp_session_close).  NULL is a no-op. */
void rsp_session_free(struct rsp_session *s);

/* Keep reply R to 'g' as the registers of ID (TID as written) for this stop
 * (rsp/regs_mem.c), replacing its row if it has one (no_cache reads again);
 * *OUT is the row.  Returns 0, SW_EPROTO (odd length, bad hex) or SW_ENOMEM,
 * naming the thread. */
int rsp_regs_keep(struct rsp_session *s, struct rsp_thread_id id, const char *tid,
                  const struct rsp_reply *r, const struct rsp_regcache **out);

/* Drop the per-stop state: register caches, prefetched replies and the Hg selection. */
void rsp_caches_drop(struct rsp_session *s);

#endif /* RSPWALK_RSP_SESSION_H */
