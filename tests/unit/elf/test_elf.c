/* tests/unit/elf/test_elf.c -- the ELF cache: opening, symbols, debug files, code bytes.
 *
 * Uses real files of this machine (libc with libc6-dbg, this test binary,
 * the vDSO) and a small ELF image built here for the symbol-choice rules.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cmocka.h>

#include "rspwalk/errors.h"
#include "elf/elf.h"
#include "elf/image.h"

#define LIBC       "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBM       "/lib/x86_64-linux-gnu/libm.so.6"
#define PPC64_LIBC "/usr/powerpc64-linux-gnu/lib/libc.so.6"

/* ---- helpers ------------------------------------------------------------ */

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

static char *
make_temp_dir(void)
{
    char tmpl[] = "/tmp/test_elf.XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

static char *
write_temp_file(const void *data, size_t len)
{
    char tmpl[] = "/tmp/test_elf.XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
    return strdup(tmpl);
}

/* The load bias of this program (PIE), from the dynamic loader. */
static int
main_bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the first entry is the main program */
}

static uintptr_t
main_bias(void)
{
    uintptr_t b = 0;
    dl_iterate_phdr(main_bias_cb, &b);
    return b;
}

/* A static function only this file's .symtab names. */
__attribute__((noinline)) static int
elf_test_marker(int x)
{
    return x * 3 + 1;
}

/* Static storage without initialiser: .bss, not in the file. */
static char elf_test_bss[8192];

static uintptr_t
fn_addr(int (*fn)(int))
{
    uintptr_t a;
    memcpy(&a, &fn, sizeof a);
    return a;
}

/* ---- a hand-built ELF for the symbol rules ------------------------------- */

/* Layout: one PT_LOAD at vaddr = offset 0, file bytes up to TEXT_END, memory
 * up to SEG_END (the rest is .bss).  .text spans 0x100..0x200. */
#define TEXT_START 0x100
#define TEXT_END   0x200
#define SEG_END    0x300

struct strtab {
    char buf[512];
    size_t len;
};

static Elf64_Word
str_add(struct strtab *t, const char *s)
{
    Elf64_Word off = (Elf64_Word)t->len;
    size_t n = strlen(s) + 1;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    return off;
}

struct symdef {
    const char *name;
    Elf64_Addr value;
    Elf64_Xword size;
    int bind, type;
    Elf64_Section shndx;
};

enum { SEC_NULL, SEC_TEXT, SEC_SYMTAB, SEC_STRTAB, SEC_DYNSYM, SEC_DYNSTR, SEC_SHSTRTAB, NSEC };

/* .symtab: which symbols gdb's minimal symbol tables hold (gdb/elfread.c);
 * how it chooses among them is test_elfsyms.c's. */
static const struct symdef symtab_defs[] = {
    { "versioned@@V_1.0", 0x1a0, 0x10, STB_GLOBAL, STT_FUNC, SEC_TEXT },
    { "an_object", 0x1b0, 0x10, STB_GLOBAL, STT_OBJECT, SEC_TEXT },
    { "symtab_name", 0x1c0, 0x10, STB_GLOBAL, STT_FUNC, SEC_TEXT },
    { "an_ifunc", 0x1d0, 0x10, STB_GLOBAL, STT_GNU_IFUNC, SEC_TEXT },
    { "last_sizeless", 0x1f0, 0, STB_LOCAL, STT_FUNC, SEC_TEXT },
    { "undefined_fn", 0, 0, STB_GLOBAL, STT_FUNC, SHN_UNDEF },
    { "abs_value", 0x1e4, 0, STB_GLOBAL, STT_NOTYPE, SHN_ABS },
    { "a_file.c", 0, 0, STB_LOCAL, STT_FILE, SHN_ABS },
    { "text_section", 0x1e4, 0, STB_LOCAL, STT_SECTION, SEC_TEXT },
    /* A mapping symbol (a name on x86, not on Arm), compiler labels gdb
     * skips, and a label outside code. */
    { "$x", 0x1e8, 0, STB_LOCAL, STT_NOTYPE, SEC_TEXT },
    { ".Lskipped", 0x1f8, 0, STB_LOCAL, STT_NOTYPE, SEC_TEXT },
    { "$Lskipped", 0x1fc, 0, STB_LOCAL, STT_NOTYPE, SEC_TEXT },
    { "data_label", 0x1b8, 0, STB_GLOBAL, STT_NOTYPE, SEC_STRTAB },
};

/* .dynsym: the exported subset, which gdb reads only without a .symtab. */
static const struct symdef dynsym_defs[] = {
    { "zz_dyn_name", 0x1c0, 0x10, STB_GLOBAL, STT_FUNC, SEC_TEXT },
    { "dyn_only", 0x1e0, 0x8, STB_GLOBAL, STT_FUNC, SEC_TEXT },
};

