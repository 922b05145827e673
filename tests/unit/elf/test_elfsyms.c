/* tests/unit/elf/test_elfsyms.c -- which name an address gets: gdb's choice among symbols.
 *
 * tests/unit/data/x86_64_aliases.S, linked here, holds the cases (several
 * names at one address, sized and sizeless, global, weak and local, nested,
 * two code sections); every expected name below is the one gdb-multiarch
 * 13.1's `info symbol` gives at that address of the same file.  Then the
 * libcs of this machine: x86_64 with its libc6-dbg debug file (two tables,
 * as gdb reads them) and the cross libcs, .dynsym only (PowerPC64 ELFv1
 * through its function descriptors).  Which symbols are read at all is
 * test_elf.c's.
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

#include "rspwalk/errors.h"
#include "elf/elf.h"

#define ALIASES      SW_TEST_DATA "/x86_64_aliases.elf"
#define LIBC         "/lib/x86_64-linux-gnu/libc.so.6"
#define AARCH64_LIBC "/usr/aarch64-linux-gnu/lib/libc.so.6"
#define I386_LIBC    "/usr/i686-linux-gnu/lib/libc.so.6"
#define PPC64_LIBC   "/usr/powerpc64-linux-gnu/lib/libc.so.6"

struct fx {
    struct sw_elfcache *cache;
    struct sw_elf *elf;
};

static struct sw_elf *
open_ok(struct sw_elfcache *c, const char *path)
{
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    int rc = sw_elfcache_open(c, path, &e, &err);
    if (rc != 0)
        fail_msg("open %s: %d %s", path, rc, err.msg);
    return e;
}

static int
aliases_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    f->cache = sw_elfcache_new("/nonexistent");
    f->elf = open_ok(f->cache, ALIASES);
    *state = f;
    return 0;
}

static int
aliases_teardown(void **state)
{
    struct fx *f = *state;
    sw_elfcache_free(f->cache);
    free(f);
    return 0;
}

/* The link-time address of NAME in E. */
static sw_addr
addr_of(struct sw_elf *e, const char *name)
{
    struct sw_elfsym s;
    if (sw_elf_symbol_by_name(e, name, &s) != 0)
        fail_msg("no symbol %s", name);
    return s.value;
}

/* "NAME" or "NAME+OFF" at VADDR, "-" for none, into BUF. */
static const char *
where(struct sw_elf *e, sw_addr vaddr, char *buf, size_t len)
{
    struct sw_elfsym s;
    int rc = sw_elf_symbol_at(e, vaddr, &s);
    if (rc != 0)
        snprintf(buf, len, rc == SW_ENOSYM ? "-" : "error %d", rc);
    else if (vaddr == s.value)
        snprintf(buf, len, "%s", s.name);
    else
        snprintf(buf, len, "%s+%llu", s.name, (unsigned long long)(vaddr - s.value));
    return buf;
}

#define assert_where(e, vaddr, want)                                                               \
    do {                                                                                           \
        char buf_[256];                                                                            \
        assert_string_equal(where((e), (vaddr), buf_, sizeof buf_), (want));                       \
    } while (0)

/* ---- gdb's choice, on the assembled file --------------------------------- */

static void
test_elfsyms_aliases_greatest_name_wins_whatever_its_binding(void **state)
{
    struct fx *f = *state;
    sw_addr a = addr_of(f->elf, "__nanosleep");
    /* __GI___nanosleep (local), __nanosleep (global), nanosleep (weak). */
    assert_int_equal(addr_of(f->elf, "__GI___nanosleep"), a);
    assert_where(f->elf, a, "nanosleep");
    assert_where(f->elf, a + 15, "nanosleep+15");
    assert_where(f->elf, a + 16, "-"); /* past the size: nothing */
}

