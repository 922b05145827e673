/* tests/unit/rsp/test_transport.c -- the byte transports: spec parsing, TCP, Unix, pipe, serial.
 *
 * Talks only to loopback listeners, socketpairs, children and pseudo-terminals
 * this test creates; never to another host.  Each failure case checks the
 * code and the words of the message a user would read.
 */
/* posix_openpt, grantpt, unlockpt, ptsname and setitimer are XSI. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "rsp/transport.h"
#include "util/util.h"

/* Bounds for timing checks: a timeout must not fire early, and must fire
 * within this slack even on a loaded CI machine. */
#define LATE_SLACK_MS 1500

/* ---- helpers ------------------------------------------------------------ */

static int
elapsed_ms(uint64_t start_us)
{
    return (int)((sw_now_us() - start_us) / 1000);
}

static void
assert_msg_has(const struct sw_errbuf *e, const char *part)
{
    if (strstr(e->msg, part) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", e->msg, part);
}

/* A listening TCP socket on LOOP (127.0.0.1 or ::1), port chosen by the
 * kernel; returns the fd (or -1 if the family is unavailable) and *PORT. */
static int
tcp_listener(int family, int backlog, unsigned *port)
{
    struct sockaddr_storage ss;
    socklen_t len;

    memset(&ss, 0, sizeof ss);
    if (family == AF_INET) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        sin->sin_family = AF_INET;
        sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *sin;
    } else {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
        sin6->sin6_family = AF_INET6;
        sin6->sin6_addr = in6addr_loopback;
        len = sizeof *sin6;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, backlog) != 0) {
        close(fd);
        return -1;
    }
    len = sizeof ss;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

/* Read exactly N bytes through T, with a generous per-read timeout. */
static void
read_exactly(struct rsp_transport *t, char *buf, size_t n)
{
    size_t have = 0;
    while (have < n) {
        size_t got = 0;
        int rc = t->ops->read(t, buf + have, n - have, 5000, &got);
        if (rc != 0)
            fail_msg("read: %s", t->err.msg);
        assert_true(got >= 1 && got <= n - have);
        have += got;
    }
}

/* Send PING through T to the peer descriptor PEER and PONG back. */
static void
check_round_trip(struct rsp_transport *t, int peer)
{
    char buf[64];

    assert_int_equal(t->ops->write(t, "$qSupported#37", 14), 0);
    size_t have = 0;
    while (have < 14) {
        ssize_t n = read(peer, buf + have, sizeof buf - have);
        assert_true(n > 0);
        have += (size_t)n;
    }
    assert_memory_equal(buf, "$qSupported#37", 14);
    assert_int_equal(write(peer, "+$OK#9a", 7), 7);
    read_exactly(t, buf, 7);
    assert_memory_equal(buf, "+$OK#9a", 7);
}

static char tmpdir[64];

static void
make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rspwalk-transport-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
}

static void
remove_tmpdir(const char *file)
{
    char path[100];
    if (file != NULL) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, file);
        unlink(path);
    }
    rmdir(tmpdir);
}

static bool
child_is_gone(pid_t pid)
{
    errno = 0;
    return waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD;
}

/* ---- spec parsing ------------------------------------------------------- */

static void
expect_bad_spec(const char *spec, const char *part)
{
    struct rsp_transport *t = (struct rsp_transport *)1;
    struct sw_errbuf err = { 0 };

    assert_int_equal(rsp_transport_open(spec, 1000, &t, &err), SW_EINVAL);
    assert_null(t);
    assert_int_equal(err.code, SW_EINVAL);
    assert_msg_has(&err, part);
}

static void
test_spec_empty_is_einval_listing_forms(void **state)
{
    (void)state;
    expect_bad_spec("", "expected HOST:PORT, [V6ADDR]:PORT, unix:PATH");
}

static void
test_spec_port_without_host_colon_is_einval(void **state)
{
    (void)state;
    expect_bad_spec("1234", "'1234': no ':PORT'; expected HOST:PORT");
}

static void
test_spec_host_with_empty_port_is_einval(void **state)
{
    (void)state;
    expect_bad_spec("host:", "'host:': bad port ''; expected HOST:PORT with PORT a number");
}

static void
test_spec_host_with_word_port_is_einval(void **state)
{
    (void)state;
    expect_bad_spec("host:notaport", "bad port 'notaport'; expected HOST:PORT");
}

