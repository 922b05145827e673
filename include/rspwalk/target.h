/* rspwalk/target.h -- ProcessState backends: the RSP one.
 *
 * sw_proc_rsp_new wraps an RSP session as a process: registers from the stop
 * reply and one 'g' per thread per stop, memory through a per-stop cache of
 * aligned blocks, and ProcDebug's controls.
 *
 * Threads: an RSP process is used by one thread at a time, and so are
 * processes that share one session (sw_proc_rsp_new_shared) between them:
 * they are one link.  Processes over sessions of their own may be used on
 * different threads at once.  sw_rsp_config_init: any thread.
 */
#ifndef RSPWALK_TARGET_H
#define RSPWALK_TARGET_H

#include "rspwalk/proc.h"
#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rsp_session;

/* How an RSP process works.  Every member's zero is its default;
 * sw_rsp_config_init also takes no_cache from the environment.  NULL means
 * what sw_rsp_config_init gives. */
struct sw_rsp_config {
    /* Local executable, used for the architecture when the stub sends no
     * target description.  Default NULL: none. */
    const char *exe;
    /* Read every register and memory range from the stub.  Default false;
     * sw_rsp_config_init sets it when RSPWALK_NO_CACHE is set. */
    bool no_cache;
    /* ProcDebug pause(p, TID) of one thread fails with SW_EUNSUP on an
     * all-stop link, where it would stop every thread (non-stop links stop
     * TID alone: rsp_session_config.non_stop).  Default false. */
    bool strict_threads;
};

/* Fill CFG with the defaults: zero, and no_cache from RSPWALK_NO_CACHE. */
SW_API void sw_rsp_config_init(struct sw_rsp_config *cfg);

/* A process over session S, which it takes over (closed by sw_proc_free,
 * also on failure).  The architecture comes from the target description,
 * else from the ELF header of CFG->exe.  Returns 0 or a code with the
 * message in ERR; *OUT: caller frees with sw_proc_free. */
SW_API int sw_proc_rsp_new(struct rsp_session *s, const struct sw_rsp_config *cfg,
                           struct sw_proc **out, struct sw_errbuf *err);

/* One process, PID, of several attached over session S (extended remote,
 * rsp_attach): S is borrowed and must outlive the process, which sees only
 * PID's threads and stops, selects one of its threads before reading memory
 * or library lists (they follow the Hg thread), and detaches with "D;PID".
 * The walker set (rspwalk/walker_set.h) owns S and its processes.  Returns 0
 * or a code with the message in ERR (S stays open); *OUT: sw_proc_free. */
SW_API int sw_proc_rsp_new_shared(struct rsp_session *s, int64_t pid,
                                  const struct sw_rsp_config *cfg, struct sw_proc **out,
                                  struct sw_errbuf *err);

/* The session under P (borrowed), or NULL if P is not an RSP process. */
SW_API struct rsp_session *sw_proc_rsp_session(struct sw_proc *p);

/* The session under P took a stop, or the target was written to, outside P
 * (rsp_pass_request and rsp_pass_resume: a stub in front of P's passing a
 * front end's packets through): take rsp_last_stop in again, dropping what P
 * keeps of the stop and moving its stop_gen.  A no-op when P is not an RSP
 * process. */
SW_API void sw_proc_rsp_retake_stop(struct sw_proc *p);

/* The target is about to be resumed outside P (rsp_pass_resume of a front
 * end's packet): keep, as P's own resume does, the threads and stack ranges
 * this stop read, so that the next stop's first read fetches them in one
 * pipelined write (sw_proc_rsp_retake_stop arms it), the stopped thread's
 * 'g' included, which a front end reads; then drop what P keeps of this
 * stop.  A no-op when P is not an RSP process. */
SW_API void sw_proc_rsp_prepare_resume(struct sw_proc *p);

/* The target's registers or memory were written outside P (rsp_pass_request
 * of 'G', 'P', 'M', 'X'): drop the registers and memory P keeps of this
 * stop, which stays the same stop (stop_gen does not move, so a walker
 * keeps its library list).  A no-op when P is not an RSP process. */
SW_API void sw_proc_rsp_forget_reads(struct sw_proc *p);

/* Thread TID's registers were written outside P (rsp_pass_request of 'P'
 * or 'G' with TID selected): drop the registers P keeps of TID, and the
 * stop's expedited ones if TID stopped; its memory and the other threads'
 * registers stay (a register write changes neither).  A no-op when P is not
 * an RSP process. */
