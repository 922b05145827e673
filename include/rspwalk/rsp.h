/* rspwalk/rsp.h -- the GDB Remote Serial Protocol client session.
 *
 * A session speaks to one stub over one transport: the connect sequence,
 * features, stop replies, threads, registers, memory, qXfer objects and
 * resumption.  It knows nothing of walking stacks.  Every request has a
 * deadline that only its own reply meets (timeout_ms), the whole session
 * may have one (deadline_ms), and writes time out too; every packet sent
 * and received is counted.
 *
 * Threads: a session is used by one thread at a time, together with every
 * process over it (rspwalk/target.h); different sessions may be used on
 * different threads at once.  rsp_session_config_init, rsp_tdesc_parse,
 * rsp_tdesc_free, rsp_stop_parse and rsp_packet_name touch no session: any
 * thread.  A target-description cache (struct rsp_tdesc_cache) is locked:
 * any number of sessions on any threads may share one.
 */
#ifndef RSPWALK_RSP_H
#define RSPWALK_RSP_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rsp_session;

/* Features a stub may offer in its qSupported reply, or that we probe. */
enum rsp_feat {
    RSP_FEAT_NOACK = 0,       /* QStartNoAckMode+ */
    RSP_FEAT_MULTIPROCESS,    /* multiprocess+ */
    RSP_FEAT_XFER_FEATURES,   /* qXfer:features:read+ */
    RSP_FEAT_XFER_THREADS,    /* qXfer:threads:read+ */
    RSP_FEAT_XFER_LIBS_SVR4,  /* qXfer:libraries-svr4:read+ */
    RSP_FEAT_XFER_AUXV,       /* qXfer:auxv:read+ */
    RSP_FEAT_XFER_EXEC_FILE,  /* qXfer:exec-file:read+ */
    RSP_FEAT_QPASS_SIGNALS,   /* QPassSignals+ */
    RSP_FEAT_VCONT,           /* vContSupported+ */
    RSP_FEAT_BINARY_UPLOAD,   /* binary-upload+ (the 'x' packet) */
    RSP_FEAT_P_PACKET,        /* 'p' answered (probed; gdbserver has none) */
    RSP_FEAT_NON_STOP,        /* QNonStop+ */
    RSP_FEAT_XFER_MEMORY_MAP, /* qXfer:memory-map:read+ */
    RSP_FEAT__COUNT
};

/* Thread ids as the stub writes them: "pPID.TID" with multiprocess, "TID"
 * without.  -1 means all, 0 means any. */
struct rsp_thread_id {
    int64_t pid; /* 0 when the stub does not use multiprocess ids */
    int64_t tid;
};

/* Registers a stop reply carried ("expedited"): raw bytes in target order. */
struct rsp_expedited {
    unsigned regnum; /* the stub's register number */
    uint8_t len;
    uint8_t bytes[64];
};

#define RSP_MAX_EXPEDITED 16

enum rsp_stop_kind {
    RSP_STOP_NONE = 0,
    RSP_STOP_SIGNAL,     /* S or T: stopped by signal SIGNAL */
    RSP_STOP_EXITED,     /* W: exited with status CODE */
    RSP_STOP_KILLED,     /* X: killed by signal SIGNAL */
    RSP_STOP_NO_RESUMED, /* N: no resumed threads left */
};

/* A parsed stop reply.  Signals are gdb's numbers (SIGTRAP is 5). */
struct rsp_stop {
    enum rsp_stop_kind kind;
    int signal;
    int code;
    bool has_thread;
    struct rsp_thread_id thread;
    int core; /* -1 if not given */
    bool swbreak, hwbreak, library;
    size_t nexpedited;
    struct rsp_expedited expedited[RSP_MAX_EXPEDITED];
};

/* One register of the target description. */
struct rsp_treg {
    char *name;      /* owned */
    char *feature;   /* owned: the <feature name> it came from */
    char *type;      /* owned, may be NULL */
    unsigned regnum; /* the stub's number */
    unsigned bitsize;
    size_t offset; /* byte offset in the 'g' reply (registers in regnum order) */
};

