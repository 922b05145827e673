/* tests/unit/cfi/test_cfi_hdr.c -- .eh_frame through .eh_frame_hdr gives the rows the whole list
 * gives.
 *
 * sw_cfi_open looks an FDE up through .eh_frame_hdr and hands libdwarf that
 * FDE and its CIE alone (cfi/eh_frame_hdr.c); RSPWALK_CFI_WHOLE_TABLE=1
 * makes it read the whole .eh_frame as before.  Both are opened on real
 * files of every supported ABI (host and cross libc, ld.so, this test) and
 * compared at the entry, middle and last byte of every function symbol
 * and every 61 bytes of code;
 * then on copies whose header is broken (the whole list serves), and the
 * header reader alone on malformed input.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"
#include "util/util.h"
#include "cfi/cfi.h"
#include "expr/expr.h"
#include "cfi/eh_frame_hdr.h"

static struct sw_cfi *
open_cfi(const char *path, unsigned addr_size, bool whole)
{
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    if (whole)
        setenv("RSPWALK_CFI_WHOLE_TABLE", "1", 1);
    sw_test_env_reread();
    int rc = sw_cfi_open(path, NULL, addr_size, &c, &err);
    unsetenv("RSPWALK_CFI_WHOLE_TABLE");
    sw_test_env_reread();
    if (rc != 0)
        fail_msg("opening CFI of %s: %s", path, err.msg);
    return c;
}

/* The same decoded operations (the blocks are the same bytes, read from two
 * copies of .eh_frame). */
static bool
expr_equal(const struct sw_cfi_expr *a, const struct sw_cfi_expr *b)
{
    if (a->nops != b->nops || a->undecodable != b->undecodable)
        return false;
    for (size_t i = 0; i < a->nops; i++)
        if (a->ops[i].atom != b->ops[i].atom || a->ops[i].number != b->ops[i].number ||
            a->ops[i].number2 != b->ops[i].number2 || a->ops[i].offset != b->ops[i].offset)
            return false;
    return true;
}

static void
assert_rule_equal(const struct sw_cfi_rule *a, const struct sw_cfi_rule *b, uint64_t pc,
                  unsigned reg)
{
    if (a->kind != b->kind || a->offset != b->offset || a->reg != b->reg ||
        !expr_equal(&a->expr, &b->expr))
        fail_msg("pc 0x%" PRIx64 " register %u: rule %d/%" PRId64 " vs %d/%" PRId64, pc, reg,
                 (int)a->kind, a->offset, (int)b->kind, b->offset);
}

/* Compare the rows of A and B at PC; returns 1 when there is one. */
static int
compare_at(struct sw_cfi *a, struct sw_cfi *b, uint64_t pc)
{
    struct sw_cfi_row ra, rb;
    struct sw_errbuf ea = { 0 }, eb = { 0 };
    int rca = sw_cfi_row_at(a, pc, &ra, &ea);
    int rcb = sw_cfi_row_at(b, pc, &rb, &eb);
    if (rca != rcb)
        fail_msg("pc 0x%" PRIx64 ": %d (%s) through the header, %d (%s) whole", pc, rca, ea.msg,
                 rcb, eb.msg);
    if (rca != 0) {
        assert_string_equal(ea.msg, eb.msg);
        return 0;
    }
    if (ra.lo != rb.lo || ra.hi != rb.hi || ra.cfa_is_expr != rb.cfa_is_expr ||
        ra.cfa_reg != rb.cfa_reg || ra.cfa_offset != rb.cfa_offset ||
        ra.ra_column != rb.ra_column || ra.signal_frame != rb.signal_frame ||
        ra.ra_signed != rb.ra_signed)
        fail_msg("pc 0x%" PRIx64 ": rows differ: [0x%" PRIx64 ",0x%" PRIx64 ") cfa r%u+%" PRId64
                 " vs [0x%" PRIx64 ",0x%" PRIx64 ") cfa r%u+%" PRId64,
                 pc, ra.lo, ra.hi, ra.cfa_reg, ra.cfa_offset, rb.lo, rb.hi, rb.cfa_reg,
                 rb.cfa_offset);
    if (!expr_equal(&ra.cfa_expr, &rb.cfa_expr))
        fail_msg("pc 0x%" PRIx64 ": CFA expressions differ", pc);
    for (unsigned r = 0; r < SW_CFI_MAX_REGS; r++)
        assert_rule_equal(&ra.rules[r], &rb.rules[r], pc, r);
    return 1;
}

/* Every function symbol's entry, middle and last byte (and one past it) in
 * PATH: both ways, the same.  Returns how many pcs had a row. */
