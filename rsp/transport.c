/* rsp/transport.c -- transport specs, open/close dispatch, the descriptor transport.
 *
 * Parses the TARGET forms of the CLI contract and hands them to the TCP, Unix,
 * serial and pipe constructors; holds the poll()+read() and send() loops they
 * share.  Bytes only: framing is rsp/codec.c's business.
 */
#include "rsp/transport.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

#define SPEC_FORMS "HOST:PORT, [V6ADDR]:PORT, unix:PATH, /dev/ttyX[@BAUD] or |COMMAND"

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

/* Wait until FD is writable again after EAGAIN (a descriptor someone else
 * made non-blocking).  Returns 0 or -1 with errno set. */
static int
wait_writable(int fd)
{
    struct pollfd pfd = { .fd = fd, .events = POLLOUT };
    int n;
    do
        n = poll(&pfd, 1, -1);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -1 : 0;
}

static int
write_loop(struct rsp_transport *t, const void *buf, size_t len, bool sock)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = sock ? send(t->fd, p, len, MSG_NOSIGNAL) : write(t->fd, p, len);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_writable(t->fd) == 0)
                continue;
        }
        if (n == 0 || errno == EPIPE || errno == ECONNRESET || errno == EIO)
            return closed_by_peer(t);
        return sw_fail(&t->err, SW_EIO, "%s: write: %s", t->name, strerror(errno));
    }
    return 0;
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

/* ---- spec parsing ------------------------------------------------------ */

static int
bad_spec(struct sw_errbuf *err, const char *spec, const char *why)
{
    return sw_fail(err, SW_EINVAL, "'%s': %s; expected " SPEC_FORMS, spec, why);
}

/* PORT must be a decimal 1-65535, as getaddrinfo would otherwise take a
 * service name and turn a typo into a confusing resolver error. */
static bool
port_ok(const char *port)
{
    unsigned long v = 0;
    if (*port == '\0' || strlen(port) > 5)
        return false;
    for (const char *c = port; *c; c++) {
        if (*c < '0' || *c > '9')
            return false;
        v = v * 10 + (unsigned long)(*c - '0');
    }
    return v >= 1 && v <= 65535;
}

static int
open_tcp_spec(const char *spec, const char *hostport, int timeout_ms, struct rsp_transport **out,
              struct sw_errbuf *err)
{
    char host[256];
    const char *port;
    size_t hlen;

    if (hostport[0] == '[') {
        const char *close_br = strchr(hostport, ']');
        if (close_br == NULL)
            return bad_spec(err, spec, "no ']' after the IPv6 address");
        if (close_br[1] != ':')
            return bad_spec(err, spec, "no ':PORT' after the ']'");
        hlen = (size_t)(close_br - hostport - 1);
        if (hlen == 0)
            return bad_spec(err, spec, "empty IPv6 address");
        if (hlen >= sizeof host)
            return bad_spec(err, spec, "host name too long");
        memcpy(host, hostport + 1, hlen);
        port = close_br + 2;
    } else {
        const char *colon = strrchr(hostport, ':');
        if (colon == NULL)
            return bad_spec(err, spec, "no ':PORT'");
        hlen = (size_t)(colon - hostport);
        if (memchr(hostport, ':', hlen) != NULL)
            return bad_spec(err, spec, "an IPv6 address needs brackets, [V6ADDR]:PORT");
        if (hlen >= sizeof host)
            return bad_spec(err, spec, "host name too long");
        memcpy(host, hostport, hlen);
        port = colon + 1;
    }
    host[hlen] = '\0';
    if (!port_ok(port)) {
        return sw_fail(err, SW_EINVAL,
                       "'%s': bad port '%s'; expected HOST:PORT with PORT a number 1-65535", spec,
                       port);
    }
    /* ":1234" means the local host, as in gdb's "target remote :1234". */
    return rsp_transport_tcp_open(hlen == 0 ? "localhost" : host, port, timeout_ms, out, err);
}

static int
open_serial_spec(const char *spec, struct rsp_transport **out, struct sw_errbuf *err)
{
    const char *at = strrchr(spec, '@');
    unsigned long baud = 0;

    if (at == NULL)
        return rsp_transport_serial_open(spec, 0, out, err);
    if (at[1] == '\0' || strlen(at + 1) > 9)
        return sw_fail(err, SW_EINVAL, "'%s': bad baud rate '%s'; expected /dev/ttyX@BAUD", spec,
                       at + 1);
    for (const char *c = at + 1; *c; c++) {
        if (*c < '0' || *c > '9')
            return sw_fail(err, SW_EINVAL, "'%s': bad baud rate '%s'; expected /dev/ttyX@BAUD",
                           spec, at + 1);
        baud = baud * 10 + (unsigned long)(*c - '0');
    }
    char *dev = sw_strndup(spec, (size_t)(at - spec));
    if (dev == NULL)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", spec);
    int rc = baud == 0 ? sw_fail(err, SW_EINVAL, "'%s': bad baud rate 0", spec)
                       : rsp_transport_serial_open(dev, (unsigned)baud, out, err);
    sw_free(dev);
    return rc;
}

static int
open_spec(const char *spec, int timeout_ms, struct rsp_transport **out, struct sw_errbuf *err)
{
    if (spec[0] == '|') {
        if (spec[1 + strspn(spec + 1, " \t")] == '\0')
            return bad_spec(err, spec, "no command after '|'");
        return rsp_transport_pipe_open(spec + 1, out, err);
    }
    if (strncmp(spec, "unix:", 5) == 0) {
        if (spec[5] == '\0')
            return bad_spec(err, spec, "no path after 'unix:'");
        return rsp_transport_unix_open(spec + 5, timeout_ms, out, err);
    }
    if (spec[0] == '/')
        return open_serial_spec(spec, out, err);
    /* gdb's own spelling of the same thing. */
    if (strncmp(spec, "tcp:", 4) == 0)
        return open_tcp_spec(spec, spec + 4, timeout_ms, out, err);
    return open_tcp_spec(spec, spec, timeout_ms, out, err);
}

int
rsp_transport_open(const char *spec, int timeout_ms, struct rsp_transport **out,
                   struct sw_errbuf *err)
{
    struct rsp_transport *t = NULL;

    *out = NULL;
    if (spec == NULL || spec[0] == '\0')
        return sw_fail(err, SW_EINVAL, "empty target; expected " SPEC_FORMS);
    int rc = open_spec(spec, timeout_ms, &t, err);
    if (rc != 0)
        return rc;
    /* The name is the spec as the user wrote it, so every later message
     * names what they typed. */
    if (strcmp(t->name, spec) != 0) {
        char *copy = sw_strdup(spec);
        if (copy == NULL) {
            rsp_transport_close(t);
            return sw_fail(err, SW_ENOMEM, "%s: out of memory", spec);
        }
        sw_free(t->name);
        t->name = copy;
    }
    *out = t;
    return 0;
}