SW_API void sw_proc_rsp_forget_regs(struct sw_proc *p, sw_tid tid);

/* Signals (gdb numbers) passed to the target without stopping when
 * handle_debug_event sees them. */
SW_API int sw_proc_rsp_set_pass(struct sw_proc *p, const int *sigs, size_t n);

/* The signal (gdb's numbering) the last stop P took in reported, while P
 * is stopped at it: 0 when running, exited, or stopped without a signal. */
SW_API int sw_proc_rsp_stop_signal(struct sw_proc *p);

/* The signal (gdb's numbering) thread TID (SW_TID_DEFAULT: the default
 * thread) is stopped at: in non-stop mode that of its own stop, kept until
 * it is resumed; in all-stop mode sw_proc_rsp_stop_signal's.  0 when it
 * runs or stopped without a signal. */
SW_API int sw_proc_rsp_thread_signal(struct sw_proc *p, sw_tid tid);

/* Non-stop: pause the N threads TIDS with one request (rsp_stop_threads)
 * and wait until each is stopped or gone, taking in what else stops
 * meanwhile.  A thread that exits instead reports nothing on gdbserver (an
 * "N" stop when no thread is left running): a thread not stopped after
 * "N", or 20 ms, then 40, 80, ..., is asked after (rsp_thread_alive), and
 * one the stub no longer knows is gone (sw_proc_rsp_thread_gone).
 * SW_EUNSUP on an all-stop link; SW_EEXITED when the target exited. */
SW_API int sw_proc_rsp_pause_threads(struct sw_proc *p, const sw_tid *tids, size_t n);

/* Whether the last pause (sw_proc_rsp_pause_threads, or ProcDebug's pause
 * in non-stop mode) found thread TID gone: it exited before it stopped. */
SW_API bool sw_proc_rsp_thread_gone(struct sw_proc *p, sw_tid tid);

/* Non-stop: resume the N threads TIDS with one request, thread TIDS[i]
 * with signal SIGS[i] (gdb's numbering, 0: none; SIGS NULL: none), the
 * others left as they are.  SW_EUNSUP on an all-stop link. */
SW_API int sw_proc_rsp_resume_threads(struct sw_proc *p, const sw_tid *tids, const int *sigs,
                                      size_t n);

/* Whether the link under P is in non-stop mode (rsp_non_stop): ProcDebug's
 * pause and resume of one thread then leave the others as they are. */
SW_API bool sw_proc_rsp_non_stop(struct sw_proc *p);

/* Whether thread TID (SW_TID_DEFAULT: the default thread) is stopped, so
 * that it can be walked: non-stop, it stopped and was not resumed since;
 * all-stop, the whole target is stopped.  False after an exit. */
SW_API bool sw_proc_rsp_thread_stopped(struct sw_proc *p, sw_tid tid);

/* QEMU user mode (7.2) reads no interrupt while its guest runs.  When its
 * process runs on this host (the stub's process id is 1 and its thread ids
 * are this host's threads of a qemu-* process), ProcDebug's pause stops it
 * with SIGINT to one guest thread (tgkill); QEMU stops that thread alone,
 * the others run on.  Whether P's stub is such a process (looked up once;
 * *WHY, when not NULL, says why not; borrowed, valid until the next call). */
SW_API bool sw_proc_rsp_qemu_user(struct sw_proc *p, const char **why);
/* Stop P's QEMU user process with a signal to guest thread TID (SW_TID_DEFAULT:
 * one P picks: of those in state R, the one the scheduler ran last).  QEMU 7.2's stub is not
 * safe for two threads at once: the signal waits until the thread stopped
 * last has left it, and a stub found out of step is brought back first
 * (sw_proc_rsp_resync).  0 when stopped; SW_ENOENT when TID is gone; else a
 * failure with the message on P. */
SW_API int sw_proc_rsp_signal_stop(struct sw_proc *p, sw_tid tid);
/* Bring P's QEMU user stub back in step after a reply that made no sense
 * (WHY, for the debug trace): take in and ack what it sends, resume and
 * ack until no thread is in the stub.  The target then runs.  0 (also for
 * any other stub) or a failure with the message on P. */
SW_API int sw_proc_rsp_resync(struct sw_proc *p, const char *why);
/* How many times P's QEMU user stub was brought back in step. */
SW_API uint64_t sw_proc_rsp_resyncs(struct sw_proc *p);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_TARGET_H */