static unsigned
compare_file(const char *path, const char *rows_from)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        fail_msg("%s: not installed (scripts/deps)", path);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    assert_non_null(elf);
    unsigned addr_size = gelf_getclass(elf) == ELFCLASS64 ? 8 : 4;
    struct sw_cfi *hdr = open_cfi(rows_from ? rows_from : path, addr_size, false);
    struct sw_cfi *whole = open_cfi(rows_from ? rows_from : path, addr_size, true);
    unsigned rows = 0, pcs = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL)
            continue;
        /* Executable sections every 61 bytes (ppc64's ELFv1 symbols name
         * function descriptors in .opd, not code). */
        if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR)) {
            for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a += 61, pcs++)
                rows += (unsigned)compare_at(hdr, whole, a);
            continue;
        }
        if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            if (gelf_getsym(d, (int)i, &s) == NULL || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
                s.st_shndx == SHN_UNDEF || s.st_value == 0)
                continue;
            uint64_t v = s.st_value & ~(uint64_t)1, n = s.st_size ? s.st_size : 1;
            uint64_t at[] = { v, v + n / 2, v + n - 1, v + n };
            for (size_t k = 0; k < sizeof at / sizeof at[0]; k++, pcs++)
                rows += (unsigned)compare_at(hdr, whole, at[k]);
        }
    }
    /* Below and above everything. */
    compare_at(hdr, whole, 0);
    compare_at(hdr, whole, addr_size == 8 ? UINT64_MAX - 16 : 0xfffffff0u);
    sw_cfi_close(hdr);
    sw_cfi_close(whole);
    elf_end(elf);
    close(fd);
    if (rows == 0)
        fail_msg("%s: no rows at %u pcs", path, pcs);
    return rows;
}

static void
test_cfi_hdr_rows_equal_the_whole_list_on_host_files(void **state)
{
    (void)state;
    assert_true(compare_file("/lib/x86_64-linux-gnu/libc.so.6", NULL) > 3000);
    compare_file("/lib64/ld-linux-x86-64.so.2", NULL);
    compare_file("/proc/self/exe", NULL);
}

static void
test_cfi_hdr_rows_equal_the_whole_list_on_cross_libcs(void **state)
{
    (void)state;
    compare_file("/usr/aarch64-linux-gnu/lib/libc.so.6", NULL);
    compare_file("/usr/i686-linux-gnu/lib/libc.so.6", NULL);
    compare_file("/usr/powerpc64-linux-gnu/lib/libc.so.6", NULL);
    compare_file("/usr/powerpc64le-linux-gnu/lib/libc.so.6", NULL);
    compare_file("/usr/powerpc-linux-gnu/lib/libc.so.6", NULL);
}

/* A copy of PATH with the .eh_frame_hdr byte at OFF (from the section's
 * start) set to V, or with its first table entry's FDE pointer aimed at the
 * section's first record (a CIE) when OFF is SIZE_MAX. */
static void
broken_copy(const char *path, const char *out, size_t off, uint8_t v)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    off_t len = lseek(fd, 0, SEEK_END);
    uint8_t *buf = malloc((size_t)len);
    assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
    GElf_Shdr hdr = { 0 }, eh = { 0 };
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (strcmp(name, ".eh_frame_hdr") == 0)
            hdr = sh;
        else if (strcmp(name, ".eh_frame") == 0)
            eh = sh;
    }
    assert_true(hdr.sh_size > 12 && eh.sh_size > 0);
    uint8_t *h = buf + hdr.sh_offset;
    if (off != SIZE_MAX) {
        h[off] = v;
    } else {
        /* x86-64: datarel sdata4 entries after two 4-byte fields. */
        assert_int_equal(h[3], 0x3b);
        int32_t rel = (int32_t)(eh.sh_addr - hdr.sh_addr);
        memcpy(h + 12 + 4, &rel, 4);
    }
    elf_end(elf);
    close(fd);
    FILE *f = fopen(out, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    free(buf);
}