static size_t
put_syms(uint8_t *img, size_t off, struct strtab *str, const struct symdef *defs, size_t n)
{
    Elf64_Sym *s = (Elf64_Sym *)(img + off);
    memset(&s[0], 0, sizeof s[0]);
    str_add(str, "");
    for (size_t i = 0; i < n; i++) {
        Elf64_Sym *o = &s[i + 1];
        o->st_name = str_add(str, defs[i].name);
        o->st_value = defs[i].value;
        o->st_size = defs[i].size;
        o->st_info = (unsigned char)ELF64_ST_INFO(defs[i].bind, defs[i].type);
        o->st_other = STV_DEFAULT;
        o->st_shndx = defs[i].shndx;
    }
    return (n + 1) * sizeof(Elf64_Sym);
}

/* Build the image into BUF (zeroed, 8-aligned) and return its length: for
 * MACHINE, with a .symtab or (WITH_SYMTAB false) only a .dynsym. */
static size_t
build_image(uint8_t *img, size_t cap, uint16_t machine, bool with_symtab)
{
    struct strtab str = { .len = 0 }, dynstr = { .len = 0 }, shstr = { .len = 0 };
    Elf64_Shdr sh[NSEC];
    memset(img, 0, cap);
    memset(sh, 0, sizeof sh);

    for (size_t i = TEXT_START; i < TEXT_END; i++)
        img[i] = (uint8_t)i;
    size_t off = TEXT_END;
    size_t symtab_off = off;
    off += put_syms(img, off, &str, symtab_defs, sizeof symtab_defs / sizeof symtab_defs[0]);
    size_t symtab_size = off - symtab_off;
    size_t dynsym_off = off;
    off += put_syms(img, off, &dynstr, dynsym_defs, sizeof dynsym_defs / sizeof dynsym_defs[0]);
    size_t dynsym_size = off - dynsym_off;
    size_t strtab_off = off;
    memcpy(img + off, str.buf, str.len);
    off += str.len;
    size_t dynstr_off = off;
    memcpy(img + off, dynstr.buf, dynstr.len);
    off += dynstr.len;

    str_add(&shstr, "");
    sh[SEC_TEXT] = (Elf64_Shdr){ .sh_name = str_add(&shstr, ".text"),
                                 .sh_type = SHT_PROGBITS,
                                 .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
                                 .sh_addr = TEXT_START,
                                 .sh_offset = TEXT_START,
                                 .sh_size = TEXT_END - TEXT_START,
                                 .sh_addralign = 16 };
    sh[SEC_SYMTAB] = (Elf64_Shdr){ .sh_name = str_add(&shstr, ".symtab"),
                                   .sh_type = with_symtab ? SHT_SYMTAB : SHT_PROGBITS,
                                   .sh_offset = symtab_off,
                                   .sh_size = symtab_size,
                                   .sh_link = SEC_STRTAB,
                                   .sh_info = 1,
                                   .sh_addralign = 8,
                                   .sh_entsize = sizeof(Elf64_Sym) };
    sh[SEC_STRTAB] = (Elf64_Shdr){ .sh_name = str_add(&shstr, ".strtab"),
                                   .sh_type = SHT_STRTAB,
                                   .sh_offset = strtab_off,
                                   .sh_size = str.len,
                                   .sh_addralign = 1 };
    sh[SEC_DYNSYM] = (Elf64_Shdr){ .sh_name = str_add(&shstr, ".dynsym"),
                                   .sh_type = SHT_DYNSYM,
                                   .sh_offset = dynsym_off,
                                   .sh_size = dynsym_size,
                                   .sh_link = SEC_DYNSTR,
                                   .sh_info = 1,
                                   .sh_addralign = 8,
                                   .sh_entsize = sizeof(Elf64_Sym) };
    sh[SEC_DYNSTR] = (Elf64_Shdr){ .sh_name = str_add(&shstr, ".dynstr"),
                                   .sh_type = SHT_STRTAB,
                                   .sh_offset = dynstr_off,
                                   .sh_size = dynstr.len,
                                   .sh_addralign = 1 };
    sh[SEC_SHSTRTAB] = (Elf64_Shdr){ .sh_name = str_add(&shstr, ".shstrtab"),
                                     .sh_type = SHT_STRTAB,
                                     .sh_addralign = 1 };
    sh[SEC_SHSTRTAB].sh_offset = off;
    sh[SEC_SHSTRTAB].sh_size = shstr.len;
    memcpy(img + off, shstr.buf, shstr.len);
    off += shstr.len;
    off = (off + 7) & ~(size_t)7;
    size_t shoff = off;
    memcpy(img + off, sh, sizeof sh);
    off += sizeof sh;
    assert_true(off <= cap);

    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_type = ET_DYN;
    eh->e_machine = machine;
    eh->e_version = EV_CURRENT;
    eh->e_entry = TEXT_START;
    eh->e_phoff = sizeof *eh;
    eh->e_shoff = shoff;
    eh->e_ehsize = sizeof *eh;
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = 1;
    eh->e_shentsize = sizeof(Elf64_Shdr);
    eh->e_shnum = NSEC;
    eh->e_shstrndx = SEC_SHSTRTAB;
    Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff);
    ph->p_type = PT_LOAD;
    ph->p_flags = PF_R | PF_X;
    ph->p_offset = 0;
    ph->p_vaddr = ph->p_paddr = 0;
    ph->p_filesz = TEXT_END;
    ph->p_memsz = SEG_END;
    ph->p_align = 0x1000;
    return off;
}