/* A parsed target.xml with its includes. */
struct rsp_tdesc {
    char *arch;            /* owned, may be NULL: <architecture> */
    char *osabi;           /* owned, may be NULL: <osabi> */
    struct rsp_treg *regs; /* owned: nregs rows, in regnum order */
    size_t nregs;
    size_t g_size; /* bytes of every register, i.e. the longest 'g' this layout allows */
};

/* Fetch the document named ANNEX ("i386-64bit.xml") for an xi:include.
 * Store a malloc'd buffer in *DATA (the parser frees it) and its length. */
typedef int (*rsp_tdesc_include_fn)(void *arg, const char *annex, char **data, size_t *len);

/* Parse target.xml text XML of LEN bytes, following xi:include through
 * INCLUDE (may be NULL: includes are then an error).  Comments are
 * stripped; registers without regnum follow the previous one.  Returns 0,
 * SW_EPROTO with a message in ERR naming the offset, SW_ENOMEM.
 * *OUT: caller frees with rsp_tdesc_free. */
SW_API int rsp_tdesc_parse(const char *xml, size_t len, rsp_tdesc_include_fn include, void *arg,
                           struct rsp_tdesc **out, struct sw_errbuf *err);
SW_API void rsp_tdesc_free(struct rsp_tdesc *td);

/* Parsed target descriptions shared by sessions (rsp_session_config.tdesc_cache),
 * for a process that connects to many stubs of a few kinds, and again after
 * a lost link.  Every connect still reads target.xml (one round trip); an
 * entry is used only when both the stub's qSupported reply and target.xml
 * are byte for byte those it was made from, and then the session takes a
 * copy of its description instead of fetching the xi:included documents
 * (QEMU: one round trip or more each) and parsing.  A stub that serves
 * different included documents under the same target.xml and qSupported
 * reply is not told apart.  Failed fetches and parses are not kept.
 * Bounded: at most MAX entries, the least recently used going first.
 * Thread-safe: one mutex, never held across a round trip or a parse; a
 * connect whose key another connect is fetching waits for it (at most its
 * rsp_session_config.timeout_ms, then fetches too), so that many links to
 * one stub kind opened at once fetch and parse once. */
struct rsp_tdesc_cache;

/* What a cache has done since rsp_tdesc_cache_new. */
struct rsp_tdesc_cache_stats {
    uint64_t hits;      /* connects that took a cached description */
    uint64_t misses;    /* connects that fetched and parsed */
    uint64_t waits;     /* connects that waited for another's fetch of their key */
    uint64_t evictions; /* entries dropped to make room */
    size_t entries;     /* entries now */
};

/* A cache of at most MAX entries (0: 64).  Returns 0 or SW_ENOMEM.
 * *OUT: rsp_tdesc_cache_free, once no rsp_session_open using it runs
 * (sessions keep no reference to it once open). */
SW_API int rsp_tdesc_cache_new(size_t max, struct rsp_tdesc_cache **out);
/* NULL is a no-op. */
SW_API void rsp_tdesc_cache_free(struct rsp_tdesc_cache *c);
SW_API void rsp_tdesc_cache_stats(struct rsp_tdesc_cache *c, struct rsp_tdesc_cache_stats *out);

/* Packet-level counters. */
struct rsp_stats {
    uint64_t packets_sent, packets_received;
    uint64_t bytes_sent, bytes_received; /* every byte on the wire, acks included */
    uint64_t round_trips;                /* requests that waited for a reply, and
                                          * interrupts (their reply is the stop) */
    uint64_t cached_replies;             /* requests answered from replies asked for
                                          * ahead (with '?', unless
                                          * rsp_session_config.no_prefetch):
                                          * nothing sent, no round trip */
    uint64_t retransmits;                /* packets sent again after a '-' */
    uint64_t notifications;              /* '%' packets received */
    uint64_t elapsed_us;                 /* time spent waiting on the link */
    uint64_t by_kind[64];                /* requests per packet kind (rsp_packet_name) */
    uint64_t interrupts;                 /* 0x03 bytes sent (each one round trip) */
    uint64_t stray_stops;                /* stop replies that came in place of another
                                          * request's reply (QEMU 7.2 user mode's
                                          * second stop after an interrupt), set aside */
};

/* How a session works.  Every member's zero is its default, so a zeroed
 * config (or NULL) means the defaults; rsp_session_config_init also takes
 * no_cache and no_pipeline from the environment (docs/usage.md). */
