/* tests/unit/rsp/test_session.c -- the RSP session over recorded and scripted transcripts.
 *
 * Recorded: gdbserver 13.1 (ack and no-ack) and qemu-x86_64 7.2 user
 * (fixtures/transcripts/).  Scripted: the failure paths (timeouts, hang-ups,
 * garbage, naks, bad checksums, empty and error replies).  The fake stub
 * (tests/tools/fake_transport.c) fails the test on any unexpected packet.
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

/* A stub with multiprocess ids and no-ack mode, stopped in thread p1f.1f. */
#define PROLOGUE_NOACK                                                                             \
    QSUP "<- PacketSize=1000;multiprocess+;vContSupported+;QStartNoAckMode+\n"                     \
         "-> QStartNoAckMode\n<- OK\n-> ?\n<- T05thread:p1f.1f;\n"
/* The same in ack mode (no QStartNoAckMode offered). */
#define PROLOGUE_ACK                                                                               \
    QSUP "<- PacketSize=800;multiprocess+;vContSupported+\n-> ?\n<- T05thread:p1f.1f;\n"

struct fixture {
    struct fake_script *fs;
    struct rsp_session *s;
    struct sw_errbuf err;
    int rc;
};

static int
open_script(struct fixture *f, struct fake_script *fs, int timeout_ms, bool allow_noack)
{
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.keep_acks = !allow_noack;
    cfg.no_prefetch = true; /* recorded before the connect's prefetch: test_prefetch.c */
    if (timeout_ms)
        cfg.timeout_ms = timeout_ms;
    memset(f, 0, sizeof *f);
    f->fs = fs;
    assert_non_null(fs);
    f->rc = rsp_session_connect(fake_transport_new(fs), &cfg, &f->s, &f->err);
    return f->rc;
}

static int
open_text(struct fixture *f, const char *text)
{
    return open_script(f, fake_script_parse(text), 200, true);
}

/* Close and check that the session did exactly what the transcript says. */
static void
finish(struct fixture *f, bool all_played)
{
    fake_script_finish(f->s, f->fs, all_played);
}

/* ---- recorded transcripts ------------------------------------------------- */

struct replay_expect {
    const char *file;
    bool allow_noack;
    size_t chunk; /* fake read size */
    size_t nregs, g_size;
    size_t g_len;
    size_t mem_len, mem_chunk;
    bool has_p;
    const char *exec_file; /* NULL: unsupported */
    const char *e_reply;   /* the E reply to m0,10 */
    size_t auxv_len;
    bool has_svr4;
};