struct built {
    struct sw_elfcache *cache;
    struct sw_elf *elf;
};

static int
built_setup(void **state)
{
    static _Alignas(8) uint8_t img[8192];
    struct built *b = calloc(1, sizeof *b);
    struct sw_errbuf err = { 0 };
    size_t len = build_image(img, sizeof img, EM_X86_64, true);
    b->cache = sw_elfcache_new(NULL);
    if (b->cache == NULL || sw_elfcache_open_mem(b->cache, "built", img, len, &b->elf, &err) != 0) {
        fprintf(stderr, "built image: %s\n", err.msg);
        return -1;
    }
    memset(img, 0xee, sizeof img); /* the cache must hold its own copy */
    *state = b;
    return 0;
}

static int
built_teardown(void **state)
{
    struct built *b = *state;
    sw_elfcache_free(b->cache);
    free(b);
    return 0;
}

static const char *
name_at(struct sw_elf *e, sw_addr vaddr)
{
    struct sw_elfsym s;
    int rc = sw_elf_symbol_at(e, vaddr, &s);
    return rc == 0 ? s.name : NULL;
}

/* ---- which symbols name code (built image) ------------------------------- */

static void
test_elf_versioned_name_is_kept_and_found_without_its_version(void **state)
{
    struct built *b = *state;
    struct sw_elfsym s;
    assert_string_equal(name_at(b->elf, 0x1a4), "versioned@@V_1.0");
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "versioned", &s), 0);
    assert_int_equal(s.value, 0x1a0);
    assert_string_equal(s.name, "versioned@@V_1.0");
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "versioned@@V_1.0", &s), 0);
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "version", &s), SW_ENOSYM);
}

static void
test_elf_object_in_code_names_it_undefined_absolute_and_data_do_not(void **state)
{
    struct built *b = *state;
    struct sw_elfsym s;
    assert_string_equal(name_at(b->elf, 0x1b4), "an_object");
    assert_string_equal(name_at(b->elf, 0x1b8), "an_object"); /* not data_label */
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "undefined_fn", &s), SW_ENOSYM);
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "data_label", &s), SW_ENOSYM);
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "abs_value", &s), SW_ENOSYM);
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "a_file.c", &s), SW_ENOSYM);
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "text_section", &s), SW_ENOSYM);
}

static void
test_elf_dynsym_is_not_read_beside_a_symtab(void **state)
{
    struct built *b = *state;
    struct sw_elfsym s;
    /* "zz_dyn_name" would sort after "symtab_name" at 0x1c0. */
    assert_string_equal(name_at(b->elf, 0x1c8), "symtab_name");
    assert_int_equal(sw_elf_symbol_at(b->elf, 0x1e4, &s), SW_ENOSYM);
    assert_int_equal(sw_elf_symbol_by_name(b->elf, "dyn_only", &s), SW_ENOSYM);
    assert_string_equal(name_at(b->elf, 0x1d3), "an_ifunc");
}

static void
test_elf_dynsym_names_code_of_a_file_without_symtab(void **state)
{
    (void)state;
    static _Alignas(8) uint8_t img[8192];
    size_t len = build_image(img, sizeof img, EM_X86_64, false);
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    struct sw_elfsym s;
    assert_int_equal(sw_elfcache_open_mem(c, "dynsym-only", img, len, &e, &err), 0);
    assert_string_equal(name_at(e, 0x1c8), "zz_dyn_name");
    assert_string_equal(name_at(e, 0x1e4), "dyn_only");
    assert_int_equal(sw_elf_symbol_by_name(e, "symtab_name", &s), SW_ENOSYM);
    sw_elfcache_free(c);
}

static void
test_elf_dollar_x_names_x86_code_and_compiler_labels_do_not(void **state)
{
    struct built *b = *state;
    struct sw_elfsym s;
    assert_string_equal(name_at(b->elf, 0x1e9), "$x");
    assert_int_equal(sw_elf_symbol_at(b->elf, 0x1fa, &s), 0);
    assert_string_equal(s.name, "last_sizeless");
    assert_int_equal(s.value, 0x1f0);
    assert_int_equal(s.size, 0);
}