struct rsp_session_config {
    /* Per request: from its write to the end of its reply, which nothing
     * else the stub sends meanwhile (acks, notifications, console output,
     * stray stop replies) extends; also how long a write may wait for the
     * stub to read.  0: the default, 5000. */
    int timeout_ms;
    /* The whole session's deadline, from rsp_session_open (or
     * rsp_session_set_deadline): past it every request fails with
     * SW_ETIMEDOUT naming it, however quickly each reply came.  0: none
     * (the default). */
    int deadline_ms;
    /* Stay in ack mode even where the stub offers QStartNoAckMode.
     * Default false: no-ack mode when offered. */
    bool keep_acks;
    /* Print the packet trace to stderr ("-> ..." / "<- ...").  Default
     * false; RSPWALK_DEBUG=pkt turns it on for every session. */
    bool trace;
    /* Read 'g' again on every register read and send 'Hg' unless our own
     * 'Hg' selected the thread (never inferred from a stop).  Default false;
     * rsp_session_config_init sets it when RSPWALK_NO_CACHE is set. */
    bool no_cache;
    /* Ask for non-stop mode (QNonStop:1) where the stub offers QNonStop+
     * (gdbserver; not QEMU): each thread stops and resumes alone, stops come
     * as notifications.  A stub without it leaves the link in all-stop mode:
     * check rsp_non_stop.  Default false. */
    bool non_stop;
    /* Do not ask for target.xml, the library list, auxv and the thread list
     * together with the connect's '?'.  By default, where the stub serves
     * pipelined requests (gdbserver in no-ack mode), they go in the write
     * that carries '?', one round trip for all, and the replies answer the
     * same requests later in this stop (rsp_stats.cached_replies); never in
     * non-stop mode nor with no_cache.  Set, each object costs its own round
     * trip when asked for.  Default false. */
    bool no_prefetch;
    /* Never send several requests in one write (rsp_session_pipelined).
     * Default false; rsp_session_config_init sets it when
     * RSPWALK_NO_PIPELINE is set. */
    bool no_pipeline;
    /* Target descriptions parsed by earlier sessions (struct
     * rsp_tdesc_cache): borrowed, used only while rsp_session_open runs;
     * NULL: none, every connect fetches and parses its own. */
    struct rsp_tdesc_cache *tdesc_cache;
    /* At most this many thread ids are kept from a thread list
     * (rsp_threads); a longer list is cut there, its first MAX_THREADS
     * kept, and rsp_threads_cut says so.  0: the default, 65536. */
    size_t max_threads;
};

/* Fill CFG with the defaults: zero, and no_cache and no_pipeline from the
 * environment (RSPWALK_NO_CACHE, RSPWALK_NO_PIPELINE). */
SW_API void rsp_session_config_init(struct rsp_session_config *cfg);

/* Every reply from now on must be in within MS milliseconds of this call
 * (rsp_session_config.deadline_ms, started again); 0: no deadline. */
SW_API void rsp_session_set_deadline(struct rsp_session *s, int ms);

/* Open a transport for SPEC (HOST:PORT, [V6]:PORT, unix:PATH,
 * /dev/ttyX[@BAUD], '|COMMAND'), run the connect sequence (qSupported,
 * QStartNoAckMode when offered, '?', target.xml) and return the session.
 * Returns 0 or a code with the message in ERR.  *OUT: rsp_session_close. */
SW_API int rsp_session_open(const char *spec, const struct rsp_session_config *cfg,
                            struct rsp_session **out, struct sw_errbuf *err);

/* Close the link without detaching or killing: the stub keeps the target as
 * it is (gdbserver leaves it stopped).  NULL is a no-op. */
SW_API void rsp_session_close(struct rsp_session *s);

SW_API const char *rsp_session_errmsg(const struct rsp_session *s);
SW_API bool rsp_has_feature(const struct rsp_session *s, enum rsp_feat f);
SW_API size_t rsp_packet_size(const struct rsp_session *s);
/* The largest 'm' request this session will send (PacketSize/2 capped by
 * the stub's known limit). */
