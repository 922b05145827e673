/* tests/unit/targets/test_overlap.c -- local work while a batch is on the link
 * (rsp_mem_read_batch_while).
 *
 * The stub is the other end of a socketpair, played by the test: a reply it
 * has already written means the work is not started; a reply that comes
 * while the work goes on stops it after the piece during which it came; work
 * that runs out stops by itself.  On a stub without pipelining the work
 * fills the first request's round trip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rsp/session.h"
#include "rspwalk/rsp.h"

struct link {
    int stub; /* the test's end */
    struct rsp_session *s;
};

static void
stub_send(int fd, const char *payload)
{
    char buf[512];
    long n = rsp_frame(payload, strlen(payload), buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(write(fd, buf, (size_t)n), n);
}

/* A session over a socketpair, connected: the stub's replies written ahead
 * (no-ack gdbserver-like when PIPELINED, else an ack-mode stub). */
static void
link_open(struct link *l, bool pipelined)
{
    int sv[2];
    struct rsp_transport *t;
    struct sw_errbuf err = { 0 };
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    l->stub = sv[1];
    assert_int_equal(rsp_transport_fd_open(sv[0], "pair", &t, &err), 0);
    if (pipelined) {
        stub_send(l->stub, "PacketSize=1000;QStartNoAckMode+;multiprocess+;qXfer:threads:read+");
        stub_send(l->stub, "OK");
    } else {
        stub_send(l->stub, "PacketSize=1000");
    }
    stub_send(l->stub, "T05thread:p1.1;");
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 2000;
    cfg.no_prefetch = true;
    assert_int_equal(rsp_session_connect(t, &cfg, &l->s, &err), 0);
    assert_int_equal(rsp_session_pipelined(l->s), pipelined);
}

static void
link_close(struct link *l)
{
    rsp_session_close(l->s);
    close(l->stub);
}

/* Work of many pieces; the reply to 'm1000,4' is sent during piece REPLY_AT
 * (0: never by the work). */
struct work {
    int stub;
    unsigned calls, reply_at, pieces;
};

static bool
work_piece(void *arg)
{
    struct work *w = arg;
    w->calls++;
    if (w->calls == w->reply_at)
        stub_send(w->stub, "01020304");
    return w->calls < w->pieces;
}

static void
read_with_work(struct link *l, struct work *w)
{
    uint8_t buf[4];
    struct rsp_mem_range r = { 0x1000, 4, buf, 0 };
    assert_int_equal(rsp_mem_read_batch_while(l->s, &r, 1, work_piece, w), 0);
    assert_int_equal(r.rc, 0);
    assert_int_equal(buf[3], 4);
}

static void
test_overlap_work_stops_when_the_reply_comes(void **state)
{
    (void)state;
    struct link l;
    link_open(&l, true);
    struct work w = { l.stub, 0, 3, 1000 };
    read_with_work(&l, &w);
    assert_int_equal(w.calls, 3); /* the piece during which the reply came was the last */
    link_close(&l);
}

static void
test_overlap_no_work_when_the_reply_is_already_here(void **state)
{
    (void)state;
    struct link l;
    link_open(&l, true);
    stub_send(l.stub, "01020304");
    struct work w = { l.stub, 0, 0, 1000 };
    read_with_work(&l, &w);
    assert_int_equal(w.calls, 0);
    link_close(&l);
}

static void
test_overlap_work_that_runs_out_stops_by_itself(void **state)
{
    (void)state;
    struct link l;
    link_open(&l, true);
    /* The reply comes 50 ms later, from a child: the three pieces are done
     * long before, and the read then waits for it. */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        stub_send(l.stub, "01020304");
        _exit(0);
    }
    struct work w = { l.stub, 0, 0, 3 };
    read_with_work(&l, &w);
    assert_int_equal(w.calls, 3);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    link_close(&l);
}

static void
test_overlap_without_pipelining_fills_the_first_request(void **state)
{
    (void)state;
    struct link l;
    link_open(&l, false);
    struct work w = { l.stub, 0, 2, 1000 };
    read_with_work(&l, &w);
    assert_int_equal(w.calls, 2);
    link_close(&l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap_work_stops_when_the_reply_comes),
        cmocka_unit_test(test_overlap_no_work_when_the_reply_is_already_here),
        cmocka_unit_test(test_overlap_work_that_runs_out_stops_by_itself),
        cmocka_unit_test(test_overlap_without_pipelining_fills_the_first_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
