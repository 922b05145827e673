/* tests/unit/rsp/test_session_select.c -- which 'Hg' the session sends, on scripted stubs.
 *
 * A stop selects the stopped thread for 'g' on gdbserver and QEMU (measured
 * on gdbserver 13.1 and qemu-aarch64 7.2 user, rsp/threads.c
 * rsp_thread_stop_taken), so the stopped thread's registers cost one 'g',
 * not 'Hg' then 'g'.  '?' selects it on gdbserver only; QEMU keeps the
 * thread of our last 'Hg'.  Other stubs, no-cache sessions and stops without
 * a thread always get an 'Hg'.  A batch of threads (rsp_regs_read_batch)
 * goes in one write on gdbserver, and a refused 'Hg' keeps nothing.  The
 * fake stub fails on any other packet.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/threads.h"
#include "rspwalk/rsp.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
/* gdbserver: no-ack mode, qXfer:threads and multiprocess ids. */
#define GDBSERVER                                                                                  \
    QSUP "<- PacketSize=47ff;multiprocess+;qXfer:threads:read+;vContSupported+;QStartNoAckMode+\n" \
         "-> QStartNoAckMode\n<- OK\n"
/* QEMU user: PacketSize 0x1000, never no-ack, ids padded with zeros. */
#define QEMU QSUP "<- PacketSize=1000;vContSupported+;multiprocess+\n"
/* Another stub: ack mode, another PacketSize. */
#define OTHER   QSUP "<- PacketSize=800;vContSupported+;multiprocess+\n"
#define G_REPLY "<- 00112233445566778899aabbccddeeff\n"
#define RESUME  "-> vCont?\n<- vCont;c;C;s;S\n-> vCont;c\n"

static const struct rsp_thread_id stopped = { 0x1f, 0x1f }, other = { 0x1f, 0x20 };
/* QEMU user's pid is 1 (as its multiprocess thread ids say). */
static const struct rsp_thread_id q_stopped = { 1, 0x1f }, q_other = { 1, 0x20 };

struct fixture {
    struct fake_script *fs;
    struct rsp_session *s;
};

static void
open_text(struct fixture *f, const char *text, bool no_cache)
{
    struct rsp_session_config cfg;
    struct sw_errbuf err = { 0 };
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.no_cache = no_cache;
    cfg.no_prefetch = true; /* these scripts ask one object at a time: test_prefetch.c */
    f->fs = fake_script_parse(text);
    assert_non_null(f->fs);
    if (rsp_session_connect(fake_transport_new(f->fs), &cfg, &f->s, &err) != 0)
        fail_msg("connect: %s / %s", err.msg, fake_script_error(f->fs));
}

static void
finish(struct fixture *f)
{
    fake_script_finish(f->s, f->fs, true);
}

static void
regs(struct fixture *f, struct rsp_thread_id id)
{
    const uint8_t *b;
    size_t len;
    if (rsp_regs_read(f->s, id, &b, &len) != 0)
        fail_msg("g: %s / %s", rsp_session_errmsg(f->s), fake_script_error(f->fs));
    assert_int_equal(len, 16);
    assert_int_equal(b[1], 0x11);
}

static void
select_ok(struct fixture *f, struct rsp_thread_id id)
{
    if (rsp_select_thread(f->s, id) != 0)
        fail_msg("Hg: %s / %s", rsp_session_errmsg(f->s), fake_script_error(f->fs));
}

static void
test_select_gdbserver_stopped_thread_costs_g_alone_others_a_pipelined_hg(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f,
              GDBSERVER "-> ?\n<- T05thread:p1f.1f;\n"
                        "-> g\n" G_REPLY "-> Hgp1f.20\n<- OK\n-> g\n" G_REPLY
                        /* '?' selects the stopped thread again on gdbserver */
                        "-> ?\n<- T05thread:p1f.1f;\n",
              false);
    regs(&f, stopped);
    regs(&f, other);
    struct rsp_stop st;
    assert_int_equal(rsp_query_stop(f.s, &st), 0);
    select_ok(&f, stopped); /* nothing sent */
    assert_int_equal(rsp_session_stats(f.s)->by_kind[RSP_PKT_SET_THREAD_G], 1);
    finish(&f);
}

