/* tests/unit/libstate/test_module.c -- the module cache: one file's CFI and DWARF, once.
 *
 * Modules over this host's libc and vDSO and a test ELF without frame
 * information: what a module opens is opened once and kept, an image read
 * from memory has CFI but no DWARF, and several threads asking at once get
 * the same objects and the same answers.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include <cmocka.h>

#include "rspwalk/libstate.h"
#include "cfi/cfi.h"
#include "dwarf/dwarf.h"
#include "elf/elf.h"
#include "libstate/module.h"

#define LIBC    "/lib/x86_64-linux-gnu/libc.so.6"
#define NOFRAME SW_TEST_DATA "/x86_64_noframe.elf"
#define THREADS 8
#define ROUNDS  200

static struct sw_module *
module_of(struct sw_modcache *mc, const char *path)
{
    struct sw_elf *e = NULL;
    struct sw_module *m = NULL;
    struct sw_errbuf err = { 0 };
    if (sw_elfcache_open(sw_modcache_elfs(mc), path, &e, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(sw_modcache_module(mc, e, &m, &err), 0);
    return m;
}

/* The vDSO of this process as an image in the cache, or NULL. */
static struct sw_module *
vdso_module(struct sw_modcache *mc)
{
    const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
    struct sw_errbuf err = { 0 };
    struct sw_elf *v = NULL;
    struct sw_module *m = NULL;
    if (base == NULL)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
    size_t len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > len)
            len = ph[i].p_offset + ph[i].p_filesz;
    assert_int_equal(sw_elfcache_open_mem(sw_modcache_elfs(mc), "[vdso]", base, len, &v, &err), 0);
    assert_int_equal(sw_modcache_module(mc, v, &m, &err), 0);
    return m;
}

static struct sw_modcache *
cache_new(void)
{
    struct sw_modcache *mc = NULL;
    assert_int_equal(sw_modcache_new(NULL, "", &mc), 0);
    return mc;
}

/* One module per file: the second request for a file gets the first module. */
static void
test_module_one_per_file(void **state)
{
    (void)state;
    struct sw_modcache *mc = cache_new();
    struct sw_module *a = module_of(mc, LIBC), *b = module_of(mc, LIBC);
    assert_ptr_equal(a, b);
    assert_string_equal(sw_elf_path(sw_module_elf(a)), LIBC);
    assert_ptr_not_equal(module_of(mc, NOFRAME), a);
    sw_modcache_free(mc);
}

/* A file's CFI is opened at the first sw_module_cfi and kept by the module:
 * later calls get the same one; the vDSO's comes from its image. */
static void
test_module_cfi_opened_once_and_kept_for_the_file_and_the_vdso_image(void **state)
{
    (void)state;
    struct sw_modcache *mc = cache_new();
    struct sw_module *m = module_of(mc, LIBC);
    struct sw_cfi *a = NULL, *b = NULL;
    const struct sw_errbuf *why = NULL;
    struct sw_errbuf err = { 0 };
    static struct sw_cfi_row row;
    struct sw_elfsym s;

    assert_int_equal(sw_module_cfi(m, 8, &a, &why), 0);
    assert_non_null(a);
    assert_non_null(why);
    assert_int_equal(sw_module_cfi(m, 8, &b, &why), 0);
    assert_ptr_equal(a, b);
    assert_int_equal(sw_elf_symbol_by_name(sw_module_elf(m), "abort", &s), 0);
    assert_int_equal(sw_cfi_row_at(a, s.value, &row, &err), 0);

    struct sw_module *v = vdso_module(mc);
    if (v != NULL) {
        assert_int_equal(sw_module_cfi(v, 8, &a, &why), 0);
        assert_non_null(a);
        assert_int_equal(sw_elf_symbol_by_name(sw_module_elf(v), "__vdso_clock_gettime", &s), 0);
        assert_int_equal(sw_cfi_row_at(a, s.value, &row, &err), 0);
    }
    sw_modcache_free(mc);
}

/* A file without frame sections has no CFI: no error, a reason naming it,
 * and the answer is kept (not looked for again). */
static void
test_module_cfi_of_a_file_without_any_is_null_with_the_reason_kept(void **state)
{
    (void)state;
    struct sw_modcache *mc = cache_new();
    struct sw_module *m = module_of(mc, NOFRAME);
    struct sw_cfi *a = (struct sw_cfi *)1;
    const struct sw_errbuf *why = NULL, *again = NULL;

    assert_int_equal(sw_module_cfi(m, 8, &a, &why), 0);
    assert_null(a);
    assert_non_null(why);
    assert_non_null(strstr(why->msg, "x86_64_noframe.elf"));
    a = (struct sw_cfi *)1;
    assert_int_equal(sw_module_cfi(m, 8, &a, &again), 0);
    assert_null(a);
    assert_ptr_equal(why, again);
    sw_modcache_free(mc);
}