static void
test_elfsyms_local_sorting_last_gives_way_to_global_of_same_size(void **state)
{
    struct fx *f = *state;
    sw_addr a = addr_of(f->elf, "aa_global"), b = addr_of(f->elf, "ab_global");
    assert_int_equal(addr_of(f->elf, "zz_local"), a);
    assert_where(f->elf, a, "aa_global");
    assert_where(f->elf, a + 4, "aa_global+4");
    /* zy_local is 16 bytes, ab_global 8: the local one stays. */
    assert_int_equal(addr_of(f->elf, "zy_local"), b);
    assert_where(f->elf, b + 4, "zy_local+4");
    assert_where(f->elf, b + 9, "zy_local+9");
}

static void
test_elfsyms_ifunc_gives_way_to_plain_function_of_same_size(void **state)
{
    struct fx *f = *state;
    sw_addr a = addr_of(f->elf, "ac_plain");
    assert_int_equal(addr_of(f->elf, "zx_ifunc"), a);
    assert_where(f->elf, a, "ac_plain");
    assert_where(f->elf, a + 8, "ac_plain+8");
}

static void
test_elfsyms_sized_beats_sizeless_while_it_covers(void **state)
{
    struct fx *f = *state;
    struct sw_elfsym s;
    sw_addr a = addr_of(f->elf, "sized_fn");
    assert_where(f->elf, a, "sized_fn");
    assert_where(f->elf, a + 4, "sized_fn+4");
    assert_where(f->elf, a + 8, "zz_sizeless+8");
    assert_where(f->elf, a + 63, "zz_sizeless+63");
    assert_int_equal(sw_elf_symbol_at(f->elf, a + 8, &s), 0);
    assert_int_equal(s.size, 0);
}

static void
test_elfsyms_label_and_nested_function_within_a_function(void **state)
{
    struct fx *f = *state;
    sw_addr o = addr_of(f->elf, "outer_fn");
    assert_int_equal(addr_of(f->elf, "inner_label"), o + 8);
    assert_where(f->elf, o + 8, "outer_fn+8"); /* the label never hides it */
    assert_where(f->elf, o + 12, "outer_fn+12");
    assert_where(f->elf, o + 16, "inner_fn");
    /* Past inner_fn, with the label as its neighbour below: gdb finds
     * nothing (it looks one symbol back for a longer one). */
    assert_where(f->elf, o + 24, "-");
    assert_where(f->elf, o + 47, "-");
    sw_addr o2 = addr_of(f->elf, "outer2_fn");
    assert_where(f->elf, o2 + 8, "inner2_fn");
    assert_where(f->elf, o2 + 16, "outer2_fn+16"); /* the neighbour reaches further */
    assert_where(f->elf, o2 + 39, "outer2_fn+39");
    assert_where(f->elf, o2 + 40, "-");
}

static void
test_elfsyms_object_in_code_is_a_name(void **state)
{
    struct fx *f = *state;
    sw_addr a = addr_of(f->elf, "code_table");
    assert_where(f->elf, a + 4, "code_table+4");
    assert_where(f->elf, a + 16, "-");
}

static void
test_elfsyms_names_stay_in_their_code_section(void **state)
{
    struct fx *f = *state;
    sw_addr a = addr_of(f->elf, "other_fn");
    /* .stubs' first 16 bytes: only .text's symbols lie below. */
    assert_where(f->elf, a - 16, "-");
    assert_where(f->elf, a - 1, "-");
    assert_where(f->elf, a + 4, "other_fn+4");
}

/* ---- real libraries -------------------------------------------------------- */

static void
require_file(const char *path)
{
    if (access(path, R_OK) != 0) {
        print_message("no %s (scripts/deps installs it)\n", path);
        fail();
    }
}