/* The calls the recorder made, in order (see the transcripts' headers). */
static void
replay(const struct replay_expect *x)
{
    struct fixture f;
    struct fake_script *fs = fake_script_load(x->file);
    assert_non_null(fs);
    fake_script_set_chunk(fs, x->chunk);
    assert_int_equal(open_script(&f, fs, 0, x->allow_noack), 0);
    struct rsp_session *s = f.s;

    const struct rsp_tdesc *td = rsp_session_tdesc(s);
    assert_non_null(td);
    assert_string_equal(td->arch, "i386:x86-64");
    assert_int_equal(td->nregs, x->nregs);
    assert_int_equal(td->g_size, x->g_size);
    assert_int_equal(rsp_mem_chunk(s), x->mem_chunk);

    struct rsp_thread_id any = { 0, 0 };
    struct rsp_stop st;
    assert_int_equal(rsp_resume(s, any, false, 0), 0);
    assert_int_equal(rsp_wait_stop(s, -1, &st), 0);
    assert_int_equal(st.kind, RSP_STOP_SIGNAL);
    assert_int_equal(st.signal, 5);
    assert_true(st.has_thread);

    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(s, &ids, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0].tid, st.thread.tid);
    uint64_t sp = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *b;
        size_t len;
        assert_int_equal(rsp_regs_read(s, ids[i], &b, &len), 0);
        assert_int_equal(len, x->g_len);
        if (i == 0)
            for (size_t k = 0; k < td->nregs; k++)
                if (strcmp(td->regs[k].name, "rsp") == 0)
                    memcpy(&sp, b + td->regs[k].offset, 8);
    }
    const uint8_t *b0;
    size_t l0;
    assert_int_equal(rsp_regs_read(s, ids[0], &b0, &l0), 0); /* cached: no packet */
    assert_true(sp > 0x10000);

    uint8_t reg[64];
    size_t rl;
    for (int k = 0; k < 2; k++) {
        int rc = rsp_reg_read(s, ids[0], 7, reg, sizeof reg, &rl);
        if (x->has_p) {
            assert_int_equal(rc, 0);
            assert_int_equal(rl, 8);
            assert_memory_equal(reg, &sp, 8); /* register 7 is rsp */
        } else {
            assert_int_equal(rc, SW_EUNSUP);
            assert_contains(rsp_session_errmsg(s), "no 'p' packet");
        }
    }
    free(ids);

    uint8_t *mem = malloc(x->mem_len);
    if (rsp_mem_read(s, sp + 64 - x->mem_len, mem, x->mem_len) != 0)
        fail_msg("%s / %s", rsp_session_errmsg(s), fake_script_error(f.fs));
    assert_int_equal(rsp_mem_read(s, 0, mem, 16), SW_EMEM);
    char want[80];
    snprintf(want, sizeof want, "reading 16 bytes at 0x0: stub replied %s", x->e_reply);
    assert_contains(rsp_session_errmsg(s), want);
    free(mem);

    char *data;
    size_t len;
    int rc = rsp_xfer_read(s, "exec-file", "", &data, &len);
    if (x->exec_file) {
        assert_int_equal(rc, 0);
        assert_string_equal(data, x->exec_file);
        free(data);
    } else {
        assert_int_equal(rc, SW_EUNSUP);
        assert_contains(rsp_session_errmsg(s), "qXfer:exec-file:read");
    }
    assert_int_equal(rsp_xfer_read(s, "auxv", "", &data, &len), 0);
    assert_int_equal(len, x->auxv_len);
    /* AT_PHDR (3) is among the first entries of an x86-64 auxv */
    bool phdr = false;
    for (size_t i = 0; i + 16 <= len; i += 16)
        phdr |= data[i] == 3 && data[i + 1] == 0;
    assert_true(phdr);
    free(data);
    rc = rsp_xfer_read(s, "libraries-svr4", "", &data, &len);
    if (x->has_svr4) {
        assert_int_equal(rc, 0);
        assert_non_null(strstr(data, "<library-list-svr4"));
        assert_non_null(strstr(data, "lm=\"0x7ffff7ffe8b0\"")); /* RLE'd on the wire */
        free(data);
    } else {
        assert_int_equal(rc, SW_EUNSUP);
    }

    const struct rsp_stats *stats = rsp_session_stats(s);
    assert_int_equal(stats->bytes_sent, fake_script_bytes_written(f.fs));
    assert_int_equal(stats->retransmits, 0);
    assert_int_equal(stats->by_kind[RSP_PKT_READ_REGS], 3);
    assert_int_equal(stats->by_kind[RSP_PKT_READ_REG], x->has_p ? 2 : 1);
    assert_int_equal(stats->by_kind[RSP_PKT_READ_MEM],
                     (x->mem_len + x->mem_chunk - 1) / x->mem_chunk + 1);
    assert_true(stats->round_trips > 10);
    assert_true(stats->packets_received >= stats->round_trips);
    finish(&f, true);
}

static void
test_session_gdbserver_noack_transcript_replays_exactly(void **state)
{
    (void)state;
    struct replay_expect x = { "fixtures/transcripts/gdbserver13_x86_64_noack.rsp",
                               true,
                               4096,
                               148,
                               2416,
                               2416,
                               12000,
                               9152,
                               false,
                               "/tmp/rec/prog",
                               "E01",
                               368,
                               true };
    replay(&x);
}

static void
test_session_gdbserver_transcript_fed_byte_by_byte_is_the_same(void **state)
{
    (void)state;
    struct replay_expect x = { "fixtures/transcripts/gdbserver13_x86_64_noack.rsp",
                               true,
                               1,
                               148,
                               2416,
                               2416,
                               12000,
                               9152,
                               false,
                               "/tmp/rec/prog",
                               "E01",
                               368,
                               true };
    replay(&x);
}

