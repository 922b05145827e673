/* targets/rsp_proc_internal.h -- the RSP process object, shared by its parts.
 *
 * targets/rsp_proc.c is the ProcessState (registers, threads, files,
 * construction), targets/rsp_debug.c ProcDebug (pause, resume, events,
 * detach); both call down to targets/rsp_warm.c (what outlives a stop),
 * targets/rsp_stop.c (the stop being walked and its caches) and
 * targets/rsp_mem.c (memory), in that order.  Not installed.
 */
#ifndef RSPWALK_TARGETS_RSP_PROC_INTERNAL_H
#define RSPWALK_TARGETS_RSP_PROC_INTERNAL_H

#include "rspwalk/proc.h"
#include "rspwalk/rsp.h"
#include "rspwalk/types.h"
#include "targets/qemu_user.h"
#include "util/idmap.h"

#define TGT_MAX_ROWS 96
#define TGT_MAX_PASS 64

struct tgt_regmap {
    bool mapped;
    unsigned regnum; /* the stub's number */
    size_t offset;   /* in the 'g' reply */
    unsigned size;   /* bytes */
};

struct tgt_gcache {
    sw_tid tid;
    uint8_t *data; /* owned */
    size_t len;
};

struct tgt_mem_range {
    sw_addr addr;
    size_t len;
    uint8_t *data;   /* owned; NULL for a range known to be unreadable */
    sw_addr used_hi; /* the end of the highest byte a read took from it; ADDR: none */
};

/* One thread of the last stop, for the next stop's fetch (targets/rsp_warm.c). */
struct tgt_warm_thread {
    sw_tid tid;
    struct rsp_thread_id id;
    sw_addr lo, hi; /* the stack its last walk read, [lo, hi); lo == hi: none known */
    sw_addr sp, pc; /* its SP and PC at the last stop, when HAVE_SP_PC */
    bool have_sp_pc;
    bool still; /* both were also those of the stop before (a parked thread) */
};

/* What outlives a stop: the plan of the next stop's first write. */
struct tgt_warm {
    struct tgt_warm_thread *threads; /* owned: the threads of the last stop */
    size_t nthreads;
    struct sw_mem_req *reads; /* owned: sw_proc_ops.stop_reads' ranges (ADDR, LEN) */
    size_t nreads;
    bool due;      /* a stop was taken in: the plan goes out with its first read */
    bool all_regs; /* the stopped thread's 'g' too (a front end reads it) */
};

struct tgt_thread_signal {
    sw_tid tid;
    int sig; /* gdb's numbering */
};

struct tgt_rsp_proc {
    struct sw_proc base;
    struct rsp_session *s; /* owned */
    struct tgt_regmap map[TGT_MAX_ROWS];
    struct tgt_gcache *gcache; /* owned: one per thread read this stop */
    size_t ngcache, gcache_cap;
    struct sw_idmap gcache_idx; /* (0, tid) to a row of GCACHE (tgt_rsp_gcache_row) */
    struct tgt_mem_range *mem;  /* owned: per-stop memory cache */
    size_t nmem, capmem;
    struct rsp_thread_id *threads; /* owned: the last thread list */
    size_t nthreads;
    struct sw_idmap threads_idx; /* (0, tid) to a row of THREADS (tgt_rsp_thread_row) */
    struct rsp_stop stop;        /* the stop being walked */
    int pass[TGT_MAX_PASS];
    size_t npass;
    /* Non-stop: the threads stopped by a signal of the program's own (not
     * 0), each until it is resumed (sw_proc_rsp_thread_signal).  Owned;
     * at most one entry a thread. */
    struct tgt_thread_signal *nssig;
    size_t nnssig, capnssig;
    /* Non-stop: the threads the last pause found gone (exited while being
     * paused; sw_proc_rsp_thread_gone).  Owned. */
    sw_tid *gone;
    size_t ngone, capgone;
    sw_addr stack_end; /* page above AT_EXECFN: the main stack's end, or 0 */
    bool no_cache;
    bool terminated;
    bool running;
    bool borrowed;       /* the session belongs to a walker set: not closed here */
    bool strict_threads; /* sw_rsp_config.strict_threads */
    int64_t only_pid;    /* one process of several on the link (extended remote); 0: all */
    int vfd;             /* the target file open for read_file, -1 if none */
    char *vpath;         /* owned: its path */
    /* Its size by the stub's own vFile:fstat (asked before the first large
     * read, VSIZE_ASKED), UINT64_MAX until then or when the stub has no
     * fstat: reads stop there, so a stub whose preads never reach the end
     * of the file cannot make a fetch read forever. */
    uint64_t vsize;
    bool vsize_asked;
    struct tgt_warm warm;
    /* The stop (base.stop_gen) whose thread was stepped over the breakpoint
     * instruction it stopped at (targets/rsp_debug.c): never twice for one
     * stop, even when the resume after it failed.  0: none. */
    uint64_t bp_skipped_gen;
    /* The auxiliary vector, which cannot change within a process: read
     * once per pid (not with no_cache). */
    uint8_t *auxv; /* owned */
    size_t auxv_len;
    int64_t auxv_pid;
    /* A QEMU user-mode stub on this host, stopped by signals (pause). */
    struct sw_qemu_user qemu;
    /* The stub as the tracer of the process on this host (targets/local_tracer.h),
     * looked for when an interrupt brought no stop: its process id, or <= 0. */
    int64_t local_tracer;
    bool tracer_looked;
    bool interrupt_misses; /* then a pause signals the process at once */
    char tracer_msg[160];  /* why no local tracer was found */
};

