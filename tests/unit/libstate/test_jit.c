/* tests/unit/libstate/test_jit.c -- the GDB JIT interface's list read from target memory.
 *
 * A fake process holds the descriptor, entry and object QEMU 7.2 left in memory (recorded
 * with gdb), then hostile lists and sizes; a library state over this program, which defines
 * __jit_debug_descriptor, finds the object as a module and re-reads only what changed.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "cfi/cfi.h"
#include "elf/elf.h"
#include "libstate/jit.h"
#include "libstate/lib.h"

/* The symbol a library state looks for, in this program's .symtab: its
 * address in this process is where the fake target keeps the descriptor. */
extern struct jit_descriptor {
    uint32_t version, action_flag;
    uint64_t relevant_entry, first_entry;
} __jit_debug_descriptor;
struct jit_descriptor __jit_debug_descriptor = { 1, 0, 0, 0 };

/* Where the recorded process kept them (gdb: x/3gx &__jit_debug_descriptor). */
#define DESC_ADDR  0x55af204dc710u
#define ENTRY_ADDR 0x55af204f3aa0u
#define SYMFILE    0x55af253d57f0u
#define BUF_START  0x7feda400002du /* code_gen_buffer, as registered */
#define BUF_END    0x7fedabfff000u
#define FRAME_SIZE 1216      /* TCG's prologue frame: CFA = rsp + 1216 */
#define CHAIN_ADDR 0x100000u /* hostile chains: entry i at CHAIN_ADDR + 32 * i */

/* The object QEMU registered (tcg_register_jit_int): 842 bytes. */
static const uint8_t qemu_image[] = {
    0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x3e, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x78, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x38, 0x00, 0x01, 0x00, 0x40, 0x00, 0x07, 0x00, 0x06, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x2d, 0x00, 0x00, 0xa4, 0xed, 0x7f, 0x00, 0x00, 0x2d, 0x00, 0x00, 0xa4, 0xed, 0x7f, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd3, 0xef, 0xff, 0x07, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
    0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2d, 0x00, 0x00, 0xa4, 0xed, 0x7f, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd3, 0xef, 0xff, 0x07, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x68, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x13, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xa8, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x10, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2e, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x38, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x06, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x36, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xc0, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x3e, 0x00, 0x00, 0x00, 0x12, 0x00, 0x01, 0x00, 0x2d, 0x00, 0x00, 0xa4, 0xed, 0x7f, 0x00, 0x00,
    0xd3, 0xef, 0xff, 0x07, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x08, 0x01, 0x01, 0x80, 0x2d, 0x00, 0x00, 0xa4, 0xed, 0x7f, 0x00, 0x00, 0x00, 0xf0,
    0xff, 0xab, 0xed, 0x7f, 0x00, 0x00, 0x02, 0x63, 0x6f, 0x64, 0x65, 0x5f, 0x67, 0x65, 0x6e, 0x5f,
    0x62, 0x75, 0x66, 0x66, 0x65, 0x72, 0x00, 0x2d, 0x00, 0x00, 0xa4, 0xed, 0x7f, 0x00, 0x00, 0x00,
    0xf0, 0xff, 0xab, 0xed, 0x7f, 0x00, 0x00, 0x00, 0x01, 0x11, 0x01, 0x13, 0x05, 0x11, 0x01, 0x12,
    0x01, 0x00, 0x00, 0x02, 0x2e, 0x00, 0x03, 0x08, 0x11, 0x01, 0x12, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x2e, 0x74, 0x65, 0x78, 0x74, 0x00, 0x2e, 0x64, 0x65, 0x62, 0x75, 0x67, 0x5f, 0x69, 0x6e,
    0x66, 0x6f, 0x00, 0x2e, 0x64, 0x65, 0x62, 0x75, 0x67, 0x5f, 0x61, 0x62, 0x62, 0x72, 0x65, 0x76,
    0x00, 0x2e, 0x64, 0x65, 0x62, 0x75, 0x67, 0x5f, 0x66, 0x72, 0x61, 0x6d, 0x65, 0x00, 0x2e, 0x73,
    0x79, 0x6d, 0x74, 0x61, 0x62, 0x00, 0x2e, 0x73, 0x74, 0x72, 0x74, 0x61, 0x62, 0x00, 0x63, 0x6f,
    0x64, 0x65, 0x5f, 0x67, 0x65, 0x6e, 0x5f, 0x62, 0x75, 0x66, 0x66, 0x65, 0x72, 0x00, 0x00, 0x00,
    0x0c, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x01, 0x78, 0x10, 0x00, 0x00, 0x00,
    0x26, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2d, 0x00, 0x00, 0xa4, 0xed, 0x7f, 0x00, 0x00,
    0xd3, 0xef, 0xff, 0x07, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x07, 0xc0, 0x09, 0x90, 0x01, 0x86, 0x02,
    0x83, 0x03, 0x8c, 0x04, 0x8d, 0x05, 0x8e, 0x06, 0x8f, 0x07
};