SW_API size_t rsp_mem_chunk(const struct rsp_session *s);
/* Whether requests may go several in one write (gdbserver in no-ack mode,
 * which serves the requests in its input buffer in order; never with
 * rsp_session_config.no_pipeline): a batch then costs one round trip. */
SW_API bool rsp_session_pipelined(const struct rsp_session *s);
SW_API const struct rsp_stats *rsp_session_stats(const struct rsp_session *s);
/* The name of packet kind I of rsp_stats.by_kind ("m", "g", "qXfer:features"),
 * or NULL past the last. */
SW_API const char *rsp_packet_name(size_t i);
/* The parsed target description, or NULL if the stub sent none. */
SW_API const struct rsp_tdesc *rsp_session_tdesc(const struct rsp_session *s);
/* Forget what the session keeps of the current stop (registers read with
 * 'g', replies asked for ahead, the stub's selected thread), so that the
 * next reads ask the stub again: a cold walk of a stop already walked (the
 * tests compare the two).  Nothing is sent. */
SW_API void rsp_session_forget_stop(struct rsp_session *s);
/* Take in every packet that arrives until none has for QUIET_MS, acking
 * each (ack mode) and keeping none: the stray replies of a stub that lost
 * step.  Returns how many came, or a failure (the link broke, or the stub
 * kept sending for 2 s or 1024 packets: SW_EPROTO). */
SW_API int rsp_session_drain(struct rsp_session *s, int quiet_ms);
/* Send a bare '+' (nothing in no-ack mode): what a stub that waits for the
 * ack of a packet we never saw needs before it reads again.  0 or a failure. */
SW_API int rsp_session_send_ack(struct rsp_session *s);
/* Count an interrupt that went another way than the link (a signal to a
 * QEMU user-mode process on this host): a round trip like rsp_interrupt's. */
SW_API void rsp_session_note_interrupt(struct rsp_session *s);
/* The last stop reply (from '?' or a resume). */
SW_API const struct rsp_stop *rsp_last_stop(const struct rsp_session *s);

/* Whether thread ID is known to be the stub's general thread (the last 'Hg'
 * that S sent or passed through and the stub accepted, or the thread of the
 * last stop on stubs whose stop reply selects it). */
SW_API bool rsp_thread_selected(const struct rsp_session *s, struct rsp_thread_id id);

/* Format ID as the stub writes it, into BUF of LEN bytes. */
SW_API void rsp_thread_id_format(const struct rsp_session *s, struct rsp_thread_id id, char *buf,
                                 size_t len);

/* The threads: qXfer:threads where offered, else qfThreadInfo/qsThreadInfo.
 * At most rsp_session_config.max_threads of them, the first ones listed
 * (rsp_threads_cut).  *IDS: caller frees with free(). */
SW_API int rsp_threads(struct rsp_session *s, struct rsp_thread_id **ids, size_t *n);

/* The cap on thread lists (rsp_session_config.max_threads, its default
 * made explicit), and whether the last rsp_threads list was cut there:
 * the stub listed more threads than that. */
SW_API size_t rsp_threads_max(const struct rsp_session *s);
SW_API bool rsp_threads_cut(const struct rsp_session *s);

/* Read every register of thread ID with 'g' (after Hg, sent only when the
 * selection changes).  *BUF points into the session, valid until the next
 * register read or resume; *LEN is its length in bytes. */
SW_API int rsp_regs_read(struct rsp_session *s, struct rsp_thread_id id, const uint8_t **buf,
                         size_t *len);

/* Read the registers of the N threads IDS ahead of their rsp_regs_read,
 * where the stub takes pipelined requests (gdbserver in no-ack mode): the
 * 'Hg' and 'g' of every thread whose 'g' is not cached this stop go in one
 * write, one round trip for all of them (a thread alone costs one), and each
 * reply is kept as rsp_regs_read keeps it, so its rsp_regs_read sends
 * nothing.  A thread whose 'Hg' is refused (it is gone) or whose 'g' reply
 * is an error is not kept: its rsp_regs_read asks again and fails as it
 * would have.  Afterwards the stub's general thread is the last one whose
 * 'Hg' was answered OK.  With no_cache, or where requests are not pipelined,
 * nothing is sent.  Returns 0, or a link error (SW_ECONN, SW_ETIMEDOUT,
 * SW_EPROTO) or SW_ENOMEM with the message naming the packet. */