static void
test_spec_port_out_of_range_is_einval(void **state)
{
    (void)state;
    expect_bad_spec("localhost:65536", "bad port '65536'");
    expect_bad_spec("localhost:0", "bad port '0'");
    expect_bad_spec("localhost:-1", "bad port '-1'");
}

static void
test_spec_bare_ipv6_is_einval_asking_for_brackets(void **state)
{
    (void)state;
    expect_bad_spec("::1:1234", "needs brackets, [V6ADDR]:PORT");
}

static void
test_spec_bracket_forms_without_port_are_einval(void **state)
{
    (void)state;
    expect_bad_spec("[::1:1234", "no ']'");
    expect_bad_spec("[::1]", "no ':PORT' after the ']'");
    expect_bad_spec("[::1]:", "bad port ''");
    expect_bad_spec("[]:1234", "empty IPv6 address");
}

static void
test_spec_unix_and_pipe_without_argument_are_einval(void **state)
{
    (void)state;
    expect_bad_spec("unix:", "no path after 'unix:'");
    expect_bad_spec("|", "no command after '|'");
    expect_bad_spec("|  ", "no command after '|'");
}

static void
test_spec_serial_with_word_baud_is_einval(void **state)
{
    (void)state;
    expect_bad_spec("/dev/ttyS0@fast", "bad baud rate 'fast'; expected /dev/ttyX@BAUD");
    expect_bad_spec("/dev/ttyS0@", "bad baud rate ''");
}

/* ---- TCP ------------------------------------------------------------------ */

static void
open_tcp_and_round_trip(int family, const char *prefix)
{
    char spec[64];
    unsigned port;
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    int lfd = tcp_listener(family, 4, &port);
    assert_true(lfd >= 0);
    snprintf(spec, sizeof spec, "%s%u", prefix, port);
    if (rsp_transport_open(spec, 2000, &t, &err) != 0)
        fail_msg("%s: %s", spec, err.msg);
    int peer = accept(lfd, NULL, NULL);
    assert_true(peer >= 0);

    assert_string_equal(t->name, spec);
    assert_true(t->fd >= 0);
    int nodelay = 0;
    socklen_t len = sizeof nodelay;
    assert_int_equal(getsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
    assert_int_not_equal(nodelay, 0);
    check_round_trip(t, peer);

    rsp_transport_close(t);
    close(peer);
    close(lfd);
}

static void
test_tcp_ipv4_loopback_connects_with_nodelay_and_carries_bytes(void **state)
{
    (void)state;
    open_tcp_and_round_trip(AF_INET, "127.0.0.1:");
}

static void
test_tcp_colon_port_means_localhost(void **state)
{
    (void)state;
    /* The listener is IPv4 only: if "localhost" resolves to ::1 first, the
     * refused ::1 attempt must fall through to 127.0.0.1. */
    open_tcp_and_round_trip(AF_INET, ":");
}

static void
test_tcp_localhost_name_resolves_and_connects(void **state)
{
    (void)state;
    open_tcp_and_round_trip(AF_INET, "localhost:");
}

static void
test_tcp_bracketed_ipv6_loopback_connects_or_fails_cleanly(void **state)
{
    (void)state;
    unsigned port;
    int lfd = tcp_listener(AF_INET6, 4, &port);
    if (lfd >= 0) {
        close(lfd);
        open_tcp_and_round_trip(AF_INET6, "[::1]:");
        open_tcp_and_round_trip(AF_INET6, "tcp:[::1]:");
        return;
    }
    /* No IPv6 loopback on this host: the failure must still be one clean line. */
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };
    int rc = rsp_transport_open("[::1]:1", 1000, &t, &err);
    assert_int_equal(rc, SW_ECONN);
    assert_null(t);
    assert_msg_has(&err, "[::1]:1: ");
    assert_null(strchr(err.msg, '\n'));
}

static void
test_tcp_closed_port_is_econn_connection_refused(void **state)
{
    (void)state;
    char spec[64], want[96];
    unsigned port;
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    int lfd = tcp_listener(AF_INET, 1, &port);
    assert_true(lfd >= 0);
    close(lfd);
    snprintf(spec, sizeof spec, "127.0.0.1:%u", port);
    assert_int_equal(rsp_transport_open(spec, 2000, &t, &err), SW_ECONN);
    assert_null(t);
    snprintf(want, sizeof want, "%s: connection refused", spec);
    assert_string_equal(err.msg, want);
}

static void
test_tcp_unresolvable_host_is_econn_naming_host(void **state)
{
    (void)state;
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    /* RFC 6761: .invalid never resolves. */
    assert_int_equal(rsp_transport_open("nosuchhost.invalid:1234", 2000, &t, &err), SW_ECONN);
    assert_null(t);
    assert_msg_has(&err, "nosuchhost.invalid:1234: cannot resolve host: ");
}

