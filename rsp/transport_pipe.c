/* rsp/transport_pipe.c -- a stub spawned as '|COMMAND' ("target remote | gdbserver - prog").
 *
 * The command runs under /bin/sh -c with its stdin and stdout on one end of a
 * socketpair (so writes can use MSG_NOSIGNAL) and its stderr left alone.
 * Close reaps exactly that child and no other process of the caller.
 */
#include "rsp/transport.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

extern char **environ;

/* How long close() waits for the command to exit after SIGTERM before SIGKILL. */
#define PIPE_REAP_WAIT_MS 2000
/* Polling interval for that wait (waitpid has no timeout). */
#define PIPE_REAP_POLL_MS 10
/* After EOF, how long a read waits for the exit status to name it. */
#define PIPE_STATUS_WAIT_MS 100

struct pipe_transport {
    struct rsp_transport base;
    pid_t pid; /* the child; -1 once reaped */
    int status;
};

static int pipe_read(struct rsp_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got);
static void pipe_close(struct rsp_transport *t);

static const struct rsp_transport_ops pipe_ops = {
    .write = rsp_transport_sock_write,
    .read = pipe_read,
    .close = pipe_close,
};

static void
sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Reap P's child if it has exited, waiting up to WAIT_MS.  True if reaped. */
static bool
reap_within(struct pipe_transport *p, long wait_ms)
{
    for (long waited = 0;; waited += PIPE_REAP_POLL_MS) {
        int status;
        pid_t r = waitpid(p->pid, &status, WNOHANG);
        if (r == p->pid || (r < 0 && errno == ECHILD)) {
            /* ECHILD: someone else (a SIGCHLD handler of the host program)
             * reaped it; it is gone either way. */
            p->status = r == p->pid ? status : -1;
            p->pid = -1;
            return true;
        }
        if (r < 0 && errno != EINTR)
            return false;
        if (waited >= wait_ms)
            return false;
        sleep_ms(PIPE_REAP_POLL_MS);
    }
}

static void
describe_status(int status, char *out, size_t cap)
{
    if (status < 0)
        snprintf(out, cap, "command exited");
    else if (WIFEXITED(status))
        snprintf(out, cap, "command exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, cap, "command killed by signal %d", WTERMSIG(status));
    else
        snprintf(out, cap, "command stopped");
}

static int
pipe_read(struct rsp_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got)
{
    struct pipe_transport *p = (struct pipe_transport *)t;
    char cause[sizeof t->err.msg];
    char how[64] = "";

    int rc = rsp_transport_fd_read(t, buf, cap, timeout_ms, got);
    if (rc == 0)
        return 0;
    /* Quote the command (it has spaces) and say how it ended. */
    size_t skip = strlen(t->name) + 2;
    snprintf(cause, sizeof cause, "%s", strlen(t->err.msg) >= skip ? t->err.msg + skip : "");
    if (rc == SW_ECONN) {
        if (p->pid > 0)
            reap_within(p, PIPE_STATUS_WAIT_MS);
        if (p->pid < 0) {
            how[0] = ' ';
            how[1] = '(';
            describe_status(p->status, how + 2, sizeof how - 3);
            strcat(how, ")");
        }
    }
    return sw_fail(&t->err, rc, "'%s': %s%s", t->name, cause, how);
}

static void
pipe_close(struct rsp_transport *t)
{
    struct pipe_transport *p = (struct pipe_transport *)t;

    /* EOF on its stdin is how a pipe stub is usually told to go, but gdbserver
     * without --once answers EOF on stdio by "reopening" it in a tight loop that
     * prints two lines per try (hundreds of thousands in milliseconds).  So our
     * own process group gets SIGTERM, and the link is closed only once our child is gone (a
     * gdbserver --attach leaves the program running: the kernel detaches the tracees of a tracer
     * that dies). */
    pid_t group = p->pid;
    if (p->pid > 0) {
        kill(-group, SIGTERM);             /* the command's own process group: shell and stub */
        reap_within(p, PIPE_REAP_WAIT_MS); /* the link stays open meanwhile: no EOF */
    }
    if (t->fd >= 0)
        close(t->fd);
    if (p->pid > 0) {
        kill(-group, SIGKILL);
        while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    sw_free(t->name);
    sw_free(t);
}

pid_t
rsp_transport_pipe_pid(const struct rsp_transport *t)
{
    if (t == NULL || t->ops != &pipe_ops)
        return -1;
    return ((const struct pipe_transport *)t)->pid;
}

int
rsp_transport_pipe_open(const char *command, struct rsp_transport **out, struct sw_errbuf *err)
{
    struct rsp_transport *t = NULL;
    int sv[2];

    *out = NULL;
    size_t len = strlen(command);
    char *name = sw_malloc(len + 2);
    if (name == NULL)
        return sw_fail(err, SW_ENOMEM, "'|%s': out of memory", command);
    name[0] = '|';
    memcpy(name + 1, command, len + 1);

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        int e = errno;
        sw_free(name);
        return sw_fail(err, SW_EIO, "'|%s': socketpair: %s", command, strerror(e));
    }
    /* Everything the child needs is built before fork: between fork and
     * exec only async-signal-safe calls are allowed. */
    char *argv[] = { (char *)"sh", (char *)"-c", (char *)command, NULL };
    sigset_t none;
    sigemptyset(&none);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        sw_free(name);
        return sw_fail(err, SW_EIO, "'|%s': fork: %s", command, strerror(e));
    }
    if (pid == 0) {
        /* The stub starts with default signal handling whatever the host
         * program blocked or ignored (an ignored SIGPIPE survives exec). */
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigaction(SIGPIPE, &dfl, NULL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* Its own process group: the shell may fork the stub rather than
         * exec it, and close() must reach the stub, not only the shell. */
        setpgid(0, 0);
        /* dup2 clears FD_CLOEXEC on the copies; sv[1] itself closes on exec. */
        if (dup2(sv[1], STDIN_FILENO) < 0 || dup2(sv[1], STDOUT_FILENO) < 0)
            _exit(127);
        execve("/bin/sh", argv, environ);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: whichever of parent and child runs first */
    close(sv[1]);

    int rc = rsp_transport_fd_new(sv[0], name, &pipe_ops, sizeof(struct pipe_transport), &t, err);
    sw_free(name);
    if (rc != 0) {
        /* sv[0] is closed, so the command sees EOF; do not leave a zombie. */
        kill(-pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return rc;
    }
    ((struct pipe_transport *)t)->pid = pid;
    *out = t;
    return 0;
}
