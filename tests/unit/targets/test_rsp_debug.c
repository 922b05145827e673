/* tests/unit/targets/test_rsp_debug.c -- resuming past a breakpoint instruction of the program.
 *
 * A thread stopped by SIGTRAP at a breakpoint instruction rspwalk did not
 * insert (the fixtures' STOP_NOW(): int3, brk #0, trap) is stepped over it
 * before it resumes, as gdb does; every other resume costs what it did
 * (a SIGINT stop from a pause: the resume alone).  Each test writes the
 * transcript the resume must produce (tests/tools/fake_transport.h): the
 * fake stub fails on any other packet.  The x86-64 stub is a gdbserver
 * (no-ack, qXfer:threads, multiprocess: a stop selects its thread), which
 * sends swbreak with the PC moved back to the int3 and answers 'P' empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "rsp/session.h"
#include "tests/tools/fake_transport.h"

#define INT3_PC  0x40113aULL
#define RSP_WORD 0x7ffe0000e000ULL

static const char x86_tdesc[] =
    "<?xml version=\"1.0\"?><target><architecture>i386:x86-64</architecture>"
    "<feature name=\"org.gnu.gdb.i386.core\">"
    "<reg name=\"rax\" bitsize=\"64\"/><reg name=\"rbx\" bitsize=\"64\"/>"
    "<reg name=\"rcx\" bitsize=\"64\"/><reg name=\"rdx\" bitsize=\"64\"/>"
    "<reg name=\"rsi\" bitsize=\"64\"/><reg name=\"rdi\" bitsize=\"64\"/>"
    "<reg name=\"rbp\" bitsize=\"64\"/><reg name=\"rsp\" bitsize=\"64\"/>"
    "<reg name=\"r8\" bitsize=\"64\"/><reg name=\"r9\" bitsize=\"64\"/>"
    "<reg name=\"r10\" bitsize=\"64\"/><reg name=\"r11\" bitsize=\"64\"/>"
    "<reg name=\"r12\" bitsize=\"64\"/><reg name=\"r13\" bitsize=\"64\"/>"
    "<reg name=\"r14\" bitsize=\"64\"/><reg name=\"r15\" bitsize=\"64\"/>"
    "<reg name=\"rip\" bitsize=\"64\"/><reg name=\"eflags\" bitsize=\"32\"/>"
    "</feature></target>";

#define QSUP                                                                                       \
    "-> qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;"                   \
    "xmlRegisters=i386\n"
#define VCONT_PROBE "-> vCont?\n<- vCont;c;C;t;s;S;r\n"

/* VAL as SIZE little-endian bytes in hex. */
static void
hex_le(char *out, uint64_t val, int size)
{
    for (int i = 0; i < size; i++)
        sprintf(out + 2 * i, "%02x", (unsigned)(val >> (8 * i)) & 0xff);
}

/* An x86-64 stop reply of signal SIG at PC, rsp and rip expedited. */
static void
x86_stop(char *out, int sig, bool swbreak, uint64_t pc)
{
    char sp[17], ip[17];
    hex_le(sp, RSP_WORD, 8);
    hex_le(ip, pc, 8);
    sprintf(out, "T%02x%s07:%s;10:%s;thread:p10.10;core:0;", sig, swbreak ? "swbreak:;" : "", sp,
            ip);
}

/* An x86-64 'g' reply with rip = PC (rax..r15 = 0x1000 + n, eflags 0x246). */
static void
x86_g(char *out, uint64_t pc)
{
    char *p = out;
    for (int i = 0; i < 16; i++, p += 16)
        hex_le(p, 0x1000u + (unsigned)i, 8);
    hex_le(p, pc, 8);
    hex_le(p + 16, 0x246, 4);
    p[24] = '\0';
}

/* The connect of a gdbserver stopped as STOP says, with the x86-64 description. */
static char *
x86_head(const char *stop)
{
    char *s = malloc(64 * 1024);
    sprintf(s,
            QSUP "<- PacketSize=108;QStartNoAckMode+;multiprocess+;qXfer:features:read+;"
                 "qXfer:threads:read+;vContSupported+\n"
                 "-> QStartNoAckMode\n<- OK\n-> ?\n<- %s\n"
                 "-> qXfer:features:read:target.xml:0,f8\n<- l%s\n",
            stop, x86_tdesc);
    return s;
}

struct fx {
    struct fake_script *fs;
    struct sw_proc *p;
    char *text;
};

static void
fx_open(struct fx *f, char *text)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_errbuf err = { 0 };
    f->text = text;
    f->fs = fake_script_parse(text);
    assert_non_null(f->fs);
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = 200;
    scfg.no_prefetch = true; /* one object at a time: test_prefetch.c */
    if (rsp_session_connect(fake_transport_new(f->fs), &scfg, &s, &err) != 0)
        fail_msg("connect: %s / %s", err.msg, fake_script_error(f->fs));
    if (sw_proc_rsp_new(s, NULL, &f->p, &err) != 0)
        fail_msg("sw_proc_rsp_new: %s", err.msg);
}