static struct sw_proc *
recorded(void)
{
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    assert_non_null(p);
    uint8_t desc[24];
    arch_store(p->arch, desc, 4, 1);     /* version */
    arch_store(p->arch, desc + 4, 4, 1); /* JIT_REGISTER_FN */
    arch_store(p->arch, desc + 8, 8, ENTRY_ADDR);
    arch_store(p->arch, desc + 16, 8, ENTRY_ADDR);
    fake_proc_add_mem(p, DESC_ADDR, desc, sizeof desc);
    fake_proc_add_mem(p, ENTRY_ADDR, NULL, 32);
    fake_proc_put_word(p, ENTRY_ADDR + 16, SYMFILE);
    fake_proc_put_word(p, ENTRY_ADDR + 24, sizeof qemu_image);
    fake_proc_add_mem(p, SYMFILE, qemu_image, sizeof qemu_image);
    return p;
}

static void
test_jit_recorded_qemu_list_and_object(void **state)
{
    (void)state;
    struct sw_proc *p = recorded();
    uint8_t buf[32];
    struct sw_jit_desc d;
    assert_int_equal(sw_jit_desc_bytes(p->arch), 24);
    assert_int_equal(p->ops->read_mem(p, DESC_ADDR, buf, 24), 0);
    sw_jit_desc_decode(p->arch, buf, &d);
    assert_int_equal(d.version, 1);
    assert_int_equal(d.first, ENTRY_ADDR);

    struct sw_jit_entry *e = NULL;
    size_t n = 0;
    char why[200];
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_jit_entries(p, d.first, SW_JIT_MAX_ENTRIES, &e, &n, why, sizeof why, &err),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(why, "");
    assert_int_equal(e[0].symfile_addr, SYMFILE);
    assert_int_equal(e[0].symfile_size, sizeof qemu_image);
    assert_null(sw_jit_symfile_refused(e[0].symfile_size, 0));

    /* The object read back opens as the library state opens it, with its
     * one symbol over the whole buffer and the prologue's frame. */
    uint8_t image[sizeof qemu_image];
    assert_int_equal(p->ops->read_mem(p, SYMFILE, image, sizeof image), 0);
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *elf = NULL;
    assert_int_equal(sw_elfcache_open_mem(c, "[jit]", image, sizeof image, &elf, &err), 0);
    assert_ptr_equal(sw_elf_arch(elf), &arch_x86_64);
    sw_addr lo, hi;
    sw_elf_load_range(elf, &lo, &hi);
    assert_int_equal(lo, BUF_START);
    assert_int_equal(hi, BUF_END);
    struct sw_elfsym sym;
    assert_int_equal(sw_elf_symbol_at(elf, BUF_START + 0x1b5b1 - 0x2d, &sym), 0);
    assert_string_equal(sym.name, "code_gen_buffer");

    struct sw_cfi *cfi = NULL;
    struct sw_cfi_row row;
    assert_int_equal(sw_cfi_open_mem(image, sizeof image, "[jit]", 8, &cfi, &err), 0);
    assert_int_equal(sw_cfi_row_at(cfi, BUF_START + 0x1b584, &row, &err), 0);
    assert_false(row.cfa_is_expr);
    assert_int_equal(row.cfa_reg, 7); /* rsp */
    assert_int_equal(row.cfa_offset, FRAME_SIZE);
    assert_int_equal(row.ra_column, 16);
    assert_int_equal(row.rules[16].kind, SW_CFI_OFFSET);
    assert_int_equal(row.rules[16].offset, -8);
    sw_cfi_close(cfi);
    sw_elfcache_free(c);
    sw_free(e);
    sw_proc_free(p);
}

/* A chain of N entries at CHAIN_ADDR, each linked both ways, pointing at
 * SYMFILE; entry i's next is NEXT_OF_LAST for the last one. */
static void
put_chain(struct sw_proc *p, size_t n, sw_addr next_of_last)
{
    fake_proc_add_mem(p, CHAIN_ADDR, NULL, 32 * n);
    for (size_t i = 0; i < n; i++) {
        sw_addr at = CHAIN_ADDR + 32 * i;
        fake_proc_put_word(p, at, i + 1 < n ? at + 32 : next_of_last);
        fake_proc_put_word(p, at + 8, i ? at - 32 : 0);
        fake_proc_put_word(p, at + 16, SYMFILE);
        fake_proc_put_word(p, at + 24, sizeof qemu_image);
    }
}

