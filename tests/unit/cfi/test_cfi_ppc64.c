/* tests/unit/cfi/test_cfi_ppc64.c -- call frame information of big-endian ELF64 files.
 *
 * The cross libc of ppc64 big-endian (ELFv1, Debian's libc6-ppc64-cross),
 * whose .eh_frame libdwarf 20210528 refused whole when opened its own way
 * (see struct cfi_obj in cfi/cfi.c): rows of abort, found
 * through its .opd descriptor, from the file and from a copy in memory, and
 * the ppc64le libc for the other byte order.  A missing cross libc fails
 * the test naming the package; it is never skipped.
 */
#define _GNU_SOURCE
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
#include "util/util.h"
#include "cfi/cfi.h"

#define PPC64_LIBC   "/usr/powerpc64-linux-gnu/lib/libc.so.6"
#define PPC64LE_LIBC "/usr/powerpc64le-linux-gnu/lib/libc.so.6"

/* DWARF numbers of the 64-bit PowerPC ELF ABI. */
#define DW_PPC_R1  1
#define DW_PPC_R30 30
#define DW_PPC_R31 31
#define DW_PPC_LR  65

/* Fail, naming the package, when a cross libc is not installed. */
static void
require_file(const char *path, const char *package)
{
    if (access(path, R_OK) != 0)
        fail_msg("%s is missing: install %s (apt-get install %s)", path, package, package);
}

/* The entry address of function NAME of the libc at PATH: its .dynsym
 * symbol, and for ELFv1 (BIG_ENDIAN) the first doubleword of the .opd
 * descriptor the symbol names (64-bit ELF ABI 1.9, section 3.2.5). */
static uint64_t
function_entry(const char *path, const char *name, bool big_endian)
{
    uint64_t sym = 0, entry = 0;
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    assert_non_null(e);
    assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
    for (Elf_Scn *s = elf_nextscn(e, NULL); s && sym == 0; s = elf_nextscn(e, s)) {
        GElf_Shdr sh;
        gelf_getshdr(s, &sh);
        if (sh.sh_type != SHT_DYNSYM)
            continue;
        Elf_Data *d = elf_getdata(s, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym st;
            gelf_getsym(d, (int)i, &st);
            const char *n = elf_strptr(e, sh.sh_link, st.st_name);
            if (n && strcmp(n, name) == 0 && GELF_ST_TYPE(st.st_info) == STT_FUNC) {
                sym = st.st_value;
                break;
            }
        }
    }
    assert_true(sym != 0);
    entry = sym;
    for (Elf_Scn *s = elf_nextscn(e, NULL); s && big_endian; s = elf_nextscn(e, s)) {
        GElf_Shdr sh;
        gelf_getshdr(s, &sh);
        const char *n = elf_strptr(e, shstrndx, sh.sh_name);
        if (n == NULL || strcmp(n, ".opd") != 0)
            continue;
        assert_true(sym >= sh.sh_addr && sym + 8 <= sh.sh_addr + sh.sh_size);
        Elf_Data *d = elf_rawdata(s, NULL);
        const uint8_t *p = (const uint8_t *)d->d_buf + (sym - sh.sh_addr);
        entry = 0;
        for (int i = 0; i < 8; i++)
            entry = entry << 8 | p[i];
    }
    elf_end(e);
    close(fd);
    return entry;
}

/* The rows glibc's abort has on both ppc64 byte orders (same source, same
 * compiler): at entry the CFA is r1 and LR holds the return address; after
 * the frame is pushed LR is saved in the caller's frame, CFA + 16. */
