/* sample/sample_internal.h -- what sample/sampler.c takes from sample/qemu_user.c.
 *
 * QEMU user mode (7.2) reads its gdb socket only while a guest thread is stopped
 * in its signal path, so the interrupt byte is never seen while the guest runs;
 * a signal to one guest thread is: QEMU reports that thread's stop (T02) and
 * waits for the client, the other guest threads running on.  Not installed.
 */
#ifndef RSPWALK_SAMPLE_INTERNAL_H
#define RSPWALK_SAMPLE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "rspwalk/proc.h"
#include "rspwalk/types.h"

/* A QEMU user-mode process on this host, found from the stub's thread ids
 * (QEMU user numbers guest threads by their host thread ids). */
struct sw_qemu_user {
    int64_t host_pid; /* the QEMU process; 0 when none was found */
    int stub_fd;      /* the stub's socket in that process; -1 until learnt */
    char msg[200];    /* why none was found, or the last signal's failure */
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

/* Where a guest thread is, as /proc/PID/task/TID/syscall shows it. */
enum sw_qemu_where {
    SW_QEMU_GONE,        /* no such thread any more */
    SW_QEMU_IN_STUB,     /* on the stub's socket: in QEMU's gdb stub */
    SW_QEMU_IN_STUB_ACK, /* in the stub, waiting for the ack of a packet it sent */
    SW_QEMU_SYSCALL,     /* in or blocked in another system call */
    SW_QEMU_RUNNING,     /* on a CPU or runnable: guest code or QEMU's own */
    SW_QEMU_UNKNOWN,     /* not readable (ptrace rules) or the stub's socket unknown */
};

/* Learn the stub's socket from guest thread TID, which the stub has just
 * reported stopped (so it sits in the stub's read loop).  Q->stub_fd stays
 * -1 when /proc does not show it. */
void sw_qemu_user_learn_stub(struct sw_qemu_user *q, sw_tid tid);

/* Where guest thread TID of Q's process is. */
enum sw_qemu_where sw_qemu_user_where(const struct sw_qemu_user *q, sw_tid tid);

/* The threads of Q's process that are in the stub (IN_STUB or IN_STUB_ACK
 * in WHERE), at most CAP of them into TIDS; how many. */
size_t sw_qemu_user_stub_threads(const struct sw_qemu_user *q, sw_tid *tids,
                                 enum sw_qemu_where *where, size_t cap);

/* Whether TID can be a thread: QEMU lists half-born and exiting threads
 * with ids like p1.ffffffff, which no thread has. */
bool sw_qemu_user_tid_valid(sw_tid tid);

#endif /* RSPWALK_SAMPLE_INTERNAL_H */
