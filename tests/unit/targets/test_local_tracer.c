/* tests/unit/targets/test_local_tracer.c -- the stub found as the target's tracer on this host.
 *
 * The test plays the stub: it holds both ends of a loopback TCP connection
 * and seizes a child with ptrace, so it is the child's tracer and the far
 * end of the link; the child stays in the test's process group, leading none,
 * as a worker a server forked.  A child it does not trace, a child leading
 * its own group, a link whose far end another process holds, and a
 * descriptor that is no socket are each refused.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rspwalk/errors.h"
#include "targets/local_tracer.h"

/* A loopback connection: *CLIENT the link's end, *SERVER the far end. */
static void
tcp_pair(int *client, int *server)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(l >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
    *client = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(*client, (struct sockaddr *)&a, sizeof a), 0);
    *server = accept(l, NULL, NULL);
    assert_true(*server >= 0);
    close(l);
}

static pid_t
child_sleeping(void)
{
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        for (;;)
            pause();
    }
    return c;
}

static void
reap(pid_t c)
{
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
}

static void
test_tracer_is_far_end(void **state)
{
    (void)state;
    int client, server;
    char msg[200];
    tcp_pair(&client, &server);
    pid_t c = child_sleeping();
    assert_int_equal(ptrace(PTRACE_SEIZE, c, NULL, NULL), 0);
    assert_int_equal(tgt_local_tracer(client, c, msg, sizeof msg), getpid());
    /* The signal goes to the traced child: it enters a signal-delivery stop. */
    assert_int_equal(tgt_local_interrupt(c, msg, sizeof msg), 1);
    int st;
    assert_int_equal(waitpid(c, &st, 0), c);
    assert_true(WIFSTOPPED(st) && WSTOPSIG(st) == SIGINT);
    reap(c);
    close(client);
    close(server);
}

static void
test_untraced_refused(void **state)
{
    (void)state;
    int client, server;
    char msg[200] = "";
    tcp_pair(&client, &server);
    pid_t c = child_sleeping();
    assert_int_equal(tgt_local_tracer(client, c, msg, sizeof msg), SW_ENOENT);
    assert_non_null(strstr(msg, "traced by nobody"));
    reap(c);
    close(client);
    close(server);
}

static void
test_group_leader_refused(void **state)
{
    (void)state;
    int client, server;
    char msg[200] = "";
    tcp_pair(&client, &server);
    pid_t c = child_sleeping();
    assert_int_equal(setpgid(c, c), 0);
    assert_int_equal(ptrace(PTRACE_SEIZE, c, NULL, NULL), 0);
    assert_int_equal(tgt_local_tracer(client, c, msg, sizeof msg), SW_ENOENT);
    assert_non_null(strstr(msg, "leads a process group"));
    reap(c);
    close(client);
    close(server);
}

static void
test_far_end_elsewhere_refused(void **state)
{
    (void)state;
    int client, server;
    char msg[200] = "";
    tcp_pair(&client, &server);
    pid_t c = child_sleeping();
    assert_int_equal(ptrace(PTRACE_SEIZE, c, NULL, NULL), 0);
    /* A relay's case: the far end belongs to another process. */
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        close(client);
        for (;;)
            pause();
    }
    close(server);
    assert_int_equal(tgt_local_tracer(client, c, msg, sizeof msg), SW_ENOENT);
    assert_non_null(strstr(msg, "is not the stub"));
    reap(holder);
    reap(c);
    close(client);
}

static void
test_no_socket_refused(void **state)
{
    (void)state;
    int p[2];
    char msg[200] = "";
    assert_int_equal(pipe(p), 0);
    assert_int_equal(tgt_local_tracer(p[0], getppid(), msg, sizeof msg), SW_ENOENT);
    assert_non_null(strstr(msg, "no socket"));
    assert_int_equal(tgt_local_tracer(-1, 1, msg, sizeof msg), SW_ENOENT);
    assert_int_equal(tgt_local_interrupt(1, msg, sizeof msg), SW_EIO);
    assert_int_equal(tgt_local_interrupt(0, msg, sizeof msg), SW_EIO);
    assert_int_equal(tgt_local_interrupt(-1, msg, sizeof msg), SW_EIO);
    close(p[0]);
    close(p[1]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tracer_is_far_end),
        cmocka_unit_test(test_untraced_refused),
        cmocka_unit_test(test_group_leader_refused),
        cmocka_unit_test(test_far_end_elsewhere_refused),
        cmocka_unit_test(test_no_socket_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
