/* sample/qemu_user.c -- a QEMU user-mode stub on this host, and the signal that stops it.
 *
 * Linux only: /proc says which process a host thread belongs to and what it
 * runs; tgkill aims a signal at one thread, where kill() would let the kernel
 * pick any, a QEMU helper thread included.  Nothing here speaks RSP.
 */
#define _DEFAULT_SOURCE /* syscall() */

#include "sample/sample_internal.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rspwalk/errors.h"

/* Linux's PID_MAX_LIMIT (4 << 20): no thread id is larger. */
#define QEMU_TID_MAX 4194304
/* QEMU 7.2's user-mode stub reads its socket 256 bytes at a time
 * (gdbstub/user.c, gdb_handlesig): read(fd, buf, 256) is a thread in it. */
#define QEMU_STUB_READ 256

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
    q->stub_fd = -1;
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

/* The first fields of /proc/PID/task/TID/syscall: the system call number and
 * its first three arguments, "running", or "-1" (blocked outside a call). */
static enum sw_qemu_where
read_syscall(const struct sw_qemu_user *q, sw_tid tid, long *nr, unsigned long args[3])
{
    char path[96], buf[256];
    snprintf(path, sizeof path, "/proc/%" PRId64 "/task/%" PRIu64 "/syscall", q->host_pid,
             (uint64_t)tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return errno == ENOENT || errno == ESRCH ? SW_QEMU_GONE : SW_QEMU_UNKNOWN;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n == 0)
        return SW_QEMU_UNKNOWN; /* no access (ptrace rules) reads as empty */
    if (strncmp(buf, "running", 7) == 0)
        return SW_QEMU_RUNNING;
    if (sscanf(buf, "%ld %lx %lx %lx", nr, &args[0], &args[1], &args[2]) != 4)
        return *nr == -1 ? SW_QEMU_SYSCALL : SW_QEMU_UNKNOWN;
    return SW_QEMU_SYSCALL;
}

void
sw_qemu_user_learn_stub(struct sw_qemu_user *q, sw_tid tid)
{
    long nr = 0;
    unsigned long a[3];
    if (read_syscall(q, tid, &nr, a) == SW_QEMU_SYSCALL && nr == SYS_read &&
        a[2] == QEMU_STUB_READ && a[0] <= INT32_MAX)
        q->stub_fd = (int)a[0];
}

enum sw_qemu_where
sw_qemu_user_where(const struct sw_qemu_user *q, sw_tid tid)
{
    long nr = 0;
    unsigned long a[3];
    enum sw_qemu_where w = read_syscall(q, tid, &nr, a);
    if (w != SW_QEMU_SYSCALL)
        return w;
    if (q->stub_fd < 0)
        return SW_QEMU_UNKNOWN;
    /* The stub reads its socket with read (its loop) and recv (an ack),
     * and writes it with send (packets) and write: any of them on the
     * socket is a thread still in the stub. */
    bool on_socket = nr == SYS_read || nr == SYS_write || nr == SYS_recvfrom || nr == SYS_sendto;
    if (!on_socket || a[0] != (unsigned long)q->stub_fd)
        return SW_QEMU_SYSCALL;
    /* recv of one byte: the ack after a packet it sent. */
    return nr == SYS_recvfrom && a[2] == 1 ? SW_QEMU_IN_STUB_ACK : SW_QEMU_IN_STUB;
}

size_t
sw_qemu_user_stub_threads(const struct sw_qemu_user *q, sw_tid *tids, enum sw_qemu_where *where,
                          size_t cap)
{
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof path, "/proc/%" PRId64 "/task", q->host_pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < cap) {
        char *end;
        unsigned long long t = strtoull(e->d_name, &end, 10);
        if (e->d_name[0] == '.' || *end != '\0' || !sw_qemu_user_tid_valid((sw_tid)t))
            continue;
        enum sw_qemu_where w = sw_qemu_user_where(q, (sw_tid)t);
        if (w == SW_QEMU_IN_STUB || w == SW_QEMU_IN_STUB_ACK) {
            tids[n] = (sw_tid)t;
            where[n++] = w;
        }
    }
    closedir(d);
    return n;
}
