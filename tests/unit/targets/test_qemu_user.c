/* tests/unit/targets/test_qemu_user.c -- where a thread of a QEMU user process is, from /proc.
 *
 * The test's own process plays QEMU: a socket pair's end is the stub's socket,
 * and a thread of its own reads it, waits for an ack, spins or sleeps, with
 * every signal blocked (QEMU's signal path) or with its usual mask; and which
 * thread a signal stop picks.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "targets/qemu_user.h"

enum act { ACT_READ, ACT_ACK, ACT_SPIN, ACT_SLEEP, ACT_DOZE };

struct worker {
    enum act act;
    bool all_blocked; /* as QEMU while it handles a signal */
    int fd;
    atomic_long tid;
    atomic_bool stop;
    pthread_t th;
};

static void *
worker_main(void *arg)
{
    struct worker *w = arg;
    sigset_t set;
    sigfillset(&set);
    if (w->all_blocked)
        pthread_sigmask(SIG_SETMASK, &set, NULL);
    atomic_store(&w->tid, (long)syscall(SYS_gettid));
    char buf[256];
    switch (w->act) {
    case ACT_READ:
        (void)!read(w->fd, buf, sizeof buf);
        break;
    case ACT_ACK:
        (void)!recv(w->fd, buf, 1, 0);
        break;
    case ACT_SPIN:
        while (!atomic_load(&w->stop))
            ;
        break;
    case ACT_SLEEP:
    case ACT_DOZE: /* 1 ms, or 100 ms: all but never runnable */
        while (!atomic_load(&w->stop)) {
            struct timespec ts = { 0, w->act == ACT_DOZE ? 100000000 : 1000000 };
            nanosleep(&ts, NULL);
        }
        break;
    }
    return NULL;
}

static struct sw_qemu_user q;
static int stub_sock, far_end;

static int
setup(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    memset(&q, 0, sizeof q);
    q.host_pid = getpid();
    q.stub_fd = stub_sock = sv[0];
    far_end = sv[1];
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    close(stub_sock);
    close(far_end);
    return 0;
}

/* Start W; wait until /proc shows it where WANT says (or 2 s). */
static enum sw_qemu_where
start_and_look(struct worker *w, enum sw_qemu_where want)
{
    atomic_store(&w->tid, 0);
    atomic_store(&w->stop, false);
    w->fd = stub_sock;
    assert_int_equal(pthread_create(&w->th, NULL, worker_main, w), 0);
    while (atomic_load(&w->tid) == 0)
        sched_yield();
    enum sw_qemu_where got = SW_QEMU_UNKNOWN;
    for (int i = 0; i < 2000; i++) {
        got = sw_qemu_user_where(&q, (sw_tid)atomic_load(&w->tid));
        if (got == want)
            break;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    return got;
}

static void
finish(struct worker *w)
{
    atomic_store(&w->stop, true);
    if (w->act == ACT_READ || w->act == ACT_ACK)
        assert_int_equal(write(far_end, "+", 1), 1);
    pthread_join(w->th, NULL);
}

/* A worker doing ACT with every signal blocked or not is seen at WANT
 * (looked at until then, or until the look gives up). */
static void
expect_where(enum act act, bool all_blocked, enum sw_qemu_where want)
{
    struct worker w = { .act = act, .all_blocked = all_blocked };
    enum sw_qemu_where got = start_and_look(&w, want);
    finish(&w);
    assert_int_equal(got, want);
}

static void
test_on_socket(void **state)
{
    (void)state;
    expect_where(ACT_READ, true, SW_QEMU_IN_STUB);
    expect_where(ACT_ACK, true, SW_QEMU_IN_STUB_ACK);
}

/* "running" in /proc after a resume is no proof that a thread left the
 * stub: with every signal blocked it is still in QEMU's signal path. */
static void
test_running_in_signal_path(void **state)
{
    (void)state;
    expect_where(ACT_SPIN, true, SW_QEMU_IN_SIGNALS);
    expect_where(ACT_SLEEP, true, SW_QEMU_IN_SIGNALS);
}

static void
test_out_of_signal_path(void **state)
{
    (void)state;
    expect_where(ACT_SPIN, false, SW_QEMU_RUNNING);
    expect_where(ACT_SLEEP, false, SW_QEMU_SYSCALL);
}

/* Before the stub's socket is known, a reader with every signal blocked is
 * in the signal path, one with the usual mask is out of it. */
static void
test_socket_unknown(void **state)
{
    (void)state;
    q.stub_fd = -1;
    expect_where(ACT_READ, true, SW_QEMU_IN_SIGNALS);
    expect_where(ACT_SLEEP, false, SW_QEMU_SYSCALL);
}

static void
test_gone(void **state)
{
    (void)state;
    struct worker w = { .act = ACT_SLEEP, .all_blocked = false };
    start_and_look(&w, SW_QEMU_SYSCALL);
    finish(&w);
    sw_tid tid = (sw_tid)atomic_load(&w.tid);
    enum sw_qemu_where got = SW_QEMU_UNKNOWN;
    for (int i = 0; i < 2000 && got != SW_QEMU_GONE; i++) {
        got = sw_qemu_user_where(&q, tid);
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    assert_int_equal(got, SW_QEMU_GONE);
}

/* The signal goes to a thread on a CPU (or waiting for one), never to one
 * that sleeps while another runs; with only sleepers, to one of them. */
static void
test_pick_prefers_a_running_thread(void **state)
{
    (void)state;
    struct worker spin = { .act = ACT_SPIN }, nap = { .act = ACT_DOZE };
    start_and_look(&spin, SW_QEMU_RUNNING);
    start_and_look(&nap, SW_QEMU_SYSCALL);
    sw_tid ts = (sw_tid)atomic_load(&spin.tid), tn = (sw_tid)atomic_load(&nap.tid);
    q.guests[0] = tn;
    q.guests[1] = ts;
    q.nguests = 2;
    for (int i = 0; i < 20; i++)
        assert_int_equal(sw_qemu_user_pick(&q), ts);
    q.nguests = 1; /* the sleeper alone */
    assert_int_equal(sw_qemu_user_pick(&q), tn);
    q.nguests = 0; /* /proc's threads: this one (reading /proc) or the spinner */
    for (int i = 0; i < 20; i++) {
        sw_tid v = sw_qemu_user_pick(&q);
        assert_true(v == ts || v == (sw_tid)syscall(SYS_gettid));
    }
    finish(&spin);
    finish(&nap);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_on_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_running_in_signal_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_signal_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pick_prefers_a_running_thread, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