static void
test_tcp_full_backlog_times_out_within_bound(void **state)
{
    (void)state;
    unsigned port;
    int fillers[32];
    size_t nfill = 0;
    char spec[64], want[96];

    /* A listener that never accepts, with the smallest backlog: once its
     * queue is full, Linux drops further SYNs and a connect just waits. */
    int lfd = tcp_listener(AF_INET, 0, &port);
    assert_true(lfd >= 0);
    snprintf(spec, sizeof spec, "127.0.0.1:%u", port);
    bool full = false;
    while (!full && nfill < sizeof fillers / sizeof fillers[0]) {
        struct rsp_transport *probe = NULL;
        struct sw_errbuf err = { 0 };
        int rc = rsp_transport_open(spec, 100, &probe, &err);
        if (rc == 0) {
            fillers[nfill++] = probe->fd;
            probe->fd = -1;
            rsp_transport_close(probe);
        } else {
            assert_int_equal(rc, SW_ETIMEDOUT);
            full = true;
        }
    }
    assert_true(full);

    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };
    uint64_t start = sw_now_us();
    assert_int_equal(rsp_transport_open(spec, 300, &t, &err), SW_ETIMEDOUT);
    int ms = elapsed_ms(start);
    assert_null(t);
    assert_in_range(ms, 290, 300 + LATE_SLACK_MS);
    snprintf(want, sizeof want, "%s: no connection within 300 ms", spec);
    assert_string_equal(err.msg, want);

    for (size_t i = 0; i < nfill; i++)
        close(fillers[i]);
    close(lfd);
}

/* ---- the descriptor transport: read and write semantics ------------------- */

static struct rsp_transport *
pair_transport(int *peer)
{
    int sv[2];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    assert_int_equal(rsp_transport_fd_open(sv[0], "pair", &t, &err), 0);
    assert_int_equal(t->fd, sv[0]);
    *peer = sv[1];
    return t;
}

static void
test_read_with_nothing_sent_is_etimedout_within_bounds(void **state)
{
    (void)state;
    int peer;
    struct rsp_transport *t = pair_transport(&peer);
    char buf[8];
    size_t got = 99;

    uint64_t start = sw_now_us();
    assert_int_equal(t->ops->read(t, buf, sizeof buf, 150, &got), SW_ETIMEDOUT);
    int ms = elapsed_ms(start);
    assert_int_equal(got, 0);
    assert_in_range(ms, 145, 150 + LATE_SLACK_MS);
    assert_string_equal(t->err.msg, "pair: nothing received within 150 ms");
    assert_int_equal(t->err.code, SW_ETIMEDOUT);

    assert_int_equal(t->ops->read(t, buf, sizeof buf, 0, &got), SW_ETIMEDOUT);
    rsp_transport_close(t);
    close(peer);
}

static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void
test_read_interrupted_by_signal_keeps_waiting_for_the_full_timeout(void **state)
{
    (void)state;
    int peer;
    struct rsp_transport *t = pair_transport(&peer);
    struct sigaction sa, old;
    char buf[8];
    size_t got;

    /* No SA_RESTART: poll() returns EINTR, as it would in a program with a
     * SIGCHLD or SIGWINCH handler. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct itimerval it = { .it_interval = { 0, 40000 }, .it_value = { 0, 40000 } };
    alarms = 0;
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);

    uint64_t start = sw_now_us();
    int rc = t->ops->read(t, buf, sizeof buf, 300, &got);
    int ms = elapsed_ms(start);

    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    assert_int_equal(rc, SW_ETIMEDOUT);
    assert_true(alarms >= 2);
    assert_in_range(ms, 295, 300 + LATE_SLACK_MS);
    rsp_transport_close(t);
    close(peer);
}

static void
test_read_returns_available_bytes_up_to_cap(void **state)
{
    (void)state;
    int peer;
    struct rsp_transport *t = pair_transport(&peer);
    char buf[4];
    size_t got = 0;

    assert_int_equal(write(peer, "abcdef", 6), 6);
    assert_int_equal(t->ops->read(t, buf, sizeof buf, -1, &got), 0);
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "abcd", 4);
    assert_int_equal(t->ops->read(t, buf, sizeof buf, 1000, &got), 0);
    assert_int_equal(got, 2);
    assert_memory_equal(buf, "ef", 2);
    rsp_transport_close(t);
    close(peer);
}

static void
test_read_after_peer_close_is_econn_after_buffered_bytes(void **state)
{
    (void)state;
    int peer;
    struct rsp_transport *t = pair_transport(&peer);
    char buf[8];
    size_t got = 0;

    assert_int_equal(write(peer, "+", 1), 1);
    close(peer);
    assert_int_equal(t->ops->read(t, buf, sizeof buf, 1000, &got), 0);
    assert_int_equal(got, 1);
    assert_int_equal(t->ops->read(t, buf, sizeof buf, 1000, &got), SW_ECONN);
    assert_int_equal(got, 0);
    assert_string_equal(t->err.msg, "pair: connection closed by the stub");
    rsp_transport_close(t);
}

static void
test_write_to_closed_peer_is_econn_not_sigpipe(void **state)
{
    (void)state;
    int peer;
    struct rsp_transport *t = pair_transport(&peer);
    void (*old)(int) = signal(SIGPIPE, SIG_DFL);

    close(peer);
    /* With the default SIGPIPE action this process would die here unless
     * the transport sends with MSG_NOSIGNAL. */
    assert_int_equal(t->ops->write(t, "$g#67", 5), SW_ECONN);
    assert_msg_has(&t->err, "pair: connection closed by the stub");
    signal(SIGPIPE, old);
    rsp_transport_close(t);
}

