/* targets/local_tracer.h -- a stub on this host that traces the target, and the signal
 * that stops the target when the stub's own interrupt cannot.
 *
 * gdbserver interrupts by signalling the process group its inferior leads
 * (gdbserver/linux-low.cc, request_interrupt: kill (-signal_pid, SIGINT)); a
 * process it attached to that leads no group never gets that signal, and no
 * stop follows.  Linux only: /proc names the tracer and its sockets.  Not installed.
 */
#ifndef RSPWALK_TARGETS_LOCAL_TRACER_H
#define RSPWALK_TARGETS_LOCAL_TRACER_H

#include <stddef.h>
#include <stdint.h>

/* The process of this host at the far end of LINK_FD (a TCP socket on this
 * host, or a unix socket) when it is the tracer of process PID and PID leads
 * no process group (so the tracer's kill (-PID) found nothing): its process
 * id, or SW_ENOENT with the reason in MSG (MSGLEN bytes).  The far end is
 * known by its socket's inode among the tracer's descriptors, so a stub on
 * another host whose target has the same process id is never mistaken for it. */
int64_t tgt_local_tracer(int link_fd, int64_t pid, char *msg, size_t msglen);

/* Send SIGINT to process PID unless it already has one pending (the
 * stub's own interrupt arrived after all).  A process in a trace stop gets
 * it too: its stub may not have resumed it yet from the last resume, and
 * the signal waits for that.  Returns 1 when sent, 0 when not needed, or
 * SW_EIO with the reason in MSG. */
int tgt_local_interrupt(int64_t pid, char *msg, size_t msglen);

#endif
