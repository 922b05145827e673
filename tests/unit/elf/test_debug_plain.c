/* tests/unit/elf/test_debug_plain.c -- uncompressed copies of debug files.
 *
 * On this machine's libc debug file (Debian 12's libc6-dbg: DWARF 5 with
 * zlib-compressed sections): the copy is made once, holds no compressed
 * section, carries the build-id, leaves .symtab out, and gives the same
 * inline chains and functions as the original; a damaged copy is made again;
 * a file with nothing compressed or an unwritable cache gives no copy; the
 * ELF cache hands the copy to the DWARF readers only with a cache directory
 * and without RSPWALK_NO_CACHE.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/libc_cache.h"
#include "util/util.h"
#include "elf/debug_plain.h"
#include "dwarf/dwarf.h"
#include "elf/elf.h"

#define LIBC LIBC_CACHE_LIBC
/* Link-time pcs in this libc where gdb shows an inline frame and a plain
 * function (tests/unit/dwarf/test_dwarf_info.c says where they come from). */
#define PC_INLINE_READ 0xf82ecu
#define PC_START_MAIN  0x27305u

struct fixture {
    struct libc_cache lc;
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    libc_cache_open(&f->lc, "test_debug_plain", false);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    libc_cache_close(&f->lc);
    free(f);
    unsetenv("RSPWALK_NO_CACHE");
    sw_test_env_reread();
    return 0;
}

static char *
plain_of(struct fixture *f)
{
    const uint8_t *id;
    size_t len;
    char *out = NULL;
    sw_elf_build_id(f->lc.libc, &id, &len);
    assert_int_equal(
        sw_debug_plain_path(f->lc.cache, sw_elf_debug_path(f->lc.libc), id, len, NULL, &out), 0);
    return out;
}

/* What PATH's sections are: any compressed, .symtab's type. */
static void
sections_of(const char *path, bool *compressed, GElf_Word *symtab_type)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    assert_non_null(elf);
    size_t shstrndx;
    assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
    *compressed = false;
    *symtab_type = SHT_NULL;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        assert_non_null(gelf_getshdr(scn, &sh));
        *compressed |= (sh.sh_flags & SHF_COMPRESSED) != 0;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name && strcmp(name, ".symtab") == 0)
            *symtab_type = sh.sh_type;
    }
    elf_end(elf);
    close(fd);
}

static void
test_plain_copy_is_made_once_uncompressed_without_symtab(void **state)
{
    struct fixture *f = *state;
    bool compressed;
    GElf_Word symtab;
    sections_of(sw_elf_debug_path(f->lc.libc), &compressed, &symtab);
    assert_true(compressed); /* what this test is about */
    char *p = plain_of(f);
    assert_non_null(p);
    assert_non_null(strstr(p, f->lc.cache));
    assert_non_null(strstr(p, "/93ac61ec5a8eb1396f9fbd350e3169a558528a40/debuginfo"));
    sections_of(p, &compressed, &symtab);
    assert_false(compressed);
    assert_int_equal(symtab, SHT_NOBITS);
    struct stat a, b;
    assert_int_equal(stat(p, &a), 0);
    char *again = plain_of(f); /* the copy there is used as it is */
    assert_string_equal(again, p);
    assert_int_equal(stat(again, &b), 0);
    assert_int_equal(a.st_ino, b.st_ino);
    sw_free(p);
    sw_free(again);
}

/* The inline chain and the function at PC, read from DEBUG. */
static void
names_at(struct sw_elf *libc, const char *debug, sw_addr pc, char *out, size_t cap)
{
    struct sw_dinfo *d;
    struct sw_errbuf err = { 0 };
    struct sw_dinfo_name chain[8], fn;
    size_t n;
    if (sw_dinfo_open(LIBC, debug, libc, &d, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(sw_dinfo_inline_chain(d, pc, chain, 8, &n), 0);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), cap - strlen(out), "%s/", chain[i].name ? chain[i].name : "?");
    assert_int_equal(sw_dinfo_function(d, pc, &fn), 0);
    snprintf(out + strlen(out), cap - strlen(out), "%s@%llx", fn.name ? fn.name : "?",
             (unsigned long long)fn.entry);
    sw_dinfo_close(d);
}