SW_API int rsp_regs_read_batch(struct rsp_session *s, const struct rsp_thread_id *ids, size_t n);

/* Whether the registers of thread ID are cached this stop, so that
 * rsp_regs_read sends nothing (never with no_cache). */
SW_API bool rsp_regs_cached(const struct rsp_session *s, struct rsp_thread_id id);

/* Read register REGNUM of thread ID with 'p' into BUF (up to CAP bytes).
 * SW_EUNSUP when the stub has no 'p'. */
SW_API int rsp_reg_read(struct rsp_session *s, struct rsp_thread_id id, unsigned regnum,
                        uint8_t *buf, size_t cap, size_t *len);

/* Write register REGNUM (the stub's number) of stopped thread ID: LEN bytes
 * VAL in the target's byte order.  'P' where the stub has it; where it
 * answers empty (gdbserver on x86-64; remembered), the thread's 'g' (kept
 * this stop, else read now) with LEN bytes at G_OFFSET replaced goes back
 * with 'G'.  The thread's registers kept this stop are forgotten.  Returns
 * 0; SW_ENOREG when the stub refuses ("E NN") or G_OFFSET + LEN is past the
 * 'g' reply; SW_EUNSUP when it has neither packet; SW_EPROTO for a reply
 * other than OK; SW_EINVAL for LEN 0 or over 64; a link error.  Every
 * message names the register (by the target description's name where it
 * has one) and the thread. */
SW_API int rsp_reg_write(struct rsp_session *s, struct rsp_thread_id id, unsigned regnum,
                         size_t g_offset, const uint8_t *val, size_t len);

/* Read LEN bytes at ADDR into BUF, split into requests of at most
 * rsp_mem_chunk bytes.  SW_EMEM naming the address when the stub refuses, or
 * without a packet when a byte lies outside the stub's memory map
 * (rsp_memory_map; read on the first call where the stub offers one). */
SW_API int rsp_mem_read(struct rsp_session *s, uint64_t addr, void *buf, size_t len);

/* One range of rsp_mem_read_batch. */
struct rsp_mem_range {
    uint64_t addr;
    size_t len;
    void *buf; /* borrowed: LEN bytes */
    int rc;    /* out: 0, SW_EMEM (the stub refused it), SW_EPROTO (a malformed reply) */
};
/* Read N ranges, each with its own result: on a stub that takes pipelined
 * requests (gdbserver in no-ack mode) every 'm' goes in one write, one
 * round trip for all; elsewhere one range after the other, as rsp_mem_read.
 * Returns 0 when each range has its RC, or a link error. */
SW_API int rsp_mem_read_batch(struct rsp_session *s, struct rsp_mem_range *ranges, size_t n);
/* The same, with local work while the batch is on the link: after its first
 * write, WHILE_FN(ARG) is called again and again, each call a bounded piece
 * of work, until it returns false (nothing left) or a reply starts to
 * arrive, so the work fills the round trip without delaying the replies by
 * more than one piece; what is not done then is left undone.  WHILE_FN must
 * not use S. */
SW_API int rsp_mem_read_batch_while(struct rsp_session *s, struct rsp_mem_range *ranges, size_t n,
                                    bool (*while_fn)(void *), void *arg);

/* A stop's first reads in one write, where the stub takes pipelined
 * requests (gdbserver in no-ack mode, all-stop, caches on): the thread list
 * (qfThreadInfo and a qsThreadInfo for each thread of the last list
 * rsp_threads returned, else qXfer:threads; kept so that rsp_threads sends
 * nothing, or only the qsThreadInfo of threads that came since), the 'Hg' and
 * 'g' of the N threads IDS (kept as rsp_regs_read_batch keeps them; a thread
 * that is gone is not kept) and the K memory ranges RANGES (each at most
 * rsp_mem_chunk bytes; RC 0 with BUF filled, else SW_EMEM: refused, short or
 * not sent; ranges that follow each other without a gap share one 'm' up to
 * rsp_mem_chunk bytes, and are asked for alone, one more round trip, when
 * it is refused).  One round trip for all.  Returns 0; SW_EUNSUP (nothing sent)
 * on a link that does not pipeline; a link error or SW_ENOMEM with the
 * message naming the packet. */
