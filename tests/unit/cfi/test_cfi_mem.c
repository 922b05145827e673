/* tests/unit/cfi/test_cfi_mem.c -- call frame information from an ELF image in memory.
 *
 * The image is this process's own vDSO (getauxval(AT_SYSINFO_EHDR)), which
 * has no file: the case sw_cfi_open_mem exists for.  Its rows for
 * __vdso_clock_gettime are checked against the x86-64 psABI's entry state,
 * and the failures: not ELF, no sections, the wrong address size.
 * Host-only: runs on x86-64 Linux, where the test machine is.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "rspwalk/rspwalk.h"
#include "util/util.h"
#include "cfi/cfi.h"

#define DW_RSP 7
#define DW_RIP 16

/* The vDSO's bytes and length: its headers, segments and section headers. */
static const uint8_t *
vdso_image(size_t *len)
{
    const uint8_t *b = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
    if (b == NULL)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
    size_t n = eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *ph = (const Elf64_Phdr *)(b + eh->e_phoff + i * eh->e_phentsize);
        if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > n)
            n = ph->p_offset + ph->p_filesz;
    }
    if (eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize > n)
        n = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    *len = n;
    return b;
}

/* The link-time address of NAME in the vDSO's .dynsym; 0 if absent. */
static sw_addr
vdso_symbol(const uint8_t *image, size_t len, const char *name)
{
    sw_addr v = 0;
    elf_version(EV_CURRENT);
    Elf *e = elf_memory((char *)image, len);
    Elf_Scn *scn = NULL;
    while (e && (scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_DYNSYM)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            const char *s;
            if (gelf_getsym(d, (int)i, &sym) && (s = elf_strptr(e, sh.sh_link, sym.st_name)) &&
                strcmp(s, name) == 0)
                v = sym.st_value;
        }
    }
    if (e)
        elf_end(e);
    return v;
}

static void
test_cfi_mem_vdso_has_rows_for_clock_gettime(void **state)
{
    (void)state;
    size_t len = 0;
    const uint8_t *image = vdso_image(&len);
    if (image == NULL)
        skip();
    /* Linux links the vDSO at 0: symbol values are offsets in the image. */
    sw_addr fn = vdso_symbol(image, len, "__vdso_clock_gettime");
    assert_true(fn != 0);

    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_cfi_open_mem(image, len, "[vdso]", 8, &c, &err), 0);
    struct sw_cfi_row row;
    assert_int_equal(sw_cfi_row_at(c, fn, &row, &err), 0);
    /* At entry: CFA = rsp + 8, the return address at CFA - 8 (psABI). */
    assert_true(row.lo <= fn && fn < row.hi);
    assert_false(row.cfa_is_expr);
    assert_int_equal(row.cfa_reg, DW_RSP);
    assert_int_equal(row.cfa_offset, 8);
    assert_int_equal(row.ra_column, DW_RIP);
    assert_int_equal(row.rules[DW_RIP].kind, SW_CFI_OFFSET);
    assert_int_equal(row.rules[DW_RIP].offset, -8);
    /* Past the image's code no FDE applies. */
    assert_int_equal(sw_cfi_row_at(c, 0x7fffffff, &row, &err), SW_ENOCFI);
    sw_cfi_close(c);
}

static void
test_cfi_mem_keeps_its_own_copy_of_the_image(void **state)
{
    (void)state;
    size_t len = 0;
    const uint8_t *image = vdso_image(&len);
    if (image == NULL)
        skip();
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, image, len);
    sw_addr fn = vdso_symbol(copy, len, "__vdso_clock_gettime");
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_cfi_open_mem(copy, len, "[vdso]", 8, &c, &err), 0);
    memset(copy, 0, len);
    free(copy);
    struct sw_cfi_row row;
    assert_int_equal(sw_cfi_row_at(c, fn, &row, &err), 0);
    assert_int_equal(row.cfa_reg, DW_RSP);
    sw_cfi_close(c);
}

static void
test_cfi_mem_rejects_bytes_that_are_not_elf(void **state)
{
    (void)state;
    static const uint8_t junk[64] = "not an ELF image";
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_cfi_open_mem(junk, sizeof junk, "[vdso]", 8, &c, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "[vdso]"));
    assert_null(c);
    assert_int_equal(sw_cfi_open_mem(NULL, 0, NULL, 8, &c, &err), SW_EBADELF);
}

static void
test_cfi_mem_without_section_headers_has_no_cfi(void **state)
{
    (void)state;
    size_t len = 0;
    const uint8_t *image = vdso_image(&len);
    if (image == NULL)
        skip();
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, image, len);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)copy;
    eh->e_shoff = 0;
    eh->e_shnum = 0;
    eh->e_shstrndx = 0;
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    int rc = sw_cfi_open_mem(copy, len, "[vdso]", 8, &c, &err);
    assert_true(rc == SW_ENOCFI || rc == SW_EBADELF);
    assert_non_null(strstr(err.msg, "[vdso]"));
    assert_null(c);
    free(copy);
}

static void
test_cfi_mem_refuses_an_image_of_another_word_size(void **state)
{
    (void)state;
    size_t len = 0;
    const uint8_t *image = vdso_image(&len);
    if (image == NULL)
        skip();
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_cfi_open_mem(image, len, "[vdso]", 4, &c, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "8-byte addresses, the target has 4"));
    assert_null(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfi_mem_vdso_has_rows_for_clock_gettime),
        cmocka_unit_test(test_cfi_mem_keeps_its_own_copy_of_the_image),
        cmocka_unit_test(test_cfi_mem_rejects_bytes_that_are_not_elf),
        cmocka_unit_test(test_cfi_mem_without_section_headers_has_no_cfi),
        cmocka_unit_test(test_cfi_mem_refuses_an_image_of_another_word_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