static void
test_session_gdbserver_ack_mode_acks_every_reply(void **state)
{
    (void)state;
    struct replay_expect x = { "fixtures/transcripts/gdbserver13_x86_64_ack.rsp",
                               false,
                               7,
                               148,
                               2416,
                               2416,
                               12000,
                               9152,
                               false,
                               "/tmp/rec/prog",
                               "E01",
                               368,
                               true };
    replay(&x);
}

static void
test_session_qemu_user_transcript_reads_includes_and_caps_m(void **state)
{
    (void)state;
    struct replay_expect x = { "fixtures/transcripts/qemu72_x86_64_user.rsp",
                               true,
                               4096,
                               66,
                               608,
                               608,
                               5000,
                               0x800,
                               true,
                               NULL,
                               "E14",
                               288,
                               false };
    replay(&x);
}

static void
test_session_qemu_tdesc_numbers_fs_base_after_gs(void **state)
{
    (void)state;
    struct fixture f;
    struct fake_script *fs = fake_script_load("fixtures/transcripts/qemu72_x86_64_user.rsp");
    assert_int_equal(open_script(&f, fs, 0, true), 0);
    const struct rsp_tdesc *td = rsp_session_tdesc(f.s);
    assert_string_equal(td->regs[23].name, "gs");
    assert_string_equal(td->regs[24].name, "fs_base");
    assert_int_equal(td->regs[24].regnum, 24);
    assert_string_equal(td->regs[16].name, "rip");
    assert_int_equal(td->regs[16].offset, 128);
    finish(&f, false);
}

/* ---- the connect sequence ------------------------------------------------- */

static void
test_session_connect_sends_qsupported_noack_then_halt_reason(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK), 0);
    assert_true(rsp_has_feature(f.s, RSP_FEAT_NOACK));
    assert_true(rsp_has_feature(f.s, RSP_FEAT_MULTIPROCESS));
    assert_false(rsp_has_feature(f.s, RSP_FEAT_XFER_FEATURES));
    assert_null(rsp_session_tdesc(f.s));
    assert_int_equal(rsp_packet_size(f.s), 0x1000);
    const struct rsp_stop *st = rsp_last_stop(f.s);
    assert_non_null(st);
    assert_int_equal(st->thread.pid, 0x1f);
    assert_int_equal(st->thread.tid, 0x1f);
    const struct rsp_stats *stats = rsp_session_stats(f.s);
    assert_int_equal(stats->round_trips, 3);
    assert_int_equal(stats->by_kind[RSP_PKT_QSUPPORTED], 1);
    assert_int_equal(stats->by_kind[RSP_PKT_NOACK], 1);
    assert_int_equal(stats->by_kind[RSP_PKT_HALT_REASON], 1);
    assert_string_equal(rsp_packet_name(RSP_PKT_HALT_REASON), "?");
    assert_null(rsp_packet_name(RSP_PKT__COUNT));
    finish(&f, true);
}

static void
test_session_connect_without_noack_offer_stays_in_ack_mode(void **state)
{
    (void)state;
    struct fixture f;
    /* The fake fails the test if any reply goes without a '+'. */
    assert_int_equal(open_text(&f, PROLOGUE_ACK), 0);
    assert_false(rsp_has_feature(f.s, RSP_FEAT_NOACK));
    assert_int_equal(rsp_session_stats(f.s)->bytes_sent, fake_script_bytes_written(f.fs));
    assert_int_equal(rsp_mem_chunk(f.s), 0x3c0); /* (0x800-4)/2 rounded down to 64 */
    finish(&f, true);
}