static size_t
walk(struct sw_proc *p, size_t max, char *why, size_t whylen)
{
    struct sw_jit_entry *e = NULL;
    size_t n = 99;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_jit_entries(p, CHAIN_ADDR, max, &e, &n, why, whylen, &err), 0);
    if (n == 0)
        assert_null(e);
    sw_free(e);
    return n;
}

static void
test_jit_cycle_to_itself_ends_after_one(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    char why[200];
    put_chain(p, 1, CHAIN_ADDR); /* next = itself, prev = 0 */
    assert_int_equal(walk(p, SW_JIT_MAX_ENTRIES, why, sizeof why), 1);
    assert_non_null(strstr(why, "broken or cyclic"));
    sw_proc_free(p);
}

static void
test_jit_cycle_to_the_first_ends_at_the_loop(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    char why[200];
    put_chain(p, 5, CHAIN_ADDR); /* the fifth points back at the first */
    assert_int_equal(walk(p, SW_JIT_MAX_ENTRIES, why, sizeof why), 5);
    assert_non_null(strstr(why, "broken or cyclic"));
    /* A cycle into the middle, whose target's prev names the entry before it. */
    fake_proc_put_word(p, CHAIN_ADDR + 32 * 4, CHAIN_ADDR + 32 * 2);
    assert_int_equal(walk(p, SW_JIT_MAX_ENTRIES, why, sizeof why), 5);
    assert_non_null(strstr(why, "broken or cyclic"));
    sw_proc_free(p);
}

static void
test_jit_endless_chain_stops_at_the_cap(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    char why[200];
    put_chain(p, 40, 0);
    assert_int_equal(walk(p, 16, why, sizeof why), 16);
    assert_non_null(strstr(why, "more than 16 entries"));
    assert_int_equal(walk(p, 40, why, sizeof why), 40);
    assert_string_equal(why, "");
    sw_proc_free(p);
}

static void
test_jit_unreadable_entry_ends_with_those_before(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    char why[200];
    put_chain(p, 3, 0xdead0000u); /* the fourth is in no memory */
    assert_int_equal(walk(p, SW_JIT_MAX_ENTRIES, why, sizeof why), 3);
    assert_non_null(strstr(why, "cannot be read"));
    /* A first entry whose prev is not 0 is no list at all. */
    fake_proc_put_word(p, CHAIN_ADDR + 8, 0x1234);
    assert_int_equal(walk(p, SW_JIT_MAX_ENTRIES, why, sizeof why), 0);
    assert_non_null(strstr(why, "predecessor"));
    sw_proc_free(p);
}

static void
test_jit_hostile_sizes_are_refused(void **state)
{
    (void)state;
    assert_non_null(sw_jit_symfile_refused(0, 0));
    assert_non_null(sw_jit_symfile_refused(63, 0));
    assert_null(sw_jit_symfile_refused(64, 0));
    assert_null(sw_jit_symfile_refused(SW_JIT_MAX_SYMFILE, 0));
    assert_non_null(sw_jit_symfile_refused(SW_JIT_MAX_SYMFILE + 1ull, 0));
    assert_non_null(sw_jit_symfile_refused(UINT64_MAX, 0));
    assert_non_null(sw_jit_symfile_refused(1024, SW_JIT_MAX_TOTAL - 1000));
    assert_non_null(sw_jit_symfile_refused(1024, UINT64_MAX));
    assert_null(sw_jit_symfile_refused(1000, SW_JIT_MAX_TOTAL - 1000));
}

/* i386 packs symfile_size at offset 12 (a uint64_t aligned to 4 in a
 * struct), the other 32-bit ABIs at 16; the descriptor is 16 bytes. */
static void
test_jit_32_bit_layouts(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_i386);
    assert_int_equal(sw_jit_desc_bytes(p->arch), 16);
    assert_int_equal(sw_jit_entry_bytes(p->arch), 20);
    fake_proc_add_mem(p, CHAIN_ADDR, NULL, 64);
    fake_proc_put_word(p, CHAIN_ADDR + 8, 0x8000);
    uint8_t size[8];
    arch_store(p->arch, size, 8, 0x1234);
    fake_proc_put(p, CHAIN_ADDR + 12, size, 8);
    struct sw_jit_entry *e = NULL;
    size_t n = 0;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_jit_entries(p, CHAIN_ADDR, 8, &e, &n, NULL, 0, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(e[0].symfile_addr, 0x8000);
    assert_int_equal(e[0].symfile_size, 0x1234);
    sw_free(e);
    sw_proc_free(p);
}

/* DESC at the descriptor's place in the fake target: version 1, the entry at
 * ENTRY_ADDR registered (FIRST 0: none). */
