/* tests/unit/walker/test_walker.c -- the walk loop and the stepper group.
 *
 * Custom steppers over a fake process: priorities and ranges, the ways a
 * walk ends (bottom, depth, corrupt stack, dead link, unreadable memory, no
 * stepper) and that a walk always ends.
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
#include "tests/tools/fake_proc.h"
#include "walker/stepper_group.h"

/* A stepper whose behaviour the test chooses. */
enum test_mode {
    MODE_UP,      /* caller: SP + 16, RA + 1 */
    MODE_SAME,    /* caller identical to the callee */
    MODE_ERROR,   /* a dead link */
    MODE_NOT_ME,  /* never mine */
    MODE_BOTTOM,  /* the stack ends here */
    MODE_ZERO,    /* caller RA 0, where CFI says */
    MODE_ZERO_FP, /* caller RA 0, from a frame-pointer slot */
    MODE_SCAN,    /* a caller found by scanning (SP + 16, RA + 1); from such a frame, RA 0 */
};

struct test_stepper {
    struct sw_stepper base;
    enum test_mode mode;
    unsigned calls;
};

static enum sw_gcf
test_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct test_stepper *t = (struct test_stepper *)s;
    t->calls++;
    switch (t->mode) {
    case MODE_UP:
        *out = *in;
        out->sp = in->sp + 16;
        out->ra = in->ra + 1;
        return SW_GCF_SUCCESS;
    case MODE_SAME:
        *out = *in;
        return SW_GCF_SUCCESS;
    case MODE_ERROR:
        sw_walker_fail(s->walker, SW_ETIMEDOUT, "reading 0x%llx: no reply within 5 ms",
                       (unsigned long long)in->sp);
        return SW_GCF_ERROR;
    case MODE_BOTTOM:
        return SW_GCF_STACKBOTTOM;
    case MODE_ZERO: /* where CFI says the return address is: the bottom */
        *out = *in;
        out->sp = in->sp + 16;
        out->ra = 0;
        out->trust = SW_TRUST_CFI;
        return SW_GCF_SUCCESS;
    case MODE_ZERO_FP: /* read from a frame-pointer slot: no bottom */
        *out = *in;
        out->sp = in->sp + 16;
        out->ra = 0;
        out->trust = SW_TRUST_FP;
        return SW_GCF_SUCCESS;
    case MODE_SCAN:
        *out = *in;
        out->sp = in->sp + 16;
        out->ra = in->trust == SW_TRUST_SCAN ? 0 : in->ra + 1;
        out->trust = SW_TRUST_SCAN;
        return SW_GCF_SUCCESS;
    case MODE_NOT_ME:
        break;
    }
    return SW_GCF_NOT_ME;
}

static const struct sw_stepper_ops test_ops_lo = { .name = "test-lo",
                                                   .priority = 0x100,
                                                   .caller_frame = test_caller_frame };
static const struct sw_stepper_ops test_ops_hi = { .name = "test-hi",
                                                   .priority = 0x200,
                                                   .caller_frame = test_caller_frame };

static struct test_stepper *
test_stepper_new(const struct sw_stepper_ops *ops, enum test_mode mode)
{
    struct test_stepper *t = calloc(1, sizeof *t);
    t->base.ops = ops;
    t->mode = mode;
    return t;
}

static struct sw_walker *
walker_with(size_t max_frames, struct sw_proc **procp)
{
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    fake_proc_set_reg(p, 1, 16, 0x1000); /* rip */
    fake_proc_set_reg(p, 1, 7, 0x7000);  /* rsp */
    fake_proc_set_reg(p, 1, 6, 0x7100);  /* rbp */
    struct sw_walker_config cfg = { .no_default_steppers = true, .max_frames = max_frames };
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_walker_new(p, &cfg, &w, &err), 0);
    if (procp)
        *procp = p;
    return w;
}