static void
test_session_connect_skips_the_stop_qemu_system_sends_unasked(void **state)
{
    (void)state;
    struct fixture f;
    /* qemu-system 7.2: connecting stops the running VM, which it reports before it reads the
     * qSupported (seen with build/fixtures/kernel/x86_64.elf); the fake acks-checks both. */
    assert_int_equal(open_text(&f, QSUP "<- T02thread:01;\n"
                                        "<- PacketSize=1000;vContSupported+;multiprocess+\n"
                                        "-> ?\n<- T05thread:p01.01;\n"),
                     0);
    assert_true(rsp_has_feature(f.s, RSP_FEAT_MULTIPROCESS));
    assert_int_equal(rsp_packet_size(f.s), 0x1000);
    const struct rsp_stop *st = rsp_last_stop(f.s);
    assert_non_null(st);
    assert_int_equal(st->thread.pid, 1);
    assert_int_equal(st->thread.tid, 1);
    assert_int_equal(rsp_session_stats(f.s)->round_trips, 2);
    finish(&f, true);
}

static void
test_session_regs_read_decodes_unavailable_bytes_as_zero_and_caches(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_ACK "-> Hgp1f.1f\n<- OK\n-> g\n<- 0011xx33\n"
                                                "-> Hgp1f.20\n<- OK\n-> g\n<- 44\n"),
                     0);
    struct rsp_thread_id any = { 0, 0 }, t20 = { 0x1f, 0x20 };
    const uint8_t *b;
    size_t len;
    assert_int_equal(rsp_regs_read(f.s, any, &b, &len), 0);
    assert_int_equal(len, 4);
    assert_memory_equal(b, "\x00\x11\x00\x33", 4);
    assert_int_equal(rsp_regs_read(f.s, any, &b, &len), 0);
    assert_int_equal(rsp_regs_read(f.s, t20, &b, &len), 0);
    assert_int_equal(len, 1);
    assert_int_equal(rsp_session_stats(f.s)->by_kind[RSP_PKT_READ_REGS], 2);
    finish(&f, true);
}

static void
test_session_resume_drops_register_cache_and_thread_selection(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> Hgp1f.1f\n<- OK\n-> g\n<- 00\n"
                                                  "-> vCont?\n<- vCont;c;C;s;S\n-> vCont;c\n"
                                                  "<- O48656c6c6f\n<- O\n<- T05thread:p1f.1f;\n"
                                                  "-> Hgp1f.1f\n<- OK\n-> g\n<- 01\n"),
                     0);
    struct rsp_thread_id any = { 0, 0 };
    struct rsp_stop st;
    const uint8_t *b;
    size_t len;
    assert_int_equal(rsp_regs_read(f.s, any, &b, &len), 0);
    assert_int_equal(b[0], 0);
    assert_int_equal(rsp_resume(f.s, any, false, 0), 0);
    assert_null(rsp_last_stop(f.s));
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), 0); /* the O packets are skipped */
    assert_int_equal(rsp_regs_read(f.s, any, &b, &len), 0);
    assert_int_equal(b[0], 1);
    finish(&f, true);
}

static void
test_session_resume_one_thread_with_signal_uses_vcont_action(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> vCont?\n<- vCont;c;C;s;S\n"
                                                  "-> vCont;C0b:p1f.20\n<- X0b;process:1f\n"
                                                  "-> vCont;C0e:p1f.20;c\n"),
                     0);
    struct rsp_thread_id t = { 0x1f, 0x20 };
    struct rsp_stop st;
    assert_int_equal(rsp_resume(f.s, t, true, 11), 0);
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), 0);
    assert_int_equal(st.kind, RSP_STOP_KILLED);
    assert_int_equal(st.signal, 11);
    assert_int_equal(st.thread.pid, 0x1f);
    assert_int_equal(rsp_resume(f.s, t, false, 14), 0);
    finish(&f, true);
}

static void
test_session_resume_without_vcont_falls_back_to_c(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_ACK "-> vCont?\n<- \n-> c\n<- W00\n-> C02\n"), 0);
    struct rsp_thread_id any = { 0, 0 };
    struct rsp_stop st;
    assert_int_equal(rsp_resume(f.s, any, false, 0), 0);
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), 0);
    assert_int_equal(st.kind, RSP_STOP_EXITED);
    assert_int_equal(rsp_resume(f.s, any, false, 2), 0);
    finish(&f, true);
}