static void
test_elf_mapping_symbols_name_no_arm_code(void **state)
{
    (void)state;
    static _Alignas(8) uint8_t img[8192];
    size_t len = build_image(img, sizeof img, EM_AARCH64, true);
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    struct sw_elfsym s;
    assert_int_equal(sw_elfcache_open_mem(c, "aarch64", img, len, &e, &err), 0);
    assert_int_equal(sw_elf_symbol_at(e, 0x1e9, &s), SW_ENOSYM);
    assert_int_equal(sw_elf_symbol_by_name(e, "$x", &s), SW_ENOSYM);
    sw_elfcache_free(c);
}

static void
test_elf_sizeless_symbol_ends_with_its_section(void **state)
{
    struct built *b = *state;
    struct sw_elfsym s;
    assert_string_equal(name_at(b->elf, TEXT_END - 1), "last_sizeless");
    /* Past .text, still in the segment (.bss): no section, no name. */
    assert_int_equal(sw_elf_symbol_at(b->elf, TEXT_END, &s), SW_ENOSYM);
    assert_int_equal(sw_elf_symbol_at(b->elf, SEG_END - 1, &s), SW_ENOSYM);
}

static void
test_elf_address_below_every_symbol_is_enosym(void **state)
{
    struct built *b = *state;
    struct sw_elfsym s;
    assert_int_equal(sw_elf_symbol_at(b->elf, TEXT_START, &s), SW_ENOSYM);
    assert_int_equal(sw_elf_symbol_at(b->elf, 0x50, &s), SW_ENOSYM);
}

static void
test_elf_read_returns_file_bytes_and_emem_past_them(void **state)
{
    struct built *b = *state;
    uint8_t buf[16];
    assert_int_equal(sw_elf_read(b->elf, 0x110, buf, sizeof buf), 0);
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], (uint8_t)(0x110 + i));
    /* The last file byte reads; one more is .bss (memsz > filesz). */
    assert_int_equal(sw_elf_read(b->elf, TEXT_END - 1, buf, 1), 0);
    assert_int_equal(sw_elf_read(b->elf, TEXT_END - 8, buf, 16), SW_EMEM);
    assert_int_equal(sw_elf_read(b->elf, 0x250, buf, 1), SW_EMEM);
    assert_int_equal(sw_elf_read(b->elf, 0x10000, buf, 1), SW_EMEM);
}

static void
test_elf_header_facts_of_built_image(void **state)
{
    struct built *b = *state;
    sw_addr lo, hi;
    const uint8_t *id;
    size_t idlen;
    assert_ptr_equal(sw_elf_arch(b->elf), &arch_x86_64);
    assert_true(sw_elf_is_dyn(b->elf));
    assert_int_equal(sw_elf_entry(b->elf), TEXT_START);
    sw_elf_load_range(b->elf, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, SEG_END);
    assert_int_equal(sw_elf_dynamic_vaddr(b->elf), 0);
    sw_elf_build_id(b->elf, &id, &idlen);
    assert_int_equal(idlen, 0);
    assert_null(sw_elf_debug_path(b->elf));
    assert_string_equal(sw_elf_path(b->elf), "built");
    assert_null(sw_elf_interp(b->elf));
}

static void
test_elf_memory_image_bytes_are_the_cache_copy(void **state)
{
    struct built *b = *state;
    const uint8_t *data;
    size_t len;
    sw_elf_image(b->elf, &data, &len);
    assert_non_null(data);
    assert_true(len > TEXT_END);
    assert_memory_equal(data, ELFMAG, SELFMAG); /* the fixture overwrote its own buffer */
    assert_int_equal(data[0x110], 0x10);
}

/* ---- real files ---------------------------------------------------------- */

static void
test_elf_libc_dynsym_symbol_found_by_name_and_address(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = open_ok(c, LIBC);
    struct sw_elfsym byname, byaddr;
    assert_int_equal(sw_elf_symbol_by_name(e, "getpid", &byname), 0);
    assert_true(byname.size > 0);
    assert_int_equal(sw_elf_symbol_at(e, byname.value + byname.size - 1, &byaddr), 0);
    assert_int_equal(byaddr.value, byname.value);
    assert_ptr_equal(sw_elf_arch(e), &arch_x86_64);
    assert_true(sw_elf_is_dyn(e));
    assert_true(sw_elf_dynamic_vaddr(e) != 0);
    sw_elfcache_free(c);
}