SW_API int rsp_stop_fetch(struct rsp_session *s, const struct rsp_thread_id *ids, size_t n,
                          struct rsp_mem_range *ranges, size_t k);

/* Read the whole qXfer OBJECT with ANNEX ("" for none), in chunks.
 * *DATA is NUL-terminated; caller frees with free().  SW_EUNSUP when the stub
 * does not offer the object. */
SW_API int rsp_xfer_read(struct rsp_session *s, const char *object, const char *annex, char **data,
                         size_t *len);

/* The address of symbol NAME for the stub's qSymbol look-ups: 1 with *ADDR, 0 when there
 * is no such symbol, or a negative code (which ends the look-ups). */
typedef int (*rsp_symbol_fn)(void *arg, const char *name, uint64_t *addr);

/* Offer the stub symbol look-ups ("qSymbol::", gdb manual "General Query Packets") and
 * answer each name it asks for through LOOKUP, until it says OK; once per session (later
 * calls return 0 at once).  OpenOCD turns its RTOS awareness on this way, so the thread
 * list may change: *ASKED (may be NULL) is the number of names the stub asked for.
 * Returns 0 (also when the stub has no qSymbol: empty reply), LOOKUP's negative code, or
 * SW_EPROTO for a malformed request or more than RSP_QSYMBOL_MAX of them. */
SW_API int rsp_qsymbol_serve(struct rsp_session *s, rsp_symbol_fn lookup, void *arg, size_t *asked);
#define RSP_QSYMBOL_MAX 1024

/* One region of the stub's memory map (qXfer:memory-map:read, gdb manual "Memory Map
 * Format"). */
struct rsp_mem_region {
    uint64_t start, length;
    bool flash; /* type "flash" (else "ram" or "rom") */
};

/* The stub's memory map, read on the first call and kept by the session: *REGIONS
 * (borrowed, valid until the session is closed; sorted by start) and *N.  0 with *N 0
 * when the stub offers none (no qXfer:memory-map:read+), its map lists no region or
 * cannot be parsed (remembered); SW_ENOMEM, or a link error (asked again next time). */
SW_API int rsp_memory_map(struct rsp_session *s, const struct rsp_mem_region **regions, size_t *n);

/* Ask the stub to pass these signals (gdb numbers) without stopping. */
SW_API int rsp_pass_signals(struct rsp_session *s, const int *sigs, size_t n);

/* Resume: every thread, or only ID when ONLY_ONE; deliver SIG (0: none) to
 * ID.  Drops the per-stop caches.  Does not wait (non-stop: waits for the
 * stub's OK). */
SW_API int rsp_resume(struct rsp_session *s, struct rsp_thread_id id, bool only_one, int sig);

/* Wait up to TIMEOUT_MS (-1: the session timeout; 0: only what has already
 * arrived) for a stop reply after a resume or an interrupt.  O packets are
 * skipped.  Non-stop: the next stop notification, acknowledged. */
SW_API int rsp_wait_stop(struct rsp_session *s, int timeout_ms, struct rsp_stop *out);

/* Send the interrupt byte 0x03 (no wait).  Non-stop: "vCont;t", every
 * thread, whose stops come through rsp_wait_stop. */
SW_API int rsp_interrupt(struct rsp_session *s);

/* Ask '?' again and store the reply in *OUT. */
SW_API int rsp_query_stop(struct rsp_session *s, struct rsp_stop *out);

/* Detach ('D'); the stub resumes the target. */
SW_API int rsp_detach(struct rsp_session *s);

/* ---- Host I/O: the target's files (vFile; gdb manual, "Host I/O Packets") ---- */

/* File-I/O open flags (gdb manual, "Open Flags"), not the host's. */
#define RSP_VFILE_O_RDONLY 0x0

/* Whether the stub has Host I/O: probed once with "vFile:setfs:0" (an empty
 * reply means none, remembered by the session). */
SW_API bool rsp_vfile_supported(struct rsp_session *s);
/* Open, read and close files as process PID sees them (0: the stub's own
 * view); sent only when it changes. */
