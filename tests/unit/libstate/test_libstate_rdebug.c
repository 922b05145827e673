/* tests/unit/libstate/test_libstate_rdebug.c -- the link map read from r_debug (sw_rdebug_modules).
 *
 * A fake process holds a dynamic section, a struct r_debug, a link_map chain
 * and the names, laid out for a 64-bit little-endian target (x86_64) and a
 * 32-bit big-endian one (a copy of the x86_64 table with word size 4 and
 * big-endian byte order: only the layout matters here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "libstate/libstate_internal.h"

/* Where the pieces live in the fake target (apart from each other). */
#define DYN_ADDR    0x10000u
#define RDEBUG_ADDR 0x20000u
#define LM_ADDR     0x30000u /* link_map i at LM_ADDR + i * LM_STRIDE */
#define LM_STRIDE   0x100u
#define NAMES_ADDR  0x40000u
#define NAMES_LEN   0x1000u
#define UNMAPPED    0x90000u
#define R_BRK       0x7f0000001234u

static struct arch_desc arch_be32;

/* Names of the chain's entries: the main program first, as glibc lists it. */
static const char *const chain_names[] = { "", "/lib/libc.so.6", "/lib/ld.so.1" };
#define NCHAIN 3

struct layout {
    struct sw_proc *p;
    size_t w;
    sw_addr name_at[8];
};

static sw_addr
lm_at(size_t i)
{
    return LM_ADDR + i * LM_STRIDE;
}

/* DYN: a DT_NEEDED, DT_DEBUG = RDEBUG (0: not filled in yet; omitted if
 * WITH_DEBUG is false), DT_NULL. */
static void
put_dynamic(struct layout *l, bool with_debug, sw_addr rdebug)
{
    size_t w = l->w, k = 0;
    fake_proc_add_mem(l->p, DYN_ADDR, NULL, 8 * 2 * w);
    fake_proc_put_word(l->p, DYN_ADDR + k * w, 1); /* DT_NEEDED */
    fake_proc_put_word(l->p, DYN_ADDR + (k + 1) * w, 0x42);
    k += 2;
    if (with_debug) {
        fake_proc_put_word(l->p, DYN_ADDR + k * w, 21); /* DT_DEBUG */
        fake_proc_put_word(l->p, DYN_ADDR + (k + 1) * w, rdebug);
        k += 2;
    }
    fake_proc_put_word(l->p, DYN_ADDR + k * w, 0); /* DT_NULL */
}

/* struct r_debug at RDEBUG_ADDR: r_version 1 (an int), r_map, r_brk. */
static void
put_rdebug(struct layout *l, sw_addr r_map)
{
    uint8_t version[4];
    arch_store(l->p->arch, version, 4, 1);
    fake_proc_add_mem(l->p, RDEBUG_ADDR, NULL, 5 * l->w);
    fake_proc_put(l->p, RDEBUG_ADDR, version, 4);
    fake_proc_put_word(l->p, RDEBUG_ADDR + l->w, r_map);
    fake_proc_put_word(l->p, RDEBUG_ADDR + 2 * l->w, R_BRK & (l->w == 4 ? 0xffffffffu : ~0ull));
}

/* link_map I: l_addr, l_name, l_ld, l_next, l_prev. */
static void
put_lm(struct layout *l, size_t i, sw_addr name, sw_addr next, sw_addr prev)
{
    sw_addr at = lm_at(i);
    fake_proc_put_word(l->p, at, 0x100000u * (i + 1));
    fake_proc_put_word(l->p, at + l->w, name);
    fake_proc_put_word(l->p, at + 2 * l->w, 0x1000u * (i + 1) + 0x800);
    fake_proc_put_word(l->p, at + 3 * l->w, next);
    fake_proc_put_word(l->p, at + 4 * l->w, prev);
}

/* The whole picture: dynamic section, r_debug, a chain of NCHAIN entries
 * whose names sit at odd offsets (so they cross the reader's chunks). */
