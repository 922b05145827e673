/* tests/unit/elf/test_inflate.c -- compressed sections held to a ceiling and a ratio.
 *
 * ELF files written here with libelf: one SHF_COMPRESSED section of zeros
 * (a bomb: about 1000 times), one of varied bytes (an honest ratio), and
 * one whose header lies about its size.  sw_elf_inflate_ok must judge by
 * the headers alone, before anything is inflated.
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
#include <gelf.h>
#include <libelf.h>

#include "elf/elf.h"

/* A temporary ELF file with one section .debug_info of LEN bytes from
 * FILL (i: the byte at i), zlib-compressed; its descriptor, opened for
 * reading; *ELF its libelf handle. */
static int
write_elf(size_t len, unsigned char (*fill)(size_t), Elf **elf)
{
    char path[] = "/tmp/test_inflate-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    (void)elf_version(EV_CURRENT);
    Elf *out = elf_begin(fd, ELF_C_WRITE, NULL);
    assert_non_null(out);
    assert_non_null(gelf_newehdr(out, ELFCLASS64));
    GElf_Ehdr eh;
    gelf_getehdr(out, &eh);
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_type = ET_REL;
    eh.e_machine = EM_X86_64;
    eh.e_version = EV_CURRENT;

    static const char names[] = "\0.shstrtab\0.debug_info";
    Elf_Scn *str = elf_newscn(out);
    Elf_Data *sd = elf_newdata(str);
    sd->d_buf = (void *)names;
    sd->d_size = sizeof names;
    sd->d_type = ELF_T_BYTE;
    GElf_Shdr sh;
    gelf_getshdr(str, &sh);
    sh.sh_name = 1;
    sh.sh_type = SHT_STRTAB;
    gelf_update_shdr(str, &sh);
    eh.e_shstrndx = elf_ndxscn(str);
    gelf_update_ehdr(out, &eh);

    unsigned char *bytes = malloc(len);
    assert_non_null(bytes);
    for (size_t i = 0; i < len; i++)
        bytes[i] = fill(i);
    Elf_Scn *scn = elf_newscn(out);
    Elf_Data *d = elf_newdata(scn);
    d->d_buf = bytes;
    d->d_size = len;
    d->d_type = ELF_T_BYTE;
    gelf_getshdr(scn, &sh);
    sh.sh_name = 11;
    sh.sh_type = SHT_PROGBITS;
    gelf_update_shdr(scn, &sh);
    assert_true(elf_update(out, ELF_C_NULL) >= 0);
    assert_int_equal(elf_compress(scn, ELFCOMPRESS_ZLIB, 0), 1);
    assert_true(elf_update(out, ELF_C_WRITE) >= 0);
    elf_end(out);
    free(bytes);
    *elf = elf_begin(fd, ELF_C_READ, NULL);
    assert_non_null(*elf);
    return fd;
}

static unsigned char
zeros(size_t i)
{
    (void)i;
    return 0;
}

/* Bytes that compress a few times, as DWARF does. */
static unsigned char
varied(size_t i)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15u;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 32;
    return (unsigned char)(x & 0x1f);
}

static void
test_inflate_zeros_over_the_ratio_are_refused(void **state)
{
    (void)state;
    Elf *elf;
    char why[160];
    int fd = write_elf(8u << 20, zeros, &elf);
    assert_false(sw_elf_inflate_ok(elf, NULL, why, sizeof why));
    assert_non_null(strstr(why, ".debug_info inflates"));
    assert_non_null(strstr(why, "more than 100 times"));
    /* A user who trusts the file raises the ratio. */
    struct sw_inflate_limits lim = { .max_ratio = 5000 };
    assert_true(sw_elf_inflate_ok(elf, &lim, why, sizeof why));
    elf_end(elf);
    close(fd);
}

static void
test_inflate_honest_section_passes_and_ceiling_refuses_it(void **state)
{
    (void)state;
    Elf *elf;
    char why[160];
    int fd = write_elf(2u << 20, varied, &elf);
    assert_true(sw_elf_inflate_ok(elf, NULL, why, sizeof why));
    struct sw_inflate_limits lim = { .max_bytes = 1u << 20 };
    assert_false(sw_elf_inflate_ok(elf, &lim, why, sizeof why));
    assert_non_null(strstr(why, "more than the limit of 1048576"));
    elf_end(elf);
    close(fd);
}

static void
test_inflate_small_sections_are_held_to_the_ceiling_alone(void **state)
{
    (void)state;
    Elf *elf;
    char why[160];
    int fd = write_elf(64u << 10, zeros, &elf); /* 64 KiB of zeros: a ratio of ~600 */
    assert_true(sw_elf_inflate_ok(elf, NULL, why, sizeof why));
    elf_end(elf);
    close(fd);
}

static void
test_inflate_judges_by_the_header_that_lies(void **state)
{
    (void)state;
    Elf *elf;
    char why[160];
    int fd = write_elf(4096, varied, &elf);
    /* The header claims 2 GiB: refused without inflating anything. */
    Elf_Scn *scn = elf_getscn(elf, 2);
    Elf_Data *raw = elf_rawdata(scn, NULL);
    assert_non_null(raw);
    Elf64_Chdr *ch = raw->d_buf;
    ch->ch_size = 2ull << 30;
    assert_false(sw_elf_inflate_ok(elf, NULL, why, sizeof why));
    assert_non_null(strstr(why, "2147483648"));
    elf_end(elf);
    close(fd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inflate_zeros_over_the_ratio_are_refused),
        cmocka_unit_test(test_inflate_honest_section_passes_and_ceiling_refuses_it),
        cmocka_unit_test(test_inflate_small_sections_are_held_to_the_ceiling_alone),
        cmocka_unit_test(test_inflate_judges_by_the_header_that_lies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
