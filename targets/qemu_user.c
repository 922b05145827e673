/* targets/qemu_user.c -- a QEMU user-mode stub on this host, and the signal that stops it.
 *
 * Linux only: /proc says which process a host thread belongs to and what it
 * runs; tgkill aims a signal at one thread, where kill() would let the kernel
 * pick any, a QEMU helper thread included.  Nothing here speaks RSP.
 */
#define _DEFAULT_SOURCE /* syscall() */

#include "targets/qemu_user.h"

#include <poll.h>
#include <time.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rspwalk/errors.h"
#include "rspwalk/rsp.h"
#include "targets/rsp_proc_internal.h"
#include "util/util.h"

/* Linux's PID_MAX_LIMIT (4 << 20): no thread id is larger. */
#define QEMU_TID_MAX 4194304
/* QEMU 7.2's user-mode stub reads its socket 256 bytes at a time
 * (gdbstub/user.c, gdb_handlesig): read(fd, buf, 256) is a thread in it. */
#define QEMU_STUB_READ 256
/* The threads of /proc looked at for a signal or in the stub. */
#define QEMU_MAX_VICTIMS 256
/* How a signal waits for the thread stopped last to leave the stub
 * (wait_left): the guard after the resume where /proc tells nothing, the
 * longest wait (on 2 cores busy with 8 guest threads, the thread that acked
 * the resume may wait tens of milliseconds for a CPU before it goes on out),
 * and how often it looks. */
#define QEMU_STUB_GUARD_US 100
#define QEMU_STUB_LEAVE_US 500000
#define QEMU_POLL_US       20
/* A signal stop: how often its wait looks at the stub, and for how long
 * (then the session's timeout alone); how long bringing the stub back in
 * step may take, the quiet that ends a drain, and how often a stop may
 * need it. */
#define QEMU_STOP_CHECK_MS   50
#define QEMU_STOP_WAIT_US    2000000
#define QEMU_RESYNC_US       2000000
#define QEMU_RESYNC_QUIET_MS 20
#define QEMU_RESYNC_TRIES    4

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

/* The first SIZE - 1 bytes of /proc/PID/task/TID/NAME of Q's process into
 * BUF, ended with a NUL: their count, or -1 with errno set when the file
 * cannot be opened. */
static long
read_task_file(const struct sw_qemu_user *q, sw_tid tid, const char *name, char *buf, size_t size)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%" PRId64 "/task/%" PRIu64 "/%s", q->host_pid, (uint64_t)tid,
             name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (long)n;
}

bool
sw_qemu_user_thread_on_cpu(const struct sw_qemu_user *q, sw_tid tid)
{
    char buf[512];
    if (read_task_file(q, tid, "stat", buf, sizeof buf) < 0)
        return false;
    /* "TID (COMM) STATE ...": COMM may hold spaces and parentheses. */
    const char *rp = strrchr(buf, ')');
    return rp != NULL && rp[1] == ' ' && rp[2] == 'R';
}

/* When the scheduler last ran guest thread TID: its se.exec_start in
 * /proc/PID/task/TID/sched (kernel/sched/debug.c, proc_sched_show_task: the
 * run queue clock in milliseconds, updated while the thread runs), or -1
 * where the kernel shows none (no CONFIG_SCHED_DEBUG, or the thread gone). */
static double
exec_start(const struct sw_qemu_user *q, sw_tid tid)
{
    char buf[768];
    if (read_task_file(q, tid, "sched", buf, sizeof buf) < 0)
        return -1;
    /* After the first line ("COMM (TID, #threads: N)": COMM is anything). */
    const char *at = strstr(buf, "\nse.exec_start");
    const char *colon = at ? strchr(at, ':') : NULL;
    if (colon == NULL)
        return -1;
    char *end;
    double v = strtod(colon + 1, &end);
    return end == colon + 1 || !(v >= 0) ? -1 : v;
}

/* The first fields of /proc/PID/task/TID/syscall: the system call number and
 * its first three arguments, "running", or "-1" (blocked outside a call). */