static uint64_t
round_trips(struct fx *f)
{
    return rsp_session_stats(sw_proc_rsp_session(f->p))->round_trips;
}

static void
fx_close(struct fx *f)
{
    const char *e = fake_script_error(f->fs);
    if (e[0])
        fail_msg("transcript: %s", e);
    assert_true(fake_script_done(f->fs));
    sw_proc_free(f->p);
    fake_script_free(f->fs);
    free(f->text);
}

static void
test_resume_at_int3_writes_the_pc_past_it_with_g_where_p_is_empty(void **state)
{
    (void)state;
    struct fx f;
    char stop[200], again[200], g[300], g2[300];
    x86_stop(stop, 5, true, INT3_PC);
    x86_stop(again, 5, true, INT3_PC + 0x20);
    x86_g(g, INT3_PC);
    x86_g(g2, INT3_PC + 0x20);
    char *t = x86_head(stop);
    sprintf(t + strlen(t),
            /* the PC came with the stop: the byte there, then 'P' (empty), 'g', 'G' */
            "-> m40113a,1\n<- cc\n-> P10=3b11400000000000\n<- \n-> g\n<- %s\n-> G%.256s%s%s\n"
            "<- OK\n" VCONT_PROBE "-> vCont;c\n<- %s\n"
            /* the next stop at another int3: no 'P' again */
            "-> m40115a,1\n<- cc\n-> g\n<- %s\n-> G%.256s5b11400000000000%s\n<- OK\n"
            "-> vCont;c\n<- W00;process:10\n",
            g, g, "3b11400000000000", g + 272, again, g2, g2, g2 + 272);
    fx_open(&f, t);
    uint64_t rt0 = round_trips(&f);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    /* m, P, g, G, then the resume's vCont? probe (vCont itself has no reply). */
    assert_int_equal(round_trips(&f) - rt0, 5);
    assert_int_equal(f.p->debug->handle_debug_event(f.p, true), 0);
    rt0 = round_trips(&f);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(round_trips(&f) - rt0, 3);
    assert_int_equal(f.p->debug->handle_debug_event(f.p, true), SW_EEXITED);
    fx_close(&f);
}

static void
test_resume_after_a_pause_costs_the_resume_alone(void **state)
{
    (void)state;
    struct fx f;
    char stop[200];
    x86_stop(stop, 2, false, INT3_PC); /* SIGINT: even with an int3 at the PC */
    char *t = x86_head(stop);
    strcat(t, VCONT_PROBE "-> vCont;c\n<- W00;process:10\n");
    fx_open(&f, t);
    uint64_t rt0 = round_trips(&f);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(round_trips(&f) - rt0, 1); /* the vCont? probe */
    const struct rsp_stats *st = rsp_session_stats(sw_proc_rsp_session(f.p));
    assert_int_equal(st->by_kind[RSP_PKT_READ_MEM] + st->by_kind[RSP_PKT_READ_REGS] +
                         st->by_kind[RSP_PKT_WRITE_REG] + st->by_kind[RSP_PKT_WRITE_REGS],
                     0);
    fx_close(&f);
}

static void
test_resume_of_sigtrap_without_swbreak_on_x86_reads_nothing(void **state)
{
    (void)state;
    struct fx f;
    char stop[200];
    /* No swbreak: the PC is past the trap (raise(SIGTRAP), or a stub that
     * does not move it back), so the byte there is the next instruction's. */
    x86_stop(stop, 5, false, INT3_PC);
    char *t = x86_head(stop);
    strcat(t, VCONT_PROBE "-> vCont;c\n<- W00;process:10\n");
    fx_open(&f, t);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    fx_close(&f);
}

static void
test_resume_of_sigtrap_at_another_instruction_writes_nothing(void **state)
{
    (void)state;
    struct fx f;
    char stop[200];
    x86_stop(stop, 5, true, INT3_PC);
    char *t = x86_head(stop);
    strcat(t, "-> m40113a,1\n<- 90\n" VCONT_PROBE "-> vCont;c\n<- W00;process:10\n");
    fx_open(&f, t);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    fx_close(&f);
}

static void
test_resume_with_the_pc_unreadable_resumes_as_it_is(void **state)
{
    (void)state;
    struct fx f;
    char stop[200];
    x86_stop(stop, 5, true, INT3_PC);
    char *t = x86_head(stop);
    strcat(t, "-> m40113a,1\n<- E14\n" VCONT_PROBE "-> vCont;c\n<- W00;process:10\n");
    fx_open(&f, t);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    fx_close(&f);
}

static void
test_resume_of_another_thread_alone_leaves_the_stopped_one(void **state)
{
    (void)state;
    struct fx f;
    char stop[200];
    x86_stop(stop, 5, true, INT3_PC);
    char *t = x86_head(stop);
    strcat(t, VCONT_PROBE "-> vCont;c:p10.11\n<- W00;process:10\n");
    fx_open(&f, t);
    assert_int_equal(f.p->debug->resume(f.p, 0x11, 0), 0);
    fx_close(&f);
}

