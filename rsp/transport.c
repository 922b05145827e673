/* rsp/transport.c -- the descriptor transport: poll()+read() and send() loops, close.
 *
 * What the TCP, Unix, serial and pipe transports share, and a transport over
 * a descriptor opened elsewhere.  Opening a spec is rsp/transport_open.c's
 * (it calls the constructors, which call this file).  Bytes only: framing is
 * rsp/codec.c's business.
 */
#include "rsp/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

static int fd_write(struct rsp_transport *t, const void *buf, size_t len);
static void fd_close(struct rsp_transport *t);

static const struct rsp_transport_ops sock_ops = {
    .write = rsp_transport_sock_write,
    .read = rsp_transport_fd_read,
    .close = fd_close,
};

static const struct rsp_transport_ops fd_ops = {
    .write = fd_write,
    .read = rsp_transport_fd_read,
    .close = fd_close,
};

int
rsp_transport_fd_new(int fd, const char *name, const struct rsp_transport_ops *ops, size_t size,
                     struct rsp_transport **out, struct sw_errbuf *err)
{
    if (size < sizeof(struct rsp_transport) || ops == NULL) {
        close(fd);
        return sw_fail(err, SW_EINVAL, "%s: bad transport description", name);
    }
    struct rsp_transport *t = sw_calloc(1, size);
    char *copy = sw_strdup(name);
    if (t == NULL || copy == NULL) {
        sw_free(t);
        sw_free(copy);
        close(fd);
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", name);
    }
    t->ops = ops;
    t->fd = fd;
    t->name = copy;
    *out = t;
    return 0;
}

int
rsp_transport_fd_open(int fd, const char *name, struct rsp_transport **out, struct sw_errbuf *err)
{
    char fallback[32];
    struct stat st;

    if (name == NULL) {
        snprintf(fallback, sizeof fallback, "fd %d", fd);
        name = fallback;
    }
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = fd < 0 ? EBADF : errno;
        if (fd >= 0)
            close(fd);
        return sw_fail(err, SW_EINVAL, "%s: %s", name, strerror(e));
    }
    const struct rsp_transport_ops *ops = S_ISSOCK(st.st_mode) ? &sock_ops : &fd_ops;
    return rsp_transport_fd_new(fd, name, ops, sizeof(struct rsp_transport), out, err);
}

int
rsp_transport_ms_left(uint64_t deadline_us, int timeout_ms)
{
    if (timeout_ms < 0)
        return -1;
    uint64_t now = sw_now_us();
    if (now >= deadline_us)
        return 0;
    uint64_t left = (deadline_us - now + 999) / 1000;
    return left > INT_MAX ? INT_MAX : (int)left;
}

static int
closed_by_peer(struct rsp_transport *t)
{
    return sw_fail(&t->err, SW_ECONN, "%s: connection closed by the stub", t->name);
}

int
rsp_transport_fd_read(struct rsp_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got)
{
    uint64_t deadline_us = sw_now_us() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000;

    *got = 0;
    if (cap == 0)
        return sw_fail(&t->err, SW_EINVAL, "%s: read into an empty buffer", t->name);
    for (;;) {
        struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
        int n = poll(&pfd, 1, rsp_transport_ms_left(deadline_us, timeout_ms));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return sw_fail(&t->err, SW_EIO, "%s: poll: %s", t->name, strerror(errno));
        }
        if (n == 0)
            return sw_fail(&t->err, SW_ETIMEDOUT, "%s: nothing received within %d ms", t->name,
                           timeout_ms);
        if (pfd.revents & POLLNVAL)
            return sw_fail(&t->err, SW_EIO, "%s: descriptor %d is not open", t->name, t->fd);
        /* POLLHUP and POLLERR fall through to read(), which tells EOF (or the
         * error) apart from data still buffered before the hang-up. */
        ssize_t r = read(t->fd, buf, cap);
        if (r > 0) {
            *got = (size_t)r;
            return 0;
        }
        if (r == 0)
            return closed_by_peer(t);
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
            continue;
        /* A pty or tty whose other side went away reads EIO on Linux. */
        if (errno == ECONNRESET || errno == EPIPE || errno == EIO)
            return closed_by_peer(t);
        return sw_fail(&t->err, SW_EIO, "%s: read: %s", t->name, strerror(errno));
    }
}

/* Wait until FD is writable, at most until DEADLINE_US (TIMEOUT_MS <= 0:
 * forever).  Returns 1 when writable, 0 at the deadline, -1 with errno. */
static int
wait_writable(int fd, uint64_t deadline_us, int timeout_ms)
{
    struct pollfd pfd = { .fd = fd, .events = POLLOUT };
    int n;
    do
        n = poll(&pfd, 1, rsp_transport_ms_left(deadline_us, timeout_ms > 0 ? timeout_ms : -1));
    while (n < 0 && errno == EINTR);
    return n;
}

/* Never blocks in send() or write(): the socket is written with
 * MSG_DONTWAIT, any other descriptor made non-blocking for the write, and
 * every wait for room is a poll() bounded by t->write_timeout_ms. */
static int
write_loop(struct rsp_transport *t, const void *buf, size_t len, bool sock)
{
    const char *p = buf;
    int tmo = t->write_timeout_ms;
    uint64_t deadline_us = sw_now_us() + (uint64_t)(tmo > 0 ? tmo : 0) * 1000;
    int flags = -1, rc = 0;

    if (!sock && (flags = fcntl(t->fd, F_GETFL)) >= 0 && !(flags & O_NONBLOCK))
        (void)fcntl(t->fd, F_SETFL, flags | O_NONBLOCK);
    while (len > 0) {
        ssize_t n = sock ? send(t->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) : write(t->fd, p, len);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int w = wait_writable(t->fd, deadline_us, tmo);
            if (w > 0)
                continue;
            if (w == 0) {
                rc = sw_fail(&t->err, SW_ETIMEDOUT,
                             "%s: the stub read nothing for %g s (%zu byte%s not sent)", t->name,
                             tmo / 1000.0, len, len == 1 ? "" : "s");
                break;
            }
        }
        if (n == 0 || errno == EPIPE || errno == ECONNRESET || errno == EIO)
            rc = closed_by_peer(t);
        else
            rc = sw_fail(&t->err, SW_EIO, "%s: write: %s", t->name, strerror(errno));
        break;
    }
    if (flags >= 0 && !(flags & O_NONBLOCK))
        (void)fcntl(t->fd, F_SETFL, flags);
    return rc;
}

int
rsp_transport_sock_write(struct rsp_transport *t, const void *buf, size_t len)
{
    return write_loop(t, buf, len, true);
}

static int
fd_write(struct rsp_transport *t, const void *buf, size_t len)
{
    return write_loop(t, buf, len, false);
}

static void
fd_close(struct rsp_transport *t)
{
    if (t->fd >= 0)
        close(t->fd);
    sw_free(t->name);
    sw_free(t);
}

void
rsp_transport_close(struct rsp_transport *t)
{
    if (t != NULL)
        t->ops->close(t);
}