static void
test_session_interrupt_sends_ctrl_c_and_waits_for_the_stop(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> vCont?\n<- vCont;c;C\n-> vCont;c\n"
                                                  "-! interrupt\n<- T02thread:p1f.1f;\n"),
                     0);
    struct rsp_thread_id any = { 0, 0 };
    struct rsp_stop st;
    assert_int_equal(rsp_resume(f.s, any, false, 0), 0);
    assert_int_equal(rsp_interrupt(f.s), 0);
    assert_int_equal(rsp_wait_stop(f.s, 100, &st), 0);
    assert_int_equal(st.signal, 2);
    finish(&f, true);
}

static void
test_session_wait_stop_without_reply_times_out(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> vCont?\n<- vCont;c;C\n-> vCont;c\n"
                                                  "<! silence\n"),
                     0);
    struct rsp_thread_id any = { 0, 0 };
    struct rsp_stop st;
    assert_int_equal(rsp_resume(f.s, any, false, 0), 0);
    assert_int_equal(rsp_wait_stop(f.s, 20, &st), SW_ETIMEDOUT);
    assert_contains(rsp_session_errmsg(f.s), "stop reply");
    finish(&f, true);
}

static void
test_session_detach_with_multiprocess_names_the_pid(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> D;1f\n<- OK\n"), 0);
    assert_int_equal(rsp_detach(f.s), 0);
    finish(&f, true);
}

static void
test_session_pass_signals_only_when_offered(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK), 0);
    int sigs[] = { 14, 30 };
    assert_int_equal(rsp_pass_signals(f.s, sigs, 2), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "not offered by the stub");
    finish(&f, true);

    assert_int_equal(open_text(&f, QSUP "<- PacketSize=1000;QPassSignals+\n-> ?\n<- S05\n"
                                        "-> QPassSignals:e;1e\n<- OK\n"),
                     0);
    assert_int_equal(rsp_pass_signals(f.s, sigs, 2), 0);
    finish(&f, true);
}

/* ---- threads ----------------------------------------------------------------- */

static void
test_session_threads_without_xfer_loop_qfthreadinfo_until_l(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> qfThreadInfo\n<- mp1f.1f,p1f.20\n"
                                                  "-> qsThreadInfo\n<- mp01.2b67\n"
                                                  "-> qsThreadInfo\n<- l\n"),
                     0);
    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(ids[1].tid, 0x20);
    assert_int_equal(ids[2].pid, 1);
    assert_int_equal(ids[2].tid, 0x2b67);
    char buf[32];
    rsp_thread_id_format(f.s, ids[2], buf, sizeof buf);
    assert_string_equal(buf, "p1.2b67");
    struct rsp_thread_id all = { 0x1f, -1 };
    rsp_thread_id_format(f.s, all, buf, sizeof buf);
    assert_string_equal(buf, "p1f.-1");
    free(ids);
    finish(&f, true);
}

static void
test_session_threads_bad_reply_is_eproto_with_offset(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> qfThreadInfo\n<- mp1f.zz\n"), 0);
    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(f.s, &ids, &n), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "qfThreadInfo");
    assert_contains(rsp_session_errmsg(f.s), "offset 5");
    finish(&f, true);
}

/* ---- memory ------------------------------------------------------------------- */

static void
test_session_mem_short_reply_continues_where_it_stopped(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> m1000,4\n<- 0011\n-> m1002,2\n<- 2233\n"), 0);
    uint8_t b[4];
    assert_int_equal(rsp_mem_read(f.s, 0x1000, b, 4), 0);
    assert_memory_equal(b, "\x00\x11\x22\x33", 4);
    finish(&f, true);
}

static void
test_session_mem_error_reply_is_emem_naming_the_address(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> m7ffe0000,40\n<- E01\n"), 0);
    uint8_t b[64];
    assert_int_equal(rsp_mem_read(f.s, 0x7ffe0000, b, 64), SW_EMEM);
    assert_contains(rsp_session_errmsg(f.s), "reading 64 bytes at 0x7ffe0000: stub replied E01");
    finish(&f, true);
}