static void
test_elf_libc_debug_file_found_by_build_id(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new("/usr/lib/debug");
    struct sw_elf *e = open_ok(c, LIBC);
    const uint8_t *id;
    size_t len;
    char hex[3 * 64] = "";

    sw_elf_build_id(e, &id, &len);
    assert_true(len >= 8);
    for (size_t i = 1; i < len; i++)
        sprintf(hex + 2 * (i - 1), "%02x", id[i]);
    assert_non_null(sw_elf_debug_path(e));
    assert_non_null(strstr(sw_elf_debug_path(e), "/usr/lib/debug/.build-id/"));
    assert_non_null(strstr(sw_elf_debug_path(e), hex));
    sw_elfcache_free(c);
}

static void
test_elf_libc_local_static_found_only_with_debug_file(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new("/usr/lib/debug");
    struct sw_elf *e = open_ok(c, LIBC);
    struct sw_elfsym s, at;
    assert_int_equal(sw_elf_symbol_by_name(e, "__libc_start_call_main", &s), 0);
    assert_int_equal(sw_elf_symbol_at(e, s.value + 1, &at), 0);
    assert_string_equal(at.name, "__libc_start_call_main");
    sw_elfcache_free(c);

    char *empty = make_temp_dir();
    c = sw_elfcache_new(empty);
    e = open_ok(c, LIBC);
    assert_null(sw_elf_debug_path(e));
    assert_int_equal(sw_elf_symbol_by_name(e, "__libc_start_call_main", &s), SW_ENOSYM);
    sw_elfcache_free(c);
    rmdir(empty);
    free(empty);
}

static void
test_elf_compressed_debug_section_is_decompressed(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new("/usr/lib/debug");
    struct sw_elf *e = open_ok(c, LIBC);
    const uint8_t *data, *again;
    size_t len, len2;
    sw_addr addr;
    assert_int_equal(sw_elf_section(e, ".debug_info", true, &data, &len, &addr), 0);
    /* A DWARF unit header: unit_length (< 0xfffffff0) then version 2..5. */
    uint32_t unit_len;
    uint16_t version;
    memcpy(&unit_len, data, 4);
    memcpy(&version, data + 4, 2);
    assert_true(unit_len > 0 && unit_len < len);
    assert_true(version >= 2 && version <= 5);
    assert_int_equal(sw_elf_section(e, ".debug_info", true, &again, &len2, &addr), 0);
    assert_ptr_equal(again, data);
    assert_int_equal(len2, len);
    sw_elfcache_free(c);
}

static void
test_elf_section_from_file_and_nobits_in_debug_file(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new("/usr/lib/debug");
    struct sw_elf *e = open_ok(c, LIBC);
    const uint8_t *data;
    size_t len;
    sw_addr addr;
    uint8_t buf[16];
    assert_int_equal(sw_elf_section(e, ".eh_frame", false, &data, &len, &addr), 0);
    assert_true(len > 16 && addr != 0);
    /* The section is the same bytes as the loaded image at its address. */
    assert_int_equal(sw_elf_read(e, addr, buf, sizeof buf), 0);
    assert_memory_equal(buf, data, sizeof buf);
    /* In the debug file .eh_frame is NOBITS. */
    assert_int_equal(sw_elf_section(e, ".eh_frame", true, &data, &len, &addr), SW_ENOENT);
    assert_int_equal(sw_elf_section(e, ".no_such_section", false, &data, &len, &addr), SW_ENOENT);
    sw_elfcache_free(c);
}

static void
test_elf_self_static_function_found_in_symtab(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = open_ok(c, "/proc/self/exe");
    sw_addr vaddr = fn_addr(elf_test_marker) - main_bias();
    struct sw_elfsym s;
    assert_true(sw_elf_is_dyn(e));
    assert_int_equal(sw_elf_symbol_at(e, vaddr + 1, &s), 0);
    assert_string_equal(s.name, "elf_test_marker");
    assert_int_equal(s.value, vaddr);
    assert_true(s.size > 1);
    assert_int_equal(elf_test_marker(1), 4);
    sw_elfcache_free(c);
}

static void
test_elf_self_code_bytes_match_memory_and_bss_is_emem(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = open_ok(c, "/proc/self/exe");
    uintptr_t bias = main_bias();
    uint8_t buf[16];
    uintptr_t fn = fn_addr(elf_test_marker);
    assert_int_equal(sw_elf_read(e, fn - bias, buf, sizeof buf), 0);
    assert_memory_equal(buf, (const void *)fn, sizeof buf);
    assert_int_equal(sw_elf_read(e, (uintptr_t)elf_test_bss - bias, buf, 1), SW_EMEM);
    elf_test_bss[0] = 1;
    sw_elfcache_free(c);
}

static void
test_elf_same_path_opens_once(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *a = open_ok(c, LIBC);
    struct sw_elf *b = open_ok(c, LIBC);
    assert_ptr_equal(a, b);
    sw_elfcache_free(c);
}