SW_API int rsp_vfile_setfs(struct rsp_session *s, int64_t pid);
/* Open PATH on the target with File-I/O FLAGS and MODE; *FD is the stub's
 * descriptor.  SW_EUNSUP (no Host I/O), SW_ENOENT (no such file), SW_ESTUB
 * (another errno), every message naming PATH. */
SW_API int rsp_vfile_open(struct rsp_session *s, const char *path, int flags, unsigned mode,
                          int *fd);
/* Read up to LEN bytes at OFFSET of FD into BUF in preads of at most
 * PacketSize; *GOT is short only at the end of the file. */
SW_API int rsp_vfile_pread(struct rsp_session *s, int fd, void *buf, size_t len, uint64_t offset,
                           size_t *got);
SW_API int rsp_vfile_close(struct rsp_session *s, int fd);
/* The size of the open file FD (st_size of the File-I/O struct stat). */
SW_API int rsp_vfile_fstat(struct rsp_session *s, int fd, uint64_t *size);
/* The whole file PATH (at most MAX bytes): open, fstat, pread, close.
 * *DATA: caller frees with free(). */
SW_API int rsp_vfile_read_all(struct rsp_session *s, const char *path, size_t max, uint8_t **data,
                              size_t *len);

/* ---- extended remote: many processes on one link (gdb manual, "Extended Remote") */

/* Send '!' (extended mode: vAttach, and the stub outlives its processes). */
SW_API int rsp_extended_mode(struct rsp_session *s);
/* Attach to process PID ("vAttach;PID"); the stop reply in *OUT (may be
 * NULL) and as rsp_last_stop.  SW_EUNSUP on a non-stop link. */
SW_API int rsp_attach(struct rsp_session *s, int64_t pid, struct rsp_stop *out);
/* Start ARGV[0] with ARGC-1 arguments ("vRun;HEX;HEX..."; extended mode):
 * the new process stops at its entry, its stop reply (whose thread names
 * the new pid) in *OUT (may be NULL) and as rsp_last_stop.  SW_ENOENT when
 * the stub refuses (no such program), SW_EUNSUP outside extended mode or on
 * a non-stop link. */
SW_API int rsp_run(struct rsp_session *s, const char *const *argv, size_t argc,
                   struct rsp_stop *out);
/* Detach from process PID only ("D;PID"), which the stub resumes. */
SW_API int rsp_detach_pid(struct rsp_session *s, int64_t pid);
/* Select thread ID for the memory reads that follow ('m' reads through the
 * Hg thread's process); sent only when the selection changes. */
SW_API int rsp_select_thread(struct rsp_session *s, struct rsp_thread_id id);

/* ---- non-stop mode (rsp/nonstop.c; gdb manual, "Remote Non-Stop") ------------- */

/* Whether the link is in non-stop mode (rsp_session_config.non_stop was
 * set and the stub accepted QNonStop:1).  In non-stop mode rsp_resume is
 * answered OK at once and resumes only the threads it names; each stop or
 * exit arrives as a "%Stop" notification, which rsp_wait_stop acknowledges
 * (vStopped, draining the stub's queue) and returns one at a time. */
SW_API bool rsp_non_stop(const struct rsp_session *s);
/* Non-stop: ask the stub to stop thread ID ("vCont;t:ID"; tid -1: every
 * thread of process ID.pid, or of all with pid 0).  Does not wait: each
 * thread's stop comes through rsp_wait_stop (signal 0 from gdbserver).
 * SW_EUNSUP on an all-stop link, where only rsp_interrupt stops, and it
 * stops every thread. */
SW_API int rsp_stop_thread(struct rsp_session *s, struct rsp_thread_id id);
/* Non-stop: stop the N threads IDS as rsp_stop_thread does, with one
 * "vCont;t:A;t:B;..." (more when they do not fit in a packet). */
SW_API int rsp_stop_threads(struct rsp_session *s, const struct rsp_thread_id *ids, size_t n);
/* Non-stop: resume the N threads IDS with one "vCont;c:A;C0f:B;..." (more
 * when they do not fit in a packet), thread IDS[i] with signal SIGS[i]
 * (gdb's numbering, 0: none; SIGS NULL: none for any); waits for each OK.
 * Drops the per-stop caches.  SW_EUNSUP on an all-stop link. */
