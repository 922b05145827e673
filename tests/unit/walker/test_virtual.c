/* tests/unit/walker/test_virtual.c -- inline and tail-call frames added to a physical walk.
 *
 * Physical stacks copied from gdb 13's view of the threads fixture (pcs and
 * sps), libc placed at the load base it had there by a fake process's module
 * list; the result must be gdb's stack.  Needs libc6-dbg, as test_dwarf_info.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "util/util.h"
#include "libstate/lib.h"
#include "walker/walker_internal.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
/* libc's load base under gdbserver when the frames below were recorded
 * (tests/unit/dwarf/test_dwarf_info.c says how; same libc build). */
#define LIBC_BASE 0x7ffff7dd3000ull
/* Outside every module: a frame with no debug information. */
#define NOWHERE 0x400000000ull

struct fixture {
    struct sw_proc *proc;
    struct sw_libstate *ls;
    struct sw_virtual *cache;
    struct sw_stack st;
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct sw_libstate_config cfg = { .debug_dir = "/usr/lib/debug" };
    const struct sw_lib *lib;

    assert_non_null(f);
    f->proc = fake_proc_new(&arch_x86_64);
    assert_non_null(f->proc);
    fake_proc_add_module(f->proc, LIBC, LIBC_BASE);
    assert_int_equal(sw_libstate_new(f->proc, &cfg, &f->ls), 0);
    assert_int_equal(sw_libstate_refresh(f->ls), 0);
    assert_int_equal(sw_libstate_lib_at(f->ls, LIBC_BASE + 0xf82ec, &lib), 0);
    if (sw_lib_elf(lib) == NULL || sw_elf_debug_path(sw_lib_elf(lib)) == NULL)
        fail_msg("no debug file for %s: apt-get install libc6-dbg", LIBC);
    sw_stack_init(&f->st);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    sw_stack_fini(&f->st);
    sw_virtual_free(f->cache);
    sw_libstate_free(f->ls);
    sw_proc_free(f->proc);
    free(f);
    return 0;
}

static void
push(struct fixture *f, sw_addr ra, sw_addr sp, enum sw_frame_kind kind)
{
    struct sw_frame fr;
    sw_frame_init(&fr);
    fr.ra = ra;
    fr.sp = sp;
    fr.fp = sp + 0x10;
    fr.thread = 4;
    fr.kind = kind;
    fr.top = f->st.n == 0;
    fr.level = (unsigned)f->st.n;
    fr.stepper = (const struct sw_stepper *)f; /* any non-NULL marker */
    if (f->st.n == f->st.cap) {
        f->st.cap = f->st.cap ? f->st.cap * 2 : 8;
        f->st.frames = sw_realloc(f->st.frames, f->st.cap * sizeof fr);
        assert_non_null(f->st.frames);
    }
    f->st.frames[f->st.n++] = fr;
}

/* One expected frame: kind, name for virtual frames, ra, sp. */
struct want {
    enum sw_frame_kind kind;
    const char *vname;
    sw_addr ra, sp;
};

static void
check(const struct fixture *f, const struct want *w, size_t n)
{
    for (size_t i = 0; i < n && i < f->st.n; i++) {
        const struct sw_frame *fr = &f->st.frames[i];
        if (fr->kind != w[i].kind || fr->ra != w[i].ra || fr->sp != w[i].sp || fr->level != i ||
            (w[i].vname ? fr->vname == NULL || strcmp(fr->vname, w[i].vname) != 0
                        : fr->vname != NULL && fr->kind != SW_FRAME_NORMAL))
            fail_msg("frame %zu: kind %d %s ra 0x%llx sp 0x%llx level %u; want kind %d %s ra "
                     "0x%llx sp 0x%llx",
                     i, fr->kind, fr->vname ? fr->vname : "-", (unsigned long long)fr->ra,
                     (unsigned long long)fr->sp, fr->level, w[i].kind,
                     w[i].vname ? w[i].vname : "-", (unsigned long long)w[i].ra,
                     (unsigned long long)w[i].sp);
        if (fr->kind == SW_FRAME_INLINE || fr->kind == SW_FRAME_TAILCALL)
            assert_null(fr->stepper);
        else
            assert_non_null(fr->stepper);
    }
    assert_int_equal(f->st.n, n);
}