static void
test_session_mem_e22_on_a_long_read_retries_with_halves(void **state)
{
    (void)state;
    struct fixture f;
    /* PacketSize 0x1000 without QStartNoAckMode looks like QEMU: 0x800 chunks.
     * A stub that refuses those with E22 gets halves from then on. */
    assert_int_equal(open_text(&f, QSUP "<- PacketSize=1000\n-> ?\n<- S05\n"
                                        "-> m0,800\n<- E22\n-> m0,400\n<- E22\n"
                                        "-> m0,200\n<- E22\n-> m0,100\n<- E22\n"),
                     0);
    assert_int_equal(rsp_mem_chunk(f.s), 0x800);
    uint8_t *b = calloc(1, 0x800);
    assert_int_equal(rsp_mem_read(f.s, 0, b, 0x800), SW_EMEM);
    assert_contains(rsp_session_errmsg(f.s), "reading 256 bytes at 0x0: stub replied E22");
    free(b);
    finish(&f, true);
}

static void
test_session_mem_malformed_reply_is_eproto(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> m10,2\n<- 001\n"), 0);
    uint8_t b[2];
    assert_int_equal(rsp_mem_read(f.s, 0x10, b, 2), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "reading 2 bytes at 0x10: malformed reply");
    finish(&f, true);
}

/* ---- empty and error replies ------------------------------------------------- */

static void
test_session_empty_reply_is_remembered_and_not_sent_again(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> Hgp1f.1f\n<- OK\n-> p10\n<- \n"), 0);
    struct rsp_thread_id any = { 0, 0 };
    uint8_t b[8];
    size_t len;
    assert_int_equal(rsp_reg_read(f.s, any, 16, b, sizeof b, &len), SW_EUNSUP);
    assert_int_equal(rsp_reg_read(f.s, any, 16, b, sizeof b, &len), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "no 'p' packet");
    assert_false(rsp_has_feature(f.s, RSP_FEAT_P_PACKET));
    assert_int_equal(rsp_session_stats(f.s)->by_kind[RSP_PKT_READ_REG], 1);
    finish(&f, true);
}

static void
test_session_error_text_reply_is_estub_with_the_text(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> qXfer:acme.stack:read:x:0,ff0\n"
                                                  "<- E.no such object\n"
                                                  "-> qXfer:acme.stack:read:y:0,ff0\n<- \n"
                                                  "-> qXfer:acme.stack:read:y:0,ff0\n"
                                                  "<- mab}]\n"
                                                  "-> qXfer:acme.stack:read:y:3,ff0\n<- l\n"),
                     0);
    char *data;
    size_t len;
    assert_int_equal(rsp_xfer_read(f.s, "acme.stack", "x", &data, &len), SW_ESTUB);
    assert_contains(rsp_session_errmsg(f.s), "stub replied E.no such object");
    /* an unknown object's empty reply is not remembered for the next try */
    assert_int_equal(rsp_xfer_read(f.s, "acme.stack", "y", &data, &len), SW_EUNSUP);
    assert_int_equal(rsp_xfer_read(f.s, "acme.stack", "y", &data, &len), 0);
    assert_int_equal(len, 3);
    assert_string_equal(data, "ab}");
    free(data);
    finish(&f, true);
}

static void
test_session_known_xfer_object_not_offered_is_not_sent(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK), 0);
    char *data;
    size_t len;
    assert_int_equal(rsp_xfer_read(f.s, "libraries-svr4", "", &data, &len), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "not offered by the stub in qSupported");
    finish(&f, true);
}

/* ---- the link failing ------------------------------------------------------ */

static void
test_session_no_reply_times_out_naming_the_packet(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, QSUP "<- PacketSize=1000\n-> ?\n<! silence\n"), SW_ETIMEDOUT);
    assert_null(f.s);
    assert_int_equal(f.err.code, SW_ETIMEDOUT);
    assert_contains(f.err.msg, "no reply to '?' within 0.2 s");
    assert_string_equal(fake_script_error(f.fs), "");
    fake_script_free(f.fs);
}

static void
test_session_hangup_mid_packet_is_econn_naming_the_packet(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> m1000,4\n<! raw $0011\n<! hangup\n"), 0);
    uint8_t b[4];
    assert_int_equal(rsp_mem_read(f.s, 0x1000, b, 4), SW_ECONN);
    assert_contains(rsp_session_errmsg(f.s), "waiting for the reply to 'm1000,4'");
    assert_contains(rsp_session_errmsg(f.s), "in the middle of a packet");
    finish(&f, true);
}