static void
test_fd_open_of_bad_descriptor_is_einval(void **state)
{
    (void)state;
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    assert_int_equal(rsp_transport_fd_open(-1, "nothing", &t, &err), SW_EINVAL);
    assert_null(t);
    assert_msg_has(&err, "nothing: Bad file descriptor");
}

static void
test_fd_open_allocation_failure_is_enomem_and_closes_fd(void **state)
{
    (void)state;
    int sv[2];

    for (unsigned long n = 1; n <= 2; n++) {
        struct rsp_transport *t = NULL;
        struct sw_errbuf err = { 0 };
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        sw_test_fail_alloc_at(n);
        assert_int_equal(rsp_transport_fd_open(sv[0], "pair", &t, &err), SW_ENOMEM);
        sw_test_fail_alloc_at(0);
        assert_null(t);
        assert_string_equal(err.msg, "pair: out of memory");
        errno = 0;
        assert_int_equal(fcntl(sv[0], F_GETFD), -1);
        assert_int_equal(errno, EBADF);
        close(sv[1]);
    }
}

static void
test_pipe_pid_of_other_transport_is_minus_one(void **state)
{
    (void)state;
    int peer;
    struct rsp_transport *t = pair_transport(&peer);

    assert_int_equal(rsp_transport_pipe_pid(t), -1);
    assert_int_equal(rsp_transport_pipe_pid(NULL), -1);
    rsp_transport_close(t);
    close(peer);
    rsp_transport_close(NULL);
}

/* ---- Unix sockets --------------------------------------------------------- */

static int
unix_listener(const char *path, int backlog)
{
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
    if (backlog >= 0)
        assert_int_equal(listen(fd, backlog), 0);
    return fd;
}

static void
test_unix_socket_in_temp_dir_connects_and_carries_bytes(void **state)
{
    (void)state;
    char path[100], spec[160];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    make_tmpdir();
    snprintf(path, sizeof path, "%s/stub.sock", tmpdir);
    snprintf(spec, sizeof spec, "unix:%s", path);
    int lfd = unix_listener(path, 4);
    if (rsp_transport_open(spec, 2000, &t, &err) != 0)
        fail_msg("%s", err.msg);
    int peer = accept(lfd, NULL, NULL);
    assert_true(peer >= 0);
    assert_string_equal(t->name, spec);
    check_round_trip(t, peer);
    rsp_transport_close(t);
    close(peer);
    close(lfd);
    remove_tmpdir("stub.sock");
}

static void
test_unix_missing_path_is_enoent_naming_path(void **state)
{
    (void)state;
    char spec[160], want[200];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    make_tmpdir();
    snprintf(spec, sizeof spec, "unix:%s/absent", tmpdir);
    assert_int_equal(rsp_transport_open(spec, 1000, &t, &err), SW_ENOENT);
    assert_null(t);
    snprintf(want, sizeof want, "%s: No such file or directory", spec);
    assert_string_equal(err.msg, want);
    remove_tmpdir(NULL);
}

