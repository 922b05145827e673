/* dap/serve.c -- dap_serve_fd: one DAP session over a pair of descriptors.
 *
 * The loop polls the client's descriptor and, while the target runs, the
 * target's notification descriptor (ProcDebug), so a stop becomes a
 * "stopped" event without a request.  Blocking reads and writes; the session
 * itself is dap/session.c's.
 */
#include "dap/dap.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct fd_out {
    int fd;
    bool socket; /* send with MSG_NOSIGNAL: a client gone is an error, not SIGPIPE */
    FILE *log;
};

static int
write_all(void *arg, const void *buf, size_t len)
{
    struct fd_out *o = arg;
    const char *p = buf;
    while (len > 0) {
        ssize_t n = o->socket ? send(o->fd, p, len, MSG_NOSIGNAL) : write(o->fd, p, len);
        if (n < 0 && errno == ENOTSOCK && o->socket) {
            o->socket = false;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (o->log)
                fprintf(o->log, "rspwalk: dap: writing to the client: %s\n",
                        n < 0 ? strerror(errno) : "nothing written");
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int
dap_serve_fd(int in_fd, int out_fd, const struct dap_config *cfg)
{
    struct fd_out out = { .fd = out_fd, .socket = true, .log = cfg ? cfg->log : NULL };
    struct dap_session *s;
    char buf[65536];
    int status = 0;

    if (dap_session_new(cfg, write_all, &out, &s) < 0) {
        if (out.log)
            fprintf(out.log, "rspwalk: dap: starting a session: out of memory\n");
        return -1;
    }
    while (!dap_session_ended(s)) {
        struct pollfd fds[2] = { { .fd = in_fd, .events = POLLIN } };
        int tfd = dap_session_target_fd(s);
        nfds_t n = 1;
        if (tfd >= 0)
            fds[n++] = (struct pollfd){ .fd = tfd, .events = POLLIN };
        if (poll(fds, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            if (out.log)
                fprintf(out.log, "rspwalk: dap: poll: %s\n", strerror(errno));
            status = -1;
            break;
        }
        if (n > 1 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
            dap_session_target_event(s);
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t got = read(in_fd, buf, sizeof buf);
            if (got < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (got < 0 && out.log)
                fprintf(out.log, "rspwalk: dap: reading from the client: %s\n", strerror(errno));
            if (got <= 0) {
                status = got < 0 ? -1 : 0;
                break; /* end of input: the session ends as on disconnect */
            }
            dap_session_feed(s, buf, (size_t)got);
        }
    }
    dap_session_free(s);
    return status;
}