static void
test_cfi_hdr_broken_header_falls_back_to_the_whole_list(void **state)
{
    (void)state;
    char tmp[] = "/tmp/test_cfi_hdr.XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    close(fd);
    /* Version 2; a table encoding of DW_EH_PE_omit; a count past the end;
     * the first FDE pointer at a CIE.  Each: the same rows as the original
     * read whole, at every function of the original. */
    const struct {
        size_t off;
        uint8_t v;
    } cases[] = { { 0, 2 }, { 3, 0xff }, { 11, 0x7f }, { SIZE_MAX, 0 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        broken_copy("/proc/self/exe", tmp, cases[i].off, cases[i].v);
        compare_file("/proc/self/exe", tmp);
    }
    unlink(tmp);
}

static void
test_cfi_hdr_reader_rejects_malformed_headers(void **state)
{
    (void)state;
    struct sw_ehhdr h;
    uint8_t eh[64] = { 0 };
    /* version 1, eh_frame_ptr udata4, count udata4, table datarel sdata4 */
    uint8_t good[] = { 1, 0x03, 0x03, 0x3b, 0x00, 0x10, 0,    0, 1, 0,
                       0, 0,    0x10, 0,    0,    0,    0x10, 0, 0, 0 };
    assert_int_equal(sw_ehhdr_init(&h, good, sizeof good, 0, eh, sizeof eh, 0x1000, false, 8), 0);
    uint64_t off = 99;
    assert_int_equal(sw_ehhdr_find(&h, 0xf, &off), 0);  /* below the first entry */
    assert_int_equal(sw_ehhdr_find(&h, 0x10, &off), 0); /* its FDE at 0x10: not in .eh_frame */
    uint8_t bad[sizeof good];
    memcpy(bad, good, sizeof good);
    bad[0] = 2; /* version */
    assert_int_equal(sw_ehhdr_init(&h, bad, sizeof bad, 0, eh, sizeof eh, 0x1000, false, 8), -1);
    memcpy(bad, good, sizeof good);
    bad[8] = 2; /* two entries, one present */
    assert_int_equal(sw_ehhdr_init(&h, bad, sizeof bad, 0, eh, sizeof eh, 0x1000, false, 8), -1);
    memcpy(bad, good, sizeof good);
    bad[3] = 0x01; /* uleb128 table */
    assert_int_equal(sw_ehhdr_init(&h, bad, sizeof bad, 0, eh, sizeof eh, 0x1000, false, 8), -1);
    /* eh_frame_ptr not the section's address */
    assert_int_equal(sw_ehhdr_init(&h, good, sizeof good, 0, eh, sizeof eh, 0x2000, false, 8), -1);
    assert_int_equal(sw_ehhdr_init(&h, good, 3, 0, eh, sizeof eh, 0x1000, false, 8), -1);

    /* An FDE whose CIE pointer leads outside the section, a CIE taken for
     * an FDE, a length past the end: no image. */
    uint8_t sec[32] = { 0 };
    /* CIE at 0: length 12, id 0; FDE at 16: length 12, CIE pointer 20 */
    sec[0] = 12;
    sec[16] = 12;
    sec[20] = 20;
    uint8_t hdr[] = { 1, 0x03, 0x03, 0x03, 0x00, 0x10, 0, 0, 1, 0, 0, 0 };
    assert_int_equal(sw_ehhdr_init(&h, hdr, sizeof hdr, 0, sec, sizeof sec, 0x1000, false, 8), -1);
    uint8_t hdr2[] = { 1, 0x03, 0x03, 0x03, 0x00, 0x10, 0,    0,    1, 0,
                       0, 0,    0,    0,    0,    0,    0x10, 0x10, 0, 0 };
    assert_int_equal(sw_ehhdr_init(&h, hdr2, sizeof hdr2, 0, sec, sizeof sec, 0x1000, false, 8), 0);
    assert_int_equal(sw_ehhdr_find(&h, 5, &off), 1);
    assert_int_equal(off, 16);
    uint8_t *image = NULL;
    size_t len = 0;
    assert_int_equal(sw_ehhdr_image(&h, 16, 62, 0, &image, &len), 0);
    assert_memory_equal(image, "\177ELF", 4);
    sw_free(image);
    sec[20] = 40; /* before the section */
    assert_int_equal(sw_ehhdr_image(&h, 16, 62, 0, &image, &len), -1);
    sec[20] = 20;
    assert_int_equal(sw_ehhdr_image(&h, 0, 62, 0, &image, &len), -1); /* a CIE */
    sec[16] = 200;                                                    /* past the end */
    assert_int_equal(sw_ehhdr_image(&h, 16, 62, 0, &image, &len), -1);
    sec[16] = 12;
    sec[4] = 1; /* the CIE's id is not 0 */
    assert_int_equal(sw_ehhdr_image(&h, 16, 62, 0, &image, &len), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfi_hdr_rows_equal_the_whole_list_on_host_files),
        cmocka_unit_test(test_cfi_hdr_rows_equal_the_whole_list_on_cross_libcs),
        cmocka_unit_test(test_cfi_hdr_broken_header_falls_back_to_the_whole_list),
        cmocka_unit_test(test_cfi_hdr_reader_rejects_malformed_headers),
    };
    return cmocka_run_group_tests_name("cfi_hdr", tests, NULL, NULL);
}