static void
test_unix_socket_without_listener_is_connection_refused(void **state)
{
    (void)state;
    char path[100], spec[160], want[200];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    make_tmpdir();
    snprintf(path, sizeof path, "%s/dead.sock", tmpdir);
    snprintf(spec, sizeof spec, "unix:%s", path);
    int fd = unix_listener(path, -1); /* bound, never listening */
    assert_int_equal(rsp_transport_open(spec, 1000, &t, &err), SW_ECONN);
    snprintf(want, sizeof want, "%s: connection refused", spec);
    assert_string_equal(err.msg, want);
    close(fd);
    remove_tmpdir("dead.sock");
}

static void
test_unix_full_backlog_times_out_within_bound(void **state)
{
    (void)state;
    char path[100], spec[160], want[200];
    int fillers[64];
    size_t nfill = 0;

    make_tmpdir();
    snprintf(path, sizeof path, "%s/busy.sock", tmpdir);
    snprintf(spec, sizeof spec, "unix:%s", path);
    int lfd = unix_listener(path, 0);
    /* Fill the never-accepting listener's queue until connects would block. */
    for (;;) {
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
        assert_true(nfill < sizeof fillers / sizeof fillers[0]);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
        assert_true(fd >= 0);
        if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
            assert_int_equal(errno, EAGAIN);
            close(fd);
            break;
        }
        fillers[nfill++] = fd;
    }

    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };
    uint64_t start = sw_now_us();
    assert_int_equal(rsp_transport_open(spec, 200, &t, &err), SW_ETIMEDOUT);
    int ms = elapsed_ms(start);
    assert_null(t);
    assert_in_range(ms, 195, 200 + LATE_SLACK_MS);
    snprintf(want, sizeof want, "%s: no connection within 200 ms", spec);
    assert_string_equal(err.msg, want);

    for (size_t i = 0; i < nfill; i++)
        close(fillers[i]);
    close(lfd);
    remove_tmpdir("busy.sock");
}

static void
test_unix_path_longer_than_sun_path_is_einval(void **state)
{
    (void)state;
    char spec[300];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    memcpy(spec, "unix:/", 6);
    memset(spec + 6, 'x', 200);
    spec[206] = '\0';
    assert_int_equal(rsp_transport_open(spec, 1000, &t, &err), SW_EINVAL);
    assert_msg_has(&err, "path longer than 107 bytes");
}

/* ---- pipe to a command ---------------------------------------------------- */

static struct rsp_transport *
open_pipe(const char *spec)
{
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };
    if (rsp_transport_open(spec, 1000, &t, &err) != 0)
        fail_msg("%s: %s", spec, err.msg);
    assert_string_equal(t->name, spec);
    assert_true(t->fd >= 0);
    assert_true(rsp_transport_pipe_pid(t) > 0);
    return t;
}

static void
test_pipe_cat_echoes_bytes_and_close_reaps_it(void **state)
{
    (void)state;
    char buf[16];
    struct rsp_transport *t = open_pipe("|cat");
    pid_t pid = rsp_transport_pipe_pid(t);

    assert_int_equal(t->ops->write(t, "$qC#b4", 6), 0);
    read_exactly(t, buf, 6);
    assert_memory_equal(buf, "$qC#b4", 6);
    uint64_t start = sw_now_us();
    rsp_transport_close(t);
    /* cat exits on EOF at once: close must not sit out its full wait. */
    assert_true(elapsed_ms(start) < 1000);
    assert_true(child_is_gone(pid));
}

static void
test_pipe_command_exit_is_econn_naming_status_and_reaped(void **state)
{
    (void)state;
    char buf[8];
    size_t got;
    struct rsp_transport *t = open_pipe("|exit 3");
    pid_t pid = rsp_transport_pipe_pid(t);

    assert_int_equal(t->ops->read(t, buf, sizeof buf, 5000, &got), SW_ECONN);
    assert_string_equal(t->err.msg,
                        "'|exit 3': connection closed by the stub (command exited with status 3)");
    rsp_transport_close(t);
    assert_true(child_is_gone(pid));
}

static void
test_pipe_missing_program_is_econn_with_status_127(void **state)
{
    (void)state;
    char buf[8];
    size_t got;
    struct rsp_transport *t = open_pipe("|/nonexistent/gdbserver - prog 2>/dev/null");

    assert_int_equal(t->ops->read(t, buf, sizeof buf, 5000, &got), SW_ECONN);
    assert_msg_has(&t->err, "'|/nonexistent/gdbserver - prog 2>/dev/null': connection closed");
    assert_msg_has(&t->err, "status 127");
    rsp_transport_close(t);
}