static enum sw_qemu_where
read_syscall(const struct sw_qemu_user *q, sw_tid tid, long *nr, unsigned long args[3])
{
    char buf[256];
    long n = read_task_file(q, tid, "syscall", buf, sizeof buf);
    if (n < 0)
        return errno == ENOENT || errno == ESRCH ? SW_QEMU_GONE : SW_QEMU_UNKNOWN;
    if (n == 0)
        return SW_QEMU_UNKNOWN; /* no access (ptrace rules) reads as empty */
    if (strncmp(buf, "running", 7) == 0)
        return SW_QEMU_RUNNING;
    if (sscanf(buf, "%ld %lx %lx %lx", nr, &args[0], &args[1], &args[2]) != 4)
        return *nr == -1 ? SW_QEMU_SYSCALL : SW_QEMU_UNKNOWN;
    return SW_QEMU_SYSCALL;
}

/* The signals host thread TID of Q's process blocks (SigBlk in its status,
 * bit N-1 for signal N).  0, SW_ENOENT when it is gone, or SW_EIO. */
static int
read_sigblk(const struct sw_qemu_user *q, sw_tid tid, uint64_t *blk)
{
    char path[96], line[128];
    unsigned long long v = 0;
    bool found = false;
    snprintf(path, sizeof path, "/proc/%" PRId64 "/task/%" PRIu64 "/status", q->host_pid,
             (uint64_t)tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return errno == ENOENT || errno == ESRCH ? SW_ENOENT : SW_EIO;
    while (!found && fgets(line, sizeof line, f) != NULL)
        found = sscanf(line, "SigBlk: %llx", &v) == 1;
    fclose(f);
    *blk = v;
    return found ? 0 : SW_EIO;
}

static bool
sig_in(uint64_t set, int sig)
{
    return (set & (1ull << (sig - 1))) != 0;
}

static void
learn_stub(struct sw_qemu_user *q, sw_tid tid)
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
    if (w == SW_QEMU_GONE)
        return w;
    if (w == SW_QEMU_SYSCALL && q->stub_fd >= 0) {
        /* The stub reads its socket with read (its loop) and recv (an
         * ack), and writes it with send (packets) and write: any of them
         * on the socket is a thread still in the stub. */
        bool on_socket =
            nr == SYS_read || nr == SYS_write || nr == SYS_recvfrom || nr == SYS_sendto;
        if (on_socket && a[0] == (unsigned long)q->stub_fd)
            /* recv of one byte: the ack after a packet it sent. */
            return nr == SYS_recvfrom && a[2] == 1 ? SW_QEMU_IN_STUB_ACK : SW_QEMU_IN_STUB;
    }
    /* Off the socket, "running" says only "in no system call": a thread
     * that acked a resume runs QEMU's code to the stub's exit, and on a busy
     * host may wait there for a CPU.  QEMU blocks every signal from the
     * moment it takes one until it is done with it and lets SIGSEGV through
     * at all other times, so the mask says whether it is out. */
    uint64_t blk;
    int rc = read_sigblk(q, tid, &blk);
    if (rc == SW_ENOENT)
        return SW_QEMU_GONE;
    if (rc < 0)
        return SW_QEMU_UNKNOWN;
    return sig_in(blk, SIGSEGV) ? SW_QEMU_IN_SIGNALS : w;
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

/* ---- on an RSP process ------------------------------------------------------------- */

/* Whether host thread TID blocks SIGINT (QEMU's own threads block every
 * signal; a guest thread blocks host signals only for moments). */
static bool
blocks_sigint(const struct sw_qemu_user *q, sw_tid tid)
{
    uint64_t blk;
    return read_sigblk(q, tid, &blk) < 0 || sig_in(blk, SIGINT);
}

/* A guest thread to signal: of the stub's last thread list (or /proc's
 * threads that take SIGINT now, before the stub listed any), one in state R
 * (a stop where the time goes), the one the scheduler ran last: R is on a
 * CPU or waiting for one, and a thread that waits takes the signal only when
 * it runs again (with 8 busy guest threads on 2 cores: a median 3.6 ms from
 * the signal to the stop reply, against 0.4 ms for the thread ran last,
 * 76-81 against 135-137 stops a second).  Where /proc shows no run times,
 * the first R after the last one chosen; with none in state R, the next.
 * 0: none. */
sw_tid
sw_qemu_user_pick(struct sw_qemu_user *q)
{
    sw_tid proc_tids[QEMU_MAX_VICTIMS];
    const sw_tid *tids = q->guests;
    size_t n = q->nguests;
    if (n == 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%" PRId64 "/task", q->host_pid);
        DIR *d = opendir(path);
        if (d == NULL)
            return 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n < QEMU_MAX_VICTIMS) {
            char *end;
            unsigned long long t = strtoull(e->d_name, &end, 10);
            if (e->d_name[0] != '.' && *end == '\0' && sw_qemu_user_tid_valid((sw_tid)t) &&
                !blocks_sigint(q, (sw_tid)t))
                proc_tids[n++] = (sw_tid)t;
        }
        closedir(d);
        tids = proc_tids;
    }
    if (n == 0)
        return 0;
    size_t best = SIZE_MAX, first = SIZE_MAX;
    double best_at = -1;
    for (size_t k = 0; k < n; k++) {
        size_t i = (q->next_victim + k) % n;
        if (!sw_qemu_user_thread_on_cpu(q, tids[i]))
            continue;
        if (first == SIZE_MAX)
            first = k;
        double at = exec_start(q, tids[i]);
        if (at > best_at) {
            best_at = at;
            best = k;
        }
    }
    size_t k = best != SIZE_MAX ? best : first;
    if (k == SIZE_MAX)
        return tids[q->next_victim++ % n];
    sw_tid t = tids[(q->next_victim + k) % n];
    q->next_victim += k + 1;
    return t;
}

