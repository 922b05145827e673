/* tests/unit/targets/test_rsp_proc_ppc64.c -- the byte order of a "powerpc:common64" stub.
 *
 * QEMU's target.xml says "powerpc:common64" for ppc64 and ppc64le alike.
 * On scripted stubs (tests/tools/fake_transport.h): without --exe the
 * stopped thread's MSR decides (SF set, LE as the byte order read), else
 * the auxv keys; with --exe the ELF header decides and the target is not
 * asked.  Registers are then decoded in the order chosen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "targets/targets_internal.h"
#include "rsp/session.h"
#include "tests/tools/fake_transport.h"

#define PC 0x10000a2cULL
#define SP 0x4000820370ULL
/* What Linux gives a 64-bit process: SF EE PR ME IR DR RI, and LE when
 * little-endian (QEMU 7.2 user mode, measured). */
#define MSR_BE 0x800000000000d032ULL
#define MSR_LE 0x800000000000d033ULL

/* r0..r31 numbered from 0, then pc, msr, cr, lr, ctr, xer in order: 'g'
 * holds 32 * 8 + 8 + 8 + 4 + 8 + 8 + 4 bytes. */
static void
tdesc_xml(char *out, bool with_msr)
{
    char *p = out + sprintf(out, "<?xml version=\"1.0\"?><target>"
                                 "<architecture>powerpc:common64</architecture>"
                                 "<feature name=\"org.gnu.gdb.power.core\">");
    for (int i = 0; i < 32; i++)
        p += sprintf(p, "<reg name=\"r%d\" bitsize=\"64\"/>", i);
    p += sprintf(p,
                 "<reg name=\"pc\" bitsize=\"64\"/>%s<reg name=\"cr\" bitsize=\"32\"/>"
                 "<reg name=\"lr\" bitsize=\"64\"/><reg name=\"ctr\" bitsize=\"64\"/>"
                 "<reg name=\"xer\" bitsize=\"32\"/></feature></target>",
                 with_msr ? "<reg name=\"msr\" bitsize=\"64\"/>" : "");
}

/* VAL as SIZE bytes in hex, big- or little-endian. */
static char *
hex(char *out, uint64_t val, int size, bool big)
{
    for (int i = 0; i < size; i++) {
        int shift = big ? 8 * (size - 1 - i) : 8 * i;
        sprintf(out + 2 * i, "%02x", (unsigned)(val >> shift) & 0xff);
    }
    return out + 2 * size;
}

/* A 'g' reply in the BIG or little byte order: rN = 0x100 + N (r1 = SP),
 * pc, msr when WITH_MSR, cr, lr, ctr, xer. */
static void
g_reply(char *out, bool big, bool with_msr, uint64_t msr)
{
    char *p = out;
    for (int i = 0; i < 32; i++)
        p = hex(p, i == 1 ? SP : 0x100u + (unsigned)i, 8, big);
    p = hex(p, PC, 8, big);
    if (with_msr)
        p = hex(p, msr, 8, big);
    p = hex(p, 0x22000000, 4, big);
    p = hex(p, 0x10000b10, 8, big);
    p = hex(p, 0, 8, big);
    p = hex(p, 0, 4, big);
    *p = '\0';
}

/* The connect sequence of a QEMU-like stub stopped in thread p10.10 with
 * FEATURES offered, followed by MORE. */
static char *
script(const char *features, bool with_msr, const char *more)
{
    char *s = malloc(64 * 1024);
    char *xml = malloc(8 * 1024);
    tdesc_xml(xml, with_msr);
    sprintf(s,
            "-> qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;"
            "xmlRegisters=i386\n"
            "<- PacketSize=1000;QStartNoAckMode+;multiprocess+;qXfer:features:read+;%s\n"
            "-> QStartNoAckMode\n<- OK\n-> ?\n<- T05thread:p10.10;\n"
            "-> qXfer:features:read:target.xml:0,ff0\n<- l%s\n%s",
            features, xml, more);
    free(xml);
    return s;
}

/* The script of a target stopped with MSR in the BIG or little order. */
static char *
script_with_g(bool big, uint64_t msr)
{
    char g[1200], more[1400];
    g_reply(g, big, true, msr);
    snprintf(more, sizeof more, "-> Hgp10.10\n<- OK\n-> g\n<- %s\n", g);
    return script("", true, more);
}

struct ppc_fixture {
    struct fake_script *fs;
    struct sw_proc *p;
    char *text;
};

static void
open_proc(struct ppc_fixture *fx, char *text, const struct sw_rsp_config *cfg)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_errbuf err = { 0 };
    fx->text = text;
    fx->fs = fake_script_parse(text);
    assert_non_null(fx->fs);
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = 200;
    assert_int_equal(rsp_session_connect(fake_transport_new(fx->fs), &scfg, &s, &err), 0);
    fx->p = NULL;
    if (sw_proc_rsp_new(s, cfg, &fx->p, &err) != 0)
        fail_msg("sw_proc_rsp_new: %s (transcript: %s)", err.msg, fake_script_error(fx->fs));
}

