/* tests/unit/rsp/test_deadline.c -- deadlines that hold, and replies that are not replies.
 *
 * A request's deadline is met only by its own reply: acks, naks, interrupt
 * bytes, notifications and console packets flooding in meanwhile do not move
 * it.  The run's deadline cuts every wait.  A stop reply in place of a reply
 * is set aside as a stray stop; 'W00' is the process's end.  Writes to a
 * peer that reads nothing time out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rsp/session.h"
#include "rspwalk/rsp.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
#define PROLOGUE_NOACK                                                                             \
    QSUP "<- PacketSize=1000;multiprocess+;vContSupported+;QStartNoAckMode+\n"                     \
         "-> QStartNoAckMode\n<- OK\n-> ?\n<- T05thread:p1f.1f;\n"

struct fixture {
    struct fake_script *fs;
    struct rsp_session *s;
    struct sw_errbuf err;
};

static void
open_text(struct fixture *f, const char *text, int timeout_ms)
{
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.no_prefetch = true;
    cfg.timeout_ms = timeout_ms;
    memset(f, 0, sizeof *f);
    f->fs = fake_script_parse(text);
    assert_non_null(f->fs);
    assert_int_equal(rsp_session_connect(fake_transport_new(f->fs), &cfg, &f->s, &f->err), 0);
}

/* A flood of FLOOD after the request for 4 bytes at 0x1000: the read fails
 * with SW_ETIMEDOUT after about TIMEOUT_MS, naming 'm1000,4' and NOISE. */
static void
flood_times_out(const char *prologue, const char *flood, const char *noise)
{
    char text[1024];
    struct fixture f;
    snprintf(text, sizeof text, "%s-> m1000,4\n<! flood %s\n", prologue, flood);
    open_text(&f, text, 150);
    uint8_t b[4];
    uint64_t t0 = sw_now_us();
    int rc = rsp_mem_read(f.s, 0x1000, b, sizeof b);
    if (rc != SW_ETIMEDOUT)
        fprintf(stderr, "%s\n", rsp_session_errmsg(f.s));
    assert_int_equal(rc, SW_ETIMEDOUT);
    uint64_t took_ms = (sw_now_us() - t0) / 1000;
    assert_true(took_ms >= 140 && took_ms < 1000);
    assert_contains(rsp_session_errmsg(f.s), "no reply to 'm1000,4' within 0.15 s");
    assert_contains(rsp_session_errmsg(f.s), noise);
    fake_script_finish(f.s, f.fs, false); /* the flood never ends */
}

static void
test_deadline_ack_flood_does_not_extend_it(void **state)
{
    (void)state;
    flood_times_out(PROLOGUE_NOACK, "+", " acks");
}

static void
test_deadline_stray_nak_flood_in_noack_mode_does_not_extend_it(void **state)
{
    (void)state;
    flood_times_out(PROLOGUE_NOACK, "-", "stray naks");
}

static void
test_deadline_interrupt_bytes_do_not_extend_it(void **state)
{
    (void)state;
    flood_times_out(PROLOGUE_NOACK, "\\x03", "interrupt bytes");
}

static void
test_deadline_stop_notifications_do_not_extend_it(void **state)
{
    (void)state;
    /* "%Stop:T05;#" with its checksum. */
    char flood[64];
    const char *p = "Stop:T05;";
    unsigned sum = 0;
    for (const char *c = p; *c; c++)
        sum += (unsigned char)*c;
    snprintf(flood, sizeof flood, "%%%s#%02x", p, sum & 0xff);
    flood_times_out(PROLOGUE_NOACK, flood, "notifications");
}

static void
test_deadline_console_packets_do_not_extend_it_nor_answer(void **state)
{
    (void)state;
    flood_times_out(PROLOGUE_NOACK, "$O41#b4", "console packets");
}

static void
test_deadline_console_packet_is_not_the_reply(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE_NOACK "-> m1000,4\n<- O48690a\n<- 00112233\n", 200);
    uint8_t b[4];
    assert_int_equal(rsp_mem_read(f.s, 0x1000, b, sizeof b), 0);
    assert_int_equal(b[3], 0x33);
    fake_script_finish(f.s, f.fs, true);
}

static int stray_calls;
static char stray_seen[64];

static void
on_stray(void *arg, const uint8_t *p, size_t len)
{
    (void)arg;
    stray_calls++;
    snprintf(stray_seen, sizeof stray_seen, "%.*s", (int)len, (const char *)p);
}

static void
test_deadline_stop_reply_in_place_of_a_reply_is_a_stray_stop(void **state)
{
    (void)state;
    struct fixture f;
    /* QEMU 7.2 user mode: a second stop reply after an interrupt, read where
     * the next request's reply was due; the real reply follows. */
    open_text(&f,
              PROLOGUE_NOACK "-> m1000,4\n<- T02thread:p1f.1f;\n<- 00112233\n"
                             "-> Hgp1f.20\n<- S02\n<- OK\n",
              200);
    stray_calls = 0;
    f.s->x.hooks.stray_stop = on_stray;
    uint8_t b[4];
    assert_int_equal(rsp_mem_read(f.s, 0x1000, b, sizeof b), 0);
    assert_int_equal(b[0], 0x00);
    assert_int_equal(b[3], 0x33);
    assert_int_equal(stray_calls, 1);
    assert_string_equal(stray_seen, "T02thread:p1f.1f;");
    struct rsp_reply r;
    assert_int_equal(rsp_request(&f.s->x, RSP_PKT_SET_THREAD_G, "Hgp1f.20", 8, &r), 0);
    assert_int_equal(r.len, 2);
    assert_int_equal(stray_calls, 2);
    assert_int_equal(rsp_session_stats(f.s)->stray_stops, 2);
    fake_script_finish(f.s, f.fs, true);
}