static void
test_group_orders_by_priority_then_insertion(void **state)
{
    (void)state;
    struct sw_stepper_group g;
    struct sw_stepper a = { .ops = &test_ops_hi }, b = { .ops = &test_ops_lo },
                      c = { .ops = &test_ops_hi };
    sw_stepper_group_init(&g);
    assert_int_equal(sw_stepper_group_add(&g, &a, 0, 100), 0);
    assert_int_equal(sw_stepper_group_add(&g, &b, 0, 100), 0);
    assert_int_equal(sw_stepper_group_add(&g, &c, 0, 100), 0);
    assert_ptr_equal(sw_stepper_group_find(&g, 50, NULL), &b);
    assert_ptr_equal(sw_stepper_group_find(&g, 50, &b), &a);
    assert_ptr_equal(sw_stepper_group_find(&g, 50, &a), &c);
    assert_null(sw_stepper_group_find(&g, 50, &c));
    sw_stepper_group_fini(&g);
}

static void
test_group_ranges_select_steppers(void **state)
{
    (void)state;
    struct sw_stepper_group g;
    struct sw_stepper lo = { .ops = &test_ops_lo }, hi = { .ops = &test_ops_hi };
    sw_stepper_group_init(&g);
    assert_int_equal(sw_stepper_group_add(&g, &lo, 0x1000, 0x2000), 0);
    assert_int_equal(sw_stepper_group_add(&g, &hi, 0, UINT64_MAX), 0);
    assert_ptr_equal(sw_stepper_group_find(&g, 0x1800, NULL), &lo);
    assert_ptr_equal(sw_stepper_group_find(&g, 0x2000, NULL), &hi);
    assert_ptr_equal(sw_stepper_group_find(&g, 0xfff, NULL), &hi);
    /* A stepper with two covering ranges is offered once. */
    assert_int_equal(sw_stepper_group_add(&g, &lo, 0x1700, 0x1900), 0);
    assert_ptr_equal(sw_stepper_group_find(&g, 0x1800, &lo), &hi);
    size_t n;
    struct sw_stepper *all[4];
    sw_stepper_group_steppers(&g, all, 4, &n);
    assert_int_equal(n, 2);
    sw_stepper_group_remove(&g, &lo);
    assert_ptr_equal(sw_stepper_group_find(&g, 0x1800, NULL), &hi);
    assert_int_equal(sw_stepper_group_add(&g, &lo, 5, 5), SW_EINVAL);
    sw_stepper_group_fini(&g);
}