static void
test_pipe_read_timeout_message_quotes_command(void **state)
{
    (void)state;
    char buf[8];
    size_t got;
    struct rsp_transport *t = open_pipe("|cat");

    assert_int_equal(t->ops->read(t, buf, sizeof buf, 50, &got), SW_ETIMEDOUT);
    assert_string_equal(t->err.msg, "'|cat': nothing received within 50 ms");
    rsp_transport_close(t);
}

static void
test_pipe_large_write_arrives_whole(void **state)
{
    (void)state;
    enum { LEN = 1 << 20 };
    char *big = calloc(1, LEN);
    char buf[32];
    size_t have = 0;
    struct rsp_transport *t = open_pipe("|wc -c");

    assert_non_null(big);
    /* More than a socket buffer: the write loop must carry on after short writes. */
    assert_int_equal(t->ops->write(t, big, LEN), 0);
    assert_int_equal(shutdown(t->fd, SHUT_WR), 0);
    for (;;) {
        size_t got = 0;
        int rc = t->ops->read(t, buf + have, sizeof buf - 1 - have, 5000, &got);
        if (rc == SW_ECONN)
            break;
        assert_int_equal(rc, 0);
        have += got;
    }
    buf[have] = '\0';
    assert_int_equal(strtol(buf, NULL, 10), LEN);
    rsp_transport_close(t);
    free(big);
}

static void
sleep_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void
test_pipe_close_terminates_command_that_ignores_eof_at_once(void **state)
{
    (void)state;
    struct rsp_transport *t = open_pipe("|exec sleep 30");
    pid_t pid = rsp_transport_pipe_pid(t);

    uint64_t start = sw_now_us();
    rsp_transport_close(t);
    int ms = elapsed_ms(start);
    assert_in_range(ms, 0, 500);
    assert_true(child_is_gone(pid));
}

static void
test_pipe_close_kills_command_that_ignores_sigterm_after_bounded_wait(void **state)
{
    (void)state;
    /* An ignored signal stays ignored across exec. */
    struct rsp_transport *t = open_pipe("|trap '' TERM; echo ready; exec sleep 30");
    pid_t pid = rsp_transport_pipe_pid(t);
    char buf[8];
    size_t got = 0;
    assert_int_equal(t->ops->read(t, buf, sizeof buf, 5000, &got), 0); /* the trap is set */

    uint64_t start = sw_now_us();
    rsp_transport_close(t);
    int ms = elapsed_ms(start);
    assert_in_range(ms, 1900, 2000 + LATE_SLACK_MS);
    assert_true(child_is_gone(pid));
}

static void
test_pipe_close_also_ends_what_the_shell_forked(void **state)
{
    (void)state;
    /* "sleep 30; true": the shell forks sleep instead of exec'ing it, as dash
     * did with gdbserver (left spinning on EOF when only the shell was killed). */
    char path[64];
    snprintf(path, sizeof path, "/tmp/rspwalk-pipe-test.%d", (int)getpid());
    char cmd[160];
    snprintf(cmd, sizeof cmd, "|sleep 30 & echo $! > %s; wait", path);
    struct rsp_transport *t = open_pipe(cmd);
    pid_t grandchild = 0;
    for (int i = 0; i < 200 && grandchild <= 0; i++) {
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            if (fscanf(f, "%d", &grandchild) != 1)
                grandchild = 0;
            fclose(f);
        }
        if (grandchild <= 0)
            sleep_ms(10);
    }
    assert_true(grandchild > 0);
    assert_int_equal(kill(grandchild, 0), 0);
    rsp_transport_close(t);
    int alive = 1;
    for (int i = 0; i < 100 && alive; i++) {
        /* Reparented to init (which may not reap here): gone or a zombie. */
        char stat[64], st = '?';
        snprintf(stat, sizeof stat, "/proc/%d/stat", (int)grandchild);
        FILE *f = fopen(stat, "r");
        if (f == NULL)
            alive = 0;
        else {
            if (fscanf(f, "%*d %*s %c", &st) == 1 && st == 'Z')
                alive = 0;
            fclose(f);
        }
        if (alive)
            sleep_ms(10);
    }
    unlink(path);
    assert_false(alive);
}