static void
test_elfsyms_x86_64_libc_file_wins_ties_debug_file_names_its_locals(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new("/usr/lib/debug");
    struct sw_elf *e = open_ok(c, LIBC);
    struct sw_elfsym s;
    assert_non_null(sw_elf_debug_path(e)); /* libc6-dbg */
    /* .dynsym: __nanosleep (global), nanosleep (weak); the debug file also
     * has __GI___nanosleep (local): the file's greatest name at a tie. */
    assert_where(e, addr_of(e, "__nanosleep") + 2, "nanosleep+2");
    /* __libc_start_main in .dynsym beats the debug file's
     * __libc_start_main_impl and "__libc_start_main@@GLIBC_2.34" there. */
    assert_where(e, addr_of(e, "__libc_start_main_impl") + 2, "__libc_start_main+2");
    /* clone3 is local, only in the debug file: __GI___clone3, __clone3, clone3. */
    assert_int_equal(sw_elf_symbol_by_name(e, "__clone3", &s), 0);
    assert_where(e, s.value + 4, "clone3+4");
    assert_where(e, addr_of(e, "raise"), "raise"); /* gsignal, raise */
    sw_elfcache_free(c);
}

static void
test_elfsyms_aarch64_and_i386_libc_weak_alias_sorting_last_wins(void **state)
{
    (void)state;
    require_file(AARCH64_LIBC);
    require_file(I386_LIBC);
    struct sw_elfcache *c = sw_elfcache_new("/nonexistent");
    struct sw_elf *e = open_ok(c, AARCH64_LIBC);
    assert_where(e, addr_of(e, "__nanosleep") + 8, "nanosleep+8");
    assert_where(e, addr_of(e, "__clone") + 8, "clone+8");
    assert_where(e, addr_of(e, "__sigtimedwait") + 8, "sigtimedwait+8");
    e = open_ok(c, I386_LIBC);
    assert_where(e, addr_of(e, "__sigsuspend") + 4, "sigsuspend+4");
    sw_elfcache_free(c);
}

static void
test_elfsyms_ppc64_elfv1_descriptor_names_chosen_as_bfd_does(void **state)
{
    (void)state;
    require_file(PPC64_LIBC);
    struct sw_elfcache *c = sw_elfcache_new("/nonexistent");
    struct sw_elf *e = open_ok(c, PPC64_LIBC);
    struct sw_elfsym s, weak;
    /* __nanosleep (global) and nanosleep (weak) share a descriptor: BFD's
     * synthetic symbol (gdb's ".__nanosleep") takes the global name, with
     * the descriptor symbol's size. */
    assert_int_equal(sw_elf_symbol_by_name(e, "__nanosleep", &s), 0);
    assert_int_equal(sw_elf_symbol_by_name(e, "nanosleep", &weak), 0);
    assert_int_equal(weak.value, s.value);
    assert_where(e, s.value + 8, "__nanosleep+8");
    struct sw_elfsym at;
    assert_int_equal(sw_elf_symbol_at(e, s.value + 8, &at), 0);
    assert_int_equal(at.size, s.size);
    assert_true(at.size > 8);
    sw_elfcache_free(c);
}

int
main(void)
{
    const struct CMUnitTest aliases[] = {
        cmocka_unit_test(test_elfsyms_aliases_greatest_name_wins_whatever_its_binding),
        cmocka_unit_test(test_elfsyms_local_sorting_last_gives_way_to_global_of_same_size),
        cmocka_unit_test(test_elfsyms_ifunc_gives_way_to_plain_function_of_same_size),
        cmocka_unit_test(test_elfsyms_sized_beats_sizeless_while_it_covers),
        cmocka_unit_test(test_elfsyms_label_and_nested_function_within_a_function),
        cmocka_unit_test(test_elfsyms_object_in_code_is_a_name),
        cmocka_unit_test(test_elfsyms_names_stay_in_their_code_section),
    };
    const struct CMUnitTest libs[] = {
        cmocka_unit_test(test_elfsyms_x86_64_libc_file_wins_ties_debug_file_names_its_locals),
        cmocka_unit_test(test_elfsyms_aarch64_and_i386_libc_weak_alias_sorting_last_wins),
        cmocka_unit_test(test_elfsyms_ppc64_elfv1_descriptor_names_chosen_as_bfd_does),
    };
    int failed = cmocka_run_group_tests_name("elfsyms: x86_64_aliases.elf", aliases, aliases_setup,
                                             aliases_teardown);
    failed += cmocka_run_group_tests_name("elfsyms: libcs", libs, NULL, NULL);
    return failed;
}
