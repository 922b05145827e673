/* tests/unit/walker/test_frame_func.h -- the fixture of test_frame_func.c and
 * test_frame_func_ppc.c.
 *
 * A walker over one of the assembled test ELFs (tests/unit/data/<arch>_frames.S, linked
 * static, so link-time addresses are run-time ones) and a fake process with a stack; symbol
 * addresses come from the ELF by name.  Test-only.
 */
#ifndef RSPWALK_TESTS_UNIT_TEST_FRAME_FUNC_H
#define RSPWALK_TESTS_UNIT_TEST_FRAME_FUNC_H

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "elf/elf.h"
#include "walker/steppers/analysis.h"
#include "walker/steppers/frame_func.h"

#define FF_STACK      0x7fff0000u
#define FF_STACK_SIZE 0x1000u

/* Which steppers the walker has. */
enum ff_steppers {
    FF_ALONE,    /* frame-func only */
    FF_DEFAULTS, /* the default set */
    FF_ANALYSIS, /* the analysis stepper only */
    FF_NONE,     /* none: queries run without a cache */
};

struct ff_fixture {
    const struct arch_desc *a;
    struct sw_proc *p; /* borrowed from W */
    struct sw_walker *w;
    struct sw_elfcache *ec;
    struct sw_elf *elf;
    struct sw_stack st;
};

static inline void
ff_open(struct ff_fixture *fx, const struct arch_desc *a, const char *path, enum ff_steppers which)
{
    struct sw_errbuf err = { 0 };
    fx->a = a;
    fx->p = fake_proc_new(a);
    fake_proc_add_mem(fx->p, FF_STACK, NULL, FF_STACK_SIZE);
    struct sw_walker_config cfg = { .exe = path, .no_default_steppers = which != FF_DEFAULTS };
    if (sw_walker_new(fx->p, &cfg, &fx->w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    if (which == FF_ALONE && sw_add_stepper(fx->w, sw_stepper_frame_func_new()) != 0)
        fail_msg("sw_add_stepper: %s", sw_walker_errmsg(fx->w));
    if (which == FF_ANALYSIS && sw_add_stepper(fx->w, sw_stepper_analysis_new()) != 0)
        fail_msg("sw_add_stepper: %s", sw_walker_errmsg(fx->w));
    fx->ec = sw_elfcache_new(NULL);
    if (fx->ec == NULL || sw_elfcache_open(fx->ec, path, &fx->elf, &err) != 0)
        fail_msg("opening %s: %s", path, err.msg);
    sw_stack_init(&fx->st);
}

static inline void
ff_close(struct ff_fixture *fx)
{
    sw_stack_fini(&fx->st);
    sw_elfcache_free(fx->ec);
    sw_walker_free(fx->w);
}

/* The code address of function NAME (ELFv1 descriptors resolved by the ELF cache). */
static inline sw_addr
ff_sym(struct ff_fixture *fx, const char *name)
{
    struct sw_elfsym sym;
    if (sw_elf_symbol_by_name(fx->elf, name, &sym) != 0)
        fail_msg("no symbol %s", name);
    return sym.value;
}

/* Frame 0's PC, SP, FP and link register (ignored when the arch has none). */
static inline void
ff_regs(struct ff_fixture *fx, sw_addr pc, sw_addr sp, sw_addr fp, sw_addr lr)
{
    fake_proc_set_reg(fx->p, 1, (unsigned)fx->a->dw_pc, pc);
    fake_proc_set_reg(fx->p, 1, (unsigned)fx->a->dw_sp, sp);
    fake_proc_set_reg(fx->p, 1, (unsigned)fx->a->dw_fp, fp);
    if (fx->a->dw_ra != fx->a->dw_pc)
        fake_proc_set_reg(fx->p, 1, (unsigned)fx->a->dw_ra, lr);
}

/* One step from frame 0: the caller frame-func (or whichever stepper) computes. */
static inline void
ff_step(struct ff_fixture *fx, struct sw_frame *caller)
{
    struct sw_frame top;
    enum sw_walk_end end = SW_END_NONE;
    assert_int_equal(sw_initial_frame(fx->w, SW_TID_DEFAULT, &top), 0);
    if (sw_walk_single(fx->w, &top, caller, &end) != 0)
        fail_msg("pc %#lx: no caller (end %s: %s)", (unsigned long)top.ra, sw_walk_end_name(end),
                 sw_walker_errmsg(fx->w));
}

/* The expectations at one PC of an assembled function: the analysis (height, where the
 * return address is) and the FrameFuncHelper's pair. */
struct ff_row {
    const char *fn;
    unsigned off;
    int64_t height;
    enum sw_an_ra ra;
    enum sw_frame_type type;
    enum sw_frame_state state;
};

static inline void
ff_check_rows(struct ff_fixture *fx, const struct ff_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct ff_row *r = &rows[i];
        sw_addr pc = ff_sym(fx, r->fn) + r->off;
        struct sw_an_pc at;
        struct sw_frame_alloc fa;
        int rc = sw_analysis_at(fx->w, pc, true, &at);
        if (rc != 0)
            fail_msg("%s+%u: analysis %d", r->fn, r->off, rc);
        if (!at.sp_known || at.sp_alt || at.height != r->height || at.ra != r->ra)
            fail_msg("%s+%u: height %ld (known %d) ra %d, want %ld ra %d", r->fn, r->off,
                     (long)at.height, (int)at.sp_known, (int)at.ra, (long)r->height, (int)r->ra);
        rc = sw_frame_func_alloc(fx->w, pc, true, &fa);
        if (rc != 0 || fa.type != r->type || fa.state != r->state)
            fail_msg("%s+%u: rc %d type %d state %d, want type %d state %d", r->fn, r->off, rc,
                     (int)fa.type, (int)fa.state, (int)r->type, (int)r->state);
    }
}

#endif /* RSPWALK_TESTS_UNIT_TEST_FRAME_FUNC_H */
