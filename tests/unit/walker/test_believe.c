/* tests/unit/walker/test_believe.c -- frames are checked before they are believed.
 *
 * tests/unit/data/aarch64_stripped.S (no function symbols, no CFI) on a fake
 * stack: the analysis finds its functions' extents from the code and walks
 * them where a stale x29 would mislead the frame-pointer stepper; so for
 * ppc64le_stripped.S, whose LR is saved through _savegpr0_30; a caller
 * outside every module, or not after a call where no CFI vouches for it,
 * ends the walk "corrupt", never "bottom"; one in executable memory of the
 * process's memory map is believed after a call, its bytes read from the
 * target.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/ppc_regs.h"
#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"

#define ELF SW_TEST_DATA "/aarch64_stripped.elf"

#define START    0x4000d4u
#define START_RA (START + 16) /* after blr x0 */
#define MAIN     (START + 0x80)
#define MAIN_RA  (MAIN + 16) /* after bl body */
#define BODY     (MAIN + 32)
#define BODY_RA  (BODY + 12) /* after bl leaf */
#define LEAF     (BODY + 24)

#define STACK  0x7fff0000u
#define S0     (STACK + 0x400)
#define DW_X29 29
#define DW_X30 30
#define DW_SP  31
#define DW_PC  32

/* A walker over the test ELF with frame 0 at the leaf's first instruction,
 * its caller's frames on the stack and x29 left pointing at a stale frame
 * record whose return address follows a call. */