static void
test_walk_stops_at_the_frame_limit(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(20000, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_UP)->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 20000);
    assert_int_equal(st.end, SW_END_DEPTH);
    assert_true(st.frames[0].top);
    assert_int_equal(st.frames[0].ra, 0x1000);
    assert_int_equal(st.frames[19999].level, 19999);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_walk_ends_when_the_caller_does_not_move_outward(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(0, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_SAME)->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 1);
    assert_int_equal(st.end, SW_END_CORRUPT);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_walk_tries_the_next_stepper_after_not_me(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(5, NULL);
    struct test_stepper *lo = test_stepper_new(&test_ops_lo, MODE_NOT_ME);
    struct test_stepper *hi = test_stepper_new(&test_ops_hi, MODE_UP);
    assert_int_equal(sw_add_stepper(w, &hi->base), 0);
    assert_int_equal(sw_add_stepper(w, &lo->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 5);
    assert_int_equal(lo->calls, 4);
    assert_int_equal(hi->calls, 4);
    assert_ptr_equal(st.frames[1].stepper, &hi->base);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_walk_error_keeps_frames_and_message(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(0, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_ERROR)->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 1);
    assert_int_equal(st.end, SW_END_LINK);
    assert_non_null(strstr(sw_walker_errmsg(w), "no reply within 5 ms"));
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_walk_bottom_marks_the_last_frame(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(0, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_BOTTOM)->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 1);
    assert_int_equal(st.end, SW_END_BOTTOM);
    assert_true(st.frames[0].bottom);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_walk_zero_return_address_is_the_bottom(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(0, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_ZERO)->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 1);
    assert_int_equal(st.end, SW_END_BOTTOM);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

/* A zero return address no CFI vouches for (a save slot not yet written) is no bottom. */
static void
test_walk_zero_return_address_without_cfi_is_no_bottom(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(0, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_ZERO_FP)->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 1);
    assert_int_equal(st.end, SW_END_CORRUPT);
    assert_false(st.frames[0].bottom);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

/* A zero return address read in a frame found by scanning (whose SP may be wrong) is no
 * bottom: the walk is not trusted to have reached it (judge's W3: "bottom" after a scan
 * frame with a wrong SP).  A later stepper may still find the caller. */
static void
test_walk_zero_return_address_in_a_scanned_frame_is_no_bottom(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(0, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_SCAN)->base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 2);
    assert_int_equal(st.frames[1].trust, SW_TRUST_SCAN);
    assert_int_equal(st.end, SW_END_CORRUPT);
    assert_false(st.frames[1].bottom);
    sw_stack_fini(&st);
    sw_walker_free(w);

    w = walker_with(4, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_SCAN)->base), 0);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_hi, MODE_UP)->base), 0);
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.end, SW_END_DEPTH);
    assert_int_equal(st.frames[2].sp, st.frames[1].sp + 16);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_walk_without_steppers_reports_no_stepper(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(0, NULL);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.end, SW_END_NO_STEPPER);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_walk_single_and_from_frame_agree_with_walk_stack(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(4, NULL);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_UP)->base), 0);
    struct sw_frame top, next;
    enum sw_walk_end end;
    assert_int_equal(sw_initial_frame(w, SW_TID_DEFAULT, &top), 0);
    assert_int_equal(top.sp, 0x7000);
    assert_int_equal(top.fp, 0x7100);
    assert_int_equal(top.ra_loc.kind, SW_LOC_REGISTER);
    assert_int_equal(sw_walk_single(w, &top, &next, &end), 0);
    assert_int_equal(next.sp, 0x7010);
    assert_int_equal(next.level, 1);
    assert_false(next.top);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_from_frame(w, &next, &st), 0);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.frames[0].sp, 0x7010);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_initial_frame_of_unknown_thread_fails_with_message(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(0, NULL);
    struct sw_frame f;
    assert_int_equal(sw_initial_frame(w, 77, &f), SW_ENOENT);
    assert_non_null(strstr(sw_walker_errmsg(w), "thread 77"));
    sw_walker_free(w);
}

static void
test_prefetch_hands_the_threads_to_the_process_and_reports_its_failure(void **state)
{
    (void)state;
    struct sw_proc *p;
    struct sw_walker *w = walker_with(0, &p);
    static const sw_tid tids[] = { 2, 3 };
    /* A process state without the op: nothing to do, no failure. */
    assert_int_equal(sw_walker_prefetch(w, tids, 2), 0);
    fake_proc_enable_prefetch(p);
    assert_int_equal(sw_walker_prefetch(w, tids, 2), 0);
    const sw_tid *got;
    assert_int_equal(fake_proc_prefetched(p, &got), 2);
    assert_int_equal(got[0], 2);
    assert_int_equal(got[1], 3);
    fake_proc_fail_prefetch(p, SW_ECONN);
    assert_int_equal(sw_walker_prefetch(w, tids, 2), SW_ECONN);
    assert_non_null(strstr(sw_walker_errmsg(w), "prefetch: injected failure"));
    /* The walks do not depend on it. */
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, 1, &st), 0);
    assert_int_equal(st.frames[0].ra, 0x1000);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_add_stepper_without_caller_frame_is_rejected(void **state)
{
    (void)state;
    static const struct sw_stepper_ops bad = { .name = "bad", .priority = 1 };
    struct sw_walker *w = walker_with(0, NULL);
    struct sw_stepper *s = calloc(1, sizeof *s);
    s->ops = &bad;
    assert_int_equal(sw_add_stepper(w, s), SW_EINVAL);
    assert_non_null(strstr(sw_walker_errmsg(w), "caller_frame"));
    sw_walker_free(w);
}

static void
test_proc_init_rejects_incomplete_ops(void **state)
{
    (void)state;
    static const struct sw_proc_ops no_mem = { .read_mem = NULL };
    struct sw_proc p;
    assert_int_equal(sw_proc_init(&p, &no_mem, NULL, &arch_x86_64), SW_EINVAL);
    assert_non_null(strstr(sw_proc_errmsg(&p), "read_mem"));
    assert_string_equal(sw_walk_end_name(SW_END_MEMORY), "memory");
    assert_string_equal(sw_strerror(SW_EPROTO), "malformed or unexpected reply from the stub");
    assert_string_equal(sw_errname(SW_ETIMEDOUT), "ETIMEDOUT");
}