static void
check_abort_rows(struct sw_cfi *c, uint64_t entry, const char *what)
{
    static struct sw_cfi_row row;
    struct sw_errbuf err = { 0 };

    if (sw_cfi_row_at(c, entry, &row, &err) != 0)
        fail_msg("%s: row at abort (0x%llx): %s", what, (unsigned long long)entry, err.msg);
    assert_false(row.cfa_is_expr);
    assert_int_equal(row.cfa_reg, DW_PPC_R1);
    assert_int_equal(row.cfa_offset, 0);
    assert_int_equal(row.ra_column, DW_PPC_LR);
    assert_int_equal(row.lo, entry);
    assert_true(row.hi > entry);
    assert_int_equal(row.rules[DW_PPC_LR].kind, SW_CFI_SAME);

    /* Find the row where LR is saved: within abort's prologue. */
    uint64_t pc = entry;
    for (int i = 0; i < 8 && row.rules[DW_PPC_LR].kind != SW_CFI_OFFSET; i++) {
        pc = row.hi;
        assert_int_equal(sw_cfi_row_at(c, pc, &row, &err), 0);
    }
    assert_int_equal(row.rules[DW_PPC_LR].kind, SW_CFI_OFFSET);
    assert_int_equal(row.rules[DW_PPC_LR].offset, 16);
    assert_int_equal(row.cfa_reg, DW_PPC_R1);
    assert_true(row.cfa_offset >= 112); /* at least the ELFv1 minimal frame */
    assert_int_equal(row.rules[DW_PPC_R31].kind, SW_CFI_OFFSET);
    assert_int_equal(row.rules[DW_PPC_R31].offset, -8);
}

static void
test_cfi_ppc64_big_endian_libc_has_the_rows_of_abort(void **state)
{
    (void)state;
    require_file(PPC64_LIBC, "libc6-ppc64-cross");
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };

    if (sw_cfi_open(PPC64_LIBC, NULL, 8, &c, &err) != 0)
        fail_msg("opening the CFI of %s: %s", PPC64_LIBC, err.msg);
    check_abort_rows(c, function_entry(PPC64_LIBC, "abort", true), PPC64_LIBC);
    sw_cfi_close(c);
}

static void
test_cfi_ppc64_big_endian_image_in_memory_has_the_same_rows(void **state)
{
    (void)state;
    require_file(PPC64_LIBC, "libc6-ppc64-cross");
    struct stat st;
    assert_int_equal(stat(PPC64_LIBC, &st), 0);
    uint8_t *image = malloc((size_t)st.st_size);
    assert_non_null(image);
    FILE *f = fopen(PPC64_LIBC, "rb");
    assert_non_null(f);
    assert_int_equal(fread(image, 1, (size_t)st.st_size, f), (size_t)st.st_size);
    fclose(f);

    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    if (sw_cfi_open_mem(image, (size_t)st.st_size, "[ppc64 libc image]", 8, &c, &err) != 0)
        fail_msg("opening the CFI of the image of %s: %s", PPC64_LIBC, err.msg);
    free(image); /* the CFI keeps its own copy */
    check_abort_rows(c, function_entry(PPC64_LIBC, "abort", true), "the image");
    sw_cfi_close(c);
}

static void
test_cfi_ppc64le_libc_has_the_rows_of_abort(void **state)
{
    (void)state;
    require_file(PPC64LE_LIBC, "libc6-ppc64el-cross");
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };

    if (sw_cfi_open(PPC64LE_LIBC, NULL, 8, &c, &err) != 0)
        fail_msg("opening the CFI of %s: %s", PPC64LE_LIBC, err.msg);
    /* ELFv2 has no descriptors: the symbol is the global entry point. */
    check_abort_rows(c, function_entry(PPC64LE_LIBC, "abort", false), PPC64LE_LIBC);
    sw_cfi_close(c);
}

static void
test_cfi_ppc64_libc_read_as_32_bit_is_ebadelf(void **state)
{
    (void)state;
    require_file(PPC64_LIBC, "libc6-ppc64-cross");
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_cfi_open(PPC64_LIBC, NULL, 4, &c, &err), SW_EBADELF);
    assert_null(c);
    assert_non_null(strstr(err.msg, "8-byte"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfi_ppc64_big_endian_libc_has_the_rows_of_abort),
        cmocka_unit_test(test_cfi_ppc64_big_endian_image_in_memory_has_the_same_rows),
        cmocka_unit_test(test_cfi_ppc64le_libc_has_the_rows_of_abort),
        cmocka_unit_test(test_cfi_ppc64_libc_read_as_32_bit_is_ebadelf),
    };
    return cmocka_run_group_tests_name("cfi_ppc64", tests, NULL, NULL);
}