/* Thread 4 of the fixture: pthread_cond_wait parked in the futex. */
static const struct want cond_wait_want[] = {
    { SW_FRAME_INLINE, "__futex_abstimed_wait_common64", LIBC_BASE + 0x85f16, 0x7ffff6dccd80 },
    { SW_FRAME_NORMAL, NULL, LIBC_BASE + 0x85f16, 0x7ffff6dccd80 },
    { SW_FRAME_TAILCALL, "__GI___futex_abstimed_wait_cancelable64", LIBC_BASE + 0x85f7b,
      0x7ffff6dccdc0 },
    { SW_FRAME_INLINE, "__pthread_cond_wait_common", LIBC_BASE + 0x885d8, 0x7ffff6dccdc0 },
    { SW_FRAME_NORMAL, NULL, LIBC_BASE + 0x885d8, 0x7ffff6dccdc0 },
    { SW_FRAME_NORMAL, NULL, NOWHERE, 0x7ffff6dcce80 },
    { SW_FRAME_NORMAL, NULL, LIBC_BASE + 0x891f5, 0x7ffff6dccee0 },
};

static void
push_cond_wait(struct fixture *f)
{
    push(f, LIBC_BASE + 0x85f16, 0x7ffff6dccd80, SW_FRAME_NORMAL);
    push(f, LIBC_BASE + 0x885d8, 0x7ffff6dccdc0, SW_FRAME_NORMAL);
    push(f, NOWHERE, 0x7ffff6dcce80, SW_FRAME_NORMAL);
    push(f, LIBC_BASE + 0x891f5, 0x7ffff6dccee0, SW_FRAME_NORMAL);
}

static void
test_virtual_cond_wait_gets_gdbs_inline_and_tailcall_frames(void **state)
{
    struct fixture *f = *state;
    struct sw_errbuf err = { 0 };
    push_cond_wait(f);
    assert_int_equal(sw_virtual_frames_add(&f->cache, f->ls, &f->st, &err), 0);
    check(f, cond_wait_want, sizeof cond_wait_want / sizeof cond_wait_want[0]);
    /* inline frames copy their physical frame: frame 0's exact pc stays exact */
    assert_true(f->st.frames[0].top);
    assert_int_equal(f->st.frames[0].fp, f->st.frames[1].fp);
    /* the tail-call frame has its caller's FP */
    assert_int_equal(f->st.frames[2].fp, f->st.frames[4].fp);
    assert_false(f->st.frames[2].top);
}

static void
test_virtual_adding_twice_gives_the_same_stack(void **state)
{
    struct fixture *f = *state;
    struct sw_errbuf err = { 0 };
    push_cond_wait(f);
    assert_int_equal(sw_virtual_frames_add(&f->cache, f->ls, &f->st, &err), 0);
    assert_int_equal(sw_virtual_frames_add(&f->cache, f->ls, &f->st, &err), 0);
    check(f, cond_wait_want, sizeof cond_wait_want / sizeof cond_wait_want[0]);
}

static void
test_virtual_raise_gets_the_pthread_kill_internal_tailcall_frame(void **state)
{
    struct fixture *f = *state;
    struct sw_errbuf err = { 0 };
    push(f, LIBC_BASE + 0x8aeec, 0x7fffffffe490, SW_FRAME_NORMAL);
    push(f, LIBC_BASE + 0x3bfb2, 0x7fffffffe4d0, SW_FRAME_NORMAL);
    push(f, NOWHERE, 0x7fffffffe4e0, SW_FRAME_NORMAL);
    assert_int_equal(sw_virtual_frames_add(&f->cache, f->ls, &f->st, &err), 0);
    static const struct want w[] = {
        /* Physical frames are named from DWARF too, as gdb names them. */
        { SW_FRAME_NORMAL, "__pthread_kill_implementation", LIBC_BASE + 0x8aeec, 0x7fffffffe490 },
        { SW_FRAME_TAILCALL, "__pthread_kill_internal", LIBC_BASE + 0x8af4f, 0x7fffffffe4d0 },
        { SW_FRAME_NORMAL, "__GI_raise", LIBC_BASE + 0x3bfb2, 0x7fffffffe4d0 },
        { SW_FRAME_NORMAL, NULL, NOWHERE, 0x7fffffffe4e0 },
    };
    check(f, w, sizeof w / sizeof w[0]);
    assert_null(f->st.frames[3].vname); /* no module, no DWARF name */
}