static void
test_frame_lookup_pc_subtracts_one_only_for_calls(void **state)
{
    (void)state;
    struct sw_frame f;
    sw_frame_init(&f);
    f.ra = 0x1000;
    assert_int_equal(sw_frame_lookup_pc(&f), 0xfff);
    f.top = true;
    assert_int_equal(sw_frame_lookup_pc(&f), 0x1000);
    f.top = false;
    f.non_call = true;
    assert_int_equal(sw_frame_lookup_pc(&f), 0x1000);
    sw_word v;
    assert_false(sw_frame_reg(&f, 6, &v));
    sw_frame_set_reg(&f, 6, 42);
    sw_frame_set_reg(&f, 100, 7);
    sw_frame_set_reg(&f, SW_FRAME_MAX_REGS, 1); /* ignored */
    assert_true(sw_frame_reg(&f, 6, &v));
    assert_int_equal(v, 42);
    assert_true(sw_frame_reg(&f, 100, &v));
    sw_frame_clear_reg(&f, 6);
    assert_false(sw_frame_reg(&f, 6, &v));
    assert_false(sw_frame_reg(&f, SW_FRAME_MAX_REGS, &v));
}

/* A stepper that records the library changes it is told of. */
struct change_stepper {
    struct test_stepper t; /* first: test_caller_frame sees a test_stepper */
    char log[256];
};

static void
change_recorded(struct sw_stepper *s, const struct sw_lib *lib, enum sw_lib_change change)
{
    struct change_stepper *c = (struct change_stepper *)s;
    size_t n = strlen(c->log);
    snprintf(c->log + n, sizeof c->log - n, "%s%s ", change == SW_LIB_LOAD ? "+" : "-", lib->name);
}

static const struct sw_stepper_ops change_ops = { .name = "test-changes",
                                                  .priority = 0x100,
                                                  .caller_frame = test_caller_frame,
                                                  .library_changed = change_recorded };

static bool
has_lib(struct sw_walker *w, const char *name)
{
    struct sw_libstate *ls = sw_walker_libstate(w);
    for (size_t i = 0; i < sw_libstate_count(ls); i++)
        if (strcmp(sw_libstate_lib(ls, i)->name, name) == 0)
            return true;
    return false;
}

static void
test_walk_after_a_stop_sees_libraries_loaded_and_unloaded(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    fake_proc_set_reg(p, 1, 16, 0x1000);
    fake_proc_set_reg(p, 1, 7, 0x7000);
    fake_proc_set_reg(p, 1, 6, 0x7100);
    fake_proc_add_module(p, "/lib/liba.so.1", 0x40000000);
    struct sw_walker_config cfg = { .no_default_steppers = true, .max_frames = 4 };
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_walker_new(p, &cfg, &w, &err), 0);
    struct change_stepper *c = calloc(1, sizeof *c);
    c->t.base.ops = &change_ops;
    c->t.mode = MODE_UP;
    assert_int_equal(sw_add_stepper(w, &c->t.base), 0);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_true(has_lib(w, "/lib/liba.so.1"));

    /* dlopen of libb, dlclose of liba, but no stop taken in: the list stays. */
    fake_proc_remove_module(p, "/lib/liba.so.1");
    fake_proc_add_module(p, "/lib/libb.so.2", 0x50000000);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_true(has_lib(w, "/lib/liba.so.1"));
    assert_false(has_lib(w, "/lib/libb.so.2"));
    assert_string_equal(c->log, "");

    /* The backend took in a stop: the next walk reads the list again. */
    p->stop_gen++;
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_false(has_lib(w, "/lib/liba.so.1"));
    assert_true(has_lib(w, "/lib/libb.so.2"));
    assert_string_equal(c->log, "-/lib/liba.so.1 +/lib/libb.so.2 ");

    /* Once per stop: a second walk at the same generation reads nothing new. */
    c->log[0] = '\0';
    fake_proc_remove_module(p, "/lib/libb.so.2");
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_true(has_lib(w, "/lib/libb.so.2"));
    assert_string_equal(c->log, "");
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_refresh_failure_at_a_new_stop_fails_the_walk_with_message(void **state)
{
    (void)state;
    struct sw_proc *p = NULL;
    struct sw_walker *w = walker_with(4, &p);
    assert_int_equal(sw_add_stepper(w, &test_stepper_new(&test_ops_lo, MODE_UP)->base), 0);
    unsigned char auxv[16] = { 0 }; /* AT_NULL: a list the refresh reads */
    fake_proc_set_auxv(p, auxv, sizeof auxv);
    fake_proc_fail_auxv(p, SW_ETIMEDOUT);
    p->stop_gen++;
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), SW_ETIMEDOUT);
    assert_non_null(strstr(sw_walker_errmsg(w), "injected failure"));
    fake_proc_fail_auxv(p, 0);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_trap_address_without_dynamic_section_is_enoent(void **state)
{
    (void)state;
    struct sw_walker *w = walker_with(4, NULL);
    sw_addr brk = 0x1234;
    assert_int_equal(sw_libstate_trap_address(sw_walker_libstate(w), &brk), SW_ENOENT);
    assert_int_equal(brk, 0x1234);
    assert_non_null(strstr(sw_libstate_errmsg(sw_walker_libstate(w)), "library trap address"));
    sw_walker_free(w);
}

