/* tests/unit/server/test_doors.c -- rspwalkd's DAP and RSP listeners (server/doors.h).
 *
 * Bad --rsp-listen and --dap-listen addresses fail with one line naming the
 * option, the address and the cause; a session on a target the registry
 * does not have ends at once (the RSP connection closed, the DAP attach
 * answered with an error); srv_doors_free ends live sessions.  Sessions
 * on real stubs: tests/integration/run-server-doors.sh.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "server/doors.h"
#include "server/registry.h"

struct fx {
    struct srv_registry *r;
    struct srv_doors *d;
    char err[512];
};

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    struct srv_registry_config rcfg = { .timeout_ms = 2000 };
    assert_int_equal(srv_registry_new(&rcfg, &f->r, f->err, sizeof f->err), 0);
    struct srv_doors_config dcfg = { .registry = f->r, .timeout_ms = 2000 };
    assert_int_equal(srv_doors_new(&dcfg, &f->d, f->err, sizeof f->err), 0);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;
    srv_doors_free(f->d);
    srv_registry_free(f->r);
    free(f);
    return 0;
}

/* A connection to the loopback address BOUND ("127.0.0.1:PORT"). */
static int
dial(const char *bound)
{
    const char *colon = strrchr(bound, ':');
    assert_non_null(colon);
    struct sockaddr_in sin = { .sin_family = AF_INET,
                               .sin_port = htons((uint16_t)atoi(colon + 1)) };
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    return fd;
}

/* Read what FD sends until it closes or 5 s pass; returns the bytes read, -1 on timeout. */
static ssize_t
read_until_closed(int fd, char *buf, size_t len)
{
    size_t got = 0;
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 5000) <= 0)
            return -1;
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n <= 0) {
            buf[got] = '\0';
            return (ssize_t)got;
        }
        got += (size_t)n;
        if (got == len - 1) {
            buf[got] = '\0';
            return (ssize_t)got;
        }
    }
}

static void
test_rsp_listen_bad_specs_fail_naming_the_cause(void **state)
{
    struct fx *f = *state;
    static const struct {
        const char *spec, *want;
    } cases[] = {
        { "127.0.0.1:0", "--rsp-listen '127.0.0.1:0': not HOST:PORT=ID" },
        { "127.0.0.1:0=abc", "--rsp-listen '127.0.0.1:0=abc': 'abc' is not a target id" },
        { "127.0.0.1:0=0", "'0' is not a target id" },
        { "127.0.0.1:0=", "'' is not a target id" },
        { "nohost=1", "--rsp-listen 'nohost=1': not HOST:PORT" },
        { "0.0.0.0:0=1", "--rsp-listen '0.0.0.0:0=1': not a loopback address" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        f->err[0] = '\0';
        assert_int_equal(srv_doors_rsp_listen(f->d, cases[i].spec, NULL, 0, f->err, sizeof f->err),
                         -1);
        if (strstr(f->err, cases[i].want) == NULL)
            fail_msg("%s: '%s' does not say '%s'", cases[i].spec, f->err, cases[i].want);
        assert_null(strchr(f->err, '\n'));
    }
}

static void
test_dap_listen_off_loopback_or_malformed_fails(void **state)
{
    struct fx *f = *state;
    assert_int_equal(srv_doors_dap_listen(f->d, "0.0.0.0:0", NULL, 0, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "--dap-listen '0.0.0.0:0': not a loopback address"));
    assert_int_equal(srv_doors_dap_listen(f->d, "127.0.0.1", NULL, 0, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "not HOST:PORT"));
    assert_int_equal(
        srv_doors_dap_listen(f->d, "127.0.0.1:http-alt-x", NULL, 0, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "--dap-listen '127.0.0.1:http-alt-x': "));
}

static void
test_rsp_session_on_unknown_target_is_closed(void **state)
{
    struct fx *f = *state;
    char bound[160], buf[256];
    assert_int_equal(
        srv_doors_rsp_listen(f->d, "127.0.0.1:0=7", bound, sizeof bound, f->err, sizeof f->err), 0);
    int fd = dial(bound);
    assert_int_equal(write(fd, "$?#3f", 5), 5);
    assert_int_equal(read_until_closed(fd, buf, sizeof buf), 0);
    close(fd);
}

static void
test_dap_attach_unknown_id_is_an_error_response(void **state)
{
    struct fx *f = *state;
    char bound[160], buf[4096];
    assert_int_equal(
        srv_doors_dap_listen(f->d, "127.0.0.1:0", bound, sizeof bound, f->err, sizeof f->err), 0);
    int fd = dial(bound);
    const char *body = "{\"seq\": 1, \"type\": \"request\", \"command\": \"attach\", "
                       "\"arguments\": {\"id\": \"7\"}}";
    char msg[256];
    int n = snprintf(msg, sizeof msg, "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
    assert_int_equal(write(fd, msg, (size_t)n), n);
    shutdown(fd, SHUT_WR); /* the end of input ends the session after its answer */
    assert_true(read_until_closed(fd, buf, sizeof buf) > 0);
    assert_true(strstr(buf, "\"success\":false") != NULL ||
                strstr(buf, "\"success\": false") != NULL);
    assert_non_null(strstr(buf, "id '7'"));
    close(fd);
}

static void
test_free_ends_live_sessions(void **state)
{
    struct fx *f = *state;
    char bound[160], buf[64];
    assert_int_equal(
        srv_doors_dap_listen(f->d, "127.0.0.1:0", bound, sizeof bound, f->err, sizeof f->err), 0);
    int fd = dial(bound);
    struct pollfd none = { .fd = -1 };
    poll(&none, 1, 100); /* accepted, its session waiting for a request */
    srv_doors_free(f->d);
    f->d = NULL;
    assert_int_equal(read_until_closed(fd, buf, sizeof buf), 0);
    close(fd);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_rsp_listen_bad_specs_fail_naming_the_cause),
        T(test_dap_listen_off_loopback_or_malformed_fails),
        T(test_rsp_session_on_unknown_target_is_closed),
        T(test_dap_attach_unknown_id_is_an_error_response),
        T(test_free_ends_live_sessions),
    };
#undef T
    return cmocka_run_group_tests_name("server/doors", tests, NULL, NULL);
}
