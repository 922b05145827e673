/* tests/unit/walker/test_excframe.c -- M-profile exception frames on recorded memory.
 *
 * The two frames below were read with gdb-multiarch from qemu-system-arm 7.2 -M mps2-an385
 * running build/fixtures/cortexm/mps2-an385.elf, stopped at p_leaf: PendSV preempted the
 * SysTick handler in h_pend (EXC_RETURN 0xFFFFFFF1), which had preempted spin_odd in Thread
 * mode (0xFFFFFFF9); both times the stack was 4 mod 8 and the core stacked the alignment word.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "walker/steppers/excframe.h"

#define DW_R4     4
#define DW_R7     7
#define DW_R12    12
#define DW_SP     13
#define DW_LR     14
#define DW_PC     15
#define DW_XPSR   32
#define DW_PSP    34
#define DW_MSP_NS 35
#define DW_PSP_NS 36
#define DW_MSP_S  37
#define DW_PSP_S  38

#define NESTED_SP 0x20000f78u /* PendSV's frame over h_pend */
#define OUTER_SP  0x20000fb0u /* SysTick's frame over spin_odd */

static const uint32_t nested_words[8] = { 0x00019255, 0x00000000, 0x10000000, 0xe000ed04,
                                          0x00000000, 0x00000121, 0x000000f8, 0x0100020f };
static const uint32_t outer_words[8] = { 0x00019255, 0x00000000, 0x00000007, 0xe000e010,
                                         0x00000000, 0x00000161, 0x00000056, 0x01000200 };

static void
put_words(uint8_t *out, const uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        arch_store(&arch_armv7m, out + 4 * i, 4, w[i]);
}

static void
test_exc_return_values_armv7m_defines(void **state)
{
    (void)state;
    static const struct {
        uint32_t v;
        bool psp, thread, fp;
    } ok[] = {
        { 0xfffffff1, false, false, false }, { 0xfffffff9, false, true, false },
        { 0xfffffffd, true, true, false },   { 0xffffffe1, false, false, true },
        { 0xffffffe9, false, true, true },   { 0xffffffed, true, true, true },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct sw_excframe k;
        assert_int_equal(sw_excframe_kind(ok[i].v, &k), 0);
        assert_int_equal(k.psp, ok[i].psp);
        assert_int_equal(k.thread, ok[i].thread);
        assert_int_equal(k.fp, ok[i].fp);
        assert_int_equal(k.size, ok[i].fp ? 104 : 32);
        assert_true(arch_armv7m.exc_return(ok[i].v));
        /* An EXC_RETURN value is kept as it is; a Thumb return address loses bit 0. */
        assert_int_equal(arch_armv7m.ra_code(ok[i].v), ok[i].v);
    }
    /* ARMv8-M: the Non-secure stack (S clear), a Non-secure exception (ES clear), the
     * additional state context (DCRS clear). */
    static const struct {
        uint32_t v;
        bool secure, psp;
        size_t size;
    } v8[] = {
        { 0xffffffbc, false, true, 32 },  /* Non-secure Thread mode, PSP: FreeRTOS on TrustZone */
        { 0xffffffb8, false, false, 32 }, /* Non-secure Thread mode, MSP */
        { 0xffffffb0, false, false, 32 }, /* Non-secure Handler mode */
        { 0xffffffdd, true, true, 72 },   /* Secure PSP, callee registers stacked */
        { 0xffffffcd, true, true, 144 },  /* the same over an FP frame */
    };
    for (size_t i = 0; i < sizeof v8 / sizeof v8[0]; i++) {
        struct sw_excframe k;
        assert_int_equal(sw_excframe_kind(v8[i].v, &k), 0);
        assert_int_equal(k.secure, v8[i].secure);
        assert_int_equal(k.psp, v8[i].psp);
        assert_int_equal(k.size, v8[i].size);
        assert_true(arch_armv7m.exc_return(v8[i].v));
    }
    /* Handler mode on PSP is reserved; bit 1 set, bit 7 clear and plain addresses are not
     * exception returns. */
    static const sw_addr bad[] = { 0xfffffff5,  0xffffffe5,  0xffffffb4, 0xffffffff,
                                   0xfffffffe,  0xfffffff3,  0xffffff7d, 0x00000139,
                                   0x1fffffff9, 0xfefffffff, 0x0 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sw_excframe k;
        assert_int_equal(sw_excframe_kind(bad[i], &k), SW_EINVAL);
        assert_false(arch_armv7m.exc_return(bad[i]));
    }
    /* The arch table's test and the decoder agree on every 0xFFFFFFxx value. */
    for (unsigned lo = 0; lo < 256; lo++) {
        struct sw_excframe k;
        assert_int_equal(arch_armv7m.exc_return(0xffffff00u | lo),
                         sw_excframe_kind(0xffffff00u | lo, &k) == 0);
    }
    assert_int_equal(arch_armv7m.ra_code(0x139), 0x138);
}