static void
build(struct layout *l, const struct arch_desc *a)
{
    memset(l, 0, sizeof *l);
    l->p = fake_proc_new(a);
    assert_non_null(l->p);
    l->w = a->word_size;
    put_dynamic(l, true, RDEBUG_ADDR);
    put_rdebug(l, lm_at(0));
    fake_proc_add_mem(l->p, LM_ADDR, NULL, 16 * LM_STRIDE);
    fake_proc_add_mem(l->p, NAMES_ADDR, NULL, NAMES_LEN);
    sw_addr at = NAMES_ADDR + 0x3b;
    for (size_t i = 0; i < NCHAIN; i++) {
        l->name_at[i] = at;
        fake_proc_put(l->p, at, chain_names[i], strlen(chain_names[i]) + 1);
        at += strlen(chain_names[i]) + 0x31;
    }
    for (size_t i = 0; i < NCHAIN; i++)
        put_lm(l, i, l->name_at[i], i + 1 < NCHAIN ? lm_at(i + 1) : 0, i ? lm_at(i - 1) : 0);
}

static void
expect_chain(const struct sw_modinfo *m, size_t n, size_t from, size_t count)
{
    assert_int_equal(n, count);
    for (size_t k = 0; k < count; k++) {
        size_t i = from + k;
        assert_string_equal(m[k].name, chain_names[i]);
        assert_int_equal(m[k].l_addr, 0x100000u * (i + 1));
        assert_int_equal(m[k].l_ld, 0x1000u * (i + 1) + 0x800);
        assert_int_equal(m[k].lm, lm_at(i));
    }
}

static void
test_rdebug_le64_lists_libraries_without_main_program(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = NULL;
    size_t n = 0;
    sw_addr brk = 0;
    struct sw_errbuf err;
    build(&l, &arch_x86_64);
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, &brk, &err), 0);
    expect_chain(m, n, 1, 2);
    assert_int_equal(brk, R_BRK);
    sw_modinfo_free(m, n);
    sw_proc_free(l.p);
}

static void
test_rdebug_be32_lists_libraries_with_4_byte_fields(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = NULL;
    size_t n = 0;
    sw_addr brk = 0;
    struct sw_errbuf err;
    build(&l, &arch_be32);
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, &brk, &err), 0);
    expect_chain(m, n, 1, 2);
    assert_int_equal(brk, R_BRK & 0xffffffffu);
    sw_modinfo_free(m, n);
    sw_proc_free(l.p);
}

static void
test_rdebug_dt_debug_zero_before_ld_so_ran_is_empty_list(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = (struct sw_modinfo *)&l; /* must be reset */
    size_t n = 7;
    sw_addr brk = 5;
    struct sw_errbuf err;
    memset(&l, 0, sizeof l);
    l.p = fake_proc_new(&arch_x86_64);
    l.w = 8;
    put_dynamic(&l, true, 0);
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, &brk, &err), 0);
    assert_null(m);
    assert_int_equal(n, 0);
    assert_int_equal(brk, 0);
    sw_proc_free(l.p);
}

static void
test_rdebug_no_dt_debug_static_program_is_empty_list(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = NULL;
    size_t n = 7;
    struct sw_errbuf err;
    memset(&l, 0, sizeof l);
    l.p = fake_proc_new(&arch_x86_64);
    l.w = 8;
    put_dynamic(&l, false, 0);
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, NULL, &err), 0);
    assert_null(m);
    assert_int_equal(n, 0);
    assert_int_equal(sw_rdebug_modules(l.p, 0, &m, &n, NULL, &err), 0);
    assert_int_equal(n, 0);
    sw_proc_free(l.p);
}

static void
test_rdebug_unreadable_dynamic_section_is_empty_list(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    struct sw_modinfo *m = NULL;
    size_t n = 7;
    struct sw_errbuf err;
    assert_int_equal(sw_rdebug_modules(p, UNMAPPED, &m, &n, NULL, &err), 0);
    assert_null(m);
    assert_int_equal(n, 0);
    sw_proc_free(p);
}

