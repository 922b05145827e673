/* tests/unit/dwarf/test_dinfo_aranges.c -- the address-to-unit table kept beside the uncompressed
 * copy.
 *
 * On this machine's libc and its debug file (libc6-dbg): reading the
 * uncompressed copy in a cache directory writes CACHE/<build-id>/aranges;
 * the next reader takes it as it is (same units at every pc as the debug
 * file read directly); a table that is truncated, or whose copy changed
 * since, is read again from .debug_aranges and rewritten; a valid table is
 * what the reader goes by (a doctored one changes the answers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
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
#include "dwarf/dwarf_internal.h"
#include "elf/elf.h"

#define LIBC LIBC_CACHE_LIBC
#define NPCS 400

struct fixture {
    struct libc_cache lc;
    char table[256]; /* CACHE/<build-id>/aranges */
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    libc_cache_open(&f->lc, "test_dinfo_aranges", true);
    char dir[192];
    snprintf(f->table, sizeof f->table, "%s/aranges", libc_cache_copy_dir(&f->lc, dir, sizeof dir));
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

/* The unit offset (0: none) at NPCS pcs (PCS; NULL: spread over libc's
 * code), read from DEBUG. */
static void
units_at_pcs(struct fixture *f, const char *debug, const sw_addr *pcs, Dwarf_Off *out)
{
    struct sw_dinfo *d = NULL;
    struct sw_errbuf err = { 0 };
    if (sw_dinfo_open(LIBC, debug, f->lc.libc, &d, &err) != 0)
        fail_msg("%s", err.msg);
    for (unsigned i = 0; i < NPCS; i++) {
        struct di_cu *cu = NULL;
        sw_addr pc = pcs ? pcs[i] : 0x26000 + (sw_addr)i * 0xf01;
        int rc = sw_di_find_cu(d, pc, &cu);
        if (rc != 0 && rc != SW_ENOENT)
            fail_msg("pc 0x%llx: %d", (unsigned long long)pc, rc);
        out[i] = rc == 0 ? cu->off : 0;
    }
    sw_dinfo_close(d);
}

static void
units_at(struct fixture *f, const char *debug, Dwarf_Off *out)
{
    units_at_pcs(f, debug, NULL, out);
}

static ino_t
inode_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    return st.st_ino;
}

static void
test_aranges_table_is_written_then_taken_with_the_same_units(void **state)
{
    struct fixture *f = *state;
    Dwarf_Off direct[NPCS], first[NPCS], again[NPCS];
    units_at(f, sw_elf_debug_path(f->lc.libc), direct);
    assert_int_equal(inode_of(f->table), 0); /* the debug file itself: nothing kept */
    units_at(f, sw_elf_dwarf_path(f->lc.libc), first);
    ino_t ino = inode_of(f->table);
    assert_true(ino != 0);
    units_at(f, sw_elf_dwarf_path(f->lc.libc), again);
    assert_int_equal(inode_of(f->table), ino); /* taken, not rewritten */
    unsigned found = 0;
    for (unsigned i = 0; i < NPCS; i++) {
        assert_int_equal(first[i], direct[i]);
        assert_int_equal(again[i], direct[i]);
        found += direct[i] != 0;
    }
    assert_true(found > NPCS / 2);
}

static void
test_aranges_truncated_or_stale_table_is_rewritten(void **state)
{
    struct fixture *f = *state;
    Dwarf_Off direct[NPCS], got[NPCS];
    units_at(f, sw_elf_debug_path(f->lc.libc), direct);
    units_at(f, sw_elf_dwarf_path(f->lc.libc), got);
    struct stat full;
    assert_int_equal(stat(f->table, &full), 0);

    assert_int_equal(truncate(f->table, full.st_size - 5), 0);
    ino_t ino = inode_of(f->table);
    units_at(f, sw_elf_dwarf_path(f->lc.libc), got);
    assert_memory_equal(got, direct, sizeof got);
    assert_true(inode_of(f->table) != ino);

    /* The copy changed since (its mtime): the table no longer matches. */
    struct timespec ts[2] = { { 0, UTIME_NOW }, { 12345, 0 } };
    assert_int_equal(utimensat(AT_FDCWD, sw_elf_dwarf_path(f->lc.libc), ts, 0), 0);
    ino = inode_of(f->table);
    units_at(f, sw_elf_dwarf_path(f->lc.libc), got);
    assert_memory_equal(got, direct, sizeof got);
    assert_true(inode_of(f->table) != ino);
    struct stat now;
    assert_int_equal(stat(f->table, &now), 0);
    assert_int_equal(now.st_size, full.st_size);
}

static void
test_aranges_valid_table_is_what_the_reader_goes_by(void **state)
{
    struct fixture *f = *state;
    Dwarf_Off direct[NPCS], got[NPCS];
    sw_addr pcs[NPCS];
    units_at(f, sw_elf_dwarf_path(f->lc.libc), direct);
    /* Every span's unit set to the first span's; the pcs in spans of the
     * table (a pc outside every span would read the units' own ranges). */
    FILE *t = fopen(f->table, "r+b");
    assert_non_null(t);
    uint64_t head[4], e[3], first = 0;
    assert_int_equal(fread(head, sizeof head, 1, t), 1);
    assert_true(head[3] > 100);
    for (uint64_t i = 0; i < head[3]; i++) {
        long at = (long)(sizeof head + i * sizeof e);
        assert_int_equal(fseek(t, at, SEEK_SET), 0);
        assert_int_equal(fread(e, sizeof e, 1, t), 1);
        if (i == 0)
            first = e[2];
        if (i % 5 == 0 && i / 5 < NPCS)
            pcs[i / 5] = e[0] + (e[1] - e[0]) / 2;
        e[2] = first;
        assert_int_equal(fseek(t, at, SEEK_SET), 0);
        assert_int_equal(fwrite(e, sizeof e, 1, t), 1);
    }
    fclose(t);
    assert_true(head[3] / 5 >= NPCS);
    units_at_pcs(f, sw_elf_debug_path(f->lc.libc), pcs, direct);
    units_at_pcs(f, sw_elf_dwarf_path(f->lc.libc), pcs, got);
    unsigned differ = 0;
    for (unsigned i = 0; i < NPCS; i++) {
        assert_int_equal(got[i], first);
        differ += direct[i] != first;
    }
    assert_true(differ > NPCS / 2);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_aranges_table_is_written_then_taken_with_the_same_units),
        T(test_aranges_truncated_or_stale_table_is_rewritten),
        T(test_aranges_valid_table_is_what_the_reader_goes_by),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
