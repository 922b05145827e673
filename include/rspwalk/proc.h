/* rspwalk/proc.h -- ProcessState and ProcDebug: the walker's view of a target.
 *
 * A backend embeds struct sw_proc as its first member and hands it a static
 * const struct sw_proc_ops.  The walker reads registers and memory only
 * through that table.  The RSP backend (targets/) is the default one; tests
 * use a fake over tables of registers and memory.
 *
 * Threads: a process is used by one thread at a time (its walker's), so a
 * backend needs no locks; different processes may be used on different
 * threads at once unless they share a link (rspwalk/target.h).  An ops
 * table is read-only and may serve processes on many threads.
 */
#ifndef RSPWALK_PROC_H
#define RSPWALK_PROC_H

#include "rspwalk/arch.h"
#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_proc;

/* One module the target reports as loaded (libraries-svr4 or the link map). */
struct sw_modinfo {
    char *name;     /* owned: the path as the target knows it */
    sw_addr l_addr; /* load displacement (link_map.l_addr) */
    sw_addr l_ld;   /* address of its PT_DYNAMIC, 0 if unknown */
    sw_addr lm;     /* address of its link_map, 0 if unknown */
};

/* One range of a batched memory read (sw_proc_ops.read_mem_batch).  A range
 * with BUF NULL (and LEN > 0) asks for nothing to be copied: it says that a
 * read at ADDR comes soon, and a backend with a memory cache fetches what
 * that read would fetch (the RSP backend: its window at ADDR) in the same
 * round trip; its RC is 0 whether or not anything was read. */
struct sw_mem_req {
    sw_addr addr;
    size_t len;
    void *buf; /* borrowed: LEN bytes, written when RC is 0; or NULL (above) */
    int rc;    /* out: 0, or SW_EMEM (unreadable) and other codes of read_mem */
};

/* What an RTOS says of one of its tasks shown as a thread (sw_proc_ops.thread_info). */
struct sw_thread_info {
    char name[64];         /* the task's name, NUL-terminated; "" when it has none */
    const char *state;     /* static: "running", "ready", "blocked", "suspended", "deleted"; NULL:
                            * unknown */
    int64_t priority;      /* the RTOS's own numbering, the one it schedules by now (FreeRTOS:
                            * inherited while the task holds a mutex a higher one waits on); -1
                            * when unknown */
    int64_t base_priority; /* the priority it was given (FreeRTOS: uxBasePriority); -1 when
                            * unknown */
};

/* Free an array of N modules returned by sw_proc_ops.modules.  NULL is a no-op. */
SW_API void sw_modinfo_free(struct sw_modinfo *mods, size_t n);

/* Operations a ProcessState backend provides.
 *
 * REQUIRED members must be non-NULL: sw_proc_init() fails with SW_EINVAL
 * otherwise.  OPTIONAL members may be NULL; the default is named beside each.
 * Every member returns 0 or a negative SW_E* code, writes its out parameters
 * only when it returns 0, and leaves a message in P->err when it fails.
 * The table is borrowed: it must outlive every sw_proc that points at it.
 */
struct sw_proc_ops {
    /* REQUIRED.  Copy LEN bytes of target memory at ADDR into BUF.  Memory
     * that cannot be read is SW_EMEM naming ADDR, never a partial success. */
    int (*read_mem)(struct sw_proc *p, sw_addr addr, void *buf, size_t len);

    /* REQUIRED.  Store in *VAL the value of DWARF register REGNO (or the
     * arch's pseudo PC number) of thread TID, in host byte order.
     * SW_ENOREG if the target has no such register. */
    int (*read_reg)(struct sw_proc *p, sw_tid tid, unsigned regno, sw_word *val);

    /* OPTIONAL (default: the single thread P->default_tid).  Store up to MAX
     * thread ids in TIDS and the number of threads in *N (which may exceed MAX). */
    int (*threads)(struct sw_proc *p, sw_tid *tids, size_t max, size_t *n);

    /* OPTIONAL (default: "TID" in decimal).  Write the thread's id as the
     * stub prints it ("p1f2.1f2") into BUF of LEN bytes, NUL-terminated. */
    int (*thread_label)(struct sw_proc *p, sw_tid tid, char *buf, size_t len);

    /* OPTIONAL (default: SW_EUNSUP).  The modules the target reports as
     * loaded, the main executable excluded.  *MODS: caller frees with
     * sw_modinfo_free(*MODS, *N). */
    int (*modules)(struct sw_proc *p, struct sw_modinfo **mods, size_t *n);