static void
test_rdebug_link_map_cycle_ends_walk_once_around(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = NULL;
    size_t n = 0;
    struct sw_errbuf err;
    build(&l, &arch_x86_64);
    /* The last entry points back at itself: l_prev still agrees on the way in. */
    put_lm(&l, NCHAIN - 1, l.name_at[NCHAIN - 1], lm_at(NCHAIN - 1), lm_at(NCHAIN - 2));
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, NULL, &err), 0);
    expect_chain(m, n, 1, 2);
    sw_modinfo_free(m, n);
    /* Back to the head: the head's l_prev (0) disagrees, or it is seen again. */
    put_lm(&l, NCHAIN - 1, l.name_at[NCHAIN - 1], lm_at(0), lm_at(NCHAIN - 2));
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, NULL, &err), 0);
    expect_chain(m, n, 1, 2);
    sw_modinfo_free(m, n);
    sw_proc_free(l.p);
}

static void
test_rdebug_entry_with_unreadable_name_is_skipped(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = NULL;
    size_t n = 0;
    struct sw_errbuf err;
    build(&l, &arch_be32);
    put_lm(&l, 1, UNMAPPED, lm_at(2), lm_at(0));
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, NULL, &err), 0);
    expect_chain(m, n, 2, 1);
    sw_modinfo_free(m, n);
    sw_proc_free(l.p);
}

static void
test_rdebug_name_without_nul_within_limit_is_skipped(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = NULL;
    size_t n = 0;
    struct sw_errbuf err;
    static char longname[SW_RDEBUG_MAX_NAME_LEN + 64];
    build(&l, &arch_x86_64);
    memset(longname, 'x', sizeof longname);
    fake_proc_add_mem(l.p, 0x50000, longname, sizeof longname);
    put_lm(&l, 2, 0x50000, 0, lm_at(1));
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, NULL, &err), 0);
    expect_chain(m, n, 1, 1);
    sw_modinfo_free(m, n);
    sw_proc_free(l.p);
}

static void
test_rdebug_unreadable_link_map_keeps_entries_before_it(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = NULL;
    size_t n = 0;
    struct sw_errbuf err;
    build(&l, &arch_x86_64);
    put_lm(&l, 1, l.name_at[1], UNMAPPED, lm_at(0));
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, NULL, &err), 0);
    expect_chain(m, n, 1, 1);
    sw_modinfo_free(m, n);
    sw_proc_free(l.p);
}

static void
test_rdebug_dead_link_is_error_naming_what_was_read(void **state)
{
    (void)state;
    struct layout l;
    struct sw_modinfo *m = NULL;
    size_t n = 0;
    sw_addr brk = 5;
    struct sw_errbuf err;
    build(&l, &arch_x86_64);
    fake_proc_fail_reads(l.p, SW_ETIMEDOUT);
    assert_int_equal(sw_rdebug_modules(l.p, DYN_ADDR, &m, &n, &brk, &err), SW_ETIMEDOUT);
    assert_non_null(strstr(err.msg, "dynamic section"));
    assert_non_null(strstr(err.msg, "0x10000"));
    assert_null(m);
    assert_int_equal(n, 0);
    assert_int_equal(brk, 0);
    sw_proc_free(l.p);
}

/* The check built from the list the walk read (the libraries, main left out). */
static void
watch_of(struct layout *l, struct sw_rdebug_entry **e, size_t *ne)
{
    struct sw_modinfo *m = NULL;
    size_t n = 0;
    struct sw_errbuf err;
    assert_int_equal(sw_rdebug_modules(l->p, DYN_ADDR, &m, &n, NULL, &err), 0);
    assert_int_equal(sw_rdebug_watch(m, n, e, ne), 0);
    assert_int_equal(*ne, n);
    sw_modinfo_free(m, n);
}

static void
test_rdebug_watch_unchanged_link_map_is_same(void **state)
{
    (void)state;
    struct layout l;
    struct sw_rdebug_entry *e;
    size_t ne;
    bool same = false;
    struct sw_errbuf err;
    build(&l, &arch_x86_64);
    watch_of(&l, &e, &ne);
    assert_int_equal(sw_rdebug_unchanged(l.p, e, ne, &same, &err), 0);
    assert_true(same);
    sw_free(e);
    sw_proc_free(l.p);
}