static void
test_select_qemu_keeps_our_hg_across_a_query_and_takes_the_stop_after_a_resume(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f,
              QEMU "-> ?\n<- T05thread:p01.1f;\n"
                   "-> g\n" G_REPLY "-> Hgp1.20\n<- OK\n"
                   /* QEMU answers '?' with the stopped vCPU but keeps g_cpu */
                   "-> ?\n<- T05thread:p01.1f;\n"
                   "-> Hgp1.1f\n<- OK\n"
              /* a stop after a resume selects its thread */
              RESUME "<- T05thread:p01.20;\n-> g\n" G_REPLY
                   /* with no Hg since that stop, '?' names the selected thread */
                   "-> ?\n<- T05thread:p01.20;\n",
              false);
    regs(&f, q_stopped);
    select_ok(&f, q_other);
    struct rsp_stop st;
    assert_int_equal(rsp_query_stop(f.s, &st), 0);
    select_ok(&f, q_other); /* still ours: nothing sent */
    select_ok(&f, q_stopped);
    struct rsp_thread_id any = { 0, 0 };
    assert_int_equal(rsp_resume(f.s, any, false, 0), 0);
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), 0);
    regs(&f, q_other);
    assert_int_equal(rsp_query_stop(f.s, &st), 0);
    select_ok(&f, q_other);
    finish(&f);
}

static void
test_select_other_stubs_always_get_an_hg(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, OTHER "-> ?\n<- T05thread:p1f.1f;\n-> Hgp1f.1f\n<- OK\n-> g\n" G_REPLY, false);
    regs(&f, stopped);
    select_ok(&f, stopped); /* our own Hg holds */
    finish(&f);
}

static void
test_select_stop_without_a_thread_selects_nothing(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, GDBSERVER "-> ?\n<- S05\n-> Hgp1f.1f\n<- OK\n", false);
    select_ok(&f, stopped);
    finish(&f);
}

static void
test_select_no_cache_sends_hg_and_reads_g_every_time(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f,
              GDBSERVER "-> ?\n<- T05thread:p1f.1f;\n"
                        "-> Hgp1f.1f\n<- OK\n-> g\n" G_REPLY "-> g\n" G_REPLY,
              true);
    regs(&f, stopped);
    regs(&f, stopped);
    finish(&f);
}

/* Batches (rsp_regs_read_batch): the threads' 'Hg' and 'g' pairs in one write. */

static const struct rsp_thread_id third = { 0x1f, 0x21 }, fourth = { 0x1f, 0x22 };

/* The registers of ID from the cache: no packet may go out. */
static void
regs_cached(struct fixture *f, struct rsp_thread_id id)
{
    uint64_t rt0 = rsp_session_stats(f->s)->round_trips;
    assert_true(rsp_regs_cached(f->s, id));
    regs(f, id);
    assert_int_equal(rsp_session_stats(f->s)->round_trips, rt0);
}

static void
test_select_batch_reads_three_threads_in_one_round_trip(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f,
              GDBSERVER "-> ?\n<- T05thread:p1f.1f;\n"
                        /* the stopped thread is selected: its 'g' goes alone */
                        "-> g\n-> Hgp1f.20\n-> g\n-> Hgp1f.21\n-> g\n" G_REPLY "<- OK\n" G_REPLY
                        "<- OK\n" G_REPLY,
              false);
    /* A thread named twice is asked for once. */
    const struct rsp_thread_id ids[] = { stopped, other, third, other };
    uint64_t rt0 = rsp_session_stats(f.s)->round_trips;
    uint64_t pk0 = rsp_session_stats(f.s)->packets_sent;
    assert_false(rsp_regs_cached(f.s, other));
    assert_int_equal(rsp_regs_read_batch(f.s, ids, 4), 0);
    assert_int_equal(rsp_session_stats(f.s)->round_trips, rt0 + 1);
    assert_int_equal(rsp_session_stats(f.s)->packets_sent, pk0 + 5);
    assert_true(fake_script_done(f.fs));
    regs_cached(&f, stopped);
    regs_cached(&f, other);
    regs_cached(&f, third);
    /* The last 'Hg' answered OK holds: selecting its thread sends nothing. */
    select_ok(&f, third);
    /* Everything cached: a second batch sends nothing. */
    assert_int_equal(rsp_regs_read_batch(f.s, ids, 4), 0);
    assert_int_equal(rsp_session_stats(f.s)->round_trips, rt0 + 1);
    finish(&f);
}