    /* OPTIONAL (default: SW_EUNSUP).  The raw auxiliary vector in target
     * format.  *BUF: caller frees with free(). */
    int (*auxv)(struct sw_proc *p, uint8_t **buf, size_t *len);

    /* OPTIONAL (default: P->exe_path or SW_EUNSUP).  The main executable's
     * path on the target.  *PATH: caller frees with free(). */
    int (*exec_path)(struct sw_proc *p, char **path);

    /* OPTIONAL (default: nothing to release).  Called once by sw_proc_free(). */
    void (*destroy)(struct sw_proc *p);
    /* OPTIONAL (default: SW_EUNSUP).  Read up to LEN bytes at OFFSET of the
     * file PATH as the target sees it into BUF; *GOT is short only at the end
     * of the file.  SW_ENOENT when there is no such file; SW_EUNSUP when the
     * target cannot serve files (the RSP backend: no Host I/O). */
    int (*read_file)(struct sw_proc *p, const char *path, uint64_t offset, void *buf, size_t len,
                     size_t *got);

    /* OPTIONAL (default: read_mem for each range, in order).  Read the N
     * ranges of REQS, each into its BUF with its own RC, in as few round
     * trips as the target allows (the RSP backend: one, where the stub is
     * known to take pipelined requests).  Returns 0 when every range has its
     * RC (unreadable ranges included), or a link error (SW_ECONN,
     * SW_ETIMEDOUT, SW_EEXITED, SW_ENOMEM) with the message in P->err. */
    int (*read_mem_batch)(struct sw_proc *p, struct sw_mem_req *reqs, size_t n);

    /* OPTIONAL (default: read_mem_batch, WHILE_FN never called).
     * read_mem_batch, with the caller's local work done while the requests
     * are on their way: WHILE_FN(ARG) is called again and again, each call a
     * bounded piece of work, until it returns false (nothing left) or the
     * replies start to arrive; what is not done then is left undone.  The
     * work fills the round trip and delays the walk by one piece at most.
     * WHILE_FN must not use P. */
    int (*read_mem_batch_while)(struct sw_proc *p, struct sw_mem_req *reqs, size_t n,
                                bool (*while_fn)(void *), void *arg);

    /* OPTIONAL (default: nothing, 0).  A hint: the N threads TIDS are walked
     * next, so fetch what their walks start with (registers, the stack at
     * SP) in as few round trips as the target allows (the RSP backend: two
     * for all of them where the stub takes pipelined requests, where each
     * thread would cost two of its own; nothing elsewhere).  Walks are the
     * same with or without it; what it could not fetch they read as
     * usual.  Returns 0, or a link error (SW_ECONN, SW_ETIMEDOUT,
     * SW_EEXITED, SW_ENOMEM) with the message in P->err. */
    int (*prefetch_threads)(struct sw_proc *p, const sw_tid *tids, size_t n);

    /* OPTIONAL (default: nothing, 0).  A hint: the N ranges RANGES (their
     * ADDR and LEN; BUF and RC are not used) are read at every later stop
     * (a library state's check of the link map), so a backend that fetches
     * a stop's first reads ahead fetches these with them and their reads
     * cost no round trip of their own (the RSP backend: in the one write
     * that carries the thread list, every thread's registers and stack,
     * where the stub takes pipelined requests).  Replaces the ranges given
     * before; N 0 clears them.  Returns 0 or SW_ENOMEM. */
    int (*stop_reads)(struct sw_proc *p, const struct sw_mem_req *ranges, size_t n);

    /* OPTIONAL (default: SW_EUNSUP).  The name, state and priority of thread TID where it
     * is an RTOS task (rspwalk/rtos.h) into *OUT. */
    int (*thread_info)(struct sw_proc *p, sw_tid tid, struct sw_thread_info *out);

    /* OPTIONAL (default: nothing, 0).  Answer the target's symbol look-ups
     * through LOOKUP (1 with *ADDR, 0 unknown, or a negative code that ends
     * them), once per link: a bare-metal stub turns its RTOS awareness on
     * this way (OpenOCD's qSymbol), and the thread list is read again
     * afterwards.  *ASKED: how many names the target asked for.  Returns 0,
     * LOOKUP's code, or a link error with the message in P->err. */
    int (*serve_symbols)(struct sw_proc *p,
                         int (*lookup)(void *arg, const char *name, sw_addr *addr), void *arg,
                         size_t *asked);