static void
test_elf_vdso_image_from_memory_has_symbols(void **state)
{
    (void)state;
    const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
    if (base == NULL)
        skip();
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
    size_t len = 0;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > len)
            len = ph[i].p_offset + ph[i].p_filesz;
    /* The section headers follow the loaded part in the vDSO image. */
    if (eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize > len)
        len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;

    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    struct sw_elfsym s;
    assert_int_equal(sw_elfcache_open_mem(c, "[vdso]", base, len, &e, &err), 0);
    assert_int_equal(sw_elf_symbol_by_name(e, "__vdso_clock_gettime", &s), 0);
    assert_int_equal(sw_elf_symbol_at(e, s.value, &s), 0);
    assert_non_null(strstr(s.name, "clock_gettime"));
    sw_elfcache_free(c);
}

/* The PT_INTERP string of this program, from its loaded program headers. */
static int
interp_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_INTERP)
            *(const char **)arg = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return 1; /* the first entry is the main program */
}

static void
test_elf_interp_of_this_program_is_its_pt_interp_and_libm_has_none(void **state)
{
    (void)state;
    const char *want = NULL;
    dl_iterate_phdr(interp_cb, &want);
    if (want == NULL)
        skip(); /* a static test binary */
    struct sw_elfcache *c = sw_elfcache_new("/nonexistent");
    struct sw_elf *self = open_ok(c, "/proc/self/exe");
    assert_non_null(sw_elf_interp(self));
    assert_string_equal(sw_elf_interp(self), want);
    /* libc.so.6 has a PT_INTERP (it runs, printing its version); libm not. */
    assert_string_equal(sw_elf_interp(open_ok(c, LIBC)), want);
    assert_null(sw_elf_interp(open_ok(c, LIBM)));
    sw_elfcache_free(c);
}

static void
test_elf_loader_entry_named_start_by_label_in_debug_file(void **state)
{
    (void)state;
    const char *want = NULL;
    dl_iterate_phdr(interp_cb, &want);
    if (want == NULL || access(want, R_OK) != 0)
        skip();
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *ld = open_ok(c, want);
    struct sw_elfsym s;
    if (sw_elf_debug_path(ld) == NULL) {
        sw_elfcache_free(c);
        skip(); /* libc6-dbg not installed: ld.so's .dynsym lacks _start */
    }
    assert_int_equal(sw_elf_symbol_at(ld, sw_elf_entry(ld), &s), 0);
    assert_string_equal(s.name, "_start");
    assert_int_equal(s.value, sw_elf_entry(ld));
    sw_elfcache_free(c);
}

static void
test_elf_lookup_finds_only_opened_files_and_file_has_no_image(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    const uint8_t *data;
    size_t len;
    assert_null(sw_elfcache_lookup(c, LIBC));
    struct sw_elf *e = open_ok(c, LIBC);
    assert_ptr_equal(sw_elfcache_lookup(c, LIBC), e);
    assert_null(sw_elfcache_lookup(c, "[vdso]"));
    assert_null(sw_elfcache_lookup(NULL, LIBC));
    sw_elf_image(e, &data, &len);
    assert_null(data);
    assert_int_equal(len, 0);
    sw_elfcache_free(c);
}

/* ---- sizing an image read from memory ------------------------------------ */

/* This process's vDSO and its size (headers, PT_LOAD file bytes, section
 * headers), computed here without the code under test; NULL if none. */
static const uint8_t *
own_vdso(size_t *len)
{
    const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
    if (base == NULL)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
    size_t n = eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > n)
            n = ph[i].p_offset + ph[i].p_filesz;
    if (eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize > n)
        n = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    *len = n;
    return base;
}

static void
test_elf_image_size_asks_for_header_then_program_headers_then_whole_vdso(void **state)
{
    (void)state;
    size_t full, need = 0;
    const uint8_t *vdso = own_vdso(&full);
    if (vdso == NULL)
        skip();
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)vdso;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_elf_image_size(vdso, 4, "[vdso]", &need, &err), 0);
    assert_int_equal(need, EI_NIDENT);
    assert_int_equal(sw_elf_image_size(vdso, EI_NIDENT, "[vdso]", &need, &err), 0);
    assert_int_equal(need, sizeof(Elf64_Ehdr));
    assert_int_equal(sw_elf_image_size(vdso, sizeof(Elf64_Ehdr), "[vdso]", &need, &err), 0);
    assert_int_equal(need, eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr));
    assert_int_equal(sw_elf_image_size(vdso, need, "[vdso]", &need, &err), 0);
    assert_int_equal(need, full);
    assert_int_equal(sw_elf_image_size(vdso, full, "[vdso]", &need, &err), 0);
    assert_int_equal(need, full);
}

/* A copy of this process's vDSO to corrupt; *LEN its size.  Caller frees. */
static uint8_t *
vdso_copy(size_t *len)
{
    const uint8_t *vdso = own_vdso(len);
    if (vdso == NULL)
        return NULL;
    uint8_t *b = malloc(*len);
    assert_non_null(b);
    memcpy(b, vdso, *len);
    return b;
}

