/* sample/qemu_user.c -- a QEMU user-mode stub on this host, and the signal that stops it.
 *
 * Linux only: /proc says which process a host thread belongs to and what it
 * runs; tgkill aims a signal at one thread, where kill() would let the kernel
 * pick any, a QEMU helper thread included.  Nothing here speaks RSP.
 */
#define _DEFAULT_SOURCE /* syscall() */

#include "sample/sample_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rspwalk/errors.h"

/* Linux's PID_MAX_LIMIT (4 << 20): no thread id is larger. */
#define QEMU_TID_MAX 4194304

bool
sw_qemu_user_tid_valid(sw_tid tid)
{
    return tid > 0 && tid <= QEMU_TID_MAX;
}

/* The thread group (process) of host thread TID, or -1. */
static int64_t
host_tgid(sw_tid tid)
{
    char path[64], line[128];
    int64_t tgid = -1;
    snprintf(path, sizeof path, "/proc/%" PRIu64 "/status", (uint64_t)tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Tgid: %" SCNd64, &tgid) == 1)
            break;
    fclose(f);
    return tgid;
}

int
sw_qemu_user_find(struct sw_proc *p, struct sw_qemu_user *q)
{
    char path[64], exe[512];
    memset(q, 0, sizeof *q);
    if (p->pid != 1) {
        snprintf(q->msg, sizeof q->msg, "its process id is %" PRId64 ", QEMU user's is 1", p->pid);
        return SW_ENOENT;
    }
    sw_tid tid = p->default_tid;
    int64_t tgid = sw_qemu_user_tid_valid(tid) ? host_tgid(tid) : -1;
    if (tgid <= 0) {
        snprintf(q->msg, sizeof q->msg, "thread %" PRIu64 " is no thread of this host",
                 (uint64_t)tid);
        return SW_ENOENT;
    }
    snprintf(path, sizeof path, "/proc/%" PRId64 "/exe", tgid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(q->msg, sizeof q->msg, "%s: %s", path, strerror(errno));
        return SW_ENOENT;
    }
    exe[n] = '\0';
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    if (strncmp(base, "qemu-", 5) != 0) {
        snprintf(q->msg, sizeof q->msg, "thread %" PRIu64 " belongs to %.120s, not to qemu-*",
                 (uint64_t)tid, base);
        return SW_ENOENT;
    }
    q->host_pid = tgid;
    return 0;
}

int
sw_qemu_user_signal(struct sw_qemu_user *q, sw_tid tid)
{
    if (syscall(SYS_tgkill, (pid_t)q->host_pid, (pid_t)tid, SIGINT) == 0)
        return 0;
    if (errno == ESRCH)
        return SW_ENOENT;
    snprintf(q->msg, sizeof q->msg, "signalling thread %" PRIu64 " of process %" PRId64 ": %s",
             (uint64_t)tid, q->host_pid, strerror(errno));
    return SW_EIO;
}

bool
sw_qemu_user_thread_on_cpu(const struct sw_qemu_user *q, sw_tid tid)
{
    char path[96], buf[512];
    snprintf(path, sizeof path, "/proc/%" PRId64 "/task/%" PRIu64 "/stat", q->host_pid,
             (uint64_t)tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "TID (COMM) STATE ...": COMM may hold spaces and parentheses. */
    const char *rp = strrchr(buf, ')');
    return rp != NULL && rp[1] == ' ' && rp[2] == 'R';
}