static void
test_decodes_the_recorded_basic_frame_with_its_alignment_word(void **state)
{
    (void)state;
    uint8_t mem[32];
    struct sw_excframe k;
    struct sw_frame f;
    sw_word v;
    put_words(mem, nested_words, 8);
    assert_int_equal(sw_excframe_kind(0xfffffff1, &k), 0);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, NESTED_SP, mem, &f), 0);
    assert_int_equal(f.ra, 0xf8);               /* h_pend+12, after its dsb; isb */
    assert_int_equal(f.sp, NESTED_SP + 32 + 4); /* xPSR bit 9: one word of padding */
    assert_int_equal(f.ra_loc.addr, NESTED_SP + 24);
    assert_true(f.non_call);
    assert_int_equal(f.trust, SW_TRUST_SIGFRAME);
    assert_true(sw_frame_reg(&f, DW_LR, &v));
    assert_int_equal(v, 0x121);
    assert_true(sw_frame_reg(&f, DW_R12, &v));
    assert_int_equal(v, 0);
    assert_true(sw_frame_reg(&f, DW_XPSR, &v));
    assert_int_equal(v, 0x0100020f);
    assert_true(sw_frame_reg(&f, DW_SP, &v));
    assert_int_equal(v, NESTED_SP + 36);
    assert_false(sw_frame_reg(&f, DW_R4, &v)); /* not stacked: the caller's to fill */
}

static void
test_extended_frame_skips_the_fp_words(void **state)
{
    (void)state;
    uint8_t mem[32];
    struct sw_excframe k;
    struct sw_frame f;
    uint32_t w[8] = { 1, 2, 3, 4, 12, 0x201, 0x200, 0x01000000 }; /* 8-aligned: no pad */
    put_words(mem, w, 8);
    assert_int_equal(sw_excframe_kind(0xffffffe9, &k), 0);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x20001000, mem, &f), 0);
    assert_int_equal(f.ra, 0x200);
    /* s0-s15, FPSCR and the reserved word, written or lazily only reserved */
    assert_int_equal(f.sp, 0x20001000 + 104);
    w[7] |= 1u << 9;
    put_words(mem, w, 8);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x20001000, mem, &f), 0);
    assert_int_equal(f.sp, 0x20001000 + 108);
}

/* ARMv8-M's additional state context: the integrity signature, a reserved word and r4-r11
 * below the basic frame (ARMv8-M ARM B3.19, "Exception stack frames"). */
