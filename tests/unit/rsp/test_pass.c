/* tests/unit/rsp/test_pass.c -- a front end's packets passed through the session as they are.
 *
 * Scripted stub (tests/tools/fake_transport.c): replies come back run-length
 * expanded with their escapes kept, empty and error replies are replies like
 * any other and are never remembered as unsupported, a register write drops
 * the written thread's registers only, and a resume's stop is taken in as the
 * last stop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/session.h"
#include "rspwalk/rsp.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define PROLOGUE                                                                                   \
    "-> qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;"                   \
    "xmlRegisters=i386\n"                                                                          \
    "<- PacketSize=1000;multiprocess+;vContSupported+;QStartNoAckMode+\n"                          \
    "-> QStartNoAckMode\n<- OK\n-> ?\n<- T05thread:p1f.1f;\n"

static struct rsp_session *
open_text(const char *text, struct fake_script **fs)
{
    struct rsp_session_config cfg;
    struct rsp_session *s = NULL;
    struct sw_errbuf err = { 0 };
    rsp_session_config_init(&cfg);
    cfg.no_prefetch = true;
    cfg.timeout_ms = 200;
    *fs = fake_script_parse(text);
    assert_non_null(*fs);
    assert_int_equal(rsp_session_connect(fake_transport_new(*fs), &cfg, &s, &err), 0);
    return s;
}

static void
test_pass_request_replies_as_sent_empty_and_errors_included(void **state)
{
    (void)state;
    struct fake_script *fs;
    struct rsp_session *s = open_text(PROLOGUE "-> m1000,8\n<- 0*&\n"
                                               "-> qXfer:x:read::0,10\n<- l}]a\n"
                                               "-> vMustReplyEmpty\n<- \n"
                                               "-> vMustReplyEmpty\n<- \n"
                                               "-> m0,1\n<- E14\n",
                                      &fs);
    const char *r;
    size_t n;
    assert_int_equal(rsp_pass_request(s, "m1000,8", 7, &r, &n), 0);
    assert_int_equal(n, 10);
    assert_memory_equal(r, "0000000000", 10); /* '0' and 9 more */
    assert_int_equal(rsp_pass_request(s, "qXfer:x:read::0,10", 18, &r, &n), 0);
    assert_int_equal(n, 4);
    assert_memory_equal(r, "l}]a", 4); /* the escape kept */
    /* An empty reply is passed on, and the packet is sent again next time. */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rsp_pass_request(s, "vMustReplyEmpty", 15, &r, &n), 0);
        assert_int_equal(n, 0);
    }
    assert_int_equal(rsp_pass_request(s, "m0,1", 4, &r, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(r, "E14", 3);
    fake_script_finish(s, fs, true);
}

static void
test_pass_write_drops_the_register_cache(void **state)
{
    (void)state;
    struct fake_script *fs;
    /* The selection stays: the second 'g' needs no 'Hg'. */
    struct rsp_session *s = open_text(PROLOGUE "-> Hgp1f.1f\n<- OK\n-> g\n<- 0100\n"
                                               "-> P0=0200\n<- OK\n"
                                               "-> g\n<- 0200\n",
                                      &fs);
    struct rsp_thread_id t = { 0x1f, 0x1f };
    const uint8_t *b;
    size_t len;
    const char *r;
    size_t n;
    assert_int_equal(rsp_regs_read(s, t, &b, &len), 0);
    assert_int_equal(b[0], 1);
    assert_int_equal(rsp_pass_request(s, "P0=0200", 7, &r, &n), 0);
    assert_int_equal(rsp_regs_read(s, t, &b, &len), 0); /* read again */
    assert_int_equal(b[0], 2);
    fake_script_finish(s, fs, true);
}

static void
test_pass_register_write_keeps_the_other_threads(void **state)
{
    (void)state;
    struct fake_script *fs;
    /* Thread 20 read, then 1f selected by the front end and written: 20's
     * registers stay, 1f's are read again, and a breakpoint drops nothing. */
    struct rsp_session *s = open_text(PROLOGUE "-> Hgp1f.20\n<- OK\n-> g\n<- 0300\n"
                                               "-> Hgp1f.1f\n<- OK\n"
                                               "-> G0400\n<- OK\n"
                                               "-> Z0,1000,1\n<- OK\n"
                                               "-> g\n<- 0400\n",
                                      &fs);
    struct rsp_thread_id t20 = { 0x1f, 0x20 }, t1f = { 0x1f, 0x1f };
    const uint8_t *b;
    size_t len;
    const char *r;
    size_t n;
    assert_int_equal(rsp_regs_read(s, t20, &b, &len), 0);
    assert_int_equal(rsp_pass_request(s, "Hgp1f.1f", 8, &r, &n), 0);
    assert_true(rsp_thread_selected(s, t1f));
    assert_int_equal(rsp_pass_request(s, "G0400", 5, &r, &n), 0);
    assert_int_equal(rsp_pass_request(s, "Z0,1000,1", 9, &r, &n), 0);
    assert_true(rsp_regs_cached(s, t20));
    assert_false(rsp_regs_cached(s, t1f));
    assert_int_equal(rsp_regs_read(s, t1f, &b, &len), 0); /* no 'Hg': still selected */
    assert_int_equal(b[0], 4);
    fake_script_finish(s, fs, true);
}

static void
test_pass_resume_takes_the_stop_in(void **state)
{
    (void)state;
    struct fake_script *fs;
    struct rsp_session *s =
        open_text(PROLOGUE "-> vCont;c:p1f.-1\n<- O6869\n<- T0bthread:p1f.20;\n", &fs);
    const char *r;
    size_t n;
    assert_int_equal(rsp_pass_resume(s, "vCont;c:p1f.-1", 14), 0);
    assert_int_equal(rsp_pass_wait_stop(s, 200, &r, &n), 0);
    assert_int_equal(n, strlen("T0bthread:p1f.20;"));
    assert_memory_equal(r, "T0bthread:p1f.20;", n); /* the 'O' packet skipped */
    const struct rsp_stop *st = rsp_last_stop(s);
    assert_non_null(st);
    assert_int_equal(st->signal, 11);
    assert_int_equal(st->thread.tid, 0x20);
    fake_script_finish(s, fs, true);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pass_request_replies_as_sent_empty_and_errors_included),
        cmocka_unit_test(test_pass_write_drops_the_register_cache),
        cmocka_unit_test(test_pass_register_write_keeps_the_other_threads),
        cmocka_unit_test(test_pass_resume_takes_the_stop_in),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