static inline struct tgt_rsp_proc *
to_rp(struct sw_proc *p)
{
    return (struct tgt_rsp_proc *)p;
}

/* rsp_mem.c: sw_proc_ops.read_mem and read_mem_batch; drop the memory cache. */
int tgt_rsp_read_mem(struct sw_proc *p, sw_addr addr, void *buf, size_t len);
int tgt_rsp_read_mem_batch(struct sw_proc *p, struct sw_mem_req *reqs, size_t n);
int tgt_rsp_read_mem_batch_while(struct sw_proc *p, struct sw_mem_req *reqs, size_t n,
                                 bool (*while_fn)(void *), void *arg);
void tgt_rsp_mem_drop(struct tgt_rsp_proc *rp);
/* rsp_mem.c: whether the cached windows hold all of [ADDR, ADDR+LEN), so
 * tgt_rsp_read_mem sends nothing. */
bool tgt_rsp_mem_cached(struct tgt_rsp_proc *rp, sw_addr addr, size_t len);

/* rsp_mem.c: keep LEN bytes DATA read at ADDR in this stop's memory cache.
 * Returns 0 or SW_ENOMEM (no message). */
int tgt_rsp_mem_keep(struct tgt_rsp_proc *rp, sw_addr addr, size_t len, const uint8_t *data);

/* rsp_proc.c: at the first read after a stop (each read op of a process of
 * its own calls it first), the warm fetch (tgt_warm_fetch), then one write
 * for what it missed (threads new since the last stop, stacks that moved
 * out of their window).  0 when none is due (warm.due, set by rsp_debug.c
 * when it takes a stop in).  Returns 0 or a link error with the message on RP. */
int tgt_rsp_warm_due(struct tgt_rsp_proc *rp);

/* rsp_warm.c: keep what this stop read, for the next stop's fetch (at
 * resume, before the caches go).  Costs nothing on the link. */
void tgt_warm_record(struct tgt_rsp_proc *rp);
/* rsp_warm.c: whether a stop just taken in gets the warm fetch. */
bool tgt_warm_wanted(struct tgt_rsp_proc *rp);
/* rsp_warm.c: the stop's first write (rsp_stop_fetch): the thread list,
 * the registers of the last stop's threads, their stacks where the last
 * walks found them, and the stop_reads ranges, all kept in this stop's
 * caches.  Clears warm.due.  Returns 0 or a link error with the message on RP. */
int tgt_warm_fetch(struct tgt_rsp_proc *rp);
/* rsp_warm.c: sw_proc_ops.stop_reads. */
int tgt_warm_stop_reads(struct sw_proc *p, const struct sw_mem_req *ranges, size_t n);
/* rsp_warm.c: free the plan. */
void tgt_warm_fini(struct tgt_rsp_proc *rp);

/* rsp_stop.c: drop the per-stop register and memory caches. */
void tgt_rsp_drop_caches(struct tgt_rsp_proc *rp);
/* rsp_stop.c: TID as the stub writes it (from the thread list or the stop). */
struct rsp_thread_id tgt_rsp_thread_id(struct tgt_rsp_proc *rp, sw_tid tid);
/* The row of TID in RP's thread list (*ROW), false when it is not listed;
 * through RP's index, so that 60000 threads are not searched row by row. */
bool tgt_rsp_thread_row(struct tgt_rsp_proc *rp, sw_tid tid, size_t *row);
/* Index RP's thread list anew (after it is replaced).  Out of memory: no
 * index, rows searched one by one. */
void tgt_rsp_threads_indexed(struct tgt_rsp_proc *rp);
/* The row of TID in RP's 'g' cache, or RP->ngcache when it has none. */
size_t tgt_rsp_gcache_row(struct tgt_rsp_proc *rp, sw_tid tid);
/* rsp_stop.c: take in stop reply ST (who stopped, what was expedited), the
 * caches dropped.  False for another process's stop on the same link
 * (nothing else changes). */
bool tgt_rsp_take_stop(struct tgt_rsp_proc *rp, const struct rsp_stop *st);
/* rsp_stop.c: 0, or SW_EINVAL when TID is running (non-stop mode): its
 * registers are not readable ('g' answers 'x's on gdbserver). */
int tgt_rsp_check_stopped(struct tgt_rsp_proc *rp, sw_tid tid);
/* rsp_debug.c: the ProcDebug table of every RSP process. */
extern const struct sw_procdebug_ops tgt_rsp_debug_ops;

#endif /* RSPWALK_TARGETS_RSP_PROC_INTERNAL_H */