    /* OPTIONAL (default: none).  The process state P wraps and reads through (the RTOS
     * tasks' over the CPU's), borrowed from P, or NULL: the backend lookups that need a
     * backend of their kind (sw_proc_rsp_session and the sw_proc_rsp_* calls) see through
     * to it. */
    struct sw_proc *(*inner)(struct sw_proc *p);
};

/* ProcDebug: control of a target that can be stopped and resumed.  Every
 * member is REQUIRED when the table is present; sw_proc.debug may be NULL. */
struct sw_procdebug_ops {
    /* Stop thread TID, or every thread if TID is SW_TID_DEFAULT. */
    int (*pause)(struct sw_proc *p, sw_tid tid);
    /* Resume thread TID, or every thread if TID is SW_TID_DEFAULT, delivering
     * signal SIG (gdb's numbering; 0 for none) to the thread that stopped. */
    int (*resume)(struct sw_proc *p, sw_tid tid, int sig);
    /* Detach.  LEAVE_STOPPED keeps the target stopped where the stub allows it. */
    int (*detach)(struct sw_proc *p, bool leave_stopped);
    /* Whether the target has exited or was killed. */
    bool (*is_terminated)(struct sw_proc *p);
    /* A descriptor that polls readable when a debug event may be pending. */
    int (*notification_fd)(struct sw_proc *p);
    /* Wait for (BLOCK) or poll for the next stop or exit and take it in.
     * Returns 0 when an event was handled, SW_ETIMEDOUT when none came. */
    int (*handle_debug_event)(struct sw_proc *p, bool block);
};

struct sw_proc {
    const struct sw_proc_ops *ops;        /* borrowed, static */
    const struct sw_procdebug_ops *debug; /* borrowed, static; NULL: no ProcDebug */
    const struct arch_desc *arch;         /* borrowed, static table in arch/ */
    int64_t pid;                          /* 0 if the target has no process id */
    sw_tid default_tid;                   /* the thread that reported the stop */
    char *exe_path;                       /* owned, may be NULL: the local executable */
    struct sw_errbuf err;                 /* last failure on this object */
    /* Stop generation: a backend with ProcDebug adds one for every stop or
     * exit it takes in (the RSP backend: each stop reply after a resume or
     * an interrupt).  A walker whose library state was read at another
     * generation reads it again before its next walk (dlopen, dlclose). */
    uint64_t stop_gen;
};

/* Initialise the base of a backend.  OPS must have read_mem and read_reg,
 * ARCH must be non-NULL.  Returns 0 or SW_EINVAL. */
SW_API int sw_proc_init(struct sw_proc *p, const struct sw_proc_ops *ops,
                        const struct sw_procdebug_ops *debug, const struct arch_desc *arch);

/* Call OPS->destroy, free EXE_PATH and the object itself with free().
 * NULL is a no-op.  Backends allocate the object with malloc. */
SW_API void sw_proc_free(struct sw_proc *p);

/* Read one target word (the arch's word size and byte order) at ADDR. */
SW_API int sw_proc_read_word(struct sw_proc *p, sw_addr addr, sw_word *val);

/* The OPTIONAL wrappers: apply the defaults named in struct sw_proc_ops. */
SW_API int sw_proc_threads(struct sw_proc *p, sw_tid *tids, size_t max, size_t *n);
SW_API int sw_proc_read_mem_batch(struct sw_proc *p, struct sw_mem_req *reqs, size_t n);
SW_API int sw_proc_read_mem_batch_while(struct sw_proc *p, struct sw_mem_req *reqs, size_t n,
                                        bool (*while_fn)(void *), void *arg);
SW_API int sw_proc_thread_label(struct sw_proc *p, sw_tid tid, char *buf, size_t len);
SW_API int sw_proc_prefetch_threads(struct sw_proc *p, const sw_tid *tids, size_t n);
SW_API int sw_proc_stop_reads(struct sw_proc *p, const struct sw_mem_req *ranges, size_t n);
SW_API int sw_proc_thread_info(struct sw_proc *p, sw_tid tid, struct sw_thread_info *out);

/* The message of the last failure on P; valid until the next call on P. */
SW_API const char *sw_proc_errmsg(const struct sw_proc *p);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_PROC_H */