static void
test_resume_refused_write_fails_naming_the_register_and_sends_no_resume(void **state)
{
    (void)state;
    struct fx f;
    char stop[200];
    x86_stop(stop, 5, true, INT3_PC);
    char *t = x86_head(stop);
    strcat(t, "-> m40113a,1\n<- cc\n-> P10=3b11400000000000\n<- E03\n");
    fx_open(&f, t);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), SW_ENOREG);
    const char *msg = sw_proc_errmsg(f.p);
    assert_non_null(strstr(msg, "resuming past the breakpoint instruction at 0x40113a"));
    assert_non_null(strstr(msg, "writing rip (register 16) of thread p10.10"));
    assert_non_null(strstr(msg, "stub replied E03"));
    fx_close(&f);
}

static void
test_resume_with_a_malformed_memory_reply_fails(void **state)
{
    (void)state;
    struct fx f;
    char stop[200];
    x86_stop(stop, 5, true, INT3_PC);
    char *t = x86_head(stop);
    strcat(t, "-> m40113a,1\n<- zz\n");
    fx_open(&f, t);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), SW_EPROTO);
    assert_non_null(strstr(sw_proc_errmsg(f.p), "reading the instruction at 0x40113a"));
    fx_close(&f);
}

static void
test_passed_sigtrap_is_delivered_past_the_int3(void **state)
{
    (void)state;
    struct fx f;
    char stop[200], trap[200], segv[200], g[300];
    x86_stop(stop, 2, false, INT3_PC);
    x86_stop(trap, 5, true, INT3_PC);
    x86_stop(segv, 11, false, INT3_PC + 1);
    x86_g(g, INT3_PC);
    char *t = x86_head(stop);
    sprintf(t + strlen(t),
            VCONT_PROBE "-> vCont;c\n<- %s\n"
                        "-> m40113a,1\n<- cc\n-> P10=3b11400000000000\n<- \n-> g\n<- %s\n"
                        "-> G%.256s3b11400000000000%s\n<- OK\n"
                        "-> vCont;C05:p10.10;c\n<- %s\n",
            trap, g, g, g + 272, segv);
    fx_open(&f, t);
    const int pass[] = { 5 };
    assert_int_equal(sw_proc_rsp_set_pass(f.p, pass, 1), 0);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(f.p->debug->handle_debug_event(f.p, true), 0);
    fx_close(&f);
}

/* AArch64 under QEMU user: no expedited registers, 'P' answered, the PC at
 * the brk itself (no swbreak needed: pc_after_trap 0). */
static void
test_resume_at_brk_on_aarch64_writes_pc_plus_4_with_p(void **state)
{
    (void)state;
    struct fx f;
    char *t = malloc(64 * 1024), *p = t;
    p += sprintf(p, QSUP "<- PacketSize=1000;qXfer:features:read+;vContSupported+;multiprocess+\n"
                         "-> ?\n<- T05thread:p01.1f;\n"
                         "-> qXfer:features:read:target.xml:0,ff0\n<- l<target><architecture>"
                         "aarch64</architecture><feature name=\"org.gnu.gdb.aarch64.core\">");
    for (int i = 0; i < 31; i++)
        p += sprintf(p, "<reg name=\"x%d\" bitsize=\"64\"/>", i);
    p += sprintf(p, "<reg name=\"sp\" bitsize=\"64\"/><reg name=\"pc\" bitsize=\"64\"/>"
                    "<reg name=\"cpsr\" bitsize=\"32\"/></feature></target>\n-> g\n<- ");
    for (int i = 0; i < 32; i++)
        p += sprintf(p, "%016x", 0);
    hex_le(p, 0x5500000730ULL, 8);
    p += 16;
    p += sprintf(p, "00000000\n-> m5500000730,4\n<- 000020d4\n-> P20=3407000055000000\n<- OK\n"
                    "-> vCont?\n<- vCont;c;C;s;S\n-> vCont;c\n<- W00\n");
    fx_open(&f, t);
    assert_ptr_equal(f.p->arch, &arch_aarch64);
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    fx_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_at_int3_writes_the_pc_past_it_with_g_where_p_is_empty),
        cmocka_unit_test(test_resume_after_a_pause_costs_the_resume_alone),
        cmocka_unit_test(test_resume_of_sigtrap_without_swbreak_on_x86_reads_nothing),
        cmocka_unit_test(test_resume_of_sigtrap_at_another_instruction_writes_nothing),
        cmocka_unit_test(test_resume_with_the_pc_unreadable_resumes_as_it_is),
        cmocka_unit_test(test_resume_of_another_thread_alone_leaves_the_stopped_one),
        cmocka_unit_test(test_resume_refused_write_fails_naming_the_register_and_sends_no_resume),
        cmocka_unit_test(test_resume_with_a_malformed_memory_reply_fails),
        cmocka_unit_test(test_passed_sigtrap_is_delivered_past_the_int3),
        cmocka_unit_test(test_resume_at_brk_on_aarch64_writes_pc_plus_4_with_p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