static void
test_session_garbage_flood_times_out_instead_of_hanging(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_script(&f, fake_script_parse(QSUP "<! flood hello world \n"), 50, true),
                     SW_ETIMEDOUT);
    assert_contains(f.err.msg, "no reply to 'qSupported:");
    assert_contains(f.err.msg, "bytes of garbage");
    fake_script_free(f.fs);
}

static void
test_session_garbage_then_silence_is_named_in_the_timeout(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK
                               "-> Hgp1f.1f\n<- OK\n-> g\n<! garbage \\x00\\xffjunk\n<! silence\n"),
                     0);
    const uint8_t *b;
    size_t len;
    struct rsp_thread_id any = { 0, 0 };
    assert_int_equal(rsp_regs_read(f.s, any, &b, &len), SW_ETIMEDOUT);
    assert_contains(rsp_session_errmsg(f.s), "'g'");
    assert_contains(rsp_session_errmsg(f.s), "6 bytes of garbage");
    finish(&f, true);
}

static void
test_session_bad_checksum_sends_nak_and_takes_the_resend(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, QSUP "<- PacketSize=1000\n-> ?\n<! badsum S05\n<- S05\n"), 0);
    assert_int_equal(rsp_last_stop(f.s)->signal, 5);
    /* '+' for the qSupported reply, '-' for the bad one, '+' for the resend */
    const struct rsp_stats *st = rsp_session_stats(f.s);
    assert_int_equal(st->packets_received, 3);
    finish(&f, true);
}

static void
test_session_bad_checksum_in_noack_mode_is_eproto(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, PROLOGUE_NOACK "-> m0,1\n<! badsum 00\n"), 0);
    uint8_t b;
    assert_int_equal(rsp_mem_read(f.s, 0, &b, 1), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "reply to 'm0,1': bad checksum");
    finish(&f, true);
}

static void
test_session_stub_nak_makes_us_retransmit(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, QSUP "<- PacketSize=1000\n-> ?\n<! nak\n-> ?\n<- S05\n"), 0);
    assert_int_equal(rsp_session_stats(f.s)->retransmits, 1);
    finish(&f, true);
}

static void
test_session_stub_naks_four_times_is_eproto(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, QSUP "<- PacketSize=1000\n-> ?\n<! nak\n-> ?\n<! nak\n"
                                        "-> ?\n<! nak\n-> ?\n<! nak\n"),
                     SW_EPROTO);
    assert_contains(f.err.msg, "sending '?': the stub refused it 4 times");
    assert_string_equal(fake_script_error(f.fs), "");
    fake_script_free(f.fs);
}

static void
test_session_notifications_are_counted_and_ignored(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, QSUP "<- PacketSize=1000\n-> ?\n<% oocd_keepalive:01\n<- S05\n"),
                     0);
    assert_int_equal(rsp_session_stats(f.s)->notifications, 1);
    finish(&f, true);
}

static void
test_session_oversize_reply_is_eproto(void **state)
{
    (void)state;
    struct fixture f;
    /* PacketSize 0x40: the decoder keeps 64 KiB at least; a 70000-byte run
     * expansion goes past it. */
    char text[512];
    char payload[64 * 1024 / 97 * 3 + 200];
    size_t o = 0;
    for (int i = 0; i < 64 * 1024 / 97 + 10; i++) {
        payload[o++] = '0';
        payload[o++] = '*';
        payload[o++] = '~';
    }
    payload[o] = 0;
    struct fake_script *fs;
    snprintf(text, sizeof text, PROLOGUE_NOACK "-> m0,1\n<- ");
    char *all = malloc(strlen(text) + o + 2);
    strcpy(all, text);
    strcat(all, payload);
    strcat(all, "\n");
    fs = fake_script_parse(all);
    free(all);
    assert_int_equal(open_script(&f, fs, 200, true), 0);
    uint8_t b;
    assert_int_equal(rsp_mem_read(f.s, 0, &b, 1), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "reply to 'm0,1': longer than");
    finish(&f, true);
}