static void
put_descriptor(struct sw_proc *p, sw_addr first)
{
    uint8_t desc[24];
    arch_store(p->arch, desc, 4, 1);
    arch_store(p->arch, desc + 4, 4, first ? 1 : 2); /* JIT_REGISTER_FN, JIT_UNREGISTER_FN */
    arch_store(p->arch, desc + 8, 8, ENTRY_ADDR);
    arch_store(p->arch, desc + 16, 8, first);
    fake_proc_put(p, (sw_addr)(uintptr_t)&__jit_debug_descriptor, desc, sizeof desc);
}

/* A fake target running this program, with QEMU's list and object. */
static struct sw_proc *
self_target(void)
{
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    struct sw_proc *p = recorded();
    fake_proc_set_exec_path(p, self);
    uint64_t auxv[] = { AT_ENTRY, getauxval(AT_ENTRY), AT_NULL, 0 };
    fake_proc_set_auxv(p, auxv, sizeof auxv);
    fake_proc_add_mem(p, (sw_addr)(uintptr_t)&__jit_debug_descriptor, NULL, 24);
    put_descriptor(p, ENTRY_ADDR);
    return p;
}

static struct sw_libstate *
refreshed(struct sw_proc *p, bool no_jit)
{
    struct sw_libstate_config cfg = { .cache_dir = "", .no_jit = no_jit };
    struct sw_libstate *ls = NULL;
    assert_int_equal(sw_libstate_new(p, &cfg, &ls), 0);
    if (sw_libstate_refresh(ls) != 0)
        fail_msg("refresh: %s", sw_libstate_errmsg(ls));
    return ls;
}

static void
test_jit_object_is_a_module_of_the_library_state(void **state)
{
    (void)state;
    struct sw_proc *p = self_target();
    struct sw_libstate *ls = refreshed(p, false);
    const struct sw_lib *lib = NULL;
    size_t nlibs = sw_libstate_count(ls);
    assert_int_equal(sw_libstate_lib_at(ls, BUF_START + 0x1b584, &lib), 0);
    assert_string_equal(lib->name, "[jit 0x55af253d57f0]");
    assert_null(lib->path);
    assert_int_equal(lib->bias, 0);
    assert_int_equal(lib->start, BUF_START);
    assert_int_equal(lib->end, BUF_END);
    assert_non_null(sw_lib_elf(lib));
    assert_non_null(sw_lib_module(lib));
    assert_int_equal(sw_libstate_lib_at(ls, BUF_END, &lib), SW_ENOENT);

    /* Unchanged: the descriptor's one read, the list not read again (the
     * object's bytes unreadable now would drop it). */
    fake_proc_put_word(p, ENTRY_ADDR + 24, 1ull << 40);
    assert_int_equal(sw_libstate_update(ls), 0);
    assert_int_equal(sw_libstate_lib_at(ls, BUF_START, &lib), 0);
    /* Unregistered: gone; the module list as it was. */
    fake_proc_put_word(p, ENTRY_ADDR + 24, sizeof qemu_image);
    put_descriptor(p, 0);
    assert_int_equal(sw_libstate_update(ls), 0);
    assert_int_equal(sw_libstate_lib_at(ls, BUF_START, &lib), SW_ENOENT);
    assert_int_equal(sw_libstate_count(ls), nlibs);
    /* Registered again, now with a hostile size: refused, with a warning. */
    fake_proc_put_word(p, ENTRY_ADDR + 24, 1ull << 40);
    put_descriptor(p, ENTRY_ADDR);
    assert_int_equal(sw_libstate_update(ls), 0);
    assert_int_equal(sw_libstate_lib_at(ls, BUF_START, &lib), SW_ENOENT);
    const char *const *msgs;
    size_t nw = sw_libstate_warnings(ls, &msgs);
    assert_true(nw > 0);
    assert_non_null(strstr(msgs[nw - 1], "JIT object at 0x55af253d57f0: larger than 16 MiB"));
    sw_libstate_free(ls);
    sw_proc_free(p);
}

static void
test_jit_no_jit_reads_nothing(void **state)
{
    (void)state;
    struct sw_proc *p = self_target();
    struct sw_libstate *ls = refreshed(p, true);
    const struct sw_lib *lib = NULL;
    assert_int_equal(sw_libstate_lib_at(ls, BUF_START, &lib), SW_ENOENT);
    sw_libstate_free(ls);
    sw_proc_free(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jit_recorded_qemu_list_and_object),
        cmocka_unit_test(test_jit_cycle_to_itself_ends_after_one),
        cmocka_unit_test(test_jit_cycle_to_the_first_ends_at_the_loop),
        cmocka_unit_test(test_jit_endless_chain_stops_at_the_cap),
        cmocka_unit_test(test_jit_unreadable_entry_ends_with_those_before),
        cmocka_unit_test(test_jit_hostile_sizes_are_refused),
        cmocka_unit_test(test_jit_32_bit_layouts),
        cmocka_unit_test(test_jit_object_is_a_module_of_the_library_state),
        cmocka_unit_test(test_jit_no_jit_reads_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