void
tgt_qemu_listed(struct tgt_rsp_proc *rp)
{
    struct sw_qemu_user *q = &rp->qemu;
    if (q->host_pid <= 0)
        return;
    q->nguests = 0;
    for (size_t i = 0; i < rp->nthreads && q->nguests < QEMU_USER_GUESTS; i++)
        if (sw_qemu_user_tid_valid((sw_tid)rp->threads[i].tid))
            q->guests[q->nguests++] = (sw_tid)rp->threads[i].tid;
}

bool
tgt_qemu_user(struct tgt_rsp_proc *rp)
{
    struct sw_qemu_user *q = &rp->qemu;
    if (!q->looked) {
        sw_qemu_user_find(&rp->base, q);
        q->looked = true;
    }
    return q->host_pid > 0;
}

void
tgt_qemu_resumed(struct tgt_rsp_proc *rp)
{
    rp->qemu.resumed_us = sw_now_us();
}

void
tgt_qemu_took_stop(struct tgt_rsp_proc *rp, sw_tid tid)
{
    struct sw_qemu_user *q = &rp->qemu;
    if (q->host_pid <= 0)
        return;
    q->in_stub = q->last_stopped = tid;
    if (q->stub_fd < 0)
        learn_stub(q, tid);
}

/* QEMU 7.2's user-mode stub keeps its state in globals: a thread that
 * stops sets "not running" and reads the socket until a resume sets
 * "running".  The thread a resume let go acks the resume before it parses
 * it, sets "running" and leaves; a thread that stops in between clears it
 * again or parses into the same buffers, and both then read the socket,
 * taking each other's bytes (a reply sent twice, a request lost).  The ack
 * wakes us, which may take the CPU from that thread for milliseconds, so
 * no wall-clock guard proves it left.  A signal waits until the thread
 * stopped last is gone or out of QEMU's signal path (sw_qemu_user_where:
 * its mask lets SIGSEGV through again, which QEMU does only after the
 * stub's loop ended).  Where /proc tells nothing, QEMU_STUB_GUARD_US since
 * the resume.  What slips through is caught after the stop
 * (tgt_qemu_stop) and mended (tgt_qemu_resync).
 *
 * wait_out: until thread TID is out (true) or GIVE_UP (false); where
 * /proc tells nothing, until GUARD_END. */