static struct sw_walker *
open_stripped(bool defaults)
{
    struct sw_proc *p = fake_proc_new(&arch_aarch64);
    fake_proc_add_mem(p, STACK, NULL, 0x1000);
    fake_proc_set_reg(p, 1, DW_PC, LEAF);
    fake_proc_set_reg(p, 1, DW_SP, S0);
    fake_proc_set_reg(p, 1, DW_X30, BODY_RA);
    fake_proc_set_reg(p, 1, DW_X29, S0 + 0x200);
    fake_proc_put_word(p, S0 + 16, MAIN_RA);       /* body: str x30, [sp, #16] */
    fake_proc_put_word(p, S0 + 32 + 48, START_RA); /* main: str x30, [sp, #48] */
    fake_proc_put_word(p, S0 + 0x200, S0 + 0x300); /* the stale record */
    fake_proc_put_word(p, S0 + 0x208, START_RA);
    struct sw_walker_config cfg = { .exe = ELF, .no_default_steppers = !defaults };
    struct sw_errbuf err = { 0 };
    struct sw_walker *w;
    if (sw_walker_new(p, &cfg, &w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    return w;
}

static void
test_stripped_aarch64_walks_through_sp_saved_return_addresses(void **state)
{
    (void)state;
    struct sw_walker *w = open_stripped(true);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    static const sw_addr want[] = { LEAF, BODY_RA, MAIN_RA, START_RA };
    static const sw_addr want_sp[] = { S0, S0, S0 + 32, S0 + 96 };
    assert_int_equal(st.n, 4);
    for (size_t i = 0; i < st.n; i++) {
        assert_int_equal(st.frames[i].ra, want[i]);
        assert_int_equal(st.frames[i].sp, want_sp[i]);
        if (i > 0)
            assert_int_not_equal(st.frames[i].trust, SW_TRUST_SCAN);
    }
    assert_int_equal(st.end, SW_END_BOTTOM);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

#define PPC_ELF      SW_TEST_DATA "/ppc64le_stripped.elf"
#define PPC_START    0x100000d8u
#define PPC_START_RA (PPC_START + 8)
#define PPC_MAIN     (PPC_START + 0x80)
#define PPC_MAIN_RA  (PPC_MAIN + 16)
#define PPC_LEAF     (PPC_MAIN + 40)

static void
test_stripped_ppc64le_walks_through_an_out_of_line_lr_save(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_ppc64le);
    fake_proc_add_mem(p, STACK, NULL, 0x1000);
    fake_proc_set_reg(p, 1, PPC_DW_PC, PPC_LEAF);
    fake_proc_set_reg(p, 1, PPC_DW_R1, S0);
    fake_proc_set_reg(p, 1, PPC_DW_LR, PPC_MAIN_RA);
    fake_proc_put_word(p, S0, S0 + 64);                /* main's back chain */
    fake_proc_put_word(p, S0 + 64, S0 + 0x100);        /* _start's */
    fake_proc_put_word(p, S0 + 64 + 16, PPC_START_RA); /* _savegpr0_30: std r0,16(r1) */
    struct sw_walker_config cfg = { .exe = PPC_ELF };
    struct sw_errbuf err = { 0 };
    struct sw_walker *w;
    if (sw_walker_new(p, &cfg, &w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    static const sw_addr want[] = { PPC_LEAF, PPC_MAIN_RA, PPC_START_RA };
    assert_int_equal(st.n, 3);
    for (size_t i = 0; i < st.n; i++) {
        assert_int_equal(st.frames[i].ra, want[i]);
        if (i > 0)
            assert_int_not_equal(st.frames[i].trust, SW_TRUST_SCAN);
    }
    assert_int_equal(st.frames[2].sp, S0 + 64);
    assert_int_equal(st.end, SW_END_BOTTOM);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

/* A stepper that returns one caller for frame 0 (RA, trust TRUST) and then
 * says the stack ends. */
struct fixed_stepper {
    struct sw_stepper base;
    sw_addr ra;
    enum sw_trust trust;
};

static enum sw_gcf
fixed_caller(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct fixed_stepper *fs = (struct fixed_stepper *)s;
    if (in->level > 0)
        return SW_GCF_STACKBOTTOM;
    sw_frame_init(out);
    out->ra = fs->ra;
    out->sp = in->sp + 64;
    out->trust = fs->trust;
    return SW_GCF_SUCCESS;
}

static const struct sw_stepper_ops fixed_ops = {
    .name = "fixed",
    .priority = SW_PRIO_DEBUG,
    .caller_frame = fixed_caller,
};

/* Code in no module that the process's memory map lists as executable (a
 * JIT's anonymous buffer): nop; bl; nop. */
#define MAPCODE 0x90000000u
static const char *maps_file; /* the host file served as /proc/4242/maps, or NULL */

/* Walk with only a fixed stepper returning RA with TRUST: the frames and end. */
static void
walk_fixed(sw_addr ra, enum sw_trust trust, size_t want_n, enum sw_walk_end want_end)
{
    struct sw_walker *w = open_stripped(false);
    if (maps_file != NULL) {
        static const uint8_t code[] = { 0x1f, 0x20, 0x03, 0xd5, 0x10, 0x00,
                                        0x00, 0x94, 0x1f, 0x20, 0x03, 0xd5 };
        struct sw_proc *p = sw_walker_proc(w);
        p->pid = 4242;
        fake_proc_add_file(p, "/proc/4242/maps", maps_file);
        fake_proc_add_mem(p, MAPCODE, code, sizeof code);
    }
    struct fixed_stepper *fs = calloc(1, sizeof *fs);
    assert_non_null(fs);
    fs->base.ops = &fixed_ops;
    fs->ra = ra;
    fs->trust = trust;
    assert_int_equal(sw_add_stepper(w, &fs->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    if (st.n != want_n || st.end != want_end)
        fail_msg("ra %#lx trust %s: %zu frames, end %s; want %zu, %s", (unsigned long)ra,
                 sw_trust_name(trust), st.n, sw_walk_end_name(st.end), want_n,
                 sw_walk_end_name(want_end));
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_caller_outside_every_module_ends_corrupt(void **state)
{
    (void)state;
    walk_fixed(0x5, SW_TRUST_CFI, 1, SW_END_CORRUPT);
    walk_fixed(0x5, SW_TRUST_ANALYSIS, 1, SW_END_CORRUPT);
    walk_fixed(STACK + 8, SW_TRUST_FP, 1, SW_END_CORRUPT);
}

static void
test_caller_not_after_a_call_needs_cfi(void **state)
{
    (void)state;
    /* START + 8 follows adrp, not a call. */
    walk_fixed(START + 8, SW_TRUST_FP, 1, SW_END_CORRUPT);
    walk_fixed(START + 8, SW_TRUST_ANALYSIS, 1, SW_END_CORRUPT);
    walk_fixed(START + 8, SW_TRUST_SCAN, 1, SW_END_CORRUPT);
    walk_fixed(START + 8, SW_TRUST_CFI, 2, SW_END_BOTTOM);
    /* After a call: believed whoever found it. */
    walk_fixed(MAIN_RA, SW_TRUST_FP, 2, SW_END_BOTTOM);
    walk_fixed(START_RA, SW_TRUST_SCAN, 2, SW_END_BOTTOM);
}

static void
test_caller_in_memory_map_code_after_a_call(void **state)
{
    (void)state;
    char tmp[] = "/tmp/rspwalk-test-believe.XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    static const char maps[] = "90000000-90001000 rwxp 00000000 00:00 0 \n";
    assert_int_equal(write(fd, maps, sizeof maps - 1), (ssize_t)(sizeof maps - 1));
    close(fd);
    /* Without the map: outside every module. */
    walk_fixed(MAPCODE + 8, SW_TRUST_FP, 1, SW_END_CORRUPT);
    maps_file = tmp;
    /* After the bl, read from the target: believed; after a nop only with CFI. */
    walk_fixed(MAPCODE + 8, SW_TRUST_FP, 2, SW_END_BOTTOM);
    walk_fixed(MAPCODE + 4, SW_TRUST_FP, 1, SW_END_CORRUPT);
    walk_fixed(MAPCODE + 4, SW_TRUST_CFI, 2, SW_END_BOTTOM);
    /* Past the map's range: not code. */
    walk_fixed(MAPCODE + 0x1008, SW_TRUST_FP, 1, SW_END_CORRUPT);
    maps_file = NULL;
    unlink(tmp);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stripped_aarch64_walks_through_sp_saved_return_addresses),
        cmocka_unit_test(test_stripped_ppc64le_walks_through_an_out_of_line_lr_save),
        cmocka_unit_test(test_caller_outside_every_module_ends_corrupt),
        cmocka_unit_test(test_caller_not_after_a_call_needs_cfi),
        cmocka_unit_test(test_caller_in_memory_map_code_after_a_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
