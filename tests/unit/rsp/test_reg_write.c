/* tests/unit/rsp/test_reg_write.c -- writing one register (rsp_reg_write) on scripted stubs.
 *
 * 'P' where the stub has it; gdbserver on x86-64 answers 'P' empty (seen
 * under gdb 13 with gdbserver 13.1: "P10=..." then "G..."), so the thread's
 * 'g', patched, goes back with 'G', and 'P' is not tried again.  Replies are
 * hostile: errors, junk and a dead link each give one message naming the
 * register and the thread.  The fake stub fails on any other packet.
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

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
/* A gdbserver (no-ack mode, qXfer:threads: a stop selects its thread for
 * 'g' and 'P') with a two-register description: rax (register 0,
 * 'g' bytes 0-7) and rip (register 1, bytes 8-15), stopped in p1f.1f. */
#define TDESC                                                                                      \
    "<target><architecture>i386:x86-64</architecture><feature name=\"org.gnu.gdb.i386.core\">"     \
    "<reg name=\"rax\" bitsize=\"64\"/><reg name=\"rip\" bitsize=\"64\"/></feature></target>"
#define CONNECT                                                                                    \
    QSUP "<- PacketSize=108;QStartNoAckMode+;multiprocess+;qXfer:features:read+;"                  \
         "qXfer:threads:read+\n"                                                                   \
         "-> QStartNoAckMode\n<- OK\n-> ?\n<- T05swbreak:;thread:p1f.1f;\n"                        \
         "-> qXfer:features:read:target.xml:0,f8\n<- l" TDESC "\n"
/* rax = 0x1122334455667788, rip = 0x40113a. */
#define G_REPLY    "<- 88776655443322113a11400000000000\n"
#define G_PATCHED  "-> G88776655443322113b11400000000000\n"
#define P_RIP      "-> P1=3b11400000000000\n"
#define RIP_OFFSET 8

static const struct rsp_thread_id stopped = { 0x1f, 0x1f };
static const uint8_t new_rip[8] = { 0x3b, 0x11, 0x40, 0, 0, 0, 0, 0 };

struct fixture {
    struct fake_script *fs;
    struct rsp_session *s;
};

static void
open_text(struct fixture *f, const char *text)
{
    struct rsp_session_config cfg;
    struct sw_errbuf err = { 0 };
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.no_prefetch = true; /* one object at a time: test_prefetch.c */
    f->fs = fake_script_parse(text);
    assert_non_null(f->fs);
    if (rsp_session_connect(fake_transport_new(f->fs), &cfg, &f->s, &err) != 0)
        fail_msg("connect: %s / %s", err.msg, fake_script_error(f->fs));
}

static uint64_t
round_trips(const struct fixture *f)
{
    return rsp_session_stats(f->s)->round_trips;
}

static int
write_rip(struct fixture *f)
{
    return rsp_reg_write(f->s, stopped, 1, RIP_OFFSET, new_rip, sizeof new_rip);
}