static void
image_size_fails(const uint8_t *img, size_t len, const char *msg)
{
    struct sw_errbuf err = { 0 };
    size_t need = 12345;
    assert_int_equal(sw_elf_image_size(img, len, "img", &need, &err), SW_EBADELF);
    assert_int_equal(need, 12345);
    assert_int_equal(err.code, SW_EBADELF);
    if (strstr(err.msg, msg) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg);
}

static void
test_elf_image_size_without_magic_is_ebadelf_naming_image(void **state)
{
    (void)state;
    static const uint8_t zeros[64];
    image_size_fails(zeros, sizeof zeros, "img: not an ELF image (no ELF magic)");
    image_size_fails((const uint8_t *)"\177EL!", 4, "img: not an ELF image (no ELF magic)");
}

static void
test_elf_image_size_bad_class_byte_order_or_phentsize_is_ebadelf(void **state)
{
    (void)state;
    size_t len;
    uint8_t *img = vdso_copy(&len);
    if (img == NULL)
        skip();
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    img[EI_CLASS] = 7;
    image_size_fails(img, len, "img: not an ELF image (class 7)");
    img[EI_CLASS] = ELFCLASS64;
    img[EI_DATA] = 9;
    image_size_fails(img, len, "img: not an ELF image (byte order 9)");
    img[EI_DATA] = ELFDATA2LSB;
    eh->e_phentsize = 40;
    image_size_fails(img, len, "img: program header size 40, expected 56");
    free(img);
}

static void
test_elf_image_size_without_loadable_segments_is_ebadelf(void **state)
{
    (void)state;
    size_t len;
    uint8_t *img = vdso_copy(&len);
    if (img == NULL)
        skip();
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD)
            ph[i].p_type = PT_NULL;
    image_size_fails(img, len, "img: no loadable segments (PT_LOAD)");
    eh->e_phnum = 0;
    image_size_fails(img, len, "img: no loadable segments (no program headers)");
    free(img);
}

static void
test_elf_image_size_offsets_past_address_space_are_ebadelf(void **state)
{
    (void)state;
    size_t len;
    uint8_t *img = vdso_copy(&len);
    if (img == NULL)
        skip();
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    Elf64_Off phoff = eh->e_phoff;
    eh->e_phoff = UINT64_MAX - 8;
    image_size_fails(img, len, "img: header tables beyond any image size");
    eh->e_phoff = phoff;
    Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD)
            ph[i].p_offset = UINT64_MAX - 4;
    image_size_fails(img, len, "img: segment");
    free(img);
}

static void
test_elf_ppc64_elfv1_symbols_point_at_code_not_descriptors(void **state)
{
    (void)state;
    if (access(PPC64_LIBC, R_OK) != 0)
        skip();
    struct sw_elfcache *c = sw_elfcache_new("/nonexistent");
    struct sw_elf *e = open_ok(c, PPC64_LIBC);
    const uint8_t *opd;
    size_t opd_len;
    sw_addr opd_addr;
    struct sw_elfsym s, at;
    assert_int_equal(sw_elf_section(e, ".opd", false, &opd, &opd_len, &opd_addr), 0);
    assert_int_equal(sw_elf_symbol_by_name(e, "malloc", &s), 0);
    assert_false(s.value >= opd_addr && s.value < opd_addr + opd_len);
    assert_int_equal(sw_elf_symbol_at(e, s.value + 4, &at), 0);
    assert_int_equal(at.value, s.value);
    sw_elfcache_free(c);
}

/* ---- failures ------------------------------------------------------------ */

static void
test_elf_non_elf_file_is_ebadelf_naming_path(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_elfcache_open(c, "/etc/passwd", &e, &err), SW_EBADELF);
    assert_int_equal(err.code, SW_EBADELF);
    assert_non_null(strstr(err.msg, "/etc/passwd: not an ELF file"));
    assert_null(e);
    sw_elfcache_free(c);
}

static void
test_elf_missing_file_is_enoent_naming_path(void **state)
{
    (void)state;
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_elfcache_open(c, "/nonexistent/libx.so", &e, &err), SW_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/libx.so: no such file"));
    sw_elfcache_free(c);
}

static void
test_elf_truncated_file_is_ebadelf_truncated(void **state)
{
    (void)state;
    uint8_t head[100];
    FILE *f = fopen(LIBC, "rb");
    assert_non_null(f);
    assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    char *path = write_temp_file(head, sizeof head);

    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_elfcache_open(c, path, &e, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "truncated"));
    sw_elfcache_free(c);
    unlink(path);
    free(path);
}