static void
test_rdebug_watch_dlopen_appending_an_entry_is_a_change(void **state)
{
    (void)state;
    struct layout l;
    struct sw_rdebug_entry *e;
    size_t ne;
    bool same = true;
    struct sw_errbuf err;
    build(&l, &arch_be32);
    watch_of(&l, &e, &ne);
    /* dlopen: a new entry after the last one, whose l_next now points at it. */
    put_lm(&l, NCHAIN, l.name_at[1], 0, lm_at(NCHAIN - 1));
    put_lm(&l, NCHAIN - 1, l.name_at[NCHAIN - 1], lm_at(NCHAIN), lm_at(NCHAIN - 2));
    assert_int_equal(sw_rdebug_unchanged(l.p, e, ne, &same, &err), 0);
    assert_false(same);
    sw_free(e);
    sw_proc_free(l.p);
}

static void
test_rdebug_watch_dlclose_unlinking_an_entry_is_a_change(void **state)
{
    (void)state;
    struct layout l;
    struct sw_rdebug_entry *e;
    size_t ne;
    bool same = true;
    struct sw_errbuf err;
    build(&l, &arch_x86_64);
    watch_of(&l, &e, &ne);
    /* dlclose of the last library: its predecessor ends the chain. */
    put_lm(&l, NCHAIN - 2, l.name_at[NCHAIN - 2], 0, lm_at(NCHAIN - 3));
    assert_int_equal(sw_rdebug_unchanged(l.p, e, ne, &same, &err), 0);
    assert_false(same);
    sw_free(e);
    sw_proc_free(l.p);
}

static void
test_rdebug_watch_entry_without_link_map_address_gives_no_check(void **state)
{
    (void)state;
    char a[] = "a", b[] = "b";
    struct sw_modinfo m[2] = { { .name = a, .lm = 0x1000 }, { .name = b, .lm = 0 } };
    struct sw_rdebug_entry *e = (void *)1;
    size_t ne = 9;
    assert_int_equal(sw_rdebug_watch(m, 2, &e, &ne), 0);
    assert_null(e);
    assert_int_equal(ne, 0);
}

static void
test_rdebug_watch_unreadable_entry_is_a_change_not_an_error(void **state)
{
    (void)state;
    struct layout l;
    bool same = true;
    struct sw_errbuf err;
    build(&l, &arch_x86_64);
    struct sw_rdebug_entry e = { .lm = UNMAPPED };
    assert_int_equal(sw_rdebug_unchanged(l.p, &e, 1, &same, &err), 0);
    assert_false(same);
    sw_proc_free(l.p);
}

int
main(void)
{
    arch_be32 = arch_x86_64;
    arch_be32.name = "be32-test";
    arch_be32.word_size = 4;
    arch_be32.elf_class = 1;
    arch_be32.big_endian = true;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rdebug_le64_lists_libraries_without_main_program),
        cmocka_unit_test(test_rdebug_be32_lists_libraries_with_4_byte_fields),
        cmocka_unit_test(test_rdebug_dt_debug_zero_before_ld_so_ran_is_empty_list),
        cmocka_unit_test(test_rdebug_no_dt_debug_static_program_is_empty_list),
        cmocka_unit_test(test_rdebug_unreadable_dynamic_section_is_empty_list),
        cmocka_unit_test(test_rdebug_link_map_cycle_ends_walk_once_around),
        cmocka_unit_test(test_rdebug_entry_with_unreadable_name_is_skipped),
        cmocka_unit_test(test_rdebug_name_without_nul_within_limit_is_skipped),
        cmocka_unit_test(test_rdebug_unreadable_link_map_keeps_entries_before_it),
        cmocka_unit_test(test_rdebug_dead_link_is_error_naming_what_was_read),
        cmocka_unit_test(test_rdebug_watch_unchanged_link_map_is_same),
        cmocka_unit_test(test_rdebug_watch_dlopen_appending_an_entry_is_a_change),
        cmocka_unit_test(test_rdebug_watch_dlclose_unlinking_an_entry_is_a_change),
        cmocka_unit_test(test_rdebug_watch_entry_without_link_map_address_gives_no_check),
        cmocka_unit_test(test_rdebug_watch_unreadable_entry_is_a_change_not_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
