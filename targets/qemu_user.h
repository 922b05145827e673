/* targets/qemu_user.h -- a QEMU user-mode stub on this host, and the signal that stops it.
 *
 * QEMU user mode (7.2) reads its gdb socket only while a guest thread is stopped
 * in its signal path, so the interrupt byte is never seen while the guest runs;
 * a signal to one guest thread is: QEMU reports that thread's stop (T02) and
 * waits for the client, the other guest threads running on.  Not installed.
 */
#ifndef RSPWALK_TARGETS_QEMU_USER_H
#define RSPWALK_TARGETS_QEMU_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/types.h"

struct sw_proc;
struct tgt_rsp_proc;

/* Guest threads kept to aim signals at (more are not signalled). */
#define QEMU_USER_GUESTS 256

/* A QEMU user-mode process on this host, found from the stub's thread ids
 * (QEMU user numbers guest threads by their host thread ids), and what the
 * signal stops know of its stub. */
struct sw_qemu_user {
    int64_t host_pid;    /* the QEMU process; 0 when none was found */
    int stub_fd;         /* the stub's socket in that process; -1 until learnt */
    sw_tid in_stub;      /* the thread stopped last, until seen out of the stub; 0: none */
    sw_tid last_stopped; /* the thread stopped last; 0: none or not known */
    uint64_t resumed_us; /* when the last resume was acknowledged */
    size_t next_victim;  /* round the threads of /proc */
    uint64_t resyncs;    /* times the stub was brought back in step */
    sw_tid guests[QEMU_USER_GUESTS]; /* the guest threads of the last thread list */
    size_t nguests;
    bool looked;   /* sw_qemu_user_find was tried */
    char msg[200]; /* why none was found, or the last signal's failure */
};

/* Whether P's stub is a QEMU user-mode process on this host: its process
 * id is 1 (QEMU user's) and its stopped thread is a thread of a local
 * process whose executable is named qemu-*.  Returns 0 with Q filled, or
 * SW_ENOENT with the reason in Q->msg. */
int sw_qemu_user_find(struct sw_proc *p, struct sw_qemu_user *q);

/* Send SIGINT to guest thread TID of Q's process (tgkill).  Returns 0,
 * SW_ENOENT when the thread is gone, or SW_EIO with the reason in Q->msg. */
int sw_qemu_user_signal(struct sw_qemu_user *q, sw_tid tid);

/* Whether guest thread TID of Q's process is running or runnable on the
 * host (state R in /proc), not blocked in a system call. */
bool sw_qemu_user_thread_on_cpu(const struct sw_qemu_user *q, sw_tid tid);

/* The guest thread a signal stop aims at: of Q->guests (or, while the stub
 * has listed none, /proc's threads that take SIGINT now), one in state R,
 * the one the scheduler ran last where /proc shows it; with none in state R,
 * the next in turn.  0: no thread. */
sw_tid sw_qemu_user_pick(struct sw_qemu_user *q);

/* Where a guest thread is, as /proc/PID/task/TID/syscall shows it. */
enum sw_qemu_where {
    SW_QEMU_GONE,        /* no such thread any more */
    SW_QEMU_IN_STUB,     /* on the stub's socket: in QEMU's gdb stub */
    SW_QEMU_IN_STUB_ACK, /* in the stub, waiting for the ack of a packet it sent */
    SW_QEMU_IN_SIGNALS,  /* every signal blocked, SIGSEGV too: QEMU's signal path, which
                          * holds the stub, and the ways into and out of it */
    SW_QEMU_SYSCALL,     /* in or blocked in another system call, out of the signal path */
    SW_QEMU_RUNNING,     /* on a CPU or runnable, out of the signal path */
    SW_QEMU_UNKNOWN,     /* not readable (ptrace rules) or the stub's socket unknown */
};

/* Where guest thread TID of Q's process is: /proc's syscall file, then its
 * signal mask.  QEMU blocks every signal while it handles one (the stub
 * included) and never blocks SIGSEGV otherwise but for moments (the guest's
 * own mask never holds it on the host), so a thread seen with SIGSEGV
 * unblocked after a resume has left the stub. */
enum sw_qemu_where sw_qemu_user_where(const struct sw_qemu_user *q, sw_tid tid);

/* The threads of Q's process that are in the stub (IN_STUB or IN_STUB_ACK
 * in WHERE), at most CAP of them into TIDS; how many. */
size_t sw_qemu_user_stub_threads(const struct sw_qemu_user *q, sw_tid *tids,
                                 enum sw_qemu_where *where, size_t cap);

/* Whether TID can be a thread: QEMU lists half-born and exiting threads
 * with ids like p1.ffffffff, which no thread has. */
bool sw_qemu_user_tid_valid(sw_tid tid);

/* ---- on an RSP process (targets/rsp_debug.c) ---------------------------------------- */

/* The stub under RP is a QEMU user process on this host (looked up once). */
bool tgt_qemu_user(struct tgt_rsp_proc *rp);
/* RP read the thread list (kept for the signals: a running QEMU lists none). */
void tgt_qemu_listed(struct tgt_rsp_proc *rp);
/* RP resumed the target / took in the stop of thread TID. */
void tgt_qemu_resumed(struct tgt_rsp_proc *rp);
void tgt_qemu_took_stop(struct tgt_rsp_proc *rp, sw_tid tid);
/* Stop the target with a signal to guest thread TID (SW_TID_DEFAULT: one of
 * /proc's, on a CPU first, round robin), waiting for the thread stopped
 * last to leave the stub first and bringing the stub back in step when it
 * lost it.  Returns 0 when stopped, SW_ENOENT when TID is gone, or a
 * failure with the message on RP. */
int tgt_qemu_stop(struct tgt_rsp_proc *rp, sw_tid tid);
/* Bring the stub back in step after WHY; the target then runs.  0 or a
 * failure with the message on RP. */
int tgt_qemu_resync(struct tgt_rsp_proc *rp, const char *why);

#endif /* RSPWALK_TARGETS_QEMU_USER_H */