static bool
wait_out(const struct sw_qemu_user *q, sw_tid tid, uint64_t guard_end, uint64_t give_up)
{
    for (;;) {
        uint64_t now = sw_now_us();
        enum sw_qemu_where w = sw_qemu_user_where(q, tid);
        if (w == SW_QEMU_GONE || w == SW_QEMU_SYSCALL || w == SW_QEMU_RUNNING)
            return true;
        if (w == SW_QEMU_UNKNOWN && now >= guard_end)
            return true;
        if (now >= give_up) {
            sw_debug(SW_DBG_PKT,
                     "-! thread %" PRIu64 " still in QEMU's signal path %" PRIu64
                     " us after the resume",
                     (uint64_t)tid, now - q->resumed_us);
            return false;
        }
        struct timespec ts = { 0, QEMU_POLL_US * 1000 };
        nanosleep(&ts, NULL);
    }
}

static void
wait_left(struct sw_qemu_user *q)
{
    if (q->in_stub == SW_TID_DEFAULT)
        return;
    wait_out(q, q->in_stub, q->resumed_us + QEMU_STUB_GUARD_US, q->resumed_us + QEMU_STUB_LEAVE_US);
    q->in_stub = SW_TID_DEFAULT;
}

/* Wait for the stop a signal asked for, watching the stub meanwhile: a stop
 * that is late while a thread of the stub waits for the ack of a packet we
 * never saw (another thread's read took our ack) is the stub out of step:
 * SW_EPROTO.  Else handle_debug_event's verdict. */
static int
wait_stop(struct tgt_rsp_proc *rp)
{
    struct sw_qemu_user *q = &rp->qemu;
    int fd = rsp_session_event_fd(rp->s);
    uint64_t t0 = sw_now_us();
    while (fd >= 0) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, QEMU_STOP_CHECK_MS) != 0)
            break;
        sw_tid tids[QEMU_MAX_VICTIMS];
        enum sw_qemu_where where[QEMU_MAX_VICTIMS];
        size_t n = sw_qemu_user_stub_threads(q, tids, where, QEMU_MAX_VICTIMS);
        for (size_t i = 0; i < n; i++) {
            if (where[i] != SW_QEMU_IN_STUB_ACK)
                continue;
            /* It may have sent the stop after the poll ended (a slow
             * stop on a busy host): then the stop is on the socket now. */
            if (poll(&pfd, 1, 0) != 0)
                break;
            return sw_fail(&rp->base.err, SW_EPROTO,
                           "thread %" PRIu64 " waits in QEMU's stub for the ack of a packet "
                           "that never came",
                           (uint64_t)tids[i]);
        }
        if (pfd.revents != 0)
            break;
        if (sw_now_us() - t0 >= QEMU_STOP_WAIT_US)
            break; /* handle_debug_event's own timeout decides */
    }
    return rp->base.debug->handle_debug_event(&rp->base, true);
}