static void
test_plain_copy_gives_the_same_inline_chains_and_functions(void **state)
{
    struct fixture *f = *state;
    char *p = plain_of(f);
    assert_non_null(p);
    const sw_addr pcs[] = { PC_INLINE_READ, PC_START_MAIN };
    for (size_t i = 0; i < 2; i++) {
        char a[512], b[512];
        names_at(f->lc.libc, sw_elf_debug_path(f->lc.libc), pcs[i], a, sizeof a);
        names_at(f->lc.libc, p, pcs[i], b, sizeof b);
        assert_string_equal(a, b);
        assert_true(strlen(a) > 4);
    }
    char a[512];
    names_at(f->lc.libc, p, PC_INLINE_READ, a, sizeof a);
    assert_non_null(strstr(a, "__libc_read")); /* one inline frame, as gdb shows */
    sw_free(p);
}

static void
test_plain_damaged_copy_is_made_again(void **state)
{
    struct fixture *f = *state;
    char *p = plain_of(f);
    assert_non_null(p);
    assert_int_equal(truncate(p, 4096), 0);
    char *again = plain_of(f);
    assert_non_null(again);
    bool compressed;
    GElf_Word symtab;
    sections_of(again, &compressed, &symtab);
    assert_false(compressed);
    sw_free(p);
    sw_free(again);
}

static void
test_plain_nothing_compressed_or_no_cache_gives_no_copy(void **state)
{
    struct fixture *f = *state;
    const uint8_t *id;
    size_t len;
    char *out = (char *)"x";
    sw_elf_build_id(f->lc.libc, &id, &len);
    /* libc itself compresses nothing. */
    assert_int_equal(sw_debug_plain_path(f->lc.cache, LIBC, id, len, NULL, &out), 0);
    assert_null(out);
    /* A cache that cannot be written. */
    char ro[128];
    snprintf(ro, sizeof ro, "%s/ro", f->lc.cache);
    assert_int_equal(mkdir(ro, 0555), 0);
    if (geteuid() != 0) { /* root writes anyway */
        out = (char *)"x";
        assert_int_equal(
            sw_debug_plain_path(ro, sw_elf_debug_path(f->lc.libc), id, len, NULL, &out), 0);
        assert_null(out);
    }
    /* No build-id. */
    out = (char *)"x";
    assert_int_equal(
        sw_debug_plain_path(f->lc.cache, sw_elf_debug_path(f->lc.libc), id, 0, NULL, &out), 0);
    assert_null(out);
}

static void
test_plain_elfcache_hands_the_copy_out_only_with_a_cache(void **state)
{
    struct fixture *f = *state;
    struct sw_errbuf err = { 0 };
    /* Without a cache directory: the debug file itself. */
    assert_string_equal(sw_elf_dwarf_path(f->lc.libc), sw_elf_debug_path(f->lc.libc));

    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e;
    assert_int_equal(sw_elfcache_set_cache_dir(c, f->lc.cache), 0);
    assert_int_equal(sw_elfcache_open(c, LIBC, &e, &err), 0);
    assert_non_null(strstr(sw_elf_dwarf_path(e), f->lc.cache));
    sw_elfcache_free(c);

    setenv("RSPWALK_NO_CACHE", "1", 1);
    sw_test_env_reread();
    c = sw_elfcache_new(NULL);
    assert_int_equal(sw_elfcache_set_cache_dir(c, f->lc.cache), 0);
    assert_int_equal(sw_elfcache_open(c, LIBC, &e, &err), 0);
    assert_string_equal(sw_elf_dwarf_path(e), sw_elf_debug_path(e));
    sw_elfcache_free(c);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_plain_copy_is_made_once_uncompressed_without_symtab),
        T(test_plain_copy_gives_the_same_inline_chains_and_functions),
        T(test_plain_damaged_copy_is_made_again),
        T(test_plain_nothing_compressed_or_no_cache_gives_no_copy),
        T(test_plain_elfcache_hands_the_copy_out_only_with_a_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