static void
test_reg_write_p_accepted_costs_one_round_trip_and_forgets_the_kept_g(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, CONNECT "-> g\n" G_REPLY P_RIP "<- OK\n-> g\n" G_REPLY);
    const uint8_t *g;
    size_t len;
    assert_int_equal(rsp_regs_read(f.s, stopped, &g, &len), 0);
    uint64_t rt0 = round_trips(&f);
    assert_int_equal(write_rip(&f), 0);
    assert_int_equal(round_trips(&f), rt0 + 1);
    assert_int_equal(rsp_session_stats(f.s)->by_kind[RSP_PKT_WRITE_REG], 1);
    assert_string_equal(rsp_packet_name(RSP_PKT_WRITE_REG), "P");
    assert_string_equal(rsp_packet_name(RSP_PKT_WRITE_REGS), "G");
    /* The kept 'g' no longer holds: the next read asks again. */
    assert_false(rsp_regs_cached(f.s, stopped));
    assert_int_equal(rsp_regs_read(f.s, stopped, &g, &len), 0);
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_empty_p_falls_back_to_the_kept_g_patched_into_g_and_remembers(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, CONNECT "-> g\n" G_REPLY P_RIP "<- \n" G_PATCHED "<- OK\n"
                          /* later: no 'P' again, the 'g' read anew (forgotten) */
                          "-> g\n" G_REPLY G_PATCHED "<- OK\n");
    const uint8_t *g;
    size_t len;
    assert_int_equal(rsp_regs_read(f.s, stopped, &g, &len), 0);
    uint64_t rt0 = round_trips(&f);
    assert_int_equal(write_rip(&f), 0); /* 'P', then 'G': the 'g' was kept */
    assert_int_equal(round_trips(&f), rt0 + 2);
    assert_false(rsp_regs_cached(f.s, stopped));
    assert_int_equal(write_rip(&f), 0); /* 'g' and 'G' */
    assert_int_equal(round_trips(&f), rt0 + 4);
    assert_int_equal(rsp_session_stats(f.s)->by_kind[RSP_PKT_WRITE_REG], 1);
    assert_int_equal(rsp_session_stats(f.s)->by_kind[RSP_PKT_WRITE_REGS], 2);
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_selects_another_thread_first(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, CONNECT "-> Hgp1f.20\n<- OK\n-> P1=3b11400000000000\n<- OK\n");
    const struct rsp_thread_id other = { 0x1f, 0x20 };
    assert_int_equal(rsp_reg_write(f.s, other, 1, RIP_OFFSET, new_rip, 8), 0);
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_p_refused_names_the_register_and_the_reply(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, CONNECT P_RIP "<- E0e\n");
    assert_int_equal(write_rip(&f), SW_ENOREG);
    const char *msg = rsp_session_errmsg(f.s);
    assert_contains(msg, "writing rip (register 1) of thread p1f.1f");
    assert_contains(msg, "'P' refused, stub replied E0e");
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_g_refused_names_the_register_and_the_reply(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, CONNECT P_RIP "<- \n-> g\n" G_REPLY G_PATCHED "<- E01\n");
    assert_int_equal(write_rip(&f), SW_ENOREG);
    assert_contains(rsp_session_errmsg(f.s), "writing rip (register 1) of thread p1f.1f: 'G' "
                                             "refused, stub replied E01");
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_junk_reply_is_a_protocol_error(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, CONNECT P_RIP "<- OKAY\n" P_RIP "<- \n-> g\n" G_REPLY G_PATCHED "<- 1234\n");
    assert_int_equal(write_rip(&f), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "reply to 'P': expected OK, got 'OKAY'");
    assert_int_equal(write_rip(&f), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "reply to 'G': expected OK, got '1234'");
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_past_the_g_reply_sends_no_g(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, CONNECT P_RIP "<- \n-> g\n<- 8877665544332211\n");
    assert_int_equal(write_rip(&f), SW_ENOREG);
    assert_contains(rsp_session_errmsg(f.s), "bytes 8-15 are past the 'g' reply (8 bytes)");
    assert_int_equal(rsp_session_stats(f.s)->by_kind[RSP_PKT_WRITE_REGS], 0);
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_stub_without_p_or_g_is_unsupported(void **state)
{
    (void)state;
    struct fixture f;
    /* Register 2 is not described: named by number. */
    open_text(&f, CONNECT "-> P2=3b11400000000000\n<- \n-> g\n<- "
                          "887766554433221100000000000000003a11400000000000\n"
                          "-> G887766554433221100000000000000003b11400000000000\n<- \n");
    assert_int_equal(rsp_reg_write(f.s, stopped, 2, 16, new_rip, 8), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "writing register 2 of thread p1f.1f: the stub has "
                                             "neither 'P' nor 'G'");
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_bad_length_sends_nothing(void **state)
{
    (void)state;
    struct fixture f;
    uint8_t big[65] = { 0 };
    open_text(&f, CONNECT);
    assert_int_equal(rsp_reg_write(f.s, stopped, 1, 8, big, 0), SW_EINVAL);
    assert_int_equal(rsp_reg_write(f.s, stopped, 1, 8, big, sizeof big), SW_EINVAL);
    assert_contains(rsp_session_errmsg(f.s), "writing rip (register 1): 65 bytes");
    fake_script_finish(f.s, f.fs, true);
}

static void
test_reg_write_dead_link_is_a_link_error_naming_the_register(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, CONNECT P_RIP "<! hangup\n");
    assert_int_equal(write_rip(&f), SW_ECONN);
    assert_contains(rsp_session_errmsg(f.s), "writing rip (register 1) of thread p1f.1f: ");
    fake_script_finish(f.s, f.fs, true);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reg_write_p_accepted_costs_one_round_trip_and_forgets_the_kept_g),
        cmocka_unit_test(
            test_reg_write_empty_p_falls_back_to_the_kept_g_patched_into_g_and_remembers),
        cmocka_unit_test(test_reg_write_selects_another_thread_first),
        cmocka_unit_test(test_reg_write_p_refused_names_the_register_and_the_reply),
        cmocka_unit_test(test_reg_write_g_refused_names_the_register_and_the_reply),
        cmocka_unit_test(test_reg_write_junk_reply_is_a_protocol_error),
        cmocka_unit_test(test_reg_write_past_the_g_reply_sends_no_g),
        cmocka_unit_test(test_reg_write_stub_without_p_or_g_is_unsupported),
        cmocka_unit_test(test_reg_write_bad_length_sends_nothing),
        cmocka_unit_test(test_reg_write_dead_link_is_a_link_error_naming_the_register),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