static void
test_additional_state_context_gives_r4_to_r11(void **state)
{
    (void)state;
    uint8_t mem[SW_EXCFRAME_READ];
    struct sw_excframe k;
    struct sw_frame f;
    sw_word v;
    uint32_t w[18] = { 0xfefa125b, 0, 4, 5, 6, 0x20001ff0, 8,     9,     10,
                       11,         0, 1, 2, 3, 12,         0x301, 0x300, 0x01000200 };
    put_words(mem, w, 18);
    assert_int_equal(sw_excframe_kind(0xffffffdd, &k), 0);
    assert_int_equal(k.extra, 40);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x20001000, mem, &f), 0);
    assert_int_equal(f.ra, 0x300);
    assert_int_equal(f.ra_loc.addr, 0x20001000 + 40 + 24);
    assert_int_equal(f.sp, 0x20001000 + 72 + 4);
    assert_true(sw_frame_reg(&f, DW_R7, &v));
    assert_int_equal(v, 0x20001ff0);
    assert_true(sw_frame_reg(&f, DW_R4, &v));
    assert_int_equal(v, 4);
    assert_true(sw_frame_reg(&f, DW_LR, &v));
    assert_int_equal(v, 0x301);
    /* Without its signature the context is not one the hardware wrote; nor with the FP
     * frame's signature over a basic frame. */
    w[0] = 0x12345678;
    put_words(mem, w, 18);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x20001000, mem, &f), SW_EINVAL);
    w[0] = 0xfefa125a;
    put_words(mem, w, 18);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x20001000, mem, &f), SW_EINVAL);
}

/* DCRS clear over an extended frame: signature 0xFEFA125A (bit 0 is FType), r4-r11, the
 * basic frame, then s0-s15, FPSCR and the reserved word (written or lazily reserved). */
static void
test_additional_state_context_over_an_fp_frame(void **state)
{
    (void)state;
    uint8_t mem[SW_EXCFRAME_READ];
    struct sw_excframe k;
    struct sw_frame f;
    sw_word v;
    uint32_t w[18] = { 0xfefa125a, 0, 4, 5, 6, 7,  8,     9,     10,
                       0x11,       0, 1, 2, 3, 12, 0x401, 0x400, 0x01000000 };
    put_words(mem, w, 18);
    /* Secure stack, DCRS clear, FType clear, Thread mode, MSP, Non-secure exception. */
    assert_int_equal(sw_excframe_kind(0xffffffc8, &k), 0);
    assert_true(k.fp && k.secure && !k.es && !k.psp && k.thread);
    assert_int_equal(k.size, 40 + 104);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x30001000, mem, &f), 0);
    assert_int_equal(f.ra, 0x400);
    assert_int_equal(f.ra_loc.addr, 0x30001000 + 40 + 24);
    assert_int_equal(f.sp, 0x30001000 + 144); /* 8-aligned: no pad */
    assert_true(sw_frame_reg(&f, DW_R4 + 7, &v));
    assert_int_equal(v, 0x11);
    /* The basic frame's signature over an extended frame is refused. */
    w[0] = 0xfefa125b;
    put_words(mem, w, 18);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x30001000, mem, &f), SW_EINVAL);
}

static void
test_rejects_what_the_hardware_cannot_have_stacked(void **state)
{
    (void)state;
    uint8_t mem[32];
    struct sw_excframe k;
    struct sw_frame f;
    assert_int_equal(sw_excframe_kind(0xfffffff9, &k), 0);
    /* Zero-filled, as OpenOCD answers a read of unmapped memory: no Thumb bit in xPSR. */
    memset(mem, 0, sizeof mem);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x20000000, mem, &f), SW_EINVAL);
    /* A resume PC with bit 0 set. */
    uint32_t w[8] = { 0, 0, 0, 0, 0, 0, 0x201, 0x01000000 };
    put_words(mem, w, 8);
    assert_int_equal(sw_excframe_decode(&arch_armv7m, &k, 0x20000000, mem, &f), SW_EINVAL);
}

/* A walker over fake target memory holding both recorded frames. */
struct fx {
    struct sw_proc *p;
    struct sw_walker *w;
};

