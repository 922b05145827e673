/* door/lldb.h -- LLDB's packets at the RSP door, made from the stop's walk.
 *
 * jThreadsInfo (every thread's registers and the memory of its stack, so
 * that lldb unwinds without reading memory), qThreadStopInfo and single
 * registers for 'p'.  Pure formatting over what door.c read: no I/O here.
 */
#ifndef RSPWALK_DOOR_LLDB_H
#define RSPWALK_DOOR_LLDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/rsp.h"

/* One walked thread. */
struct door_lldb_thread {
    int64_t tid;
    const char *regs_hex; /* borrowed: its 'g' reply as hex; NULL: not read */
};

/* Memory read ahead at this stop. */
struct door_lldb_range {
    uint64_t addr;
    size_t len;
    const uint8_t *data; /* borrowed */
};

/* What the door knows of the current stop.  Every pointer is borrowed for
 * the call it is passed to. */
struct door_lldb_stop {
    const struct rsp_tdesc *tdesc; /* NULL: no target description (no registers sent) */
    const struct rsp_stop *stop;   /* NULL: none parsed */
    const struct door_lldb_thread *threads;
    size_t nthreads;
    const struct door_lldb_range *mem; /* in the order read: runs of adjacent ranges are merged */
    size_t nmem;
    bool multiprocess; /* the front end asked for multiprocess+: ids as "pPID.TID" */
};

/* The jThreadsInfo reply for ST, binary-escaped, in *OUT (caller frees with
 * free) of *LEN bytes: a JSON array with one object a thread ("tid" decimal,
 * "signal", "reason" for a breakpoint stop, "registers" {"<decimal regnum>":
 * "<hex>"} of the description's core registers, "memory" [{"address",
 * "bytes"}] of the stack ranges around its stack pointer).  0 or SW_ENOMEM. */
int door_lldb_threads_info(const struct door_lldb_stop *st, char **out, size_t *len);

/* The qThreadStopInfo reply for thread TID ("T" with the stop's signal for
 * the stopped thread, 00 for the others, its core registers expedited) in
 * *OUT (caller frees with free).  0, SW_ENOENT for a thread not walked, or
 * SW_ENOMEM. */
int door_lldb_thread_stop_info(const struct door_lldb_stop *st, int64_t tid, char **out,
                               size_t *len);

/* Register REGNUM's hex in the 'g' hex GHEX (layout TD): *P and *N (borrowed
 * from GHEX).  False when TD has no such register, GHEX is too short, or the
 * stub sent it as unavailable ('x'). */
bool door_lldb_reg_hex(const struct rsp_tdesc *td, const char *ghex, unsigned regnum,
                       const char **p, size_t *n);

/* Replies to read-only queries kept for the current stop: lldb asks some of
 * them several times a stop (qProcessInfo, qXfer:libraries-svr4, a failed
 * 'm'), and an unsupported one (an empty reply) stays so until the stop
 * ends.  Zeroed memo is empty; every key and reply is owned. */
struct door_memo {
    char **req, **reply; /* owned: n of each */
    size_t *req_len, *reply_len;
    size_t n, cap;
};

/* Whether PKT (LEN bytes) is a read that the same stop answers the same way. */
bool door_memo_wanted(const char *pkt, size_t len);
/* The reply kept for PKT: true with *REPLY (borrowed until the next
 * door_memo_put or door_memo_clear) and *RLEN. */
bool door_memo_get(const struct door_memo *m, const char *pkt, size_t len, const char **reply,
                   size_t *rlen);
/* Keep REPLY for PKT (copied).  0 or SW_ENOMEM (nothing kept). */
int door_memo_put(struct door_memo *m, const char *pkt, size_t len, const char *reply, size_t rlen);
/* Forget every reply (a resume, a write, a stop); the memo stays usable. */
void door_memo_clear(struct door_memo *m);
/* Free what M holds. */
void door_memo_fini(struct door_memo *m);

#endif /* RSPWALK_DOOR_LLDB_H */