static void
test_elf_empty_file_and_directory_are_ebadelf(void **state)
{
    (void)state;
    char *path = write_temp_file("", 0);
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_elfcache_open(c, path, &e, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "not an ELF file"));
    assert_int_equal(sw_elfcache_open(c, "/tmp", &e, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "/tmp: not a regular file"));
    sw_elfcache_free(c);
    unlink(path);
    free(path);
}

static void
test_elf_memory_image_not_elf_is_ebadelf_naming_it(void **state)
{
    (void)state;
    static const char junk[64] = "this is not an ELF image";
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_elfcache_open_mem(c, "[vdso]", junk, sizeof junk, &e, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "[vdso]: not an ELF file"));
    sw_elfcache_free(c);
}

static void
test_elf_object_without_segments_is_ebadelf(void **state)
{
    (void)state;
    static _Alignas(8) uint8_t img[8192];
    size_t len = build_image(img, sizeof img, EM_X86_64, true);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    eh->e_phnum = 0;
    eh->e_phoff = 0;
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_elfcache_open_mem(c, "nophdr", img, len, &e, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "nophdr: no loadable segments"));
    sw_elfcache_free(c);
}

static void
test_elf_free_null_is_noop(void **state)
{
    (void)state;
    sw_elfcache_free(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elf_versioned_name_is_kept_and_found_without_its_version),
        cmocka_unit_test(test_elf_object_in_code_names_it_undefined_absolute_and_data_do_not),
        cmocka_unit_test(test_elf_dynsym_is_not_read_beside_a_symtab),
        cmocka_unit_test(test_elf_dynsym_names_code_of_a_file_without_symtab),
        cmocka_unit_test(test_elf_dollar_x_names_x86_code_and_compiler_labels_do_not),
        cmocka_unit_test(test_elf_mapping_symbols_name_no_arm_code),
        cmocka_unit_test(test_elf_sizeless_symbol_ends_with_its_section),
        cmocka_unit_test(test_elf_address_below_every_symbol_is_enosym),
        cmocka_unit_test(test_elf_read_returns_file_bytes_and_emem_past_them),
        cmocka_unit_test(test_elf_header_facts_of_built_image),
        cmocka_unit_test(test_elf_memory_image_bytes_are_the_cache_copy),
    };
    const struct CMUnitTest files[] = {
        cmocka_unit_test(test_elf_libc_dynsym_symbol_found_by_name_and_address),
        cmocka_unit_test(test_elf_libc_debug_file_found_by_build_id),
        cmocka_unit_test(test_elf_libc_local_static_found_only_with_debug_file),
        cmocka_unit_test(test_elf_compressed_debug_section_is_decompressed),
        cmocka_unit_test(test_elf_section_from_file_and_nobits_in_debug_file),
        cmocka_unit_test(test_elf_self_static_function_found_in_symtab),
        cmocka_unit_test(test_elf_self_code_bytes_match_memory_and_bss_is_emem),
        cmocka_unit_test(test_elf_same_path_opens_once),
        cmocka_unit_test(test_elf_vdso_image_from_memory_has_symbols),
        cmocka_unit_test(test_elf_interp_of_this_program_is_its_pt_interp_and_libm_has_none),
        cmocka_unit_test(test_elf_loader_entry_named_start_by_label_in_debug_file),
        cmocka_unit_test(test_elf_lookup_finds_only_opened_files_and_file_has_no_image),
        cmocka_unit_test(test_elf_image_size_asks_for_header_then_program_headers_then_whole_vdso),
        cmocka_unit_test(test_elf_image_size_without_magic_is_ebadelf_naming_image),
        cmocka_unit_test(test_elf_image_size_bad_class_byte_order_or_phentsize_is_ebadelf),
        cmocka_unit_test(test_elf_image_size_without_loadable_segments_is_ebadelf),
        cmocka_unit_test(test_elf_image_size_offsets_past_address_space_are_ebadelf),
        cmocka_unit_test(test_elf_ppc64_elfv1_symbols_point_at_code_not_descriptors),
        cmocka_unit_test(test_elf_non_elf_file_is_ebadelf_naming_path),
        cmocka_unit_test(test_elf_missing_file_is_enoent_naming_path),
        cmocka_unit_test(test_elf_truncated_file_is_ebadelf_truncated),
        cmocka_unit_test(test_elf_empty_file_and_directory_are_ebadelf),
        cmocka_unit_test(test_elf_memory_image_not_elf_is_ebadelf_naming_it),
        cmocka_unit_test(test_elf_object_without_segments_is_ebadelf),
        cmocka_unit_test(test_elf_free_null_is_noop),
    };
    int failed =
        cmocka_run_group_tests_name("elf: built image", tests, built_setup, built_teardown);
    failed += cmocka_run_group_tests_name("elf: files", files, NULL, NULL);
    return failed ? 1 : 0;
}
