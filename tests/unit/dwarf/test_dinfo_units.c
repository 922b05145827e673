/* tests/unit/dwarf/test_dinfo_units.c -- parsed units kept beside the uncompressed copy
 * (dwarf/unitcache.c).
 *
 * On this machine's libc and its debug file (libc6-dbg): reading the
 * uncompressed copy in a cache directory writes CACHE/<build-id>/unit-<off>
 * for each unit parsed; the next reader takes them and answers exactly as a
 * fresh parse, and as the debug file read directly; a unit file cut short,
 * stamped for another copy, or holding indexes out of bounds is parsed
 * again and rewritten, never believed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/libc_cache.h"
#include "util/util.h"
#include "dwarf/dwarf.h"
#include "elf/elf.h"

#define LIBC  LIBC_CACHE_LIBC
#define NPCS  48
#define MAXIN 8

struct fixture {
    struct libc_cache lc;
    char dir[256]; /* CACHE/<build-id> */
};

/* What the DWARF says at one pc, as text: the function and its inline chain. */
struct answer {
    char text[512];
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    libc_cache_open(&f->lc, "test_dinfo_units", true);
    libc_cache_copy_dir(&f->lc, f->dir, sizeof f->dir);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    libc_cache_close(&f->lc);
    free(f);
    return 0;
}

/* The answers at NPCS pcs spread over libc's code, read from DEBUG. */
static void
answers(struct fixture *f, const char *debug, struct answer *out)
{
    struct sw_dinfo *d = NULL;
    struct sw_errbuf err = { 0 };
    if (sw_dinfo_open(LIBC, debug, f->lc.libc, &d, &err) != 0)
        fail_msg("%s", err.msg);
    for (unsigned i = 0; i < NPCS; i++) {
        sw_addr pc = 0x28000 + (sw_addr)i * 0x3011;
        struct sw_dinfo_name fn, in[MAXIN];
        size_t n = 0;
        char *p = out[i].text;
        size_t left = sizeof out[i].text;
        int rc = sw_dinfo_function(d, pc, &fn);
        int w = snprintf(p, left, "%d %s %llx %llx", rc, rc == 0 && fn.name ? fn.name : "-",
                         rc == 0 ? (unsigned long long)fn.entry : 0ull,
                         rc == 0 ? (unsigned long long)fn.die : 0ull);
        p += w;
        left -= (size_t)w;
        assert_int_equal(sw_dinfo_inline_chain(d, pc, in, MAXIN, &n), 0);
        for (size_t k = 0; k < n && left > 1; k++) {
            w = snprintf(p, left, " | %s %llx", in[k].name ? in[k].name : "??",
                         (unsigned long long)in[k].entry);
            p += w;
            left -= (size_t)w;
        }
    }
    sw_dinfo_close(d);
}

static void
assert_same(const struct answer *a, const struct answer *b)
{
    for (unsigned i = 0; i < NPCS; i++)
        assert_string_equal(a[i].text, b[i].text);
}

/* The unit files in F->dir: how many, and the path of the largest in BIG. */
static unsigned
unit_files(struct fixture *f, char *big, size_t len)
{
    DIR *dir = opendir(f->dir);
    struct dirent *e;
    unsigned n = 0;
    off_t best = -1;
    assert_non_null(dir);
    while ((e = readdir(dir)) != NULL) {
        char path[512];
        struct stat st;
        if (strncmp(e->d_name, "unit-", 5) != 0 || strchr(e->d_name, '.') != NULL)
            continue;
        n++;
        snprintf(path, sizeof path, "%s/%s", f->dir, e->d_name);
        if (stat(path, &st) == 0 && st.st_size > best) {
            best = st.st_size;
            if (big != NULL)
                snprintf(big, len, "%s", path);
        }
    }
    closedir(dir);
    return n;
}

static off_t
size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static void
test_units_are_kept_then_taken_with_the_same_answers(void **state)
{
    struct fixture *f = *state;
    static struct answer direct[NPCS], first[NPCS], again[NPCS];
    answers(f, sw_elf_debug_path(f->lc.libc), direct); /* no copy: nothing kept */
    assert_int_equal(unit_files(f, NULL, 0), 0);
    answers(f, sw_elf_dwarf_path(f->lc.libc), first);
    unsigned n = unit_files(f, NULL, 0);
    assert_true(n > 10); /* one per unit parsed */
    answers(f, sw_elf_dwarf_path(f->lc.libc), again);
    assert_int_equal(unit_files(f, NULL, 0), n);
    assert_same(direct, first);
    assert_same(first, again);
}

static void
test_units_cut_short_or_of_another_copy_are_parsed_again(void **state)
{
    struct fixture *f = *state;
    static struct answer want[NPCS], got[NPCS];
    char big[512];
    answers(f, sw_elf_dwarf_path(f->lc.libc), want);
    unit_files(f, big, sizeof big);
    off_t size = size_of(big);
    assert_true(size > 100);
    assert_int_equal(truncate(big, size - 7), 0);
    answers(f, sw_elf_dwarf_path(f->lc.libc), got);
    assert_same(want, got);
    assert_int_equal(size_of(big), size); /* rewritten */

    /* The copy's mtime changes: every unit file is stale. */
    struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
    assert_int_equal(utimensat(AT_FDCWD, sw_elf_dwarf_path(f->lc.libc), ts, 0), 0);
    struct stat before;
    assert_int_equal(stat(big, &before), 0);
    answers(f, sw_elf_dwarf_path(f->lc.libc), got);
    assert_same(want, got);
    struct stat after;
    assert_int_equal(stat(big, &after), 0);
    assert_true(after.st_ino != before.st_ino); /* renamed into place anew */
}

static void
test_units_with_indexes_out_of_bounds_are_not_believed(void **state)
{
    struct fixture *f = *state;
    static struct answer want[NPCS], got[NPCS];
    char big[512];
    answers(f, sw_elf_dwarf_path(f->lc.libc), want);
    unit_files(f, big, sizeof big);
    /* The first scope's parent (after the 48-byte header and the 8-byte die
     * offset) made to point past every scope. */
    int fd = open(big, O_WRONLY);
    uint32_t bad = 0x7fffffff;
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, &bad, sizeof bad, 48 + 8), (ssize_t)sizeof bad);
    close(fd);
    struct stat before, after;
    assert_int_equal(stat(big, &before), 0);
    answers(f, sw_elf_dwarf_path(f->lc.libc), got);
    assert_same(want, got);
    assert_int_equal(stat(big, &after), 0);
    assert_true(after.st_ino != before.st_ino); /* parsed again and rewritten */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_units_are_kept_then_taken_with_the_same_answers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_units_cut_short_or_of_another_copy_are_parsed_again,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_with_indexes_out_of_bounds_are_not_believed,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