static void
test_virtual_signal_frames_and_frames_without_modules_get_nothing(void **state)
{
    struct fixture *f = *state;
    struct sw_errbuf err = { 0 };
    /* a signal trampoline at the libc read pc: no inline frames for it, and
     * no tail calls across it */
    push(f, NOWHERE, 0x1000, SW_FRAME_NORMAL);
    push(f, LIBC_BASE + 0xf82ec, 0x2000, SW_FRAME_SIGNAL);
    push(f, LIBC_BASE + 0x3bfb2, 0x3000, SW_FRAME_NORMAL);
    assert_int_equal(sw_virtual_frames_add(&f->cache, f->ls, &f->st, &err), 0);
    static const struct want w[] = {
        { SW_FRAME_NORMAL, NULL, NOWHERE, 0x1000 },
        { SW_FRAME_SIGNAL, NULL, LIBC_BASE + 0xf82ec, 0x2000 },
        { SW_FRAME_NORMAL, NULL, LIBC_BASE + 0x3bfb2, 0x3000 },
    };
    check(f, w, sizeof w / sizeof w[0]);
}

static void
test_virtual_empty_stack_stays_empty(void **state)
{
    struct fixture *f = *state;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_virtual_frames_add(&f->cache, f->ls, &f->st, &err), 0);
    assert_int_equal(f->st.n, 0);
    sw_virtual_free(NULL);
}

/* Every allocation fails once in turn: SW_ENOMEM leaves the physical stack as
 * it was, and the cache answers correctly afterwards. */
static void
test_virtual_allocation_failures_leave_the_stack_unchanged(void **state)
{
    struct fixture *f = *state;
    bool finished = false;
    for (unsigned long k = 1; k < 2000 && !finished; k++) {
        struct sw_virtual *cache = NULL;
        struct sw_errbuf err = { 0 };
        sw_stack_fini(&f->st);
        push_cond_wait(f);
        sw_test_fail_alloc_at(k);
        int rc = sw_virtual_frames_add(&cache, f->ls, &f->st, &err);
        unsigned long count = sw_test_alloc_count();
        sw_test_fail_alloc_at(0);
        if (rc == 0) {
            finished = count < k;
            check(f, cond_wait_want, sizeof cond_wait_want / sizeof cond_wait_want[0]);
        } else {
            assert_int_equal(rc, SW_ENOMEM);
            assert_non_null(strstr(err.msg, "out of memory"));
            assert_int_equal(f->st.n, 4);
            assert_int_equal(f->st.frames[1].ra, LIBC_BASE + 0x885d8);
            assert_int_equal(sw_virtual_frames_add(&cache, f->ls, &f->st, &err), 0);
            check(f, cond_wait_want, sizeof cond_wait_want / sizeof cond_wait_want[0]);
        }
        sw_virtual_free(cache);
    }
    assert_true(finished);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_virtual_cond_wait_gets_gdbs_inline_and_tailcall_frames,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_virtual_adding_twice_gives_the_same_stack, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_virtual_raise_gets_the_pthread_kill_internal_tailcall_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_virtual_signal_frames_and_frames_without_modules_get_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_virtual_empty_stack_stays_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_virtual_allocation_failures_leave_the_stack_unchanged,
                                        setup, teardown),
    };
    return cmocka_run_group_tests_name("virtual", tests, NULL, NULL);
}