SW_API int rsp_resume_threads(struct rsp_session *s, const struct rsp_thread_id *ids,
                              const int *sigs, size_t n);
/* Whether thread ID is known stopped: non-stop, it reported a stop (or was
 * stopped at connect) and was not resumed since; all-stop, the target has
 * stopped and not been resumed. */
SW_API bool rsp_thread_stopped(const struct rsp_session *s, struct rsp_thread_id id);
/* Whether thread ID still exists ("T" + ID, the GDB manual's "T thread-id"):
 * 1 when the stub answers OK (or does not know the packet), 0 when it
 * answers an error (the thread has exited), else a failure of the link.  Non-stop, gdbserver
 * reports no exit of a thread but the last one's ("N" when none is resumed any more): a thread
 * asked to stop may be gone instead. */
SW_API int rsp_thread_alive(struct rsp_session *s, struct rsp_thread_id id);
/* Stops received from the stub that rsp_wait_stop has not returned yet,
 * plus one while a %Stop is not yet acknowledged (the stub may have more
 * queued behind it): while nonzero, rsp_wait_stop with timeout 0 returns a
 * stop without waiting for the link.  0 on an all-stop link. */
SW_API size_t rsp_stops_pending(const struct rsp_session *s);

/* The descriptor the session reads, for poll(); -1 if none.  Bytes may
 * already wait in the session's buffer (a stop read ahead with a reply):
 * poll rsp_session_event_fd instead to wait for stops. */
SW_API int rsp_session_fd(const struct rsp_session *s);
/* A descriptor (epoll over the link's and an eventfd) that polls readable
 * when the stub has sent something the session has not read yet, or when
 * the session holds a stop that rsp_wait_stop has not returned: bytes read
 * ahead together with an earlier reply, a stop that came before an ack, a
 * queued non-stop notification.  Owned by the session; -1 with the message
 * when the descriptors cannot be made.  A wakeup may be spurious (console
 * output, an ack): rsp_wait_stop with timeout 0 then says SW_ETIMEDOUT. */
SW_API int rsp_session_event_fd(struct rsp_session *s);

/* ---- passing a front end's packets through (rsp/pass.c; rspwalk --rsp-listen) ---- */

/* Send PAYLOAD of LEN bytes (escaped as on the wire, without '$' and the
 * checksum) as it is and wait for its reply, whatever it is: 0 with *REPLY
 * (run-lengths expanded, '}' escapes kept, so that it can be framed again
 * as it is; valid until the session's next request) and *RLEN, empty and
 * "E NN" replies included; else a link error (SW_ECONN, SW_ETIMEDOUT,
 * SW_EPROTO) naming the packet.  A packet that only reads ('m', 'g', 'p',
 * '?', 'qXfer:...:read', 'vFile:', and 'q' queries but qRcmd) keeps what the
 * session holds of the stop; any other drops it (rsp_session_forget_stop).
 * Not for resumes, whose reply is a stop: rsp_pass_resume. */
SW_API int rsp_pass_request(struct rsp_session *s, const char *payload, size_t len,
                            const char **reply, size_t *rlen);
/* Send resume PAYLOAD ('c', 'C', 's', 'S', 'vCont;...') as it is, waiting
 * only for its ack; what the session holds of the stop is dropped.  The
 * stop comes through rsp_pass_wait_stop (rsp_interrupt stops it early). */
SW_API int rsp_pass_resume(struct rsp_session *s, const char *payload, size_t len);
/* Wait up to TIMEOUT_MS for the stop reply after rsp_pass_resume or
 * rsp_interrupt ('O' console packets skipped): 0 with *REPLY as
 * rsp_pass_request gives it, taken in as rsp_last_stop when it parses (a
 * 'W' or 'X' exit too); SW_ETIMEDOUT when none came, or a link error. */
SW_API int rsp_pass_wait_stop(struct rsp_session *s, int timeout_ms, const char **reply,
                              size_t *rlen);

/* Parse a stop reply PKT of LEN bytes (pure).  Returns 0 or SW_EPROTO. */
SW_API int rsp_stop_parse(const char *pkt, size_t len, struct rsp_stop *out, struct sw_errbuf *err);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_RSP_H */
