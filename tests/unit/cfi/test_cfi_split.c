/* tests/unit/cfi/test_cfi_split.c -- CFI that exists only in a separate debug file.
 *
 * tests/unit/data/x86_64_cfi_split.S has .debug_frame and no .eh_frame.  Each
 * test strips it (objcopy --strip-debug) into a fresh directory and puts the
 * debug file (objcopy --only-keep-debug) where gdb looks for one: next to the
 * program, in its .debug/, under the debug directory followed by the
 * program's directory (all by .gnu_debuglink), and under the debug
 * directory's .build-id/.  The ELF cache must find it, sw_cfi_open must read
 * rows from it, and the debug stepper must walk the program by it; a debug
 * file of another build must not be used.  Host-only (x86-64, binutils).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "util/util.h"
#include "cfi/cfi.h"
#include "elf/elf.h"

#define SPLIT_ELF SW_TEST_DATA "/x86_64_cfi_split.elf"
#define OTHER_ELF SW_TEST_DATA "/x86_64_cfi.elf"

enum { RBP = 6, RSP = 7, RIP = 16 };
#define STACK 0x7ffe0000ull

/* One test's directory: the stripped program and an empty debug root. */
struct split {
    char dir[64]; /* from mkdtemp: short */
    char prog[128];
    char root[128];
};

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
run(const char *fmt, ...)
{
    char cmd[4 * PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (system(cmd) != 0)
        fail_msg("command failed: %s", cmd);
}

static void
split_setup(struct split *s)
{
    char tmpl[] = "/tmp/rspwalk-cfi-split.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    snprintf(s->dir, sizeof s->dir, "%s", tmpl);
    snprintf(s->prog, sizeof s->prog, "%s/prog", s->dir);
    snprintf(s->root, sizeof s->root, "%s/debugroot", s->dir);
    assert_int_equal(mkdir(s->root, 0700), 0);
}

static void
split_teardown(struct split *s)
{
    run("rm -rf '%s'", s->dir);
}

/* The debug file of ELF at PATH (directories made as needed). */
static void
make_debug(const char *elf, const char *path)
{
    run("mkdir -p \"$(dirname '%s')\" && objcopy --only-keep-debug '%s' '%s'", path, elf, path);
}

/* S->prog: the program without its .debug_frame, with a .gnu_debuglink to
 * LINK (a file that must exist: objcopy records its CRC) or none. */
static void
make_stripped(struct split *s, const char *link)
{
    if (link)
        run("objcopy --strip-debug --add-gnu-debuglink='%s' '%s' '%s'", link, SPLIT_ELF, s->prog);
    else
        run("objcopy --strip-debug '%s' '%s'", SPLIT_ELF, s->prog);
}

/* .build-id/xx/yyyy.debug of the split program, under ROOT. */
static void
build_id_path(const char *root, char *out, size_t len)
{
    struct sw_elfcache *c = sw_elfcache_new(root);
    struct sw_elf *e;
    struct sw_errbuf err = { 0 };
    const uint8_t *id;
    size_t idlen;
    assert_non_null(c);
    assert_int_equal(sw_elfcache_open(c, SPLIT_ELF, &e, &err), 0);
    sw_elf_build_id(e, &id, &idlen);
    assert_true(idlen >= 2);
    int n = snprintf(out, len, "%s/.build-id/%02x/", root, id[0]);
    for (size_t i = 1; i < idlen; i++)
        n += snprintf(out + n, len - (size_t)n, "%02x", id[i]);
    snprintf(out + n, len - (size_t)n, ".debug");
    sw_elfcache_free(c);
}

static sw_addr
symbol(struct sw_elf *e, const char *name)
{
    struct sw_elfsym sym;
    if (sw_elf_symbol_by_name(e, name, &sym) != 0)
        fail_msg("no symbol %s", name);
    return sym.value;
}

/* The debug file the ELF cache finds for S->prog with S->root as the debug
 * directory (NULL if none), and the rows read through it. */
static const char *
check_found(struct split *s, const char *want)
{
    static char found[PATH_MAX];
    struct sw_elfcache *c = sw_elfcache_new(s->root);
    struct sw_elf *e;
    struct sw_errbuf err = { 0 };
    assert_non_null(c);
    assert_int_equal(sw_elfcache_open(c, s->prog, &e, &err), 0);
    const char *dbg = sw_elf_debug_path(e);
    if (want == NULL) {
        assert_null(dbg);
        sw_elfcache_free(c);
        return NULL;
    }
    if (dbg == NULL || strcmp(dbg, want) != 0)
        fail_msg("debug file of %s: %s, expected %s", s->prog, dbg ? dbg : "none", want);
    snprintf(found, sizeof found, "%s", dbg);

    /* The program alone has no CFI; with its debug file it has the rows. */
    struct sw_cfi *cfi = NULL;
    assert_int_equal(sw_cfi_open(s->prog, NULL, 8, &cfi, &err), SW_ENOCFI);
    assert_null(cfi);
    assert_non_null(strstr(err.msg, s->prog));
    if (sw_cfi_open(s->prog, dbg, 8, &cfi, &err) != 0)
        fail_msg("CFI of %s with %s: %s", s->prog, dbg, err.msg);
    static struct sw_cfi_row row;
    assert_int_equal(sw_cfi_row_at(cfi, symbol(e, "split_leaf"), &row, &err), 0);
    assert_int_equal(row.cfa_reg, RSP);
    assert_int_equal(row.cfa_offset, 8);
    assert_int_equal(row.ra_column, RIP);
    assert_int_equal(row.rules[RIP].kind, SW_CFI_OFFSET);
    assert_int_equal(row.rules[RIP].offset, -8);
    assert_int_equal(sw_cfi_row_at(cfi, symbol(e, "split_caller_ra") - 1, &row, &err), 0);
    assert_int_equal(row.cfa_offset, 16);
    assert_int_equal(row.rules[RBP].kind, SW_CFI_OFFSET);
    assert_int_equal(row.rules[RBP].offset, -16);
    sw_cfi_close(cfi);
    sw_elfcache_free(c);
    return found;
}

/* ---- where the debug file is found --------------------------------------- */

static void
test_split_debuglink_next_to_the_program(void **state)
{
    (void)state;
    struct split s;
    char dbg[2 * PATH_MAX];
    split_setup(&s);
    snprintf(dbg, sizeof dbg, "%s/prog.debug", s.dir);
    make_debug(SPLIT_ELF, dbg);
    make_stripped(&s, dbg);
    check_found(&s, dbg);
    split_teardown(&s);
}

static void
test_split_debuglink_in_the_programs_dot_debug(void **state)
{
    (void)state;
    struct split s;
    char dbg[2 * PATH_MAX];
    split_setup(&s);
    snprintf(dbg, sizeof dbg, "%s/.debug/prog.debug", s.dir);
    make_debug(SPLIT_ELF, dbg);
    make_stripped(&s, dbg);
    check_found(&s, dbg);
    split_teardown(&s);
}

static void
test_split_debuglink_under_the_debug_dir_and_the_programs_dir(void **state)
{
    (void)state;
    struct split s;
    char dbg[3 * PATH_MAX];
    split_setup(&s);
    snprintf(dbg, sizeof dbg, "%s%s/prog.debug", s.root, s.dir);
    make_debug(SPLIT_ELF, dbg);
    make_stripped(&s, dbg);
    check_found(&s, dbg);
    split_teardown(&s);
}

static void
test_split_build_id_under_the_debug_dir(void **state)
{
    (void)state;
    struct split s;
    char dbg[2 * PATH_MAX];
    split_setup(&s);
    build_id_path(s.root, dbg, sizeof dbg);
    make_debug(SPLIT_ELF, dbg);
    make_stripped(&s, NULL); /* no .gnu_debuglink: only the build-id finds it */
    check_found(&s, dbg);
    split_teardown(&s);
}

static void
test_split_debug_file_of_another_build_is_not_used(void **state)
{
    (void)state;
    struct split s;
    char dbg[2 * PATH_MAX], link[2 * PATH_MAX];
    split_setup(&s);
    /* Where the build-id and the debuglink point, a debug file whose
     * build-id is another program's. */
    build_id_path(s.root, dbg, sizeof dbg);
    make_debug(OTHER_ELF, dbg);
    snprintf(link, sizeof link, "%s/prog.debug", s.dir);
    make_debug(SPLIT_ELF, link);
    make_stripped(&s, link);
    make_debug(OTHER_ELF, link);
    check_found(&s, NULL);
    split_teardown(&s);
}

/* ---- through the debug stepper ------------------------------------------- */

/* Walk S->prog stopped at split_leaf's entry, called from split_caller,
 * called from _start, with only the debug stepper. */
static void
walk_split(struct split *s, struct sw_stack *st)
{
    struct sw_elfcache *c = sw_elfcache_new(s->root);
    struct sw_elf *e;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_elfcache_open(c, s->prog, &e, &err), 0);
    sw_addr leaf = symbol(e, "split_leaf"), start = symbol(e, "_start");
    sw_addr caller_ra = symbol(e, "split_caller_ra"), start_ra = symbol(e, "split_start_ra");
    sw_elfcache_free(c);

    uint64_t auxv[] = { 9 /* AT_ENTRY */, start, 0, 0 };
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    fake_proc_set_auxv(p, auxv, sizeof auxv);
    fake_proc_add_mem(p, STACK, NULL, 0x1000);
    sw_addr sp = STACK + 0x800;
    fake_proc_put_word(p, sp, caller_ra);
    fake_proc_put_word(p, sp + 8, 0); /* split_caller's saved rbp */
    fake_proc_put_word(p, sp + 16, start_ra);
    fake_proc_set_reg(p, 1, RIP, leaf);
    fake_proc_set_reg(p, 1, RSP, sp);
    fake_proc_set_reg(p, 1, RBP, 0);

    struct sw_walker *w = NULL;
    struct sw_walker_config cfg = {
        .exe = s->prog, .debug_dir = s->root, .no_default_steppers = true, .cache_dir = ""
    };
    assert_int_equal(sw_walker_new(p, &cfg, &w, &err), 0);
    struct sw_stepper *ds = sw_stepper_debug_new();
    assert_non_null(ds);
    assert_int_equal(sw_add_stepper(w, ds), 0);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, st), 0);
    if (st->n == 3) {
        assert_int_equal(st->frames[1].ra, caller_ra);
        assert_int_equal(st->frames[1].sp, sp + 8);
        assert_int_equal(st->frames[2].ra, start_ra);
        assert_int_equal(st->frames[2].sp, sp + 24);
        assert_ptr_equal(st->frames[2].stepper, ds);
    }
    sw_walker_free(w);
}

