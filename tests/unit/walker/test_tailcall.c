/* tests/unit/walker/test_tailcall.c -- tail-call frames between two modules, as gdb finds them.
 *
 * Two files of hand-written DWARF (tests/unit/data/x86_64_tailcall_main.S and
 * x86_64_tailcall_lib.S, both linked at 0x401000) placed by a fake process's module list at
 * different biases: main_fn's call sites name the library's functions by declaration only
 * (a call through the PLT), and the library's tail calls lead on to the frame below.  Each
 * case is a physical stack [callee in the library, main_fn, a frame with no module]; the
 * result must be gdb's: the chain's frames where every chain agrees, none where gdb gives up.
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
#include "elf/elf.h"
#include "libstate/lib.h"
#include "walker/walker_internal.h"

#define MAIN     SW_TEST_DATA "/x86_64_tailcall_main.elf"
#define LIB      SW_TEST_DATA "/x86_64_tailcall_lib.elf"
#define LIB_BIAS 0x10000000ull
#define NOWHERE  0x400000000ull
#define SP       0x7ffff0001000ull

struct fixture {
    struct sw_proc *proc;
    struct sw_libstate *ls;
    struct sw_virtual *cache;
    struct sw_stack st;
};

/* A vDSO read from target memory: a copy of the library's file, at this address. */
#define VDSO_AT 0x30000000ull

/* Make the library's file the target's vDSO too, listed first (gdb reads it last). */
static void
add_vdso(struct sw_proc *p)
{
    static uint8_t image[1 << 16];
    FILE *fp = fopen(LIB, "rb");
    assert_non_null(fp);
    size_t len = fread(image, 1, sizeof image, fp);
    fclose(fp);
    assert_true(len > 0 && len < sizeof image);
    fake_proc_add_mem(p, VDSO_AT, image, len);
    const uint64_t auxv[4] = { 33 /* AT_SYSINFO_EHDR */, VDSO_AT, 0 /* AT_NULL */, 0 };
    fake_proc_set_auxv(p, auxv, sizeof auxv);
    fake_proc_add_module(p, "linux-vdso.so.1", VDSO_AT);
}

enum order { MAIN_FIRST, LIB_FIRST, VDSO_FIRST };

static struct fixture *
fixture_new(enum order order)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct sw_libstate_config cfg = { .debug_dir = "/nonexistent", .cache_dir = "" };
    bool lib_first = order == LIB_FIRST;
    assert_non_null(f);
    f->proc = fake_proc_new(&arch_x86_64);
    assert_non_null(f->proc);
    if (order == VDSO_FIRST)
        add_vdso(f->proc);
    if (lib_first)
        fake_proc_add_module(f->proc, LIB, LIB_BIAS);
    fake_proc_add_module(f->proc, MAIN, 0);
    if (!lib_first)
        fake_proc_add_module(f->proc, LIB, LIB_BIAS);
    assert_int_equal(sw_libstate_new(f->proc, &cfg, &f->ls), 0);
    assert_int_equal(sw_libstate_refresh(f->ls), 0);
    sw_stack_init(&f->st);
    return f;
}

static int
setup(void **state)
{
    *state = fixture_new(MAIN_FIRST);
    return 0;
}

static int
setup_lib_first(void **state)
{
    *state = fixture_new(LIB_FIRST);
    return 0;
}