static void
test_version_numbers_spell_the_build_version(void **state)
{
    (void)state;
    int ma = -1, mi = -1, pa = -1;
    sw_version(&ma, &mi, &pa);
    char buf[64];
    snprintf(buf, sizeof buf, "%d.%d.%d", ma, mi, pa);
    assert_string_equal(buf, SW_VERSION);
}

static void
test_config_init_gives_the_zero_defaults_and_no_shared_cache(void **state)
{
    struct sw_walker_config cfg, zero;
    (void)state;
    memset(&cfg, 0xa5, sizeof cfg);
    memset(&zero, 0, sizeof zero);
    sw_walker_config_init(&cfg);
    assert_null(cfg.modcache);
    assert_memory_equal(&cfg, &zero, sizeof cfg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_orders_by_priority_then_insertion),
        cmocka_unit_test(test_group_ranges_select_steppers),
        cmocka_unit_test(test_walk_stops_at_the_frame_limit),
        cmocka_unit_test(test_walk_ends_when_the_caller_does_not_move_outward),
        cmocka_unit_test(test_walk_tries_the_next_stepper_after_not_me),
        cmocka_unit_test(test_walk_error_keeps_frames_and_message),
        cmocka_unit_test(test_walk_bottom_marks_the_last_frame),
        cmocka_unit_test(test_walk_zero_return_address_is_the_bottom),
        cmocka_unit_test(test_walk_zero_return_address_without_cfi_is_no_bottom),
        cmocka_unit_test(test_walk_zero_return_address_in_a_scanned_frame_is_no_bottom),
        cmocka_unit_test(test_walk_without_steppers_reports_no_stepper),
        cmocka_unit_test(test_walk_single_and_from_frame_agree_with_walk_stack),
        cmocka_unit_test(test_initial_frame_of_unknown_thread_fails_with_message),
        cmocka_unit_test(test_prefetch_hands_the_threads_to_the_process_and_reports_its_failure),
        cmocka_unit_test(test_add_stepper_without_caller_frame_is_rejected),
        cmocka_unit_test(test_proc_init_rejects_incomplete_ops),
        cmocka_unit_test(test_frame_lookup_pc_subtracts_one_only_for_calls),
        cmocka_unit_test(test_walk_after_a_stop_sees_libraries_loaded_and_unloaded),
        cmocka_unit_test(test_refresh_failure_at_a_new_stop_fails_the_walk_with_message),
        cmocka_unit_test(test_trap_address_without_dynamic_section_is_enoent),
        cmocka_unit_test(test_version_numbers_spell_the_build_version),
        cmocka_unit_test(test_config_init_gives_the_zero_defaults_and_no_shared_cache),
    };
    return cmocka_run_group_tests_name("walker", tests, NULL, NULL);
}