static void
test_pipe_close_leaves_other_children_running(void **state)
{
    (void)state;
    pid_t other = fork();
    assert_true(other >= 0);
    if (other == 0) {
        pause();
        _exit(0);
    }
    struct rsp_transport *t = open_pipe("|cat");
    pid_t pid = rsp_transport_pipe_pid(t);
    rsp_transport_close(t);
    assert_true(child_is_gone(pid));

    /* Our own child: neither reaped nor signalled by the transport. */
    assert_int_equal(waitpid(other, NULL, WNOHANG), 0);
    assert_int_equal(kill(other, 0), 0);
    int status;
    assert_int_equal(kill(other, SIGTERM), 0);
    assert_int_equal(waitpid(other, &status, 0), other);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
}

static void
test_pipe_allocation_failure_is_enomem_and_leaves_no_child(void **state)
{
    (void)state;
    for (unsigned long n = 1; n <= 3; n++) {
        struct rsp_transport *t = NULL;
        struct sw_errbuf err = { 0 };
        sw_test_fail_alloc_at(n);
        int rc = rsp_transport_pipe_open("cat", &t, &err);
        sw_test_fail_alloc_at(0);
        assert_int_equal(rc, SW_ENOMEM);
        assert_null(t);
        assert_msg_has(&err, "out of memory");
        errno = 0;
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
    }
}

/* ---- serial, on a pseudo-terminal ---------------------------------------- */

static int
open_pty_master(char *slave, size_t cap)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    const char *name = ptsname(m);
    assert_non_null(name);
    snprintf(slave, cap, "%s", name);
    return m;
}