static int
setup_vdso_first(void **state)
{
    *state = fixture_new(VDSO_FIRST);
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

/* The runtime address of NAME in the module loaded from PATH. */
static sw_addr
sym(struct fixture *f, const char *path, const char *name)
{
    struct sw_elfsym s;
    for (size_t i = 0; i < sw_libstate_count(f->ls); i++) {
        const struct sw_lib *lib = sw_libstate_lib(f->ls, i);
        if (lib->path != NULL && strcmp(lib->path, path) == 0) {
            assert_non_null(sw_lib_elf(lib));
            if (sw_elf_symbol_by_name(sw_lib_elf(lib), name, &s) != 0)
                fail_msg("%s: no symbol %s", path, name);
            return s.value + lib->bias;
        }
    }
    fail_msg("no module %s", path);
    return 0;
}

static void
push(struct fixture *f, sw_addr ra, sw_addr sp)
{
    struct sw_frame fr;
    sw_frame_init(&fr);
    fr.ra = ra;
    fr.sp = sp;
    fr.fp = sp + 0x10;
    fr.thread = 1;
    fr.kind = SW_FRAME_NORMAL;
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

/* The physical stack of a stop in CALLEE (its entry + 3) called from main_fn's call site
 * returning to main_fn + SITE. */
static void
push_case(struct fixture *f, const char *callee, sw_addr site)
{
    sw_stack_fini(&f->st);
    sw_stack_init(&f->st);
    push(f, sym(f, LIB, callee) + 3, SP);
    push(f, sym(f, MAIN, "main_fn") + site, SP + 0x40);
    push(f, NOWHERE, SP + 0x80);
}

/* What frames between the callee and main_fn should be: up to 2 tail calls, by their
 * function in the library and the offset of their return pc in it. */
struct tail {
    const char *func;
    sw_addr off;
};

static void
check(struct fixture *f, const char *callee, const struct tail *t, size_t nt)
{
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_virtual_frames_add(&f->cache, f->ls, &f->st, &err), 0);
    if (f->st.n != nt + 3) {
        for (size_t i = 0; i < f->st.n; i++)
            print_message("frame %zu: kind %d %s ra 0x%llx\n", i, f->st.frames[i].kind,
                          f->st.frames[i].vname ? f->st.frames[i].vname : "-",
                          (unsigned long long)f->st.frames[i].ra);
        fail_msg("%zu frames, want %zu", f->st.n, nt + 3);
    }
    const struct sw_frame *fr = f->st.frames;
    assert_int_equal(fr[0].kind, SW_FRAME_NORMAL);
    assert_string_equal(fr[0].vname, callee);
    for (size_t i = 0; i < nt; i++) {
        const struct sw_frame *x = &fr[1 + i];
        assert_int_equal(x->kind, SW_FRAME_TAILCALL);
        assert_non_null(x->vname);
        assert_string_equal(x->vname, t[i].func);
        assert_int_equal(x->ra, sym(f, LIB, t[i].func) + t[i].off);
        /* a tail-call frame has its caller's SP and FP, and no stepper */
        assert_int_equal(x->sp, fr[nt + 1].sp);
        assert_int_equal(x->fp, fr[nt + 1].fp);
        assert_null(x->stepper);
        assert_int_equal(x->level, 1 + i);
    }
    assert_int_equal(fr[nt + 1].kind, SW_FRAME_NORMAL);
    assert_string_equal(fr[nt + 1].vname, "main_fn");
    assert_int_equal(fr[nt + 2].ra, NOWHERE);
}

static void
test_tailcall_plt_call_reaches_a_chain_in_the_library(void **state)
{
    struct fixture *f = *state;
    /* main_fn -> tc_entry (an LTO-shaped origin of a declaration) -> tc_mid -> tc_leaf */
    static const struct tail t[] = { { "tc_mid", 8 }, { "tc_entry", 8 } };
    push_case(f, "tc_leaf", 0x10);
    check(f, "tc_leaf", t, 2);
    /* the same stack again: the same frames (the cache answers) */
    push_case(f, "tc_leaf", 0x10);
    check(f, "tc_leaf", t, 2);
}

static void
test_tailcall_ambiguous_chains_keep_only_what_they_share(void **state)
{
    struct fixture *f = *state;
    /* tc_fork reaches tc_leaf through tc_mid and through tc_alt: nothing in common */
    push_case(f, "tc_leaf", 0x20);
    check(f, "tc_leaf", NULL, 0);
    /* tc_fork2 reaches it through two sites of its own, both to tc_mid: only tc_mid is sure */
    static const struct tail t[] = { { "tc_mid", 8 } };
    push_case(f, "tc_leaf", 0x30);
    check(f, "tc_leaf", t, 1);
}

static void
test_tailcall_targets_gdb_cannot_resolve_give_no_frames(void **state)
{
    struct fixture *f = *state;
    push_case(f, "tc_leaf", 0x40); /* tc_missing: no module defines it */
    check(f, "tc_leaf", NULL, 0);
    push_case(f, "tc_leaf", 0xb0); /* DW_AT_call_target: needs the caller's registers */
    check(f, "tc_leaf", NULL, 0);
    push_case(f, "tc_leaf", 0x70); /* tc_leaf itself: a direct call */
    check(f, "tc_leaf", NULL, 0);
    /* a callee no chain from tc_entry reaches */
    push_case(f, "tc_alt", 0x10);
    check(f, "tc_alt", NULL, 0);
}

static void
test_tailcall_names_resolve_as_gdbs_minimal_symbols(void **state)
{
    struct fixture *f = *state;
    /* tc_dup: LOCAL in main, GLOBAL in the library; the GLOBAL one wins */
    static const struct tail dup[] = { { "tc_dup", 8 } };
    push_case(f, "tc_leaf", 0x50);
    check(f, "tc_leaf", dup, 1);
    assert_true(f->st.frames[1].ra > LIB_BIAS);
    /* tc_loc: LOCAL in both; the last module's (the library's) wins */
    static const struct tail loc[] = { { "tc_loc", 8 } };
    push_case(f, "tc_leaf", 0x60);
    check(f, "tc_leaf", loc, 1);
    /* a declaration in the library's own DWARF, by name */
    static const struct tail named[] = { { "tc_named", 8 } };
    push_case(f, "tc_leaf", 0xa0);
    check(f, "tc_leaf", named, 1);
}

static void
test_tailcall_module_order_decides_between_local_symbols(void **state)
{
    struct fixture *f = *state; /* the library listed before main */
    /* tc_loc is now main's (the last LOCAL one), which makes no tail calls */
    push_case(f, "tc_leaf", 0x60);
    check(f, "tc_leaf", NULL, 0);
    /* a GLOBAL symbol wins wherever it is */
    static const struct tail dup[] = { { "tc_dup", 8 } };
    push_case(f, "tc_leaf", 0x50);
    check(f, "tc_leaf", dup, 1);
    /* and the chain through the library works from either order */
    static const struct tail t[] = { { "tc_mid", 8 }, { "tc_entry", 8 } };
    push_case(f, "tc_leaf", 0x10);
    check(f, "tc_leaf", t, 2);
}

static void
test_tailcall_the_vdso_is_searched_last(void **state)
{
    struct fixture *f = *state; /* the vDSO (a copy of the library) listed first */
    const struct sw_lib *vdso;
    struct sw_elfsym s;
    assert_int_equal(sw_libstate_lib_at(f->ls, VDSO_AT, &vdso), 0);
    assert_null(vdso->path);
    struct sw_elf *vdso_elf = sw_lib_elf(vdso);
    assert_non_null(vdso_elf);
    assert_int_equal(sw_elf_symbol_by_name(vdso_elf, "tc_dup", &s), 0); /* GLOBAL there too */
    /* gdb finds the library's GLOBAL tc_dup before the vDSO's, whose DWARF it has not */
    static const struct tail dup[] = { { "tc_dup", 8 } };
    push_case(f, "tc_leaf", 0x50);
    check(f, "tc_leaf", dup, 1);
    static const struct tail t[] = { { "tc_mid", 8 }, { "tc_entry", 8 } };
    push_case(f, "tc_leaf", 0x10);
    check(f, "tc_leaf", t, 2);
}

static void
test_tailcall_targets_with_ranges_match_only_as_the_callee(void **state)
{
    struct fixture *f = *state;
    /* tc_via tail-calls tc_split (DW_AT_ranges, hot part first): stopped in tc_split, its
     * first range's start is the callee's entry (gdb 13 tries every range's start) */
    static const struct tail via[] = { { "tc_via", 8 } };
    push_case(f, "tc_split", 0x80);
    check(f, "tc_split", via, 1);
    /* stopped in tc_leaf, the search would go on into tc_split: gdb gives up at its cold
     * part's start, which starts no function */
    push_case(f, "tc_leaf", 0x80);
    check(f, "tc_leaf", NULL, 0);
    /* named (a symbol, one address), tc_split is entered at its entry */
    static const struct tail split[] = { { "tc_split", 8 } };
    push_case(f, "tc_leaf", 0x90);
    check(f, "tc_leaf", split, 1);
}

static void
test_tailcall_names_follow_a_module_that_moved(void **state)
{
    struct fixture *f = *state;
    static const struct tail t[] = { { "tc_mid", 8 }, { "tc_entry", 8 } };
    push_case(f, "tc_leaf", 0x10);
    check(f, "tc_leaf", t, 2);
    /* the library unloaded and loaded again elsewhere: tc_entry is looked up again */
    fake_proc_remove_module(f->proc, LIB);
    fake_proc_add_module(f->proc, LIB, 2 * LIB_BIAS);
    assert_int_equal(sw_libstate_refresh(f->ls), 0);
    push_case(f, "tc_leaf", 0x10);
    assert_true(f->st.frames[0].ra > 2 * LIB_BIAS);
    check(f, "tc_leaf", t, 2);
}

/* Every allocation fails once in turn: SW_ENOMEM leaves the physical stack as it was, and
 * the cache answers correctly afterwards. */
static void
test_tailcall_allocation_failures_leave_the_stack_unchanged(void **state)
{
    struct fixture *f = *state;
    static const struct tail t[] = { { "tc_mid", 8 }, { "tc_entry", 8 } };
    bool finished = false;
    for (unsigned long k = 1; k < 2000 && !finished; k++) {
        struct sw_virtual *saved = f->cache;
        struct sw_errbuf err = { 0 };
        f->cache = NULL;
        push_case(f, "tc_leaf", 0x10);
        sw_test_fail_alloc_at(k);
        int rc = sw_virtual_frames_add(&f->cache, f->ls, &f->st, &err);
        unsigned long count = sw_test_alloc_count();
        sw_test_fail_alloc_at(0);
        if (rc == 0) {
            finished = count < k; /* check adds again: the same frames */
        } else {
            assert_int_equal(rc, SW_ENOMEM);
            assert_non_null(strstr(err.msg, "out of memory"));
            assert_int_equal(f->st.n, 3);
        }
        check(f, "tc_leaf", t, 2);
        sw_virtual_free(f->cache);
        f->cache = saved;
    }
    assert_true(finished);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tailcall_plt_call_reaches_a_chain_in_the_library,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_tailcall_ambiguous_chains_keep_only_what_they_share,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_tailcall_targets_gdb_cannot_resolve_give_no_frames,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_tailcall_names_resolve_as_gdbs_minimal_symbols, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tailcall_module_order_decides_between_local_symbols,
                                        setup_lib_first, teardown),
        cmocka_unit_test_setup_teardown(test_tailcall_the_vdso_is_searched_last, setup_vdso_first,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tailcall_targets_with_ranges_match_only_as_the_callee,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_tailcall_names_follow_a_module_that_moved, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tailcall_allocation_failures_leave_the_stack_unchanged,
                                        setup, teardown),
    };
    return cmocka_run_group_tests_name("tailcall", tests, NULL, NULL);
}