static void
test_deadline_exit_reply_to_m_is_eexited(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE_NOACK "-> m1000,4\n<- W00\n", 200);
    uint8_t b[4];
    assert_int_equal(rsp_mem_read(f.s, 0x1000, b, sizeof b), SW_EEXITED);
    assert_contains(rsp_session_errmsg(f.s), "'m1000,4': the process has exited");
    assert_contains(rsp_session_errmsg(f.s), "W00");
    fake_script_finish(f.s, f.fs, true);
}

static void
test_deadline_killed_reply_to_g_is_eexited(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE_NOACK "-> g\n<- X09;process:1f\n", 200);
    struct rsp_reply r;
    assert_int_equal(rsp_request(&f.s->x, RSP_PKT_READ_REGS, "g", 1, &r), SW_EEXITED);
    assert_contains(rsp_session_errmsg(f.s), "'g': the process has been killed");
    fake_script_finish(f.s, f.fs, true);
}

static void
test_deadline_of_the_run_cuts_a_wait_in_time(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE_NOACK "-> m1000,4\n<! flood +\n", 10000);
    rsp_session_set_deadline(f.s, 120);
    uint8_t b[4];
    uint64_t t0 = sw_now_us();
    assert_int_equal(rsp_mem_read(f.s, 0x1000, b, sizeof b), SW_ETIMEDOUT);
    uint64_t took_ms = (sw_now_us() - t0) / 1000;
    assert_true(took_ms >= 100 && took_ms < 1000);
    assert_contains(rsp_session_errmsg(f.s),
                    "no reply to 'm1000,4' within the run's deadline of 0.12 s");
    /* Past it, nothing more is sent. */
    assert_int_equal(rsp_mem_read(f.s, 0x2000, b, sizeof b), SW_ETIMEDOUT);
    assert_contains(rsp_session_errmsg(f.s), "'m2000,4' not sent: the run's deadline");
    fake_script_finish(f.s, f.fs, false); /* the flood never ends */
}

static void
test_deadline_from_the_config_starts_at_open(void **state)
{
    (void)state;
    struct rsp_session_config cfg;
    struct rsp_session *s = NULL;
    struct sw_errbuf err = { 0 };
    rsp_session_config_init(&cfg);
    cfg.no_prefetch = true;
    cfg.timeout_ms = 10000;
    cfg.deadline_ms = 100;
    struct fake_script *fs = fake_script_parse(QSUP "<! flood +\n");
    assert_non_null(fs);
    uint64_t t0 = sw_now_us();
    assert_int_equal(rsp_session_connect(fake_transport_new(fs), &cfg, &s, &err), SW_ETIMEDOUT);
    assert_true((sw_now_us() - t0) / 1000 < 1000);
    assert_contains(err.msg, "no reply to 'qSupported:");
    assert_contains(err.msg, "the run's deadline of 0.1 s");
    fake_script_free(fs);
}

static void
test_deadline_write_to_a_peer_that_reads_nothing_times_out(void **state)
{
    (void)state;
    int sv[2];
    struct rsp_transport *t = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(rsp_transport_fd_open(sv[0], "pair", &t, &err), 0);
    t->write_timeout_ms = 100;
    size_t len = 16u << 20;
    char *big = calloc(1, len);
    assert_non_null(big);
    uint64_t t0 = sw_now_us();
    assert_int_equal(t->ops->write(t, big, len), SW_ETIMEDOUT);
    uint64_t took_ms = (sw_now_us() - t0) / 1000;
    assert_true(took_ms >= 90 && took_ms < 2000);
    assert_contains(t->err.msg, "pair: the stub read nothing for 0.1 s");
    free(big);
    rsp_transport_close(t);
    close(sv[1]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline_ack_flood_does_not_extend_it),
        cmocka_unit_test(test_deadline_stray_nak_flood_in_noack_mode_does_not_extend_it),
        cmocka_unit_test(test_deadline_interrupt_bytes_do_not_extend_it),
        cmocka_unit_test(test_deadline_stop_notifications_do_not_extend_it),
        cmocka_unit_test(test_deadline_console_packets_do_not_extend_it_nor_answer),
        cmocka_unit_test(test_deadline_console_packet_is_not_the_reply),
        cmocka_unit_test(test_deadline_stop_reply_in_place_of_a_reply_is_a_stray_stop),
        cmocka_unit_test(test_deadline_exit_reply_to_m_is_eexited),
        cmocka_unit_test(test_deadline_killed_reply_to_g_is_eexited),
        cmocka_unit_test(test_deadline_of_the_run_cuts_a_wait_in_time),
        cmocka_unit_test(test_deadline_from_the_config_starts_at_open),
        cmocka_unit_test(test_deadline_write_to_a_peer_that_reads_nothing_times_out),
    };
    return cmocka_run_group_tests_name("deadline", tests, NULL, NULL);
}