static void
test_serial_pty_slave_is_raw_at_requested_baud_and_carries_bytes(void **state)
{
    (void)state;
    char slave[128], spec[160], buf[16];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };
    struct termios tio;

    int m = open_pty_master(slave, sizeof slave);
    snprintf(spec, sizeof spec, "%s@921600", slave);
    if (rsp_transport_open(spec, 1000, &t, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(t->name, spec);

    assert_int_equal(tcgetattr(t->fd, &tio), 0);
    assert_int_equal(cfgetospeed(&tio), B921600);
    assert_int_equal(tio.c_lflag & (ICANON | ECHO | ISIG), 0);
    assert_int_equal(tio.c_oflag & OPOST, 0);

    /* Bytes a cooked tty would change: newline, CR, ^C, ^D. */
    static const char raw[] = "$T05\n\r\x03\x04#00";
    assert_int_equal(write(m, raw, sizeof raw - 1), (ssize_t)(sizeof raw - 1));
    read_exactly(t, buf, sizeof raw - 1);
    assert_memory_equal(buf, raw, sizeof raw - 1);

    assert_int_equal(t->ops->write(t, "+\n", 2), 0);
    size_t have = 0;
    while (have < 2) {
        ssize_t n = read(m, buf + have, sizeof buf - have);
        assert_true(n > 0);
        have += (size_t)n;
    }
    assert_int_equal(have, 2);
    assert_memory_equal(buf, "+\n", 2);

    rsp_transport_close(t);
    close(m);
}

static void
test_serial_without_baud_uses_115200(void **state)
{
    (void)state;
    char slave[128];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };
    struct termios tio;

    int m = open_pty_master(slave, sizeof slave);
    if (rsp_transport_open(slave, 1000, &t, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(t->name, slave);
    assert_int_equal(tcgetattr(t->fd, &tio), 0);
    assert_int_equal(cfgetispeed(&tio), B115200);
    rsp_transport_close(t);
    close(m);
}

static void
test_serial_hangup_of_other_side_is_econn(void **state)
{
    (void)state;
    char slave[128], buf[8];
    size_t got;
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    int m = open_pty_master(slave, sizeof slave);
    assert_int_equal(rsp_transport_serial_open(slave, 9600, &t, &err), 0);
    close(m);
    assert_int_equal(t->ops->read(t, buf, sizeof buf, 1000, &got), SW_ECONN);
    assert_msg_has(&t->err, "connection closed by the stub");
    rsp_transport_close(t);
}

static void
test_serial_missing_device_is_enoent_naming_it(void **state)
{
    (void)state;
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    assert_int_equal(rsp_transport_open("/dev/rspwalk-no-such-tty@9600", 1000, &t, &err),
                     SW_ENOENT);
    assert_null(t);
    assert_string_equal(err.msg, "/dev/rspwalk-no-such-tty: No such file or directory");
}

static void
test_serial_unsupported_baud_is_einval_naming_it(void **state)
{
    (void)state;
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    /* Checked before the device is opened, so the message is about the rate. */
    assert_int_equal(rsp_transport_open("/dev/rspwalk-no-such-tty@12345", 1000, &t, &err),
                     SW_EINVAL);
    assert_null(t);
    assert_msg_has(&err, "/dev/rspwalk-no-such-tty@12345: unsupported baud rate 12345");
    assert_msg_has(&err, "expected one of 1200, ");
    assert_msg_has(&err, "115200");
}

static void
test_serial_regular_file_is_einval_not_a_terminal(void **state)
{
    (void)state;
    char path[100];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };

    make_tmpdir();
    snprintf(path, sizeof path, "%s/plain", tmpdir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rsp_transport_open(path, 1000, &t, &err), SW_EINVAL);
    assert_msg_has(&err, "/plain: not a terminal device");
    remove_tmpdir("plain");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_empty_is_einval_listing_forms),
        cmocka_unit_test(test_spec_port_without_host_colon_is_einval),
        cmocka_unit_test(test_spec_host_with_empty_port_is_einval),
        cmocka_unit_test(test_spec_host_with_word_port_is_einval),
        cmocka_unit_test(test_spec_port_out_of_range_is_einval),
        cmocka_unit_test(test_spec_bare_ipv6_is_einval_asking_for_brackets),
        cmocka_unit_test(test_spec_bracket_forms_without_port_are_einval),
        cmocka_unit_test(test_spec_unix_and_pipe_without_argument_are_einval),
        cmocka_unit_test(test_spec_serial_with_word_baud_is_einval),
        cmocka_unit_test(test_tcp_ipv4_loopback_connects_with_nodelay_and_carries_bytes),
        cmocka_unit_test(test_tcp_colon_port_means_localhost),
        cmocka_unit_test(test_tcp_localhost_name_resolves_and_connects),
        cmocka_unit_test(test_tcp_bracketed_ipv6_loopback_connects_or_fails_cleanly),
        cmocka_unit_test(test_tcp_closed_port_is_econn_connection_refused),
        cmocka_unit_test(test_tcp_unresolvable_host_is_econn_naming_host),
        cmocka_unit_test(test_tcp_full_backlog_times_out_within_bound),
        cmocka_unit_test(test_read_with_nothing_sent_is_etimedout_within_bounds),
        cmocka_unit_test(test_read_interrupted_by_signal_keeps_waiting_for_the_full_timeout),
        cmocka_unit_test(test_read_returns_available_bytes_up_to_cap),
        cmocka_unit_test(test_read_after_peer_close_is_econn_after_buffered_bytes),
        cmocka_unit_test(test_write_to_closed_peer_is_econn_not_sigpipe),
        cmocka_unit_test(test_fd_open_of_bad_descriptor_is_einval),
        cmocka_unit_test(test_fd_open_allocation_failure_is_enomem_and_closes_fd),
        cmocka_unit_test(test_pipe_pid_of_other_transport_is_minus_one),
        cmocka_unit_test(test_unix_socket_in_temp_dir_connects_and_carries_bytes),
        cmocka_unit_test(test_unix_missing_path_is_enoent_naming_path),
        cmocka_unit_test(test_unix_socket_without_listener_is_connection_refused),
        cmocka_unit_test(test_unix_full_backlog_times_out_within_bound),
        cmocka_unit_test(test_unix_path_longer_than_sun_path_is_einval),
        cmocka_unit_test(test_pipe_cat_echoes_bytes_and_close_reaps_it),
        cmocka_unit_test(test_pipe_command_exit_is_econn_naming_status_and_reaped),
        cmocka_unit_test(test_pipe_missing_program_is_econn_with_status_127),
        cmocka_unit_test(test_pipe_read_timeout_message_quotes_command),
        cmocka_unit_test(test_pipe_large_write_arrives_whole),
        cmocka_unit_test(test_pipe_close_terminates_command_that_ignores_eof_at_once),
        cmocka_unit_test(test_pipe_close_kills_command_that_ignores_sigterm_after_bounded_wait),
        cmocka_unit_test(test_pipe_close_also_ends_what_the_shell_forked),
        cmocka_unit_test(test_pipe_close_leaves_other_children_running),
        cmocka_unit_test(test_pipe_allocation_failure_is_enomem_and_leaves_no_child),
        cmocka_unit_test(test_serial_pty_slave_is_raw_at_requested_baud_and_carries_bytes),
        cmocka_unit_test(test_serial_without_baud_uses_115200),
        cmocka_unit_test(test_serial_hangup_of_other_side_is_econn),
        cmocka_unit_test(test_serial_missing_device_is_enoent_naming_it),
        cmocka_unit_test(test_serial_unsupported_baud_is_einval_naming_it),
        cmocka_unit_test(test_serial_regular_file_is_einval_not_a_terminal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