static void
test_select_batch_refused_hg_keeps_nothing_for_that_thread(void **state)
{
    (void)state;
    struct fixture f;
    /* Thread 0x21 is gone: its 'Hg' is refused and the 'g' after it reads
     * 0x22, the thread gdbserver keeps, which must not be kept as 0x21's. */
    open_text(&f,
              GDBSERVER "-> ?\n<- T05thread:p1f.1f;\n"
                        "-> Hgp1f.20\n-> g\n-> Hgp1f.22\n-> g\n-> Hgp1f.21\n-> g\n"
                        "<- OK\n" G_REPLY "<- OK\n" G_REPLY "<- E01\n" G_REPLY
                        /* later: 0x21 asked for alone, and refused as before */
                        "-> Hgp1f.21\n-> g\n<- E01\n" G_REPLY,
              false);
    const struct rsp_thread_id ids[] = { other, fourth, third };
    assert_int_equal(rsp_regs_read_batch(f.s, ids, 3), 0);
    assert_false(fake_script_done(f.fs));
    regs_cached(&f, other);
    regs_cached(&f, fourth);
    assert_false(rsp_regs_cached(f.s, third));
    /* The refused 'Hg' left the stub on 0x22, the last one answered OK. */
    select_ok(&f, fourth);
    const uint8_t *b;
    size_t len;
    assert_int_equal(rsp_regs_read(f.s, third, &b, &len), SW_ENOENT);
    assert_non_null(strstr(rsp_session_errmsg(f.s), "selecting thread p1f.21: stub replied E01"));
    finish(&f);
}

static void
test_select_batch_error_reply_to_g_is_not_kept(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f,
              GDBSERVER "-> ?\n<- T05thread:p1f.1f;\n"
                        "-> Hgp1f.20\n-> g\n-> Hgp1f.21\n-> g\n<- OK\n<- E03\n<- OK\n" G_REPLY
                        /* later: 0x20 asked for alone, and its error reported */
                        "-> Hgp1f.20\n-> g\n<- OK\n<- E03\n",
              false);
    const struct rsp_thread_id ids[] = { other, third };
    assert_int_equal(rsp_regs_read_batch(f.s, ids, 2), 0);
    regs_cached(&f, third);
    assert_false(rsp_regs_cached(f.s, other));
    const uint8_t *b;
    size_t len;
    assert_int_equal(rsp_regs_read(f.s, other, &b, &len), SW_ESTUB);
    assert_non_null(strstr(rsp_session_errmsg(f.s), "registers of thread p1f.20"));
    finish(&f);
}

static void
test_select_batch_sends_nothing_without_pipelining_or_with_no_cache(void **state)
{
    (void)state;
    struct fixture f;
    /* QEMU: ack mode, no pipelining. */
    open_text(&f, QEMU "-> ?\n<- T05thread:p01.1f;\n", false);
    const struct rsp_thread_id q_ids[] = { q_other, q_stopped };
    assert_int_equal(rsp_regs_read_batch(f.s, q_ids, 2), 0);
    assert_false(rsp_regs_cached(f.s, q_other));
    finish(&f);
    /* gdbserver with no_cache. */
    open_text(&f, GDBSERVER "-> ?\n<- T05thread:p1f.1f;\n", true);
    const struct rsp_thread_id ids[] = { other, third };
    assert_int_equal(rsp_regs_read_batch(f.s, ids, 2), 0);
    assert_false(rsp_regs_cached(f.s, other));
    finish(&f);
}

static void
test_select_batch_on_a_dead_link_is_a_link_error_naming_the_packet(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f,
              GDBSERVER "-> ?\n<- T05thread:p1f.1f;\n"
                        "-> Hgp1f.20\n-> g\n-> Hgp1f.21\n-> g\n<- OK\n<! hangup\n",
              false);
    const struct rsp_thread_id ids[] = { other, third };
    assert_int_equal(rsp_regs_read_batch(f.s, ids, 2), SW_ECONN);
    const char *msg = rsp_session_errmsg(f.s);
    assert_non_null(strstr(msg, "reading the registers of 2 threads"));
    assert_non_null(strstr(msg, "'g'"));
    assert_false(rsp_regs_cached(f.s, other));
    rsp_session_close(f.s);
    fake_script_free(f.fs);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_gdbserver_stopped_thread_costs_g_alone_others_a_pipelined_hg),
        cmocka_unit_test(
            test_select_qemu_keeps_our_hg_across_a_query_and_takes_the_stop_after_a_resume),
        cmocka_unit_test(test_select_other_stubs_always_get_an_hg),
        cmocka_unit_test(test_select_stop_without_a_thread_selects_nothing),
        cmocka_unit_test(test_select_no_cache_sends_hg_and_reads_g_every_time),
        cmocka_unit_test(test_select_batch_reads_three_threads_in_one_round_trip),
        cmocka_unit_test(test_select_batch_refused_hg_keeps_nothing_for_that_thread),
        cmocka_unit_test(test_select_batch_error_reply_to_g_is_not_kept),
        cmocka_unit_test(test_select_batch_sends_nothing_without_pipelining_or_with_no_cache),
        cmocka_unit_test(test_select_batch_on_a_dead_link_is_a_link_error_naming_the_packet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