static void
fx_open(struct fx *fx)
{
    uint8_t mem[0x100];
    memset(mem, 0, sizeof mem);
    put_words(mem + (NESTED_SP - 0x20000f00), nested_words, 8);
    put_words(mem + (OUTER_SP - 0x20000f00), outer_words, 8);
    fx->p = fake_proc_new(&arch_armv7m);
    fake_proc_add_mem(fx->p, 0x20000f00, mem, sizeof mem);
    fake_proc_set_reg(fx->p, 1, DW_PC, 0x8e);
    fake_proc_set_reg(fx->p, 1, DW_SP, 0x20000f64);
    fake_proc_set_reg(fx->p, 1, DW_R7, 0x20000f64);
    fake_proc_set_reg(fx->p, 1, DW_R4, 0x20002000);
    struct sw_walker_config cfg = { 0 };
    struct sw_errbuf err = { 0 };
    if (sw_walker_new(fx->p, &cfg, &fx->w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
}

/* The handler frame as a CFI step leaves it: RA the EXC_RETURN value, SP the handler's CFA. */
static struct sw_frame
handler_frame(sw_addr ra, sw_addr sp)
{
    struct sw_frame in;
    sw_frame_init(&in);
    in.thread = 1;
    in.level = 3;
    in.ra = ra;
    in.sp = sp;
    in.kind = SW_FRAME_SIGNAL;
    in.non_call = true;
    in.trust = SW_TRUST_CFI;
    sw_frame_set_reg(&in, DW_R4, 0x20002000);
    sw_frame_set_reg(&in, DW_R7, 0x20000f9c);
    return in;
}

static void
test_sighandler_steps_through_msp_frames(void **state)
{
    (void)state;
    struct fx fx;
    struct sw_frame out;
    enum sw_walk_end end;
    sw_word v;
    fx_open(&fx);
    struct sw_frame in = handler_frame(0xfffffff1, NESTED_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), 0);
    assert_string_equal(out.stepper->ops->name, "sighandler");
    assert_int_equal(out.ra, 0xf8);
    assert_int_equal(out.sp, NESTED_SP + 36);
    assert_int_equal(out.fp, 0x20000f9c); /* r7, not stacked: the handler frame's */
    assert_true(sw_frame_reg(&out, DW_R4, &v));
    assert_int_equal(v, 0x20002000);
    assert_true(out.non_call);
    assert_int_equal(out.kind, SW_FRAME_NORMAL);
    sw_walker_free(fx.w);
}

static void
test_psp_frame_is_found_through_the_psp_register(void **state)
{
    (void)state;
    struct fx fx;
    struct sw_frame out;
    enum sw_walk_end end;
    fx_open(&fx);
    /* Thread mode on the process stack: the frame is at PSP, not at the handler's CFA. */
    struct sw_frame in = handler_frame(0xfffffffd, NESTED_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), SW_ENOENT); /* no psp known */
    fake_proc_set_reg(fx.p, 1, DW_PSP, OUTER_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), 0);
    assert_int_equal(out.ra, 0x56); /* spin_odd's loop */
    assert_int_equal(out.sp, OUTER_SP + 36);
    sw_walker_free(fx.w);
}

/* ARMv8-M: a frame on the Non-secure stack under a Non-secure handler is at the handler's
 * CFA, as on ARMv7-M; one on the other security state's stack is at that state's banked
 * stack pointer, and without it the walk ends there. */
static void
test_security_states_pick_the_stack(void **state)
{
    (void)state;
    struct fx fx;
    struct sw_frame out;
    enum sw_walk_end end;
    fx_open(&fx);
    /* Non-secure exception, Non-secure Handler mode on MSP_NS: the handler's own stack. */
    struct sw_frame in = handler_frame(0xffffffb0, NESTED_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), 0);
    assert_int_equal(out.ra, 0xf8);
    assert_int_equal(out.sp, NESTED_SP + 36);
    /* A Secure exception over Non-secure Thread code on MSP_NS: msp_ns, not the CFA. */
    in = handler_frame(0xffffffb9, NESTED_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), SW_ENOENT); /* no msp_ns */
    fake_proc_set_reg(fx.p, 1, DW_MSP_NS, OUTER_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), 0);
    assert_int_equal(out.ra, 0x56);
    assert_int_equal(out.sp, OUTER_SP + 36);
    /* Non-secure Thread mode on PSP_NS under a Secure handler: psp_ns, never the current
     * state's psp. */
    in = handler_frame(0xffffffbd, NESTED_SP);
    fake_proc_set_reg(fx.p, 1, DW_PSP, NESTED_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), SW_ENOENT);
    fake_proc_set_reg(fx.p, 1, DW_PSP_NS, OUTER_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), 0);
    assert_int_equal(out.ra, 0x56);
    /* Secure Thread mode on PSP under a Secure handler: psp_s first, psp without it. */
    in = handler_frame(0xfffffffd, 0x20000f00);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), 0);
    assert_int_equal(out.ra, 0xf8); /* psp: NESTED_SP */
    fake_proc_set_reg(fx.p, 1, DW_PSP_S, OUTER_SP);
    assert_int_equal(sw_walk_single(fx.w, &in, &out, &end), 0);
    assert_int_equal(out.ra, 0x56);
    sw_walker_free(fx.w);
}