int
tgt_qemu_resync(struct tgt_rsp_proc *rp, const char *why)
{
    struct sw_qemu_user *q = &rp->qemu;
    struct sw_proc *p = &rp->base;
    char reason[160];
    snprintf(reason, sizeof reason, "%s", why);
    sw_debug(SW_DBG_PKT, "-! QEMU's stub out of step (%s): resynchronising", reason);
    q->resyncs++;
    q->in_stub = q->last_stopped = SW_TID_DEFAULT;
    uint64_t give_up = sw_now_us() + QEMU_RESYNC_US;
    /* The threads met in the stub: a resume lets them all go at once, and
     * the next signal waits until each is out, as for one (wait_left). */
    sw_tid seen[QEMU_MAX_VICTIMS];
    size_t nseen = 0;
    for (;;) {
        int rc = rsp_session_drain(rp->s, QEMU_RESYNC_QUIET_MS);
        if (rc < 0)
            return sw_fail(&p->err, rc, "QEMU's stub out of step (%s), then: %s", reason,
                           rsp_session_errmsg(rp->s));
        sw_tid tids[QEMU_MAX_VICTIMS];
        enum sw_qemu_where where[QEMU_MAX_VICTIMS];
        size_t n = sw_qemu_user_stub_threads(q, tids, where, QEMU_MAX_VICTIMS);
        for (size_t i = 0; i < n; i++) {
            size_t k = 0;
            while (k < nseen && seen[k] != tids[i])
                k++;
            if (k == nseen && nseen < QEMU_MAX_VICTIMS)
                seen[nseen++] = tids[i];
        }
        if (n == 0) {
            for (size_t k = 0; k < nseen; k++)
                wait_out(q, seen[k], sw_now_us() + QEMU_STUB_GUARD_US, give_up);
            return 0;
        }
        if (sw_now_us() >= give_up)
            return sw_fail(&p->err, SW_EPROTO,
                           "QEMU's stub out of step (%s): %zu threads still in it after %d ms",
                           reason, n, QEMU_RESYNC_US / 1000);
        bool reading = false;
        for (size_t i = 0; i < n; i++)
            reading |= where[i] == SW_QEMU_IN_STUB;
        /* A resume lets every reader go (the stub's "running" flag is
         * shared); a bare ack wakes a reader and means nothing to it. */
        if (reading) {
            char keep[sizeof p->err.msg];
            snprintf(keep, sizeof keep, "%s", p->err.msg);
            if ((rc = p->debug->resume(p, SW_TID_DEFAULT, 0)) < 0)
                return sw_fail(&p->err, rc, "QEMU's stub out of step (%s), resuming: %s", reason,
                               keep);
        }
        if ((rc = rsp_session_send_ack(rp->s)) < 0)
            return sw_fail(&p->err, rc, "QEMU's stub out of step (%s), then: %s", reason,
                           rsp_session_errmsg(rp->s));
    }
}

int
tgt_qemu_stop(struct tgt_rsp_proc *rp, sw_tid tid)
{
    struct sw_qemu_user *q = &rp->qemu;
    struct sw_proc *p = &rp->base;
    for (int resyncs = 0;; resyncs++) {
        wait_left(q);
        sw_tid v = tid != SW_TID_DEFAULT ? tid : sw_qemu_user_pick(q);
        if (v == SW_TID_DEFAULT)
            return sw_fail(&p->err, SW_ENOENT,
                           "stopping: no guest thread of QEMU process %" PRId64 " takes a signal",
                           q->host_pid);
        int rc = sw_qemu_user_signal(q, v);
        if (rc == SW_ENOENT && tid == SW_TID_DEFAULT && q->nguests > 0) {
            q->nguests = 0; /* a thread of the list is gone: /proc's until the next list */
            continue;
        }
        if (rc == SW_ENOENT)
            return sw_fail(&p->err, rc, "stopping: guest thread %" PRIu64 " is gone", (uint64_t)v);
        if (rc < 0)
            return sw_fail(&p->err, rc, "stopping: %s", q->msg);
        sw_debug(SW_DBG_PKT, "-! SIGINT to guest thread %" PRIu64, (uint64_t)v);
        rsp_session_note_interrupt(rp->s);
        sw_tid prev = q->last_stopped; /* taking the new stop changes it */
        rc = wait_stop(rp);
        char why[sizeof p->err.msg];
        if (rc == SW_EPROTO || rc == SW_ESTUB || rc == SW_EUNSUP) {
            snprintf(why, sizeof why, "%s", p->err.msg);
        } else if (rc < 0) {
            return rc;
        } else if (prev != SW_TID_DEFAULT && prev != q->in_stub &&
                   sw_qemu_user_where(q, prev) == SW_QEMU_IN_STUB) {
            /* The thread stopped before, back in the stub: it came out too
             * late (wait_left), and the two now share the socket. */
            snprintf(why, sizeof why, "thread %" PRIu64 " is in the stub again", (uint64_t)prev);
        } else {
            return 0;
        }
        if (resyncs >= QEMU_RESYNC_TRIES)
            return sw_fail(&p->err, SW_EPROTO, "stopping guest thread %" PRIu64 ": %s (%d times)",
                           (uint64_t)v, why, resyncs + 1);
        if ((rc = tgt_qemu_resync(rp, why)) < 0)
            return rc;
    }
}