static void
close_proc(struct ppc_fixture *fx)
{
    const char *e = fake_script_error(fx->fs);
    if (e[0])
        fail_msg("transcript: %s", e);
    sw_proc_free(fx->p);
    fake_script_free(fx->fs);
    free(fx->text);
}

/* The pc and r1 read through the process must be the values scripted. */
static void
check_pc_and_sp(struct ppc_fixture *fx)
{
    sw_word v;
    assert_int_equal(fx->p->ops->read_reg(fx->p, SW_TID_DEFAULT, (unsigned)fx->p->arch->dw_pc, &v),
                     0);
    assert_int_equal(v, PC);
    assert_int_equal(fx->p->ops->read_reg(fx->p, SW_TID_DEFAULT, 1, &v), 0);
    assert_int_equal(v, SP);
}

static void
test_ppc64_little_endian_msr_without_exe_is_ppc64le(void **state)
{
    (void)state;
    struct ppc_fixture fx;
    open_proc(&fx, script_with_g(false, MSR_LE), NULL);
    assert_ptr_equal(fx.p->arch, &arch_ppc64le);
    assert_true(fake_script_done(fx.fs));
    check_pc_and_sp(&fx); /* from the same 'g': no packet more */
    close_proc(&fx);
}

static void
test_ppc64_big_endian_msr_without_exe_is_ppc64(void **state)
{
    (void)state;
    struct ppc_fixture fx;
    open_proc(&fx, script_with_g(true, MSR_BE), NULL);
    assert_ptr_equal(fx.p->arch, &arch_ppc64);
    check_pc_and_sp(&fx);
    close_proc(&fx);
}

static void
test_ppc64_msr_in_32_bit_mode_decides_nothing_and_keeps_big_endian(void **state)
{
    (void)state;
    struct ppc_fixture fx;
    /* SF clear in both readings, no auxv offered: the description's
     * default (gdb's too) stays. */
    open_proc(&fx, script_with_g(true, 0xd032), NULL);
    assert_ptr_equal(fx.p->arch, &arch_ppc64);
    close_proc(&fx);
}

/* auxv entries AT_PHDR = 0x10000040, AT_PAGESZ = 0x10000, AT_NULL in the
 * qXfer binary encoding of the fake (\xNN). */
static void
auxv_reply(char *out, bool big)
{
    static const uint64_t words[] = { 3, 0x10000040, 6, 0x10000, 0, 0 };
    char *p = out + sprintf(out, "<- l");
    for (size_t i = 0; i < 6; i++)
        for (int b = 0; b < 8; b++) {
            int shift = big ? 8 * (7 - b) : 8 * b;
            p += sprintf(p, "\\x%02x", (unsigned)(words[i] >> shift) & 0xff);
        }
    sprintf(p, "\n");
}

static void
test_ppc64_without_msr_the_auxv_byte_order_decides(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        struct ppc_fixture fx;
        char more[1400];
        char *p = more + sprintf(more, "-> qXfer:auxv:read::0,ff0\n");
        auxv_reply(p, big);
        open_proc(&fx, script("qXfer:auxv:read+", false, more), NULL);
        assert_ptr_equal(fx.p->arch, big ? &arch_ppc64 : &arch_ppc64le);
        assert_true(fake_script_done(fx.fs)); /* and no 'g' for a missing msr */
        close_proc(&fx);
    }
}

static void
test_ppc64_exe_elf_header_decides_without_asking_the_target(void **state)
{
    (void)state;
    const char *exe = "/usr/powerpc64le-linux-gnu/lib/libc.so.6";
    if (access(exe, R_OK) != 0)
        fail_msg("%s is missing: install libc6-ppc64el-cross", exe);
    struct sw_rsp_config cfg = { 0 };
    cfg.exe = exe;
    struct ppc_fixture fx;
    /* A big-endian MSR that nobody reads: the script has no 'g'. */
    open_proc(&fx, script("", true, ""), &cfg);
    assert_ptr_equal(fx.p->arch, &arch_ppc64le);
    assert_true(fake_script_done(fx.fs));
    close_proc(&fx);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ppc64_little_endian_msr_without_exe_is_ppc64le),
        cmocka_unit_test(test_ppc64_big_endian_msr_without_exe_is_ppc64),
        cmocka_unit_test(test_ppc64_msr_in_32_bit_mode_decides_nothing_and_keeps_big_endian),
        cmocka_unit_test(test_ppc64_without_msr_the_auxv_byte_order_decides),
        cmocka_unit_test(test_ppc64_exe_elf_header_decides_without_asking_the_target),
    };
    return cmocka_run_group_tests_name("rsp_proc_ppc64", tests, NULL, NULL);
}