static void
test_split_stepper_walks_by_the_build_id_debug_file(void **state)
{
    (void)state;
    struct split s;
    struct sw_stack st;
    char dbg[2 * PATH_MAX];
    split_setup(&s);
    build_id_path(s.root, dbg, sizeof dbg);
    make_debug(SPLIT_ELF, dbg);
    make_stripped(&s, NULL);
    sw_stack_init(&st);
    walk_split(&s, &st);
    assert_int_equal(st.n, 3);
    assert_int_equal(st.end, SW_END_BOTTOM);
    sw_stack_fini(&st);
    split_teardown(&s);
}

static void
test_split_stepper_walks_by_the_debuglink_debug_file(void **state)
{
    (void)state;
    struct split s;
    struct sw_stack st;
    char dbg[2 * PATH_MAX];
    split_setup(&s);
    snprintf(dbg, sizeof dbg, "%s/.debug/prog.debug", s.dir);
    make_debug(SPLIT_ELF, dbg);
    make_stripped(&s, dbg);
    sw_stack_init(&st);
    walk_split(&s, &st);
    assert_int_equal(st.n, 3);
    assert_int_equal(st.end, SW_END_BOTTOM);
    sw_stack_fini(&st);
    split_teardown(&s);
}

static void
test_split_stepper_without_the_debug_file_finds_no_caller(void **state)
{
    (void)state;
    struct split s;
    struct sw_stack st;
    split_setup(&s);
    make_stripped(&s, NULL);
    sw_stack_init(&st);
    walk_split(&s, &st);
    assert_int_equal(st.n, 1);
    assert_int_equal(st.end, SW_END_NO_STEPPER);
    sw_stack_fini(&st);
    split_teardown(&s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_debuglink_next_to_the_program),
        cmocka_unit_test(test_split_debuglink_in_the_programs_dot_debug),
        cmocka_unit_test(test_split_debuglink_under_the_debug_dir_and_the_programs_dir),
        cmocka_unit_test(test_split_build_id_under_the_debug_dir),
        cmocka_unit_test(test_split_debug_file_of_another_build_is_not_used),
        cmocka_unit_test(test_split_stepper_walks_by_the_build_id_debug_file),
        cmocka_unit_test(test_split_stepper_walks_by_the_debuglink_debug_file),
        cmocka_unit_test(test_split_stepper_without_the_debug_file_finds_no_caller),
    };
    return cmocka_run_group_tests_name("cfi_split", tests, NULL, NULL);
}