/* The DWARF is opened once and kept; an image read from memory has none. */
static void
test_module_dinfo_opened_once_and_none_for_an_image(void **state)
{
    (void)state;
    struct sw_modcache *mc = cache_new();
    struct sw_module *m = module_of(mc, LIBC);
    struct sw_dinfo *a = NULL, *b = NULL;
    struct sw_errbuf err = { 0 };

    assert_int_equal(sw_module_dinfo(m, &a, &err), 0);
    assert_int_equal(sw_module_dinfo(m, &b, &err), 0);
    assert_ptr_equal(a, b);
    struct sw_module *v = vdso_module(mc);
    if (v != NULL) {
        b = (struct sw_dinfo *)1;
        assert_int_equal(sw_module_dinfo(v, &b, &err), 0);
        assert_null(b);
    }
    sw_modcache_free(mc);
}

/* A reference taken keeps the cache alive past its creator's free. */
static void
test_module_cache_lives_until_its_last_reference(void **state)
{
    (void)state;
    struct sw_modcache *mc = cache_new();
    sw_modcache_ref(mc);
    sw_modcache_free(mc);
    struct sw_module *m = module_of(mc, LIBC); /* still there */
    assert_non_null(m);
    sw_modcache_free(mc);
    sw_modcache_free(NULL);
}

/* Several threads over one module: the same CFI, rows and symbols. */
struct worker {
    struct sw_modcache *mc;
    sw_addr pcs[4];
    struct sw_cfi_row want[4];
    int failures;
};

static void *
work(void *arg)
{
    struct worker *w = arg;
    struct sw_errbuf err = { 0 };
    for (int r = 0; r < ROUNDS; r++) {
        struct sw_module *m = NULL;
        struct sw_cfi *cfi = NULL;
        struct sw_dinfo *d = NULL;
        const struct sw_errbuf *why;
        struct sw_elfsym s;
        struct sw_elf *e = NULL;
        if (sw_elfcache_open(sw_modcache_elfs(w->mc), LIBC, &e, &err) != 0 ||
            sw_modcache_module(w->mc, e, &m, &err) != 0 || sw_module_cfi(m, 8, &cfi, &why) != 0 ||
            cfi == NULL || sw_module_dinfo(m, &d, &err) != 0) {
            w->failures++;
            continue;
        }
        for (int i = 0; i < 4; i++) {
            struct sw_cfi_row row;
            const struct sw_cfi_row *want = &w->want[(i + r) % 4];
            if (sw_cfi_row_at(cfi, w->pcs[(i + r) % 4], &row, &err) != 0 || row.lo != want->lo ||
                row.hi != want->hi || row.cfa_reg != want->cfa_reg ||
                row.cfa_offset != want->cfa_offset || row.ra_column != want->ra_column)
                w->failures++;
            if (sw_elf_symbol_at(e, w->pcs[i], &s) != 0)
                w->failures++;
        }
        size_t n = 0;
        struct sw_dinfo_name names[4];
        if (d != NULL && sw_dinfo_inline_chain(d, w->pcs[r % 4], names, 4, &n) < 0)
            w->failures++;
    }
    return NULL;
}

static void
test_module_threads_share_one_module_and_get_the_same_rows(void **state)
{
    (void)state;
    static const char *const names[4] = { "abort", "malloc", "qsort", "printf" };
    struct sw_modcache *mc = cache_new();
    struct sw_module *m = module_of(mc, LIBC);
    struct sw_cfi *cfi;
    const struct sw_errbuf *why;
    struct sw_errbuf err = { 0 };
    static struct worker w[THREADS];
    pthread_t t[THREADS];

    assert_int_equal(sw_module_cfi(m, 8, &cfi, &why), 0);
    for (int k = 0; k < THREADS; k++) {
        w[k].mc = mc;
        w[k].failures = 0;
        for (int i = 0; i < 4; i++) {
            struct sw_elfsym s;
            assert_int_equal(sw_elf_symbol_by_name(sw_module_elf(m), names[i], &s), 0);
            w[k].pcs[i] = s.value + (sw_addr)k;
            assert_int_equal(sw_cfi_row_at(cfi, w[k].pcs[i], &w[k].want[i], &err), 0);
        }
    }
    for (int k = 0; k < THREADS; k++)
        assert_int_equal(pthread_create(&t[k], NULL, work, &w[k]), 0);
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        assert_int_equal(w[k].failures, 0);
    }
    sw_modcache_free(mc);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_module_one_per_file),
        cmocka_unit_test(test_module_cfi_opened_once_and_kept_for_the_file_and_the_vdso_image),
        cmocka_unit_test(test_module_cfi_of_a_file_without_any_is_null_with_the_reason_kept),
        cmocka_unit_test(test_module_dinfo_opened_once_and_none_for_an_image),
        cmocka_unit_test(test_module_cache_lives_until_its_last_reference),
        cmocka_unit_test(test_module_threads_share_one_module_and_get_the_same_rows),
    };
    return cmocka_run_group_tests_name("libstate: modules", tests, NULL, NULL);
}