static void
test_session_bad_stop_reply_at_connect_is_eproto(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, QSUP "<- PacketSize=1000\n-> ?\n<- T0zthread:1;\n"), SW_EPROTO);
    assert_contains(f.err.msg, "reply to '?': stop reply: cannot parse at offset 1");
    fake_script_free(f.fs);
}

static void
test_session_trace_prints_transcript_lines(void **state)
{
    (void)state;
    struct fixture f;
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.trace = true;
    f.fs = fake_script_parse(PROLOGUE_NOACK);
    /* The trace goes to stderr; here it only must not disturb the session. */
    assert_int_equal(rsp_session_connect(fake_transport_new(f.fs), &cfg, &f.s, &f.err), 0);
    finish(&f, true);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_gdbserver_noack_transcript_replays_exactly),
        cmocka_unit_test(test_session_gdbserver_transcript_fed_byte_by_byte_is_the_same),
        cmocka_unit_test(test_session_gdbserver_ack_mode_acks_every_reply),
        cmocka_unit_test(test_session_qemu_user_transcript_reads_includes_and_caps_m),
        cmocka_unit_test(test_session_qemu_tdesc_numbers_fs_base_after_gs),
        cmocka_unit_test(test_session_connect_sends_qsupported_noack_then_halt_reason),
        cmocka_unit_test(test_session_connect_without_noack_offer_stays_in_ack_mode),
        cmocka_unit_test(test_session_connect_skips_the_stop_qemu_system_sends_unasked),
        cmocka_unit_test(test_session_regs_read_decodes_unavailable_bytes_as_zero_and_caches),
        cmocka_unit_test(test_session_resume_drops_register_cache_and_thread_selection),
        cmocka_unit_test(test_session_resume_one_thread_with_signal_uses_vcont_action),
        cmocka_unit_test(test_session_resume_without_vcont_falls_back_to_c),
        cmocka_unit_test(test_session_interrupt_sends_ctrl_c_and_waits_for_the_stop),
        cmocka_unit_test(test_session_wait_stop_without_reply_times_out),
        cmocka_unit_test(test_session_detach_with_multiprocess_names_the_pid),
        cmocka_unit_test(test_session_pass_signals_only_when_offered),
        cmocka_unit_test(test_session_threads_without_xfer_loop_qfthreadinfo_until_l),
        cmocka_unit_test(test_session_threads_bad_reply_is_eproto_with_offset),
        cmocka_unit_test(test_session_mem_short_reply_continues_where_it_stopped),
        cmocka_unit_test(test_session_mem_error_reply_is_emem_naming_the_address),
        cmocka_unit_test(test_session_mem_e22_on_a_long_read_retries_with_halves),
        cmocka_unit_test(test_session_mem_malformed_reply_is_eproto),
        cmocka_unit_test(test_session_empty_reply_is_remembered_and_not_sent_again),
        cmocka_unit_test(test_session_error_text_reply_is_estub_with_the_text),
        cmocka_unit_test(test_session_known_xfer_object_not_offered_is_not_sent),
        cmocka_unit_test(test_session_no_reply_times_out_naming_the_packet),
        cmocka_unit_test(test_session_hangup_mid_packet_is_econn_naming_the_packet),
        cmocka_unit_test(test_session_garbage_flood_times_out_instead_of_hanging),
        cmocka_unit_test(test_session_garbage_then_silence_is_named_in_the_timeout),
        cmocka_unit_test(test_session_bad_checksum_sends_nak_and_takes_the_resend),
        cmocka_unit_test(test_session_bad_checksum_in_noack_mode_is_eproto),
        cmocka_unit_test(test_session_stub_nak_makes_us_retransmit),
        cmocka_unit_test(test_session_stub_naks_four_times_is_eproto),
        cmocka_unit_test(test_session_notifications_are_counted_and_ignored),
        cmocka_unit_test(test_session_oversize_reply_is_eproto),
        cmocka_unit_test(test_session_bad_stop_reply_at_connect_is_eproto),
        cmocka_unit_test(test_session_trace_prints_transcript_lines),
    };
    return cmocka_run_group_tests_name("session", tests, NULL, NULL);
}
