/* rsp/transport_tcp.c -- TCP (HOST:PORT, [V6ADDR]:PORT) and Unix socket transports.
 *
 * Connects without blocking past the caller's timeout (name resolution
 * excepted: getaddrinfo cannot be bounded), then sets TCP_NODELAY since RSP
 * is one small packet per round trip.  Reading and writing are transport.c's.
 */
#include "rsp/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

/* A Unix socket whose listener's backlog is full refuses a non-blocking
 * connect with EAGAIN instead of queueing it; retry at this interval. */
#define UNIX_RETRY_MS 10
/* How long a Unix socket that refuses is taken for one about to listen. */
#define UNIX_LISTEN_GRACE_MS 500

static const char *
connect_cause(int e)
{
    /* The two a user meets most, spelled as gdb users expect to read them. */
    if (e == ECONNREFUSED)
        return "connection refused";
    if (e == ETIMEDOUT)
        return "connection timed out";
    return strerror(e);
}

static int
set_blocking(int fd, bool blocking)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0)
        return -1;
    fl = blocking ? (fl & ~O_NONBLOCK) : (fl | O_NONBLOCK);
    return fcntl(fd, F_SETFL, fl);
}

/* Connect the non-blocking socket FD to ADDR before DEADLINE_US.  Returns 0,
 * or an errno value (ETIMEDOUT when the deadline passed). */
static int
connect_by(int fd, const struct sockaddr *addr, socklen_t addrlen, uint64_t deadline_us,
           int timeout_ms)
{
    uint64_t start_us = sw_now_us();
    for (;;) {
        if (connect(fd, addr, addrlen) == 0)
            return 0;
        int e = errno;
        if (e == EINTR || e == EINPROGRESS)
            break;
        /* QEMU binds its socket, then listens: a connect in between is
         * refused.  A file nothing listens on is refused on and on. */
        bool starting = e == ECONNREFUSED && addr->sa_family == AF_UNIX &&
                        sw_now_us() < start_us + (uint64_t)UNIX_LISTEN_GRACE_MS * 1000;
        if (e != EAGAIN && !starting)
            return e;
        int left = rsp_transport_ms_left(deadline_us, timeout_ms);
        if (left == 0)
            return ETIMEDOUT;
        struct timespec ts = { 0, UNIX_RETRY_MS * 1000000L };
        if (left >= 0 && left < UNIX_RETRY_MS)
            ts.tv_nsec = left * 1000000L;
        nanosleep(&ts, NULL);
    }
    /* In progress: writable means done, SO_ERROR says how. */
    for (;;) {
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };
        int n = poll(&pfd, 1, rsp_transport_ms_left(deadline_us, timeout_ms));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            return ETIMEDOUT;
        int soerr = 0;
        socklen_t len = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
            return errno;
        return soerr;
    }
}

static int
timed_out(struct sw_errbuf *err, const char *name, int timeout_ms)
{
    return sw_fail(err, SW_ETIMEDOUT, "%s: no connection within %d ms", name, timeout_ms);
}

int
rsp_transport_tcp_open(const char *host, const char *port, int timeout_ms,
                       struct rsp_transport **out, struct sw_errbuf *err)
{
    char name[300];
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    uint64_t deadline_us = sw_now_us() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000;

    *out = NULL;
    snprintf(name, sizeof name, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        return sw_fail(err, SW_ECONN, "%s: cannot resolve host: %s", name,
                       gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai));
    }
    int fd = -1, last = 0;
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        last = connect_by(fd, ai->ai_addr, ai->ai_addrlen, deadline_us, timeout_ms);
        if (last == 0)
            break;
        close(fd);
        fd = -1;
        /* Out of time: the next address would get none either. */
        if (last == ETIMEDOUT && rsp_transport_ms_left(deadline_us, timeout_ms) == 0)
            break;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (last == ETIMEDOUT && timeout_ms >= 0)
            return timed_out(err, name, timeout_ms);
        return sw_fail(err, SW_ECONN, "%s: %s", name, connect_cause(last));
    }
    int one = 1;
    if (set_blocking(fd, true) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
        int e = errno;
        close(fd);
        return sw_fail(err, SW_EIO, "%s: setting up the socket: %s", name, strerror(e));
    }
    return rsp_transport_fd_open(fd, name, out, err);
}

int
rsp_transport_unix_open(const char *path, int timeout_ms, struct rsp_transport **out,
                        struct sw_errbuf *err)
{
    char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 8];
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    uint64_t deadline_us = sw_now_us() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000;

    *out = NULL;
    if (strlen(path) >= sizeof sun.sun_path) {
        return sw_fail(err, SW_EINVAL, "unix:%.40s...: path longer than %zu bytes", path,
                       sizeof sun.sun_path - 1);
    }
    snprintf(name, sizeof name, "unix:%s", path);
    memcpy(sun.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return sw_fail(err, SW_EIO, "%s: socket: %s", name, strerror(errno));
    int e = connect_by(fd, (const struct sockaddr *)&sun, sizeof sun, deadline_us, timeout_ms);
    if (e != 0) {
        close(fd);
        if (e == ETIMEDOUT && timeout_ms >= 0)
            return timed_out(err, name, timeout_ms);
        return sw_fail(err, e == ENOENT ? SW_ENOENT : SW_ECONN, "%s: %s", name,
                       e == ECONNREFUSED ? "connection refused" : strerror(e));
    }
    if (set_blocking(fd, true) != 0) {
        e = errno;
        close(fd);
        return sw_fail(err, SW_EIO, "%s: setting up the socket: %s", name, strerror(e));
    }
    return rsp_transport_fd_open(fd, name, out, err);
}