/* A Non-secure exception over Secure code: the additional state context on MSP_S gives
 * r4-r11; a context without its signature is no frame, and the walk ends. */
static void
test_nonsecure_exception_over_secure_code_reads_msp_s(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_armv7m);
    uint8_t mem[72];
    sw_word v;
    uint32_t w[18] = { 0xfefa125b, 0, 0x44, 5, 6, 0x30001ff0, 8,     9,     10,
                       11,         0, 1,    2, 3, 12,         0x301, 0x300, 0x01000000 };
    put_words(mem, w, 18);
    fake_proc_add_mem(p, 0x30001000, mem, sizeof mem);
    fake_proc_set_reg(p, 1, DW_PC, 0x8e);
    fake_proc_set_reg(p, 1, DW_SP, 0x20000f64);
    fake_proc_set_reg(p, 1, DW_MSP_S, 0x30001000);
    struct sw_walker_config cfg = { 0 };
    struct sw_errbuf err = { 0 };
    struct sw_walker *wk;
    if (sw_walker_new(p, &cfg, &wk, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    struct sw_frame in = handler_frame(0xffffffd8, 0x20000f70), out;
    enum sw_walk_end end;
    assert_int_equal(sw_walk_single(wk, &in, &out, &end), 0);
    assert_int_equal(out.ra, 0x300);
    assert_int_equal(out.sp, 0x30001000 + 72);
    assert_true(sw_frame_reg(&out, DW_R4, &v));
    assert_int_equal(v, 0x44); /* the stacked r4, not the handler frame's */
    assert_int_equal(out.fp, 0x30001ff0);
    sw_walker_free(wk);
    /* The same words with a bad signature: no frame believed. */
    w[0] = 0xfefa1250;
    put_words(mem, w, 18);
    p = fake_proc_new(&arch_armv7m);
    fake_proc_add_mem(p, 0x30001000, mem, sizeof mem);
    fake_proc_set_reg(p, 1, DW_PC, 0x8e);
    fake_proc_set_reg(p, 1, DW_SP, 0x20000f64);
    fake_proc_set_reg(p, 1, DW_MSP_S, 0x30001000);
    if (sw_walker_new(p, &cfg, &wk, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    assert_int_equal(sw_walk_single(wk, &in, &out, &end), SW_ENOENT);
    sw_walker_free(wk);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exc_return_values_armv7m_defines),
        cmocka_unit_test(test_decodes_the_recorded_basic_frame_with_its_alignment_word),
        cmocka_unit_test(test_extended_frame_skips_the_fp_words),
        cmocka_unit_test(test_additional_state_context_gives_r4_to_r11),
        cmocka_unit_test(test_additional_state_context_over_an_fp_frame),
        cmocka_unit_test(test_rejects_what_the_hardware_cannot_have_stacked),
        cmocka_unit_test(test_sighandler_steps_through_msp_frames),
        cmocka_unit_test(test_psp_frame_is_found_through_the_psp_register),
        cmocka_unit_test(test_security_states_pick_the_stack),
        cmocka_unit_test(test_nonsecure_exception_over_secure_code_reads_msp_s),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
