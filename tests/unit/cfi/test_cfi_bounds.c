/* tests/unit/cfi/test_cfi_bounds.c -- call frame instructions that leave their CIE or FDE.
 *
 * libdwarf 20210528 follows an expression block's length past its section;
 * cfi/cfi.c lays the CIE out (sw_cfi_cie_layout) and checks the instructions
 * first (sw_cfi_insns_bounded), and refuses the row.  fuzz_ehhdr's two
 * findings are replayed, and small .eh_frames show how libdwarf reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cfi/cfi.h"
#include "cfi/eh_frame_hdr.h"
#include "cfi/ra_state.h"
#include "rspwalk/errors.h"
#include "util/util.h"

static void
test_insns_bounded_takes_whole_operands_and_blocks(void **state)
{
    (void)state;
    static const uint8_t def_cfa[] = { 0x0c, 0x07, 0x08, 0x90, 0x01, 0x41, 0xc6, 0x00 };
    assert_true(sw_cfi_insns_bounded(def_cfa, sizeof def_cfa, 8));
    static const uint8_t block_fits[] = { 0x0f, 0x02, 0x77, 0x08, 0x10, 0x06, 0x01, 0x9c };
    assert_true(sw_cfi_insns_bounded(block_fits, sizeof block_fits, 8));
    /* DW_CFA_set_loc: an address of the CIE's size, then DW_CFA_def_cfa_offset */
    static const uint8_t set_loc[] = { 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x0e, 0x10 };
    assert_true(sw_cfi_insns_bounded(set_loc, sizeof set_loc, 8));
    static const uint8_t set_loc4[] = { 0x01, 1, 2, 3, 4, 0x0e, 0x10 };
    assert_true(sw_cfi_insns_bounded(set_loc4, sizeof set_loc4, 4));
    static const uint8_t loc8[] = { 0x1d, 1, 2, 3, 4, 5, 6, 7, 8 };
    assert_true(sw_cfi_insns_bounded(loc8, sizeof loc8, 8));
    assert_true(sw_cfi_insns_bounded(NULL, 0, 8));
}

static void
test_insns_bounded_refuses_what_runs_past(void **state)
{
    (void)state;
    /* DW_CFA_expression r0, a block of 2^35 bytes */
    static const uint8_t huge[] = { 0x10, 0x00, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00 };
    assert_false(sw_cfi_insns_bounded(huge, sizeof huge, 8));
    static const uint8_t one_short[] = { 0x0f, 0x03, 0x77, 0x08 };
    assert_false(sw_cfi_insns_bounded(one_short, sizeof one_short, 8));
    static const uint8_t cut_uleb[] = { 0x0e, 0x80 };
    assert_false(sw_cfi_insns_bounded(cut_uleb, sizeof cut_uleb, 8));
    static const uint8_t cut_loc4[] = { 0x04, 0x01, 0x02 };
    assert_false(sw_cfi_insns_bounded(cut_loc4, sizeof cut_loc4, 8));
    /* a DW_CFA_set_loc whose address the scan did not follow once hid this */
    static const uint8_t loc_then_huge[] = { 0x01, 0,    0,    0x28, 0x09, 0x01, 0x0b, 0x02,
                                             0x50, 0x10, 0x00, 0xff, 0xff, 0xff, 0x7f };
    assert_false(sw_cfi_insns_bounded(loc_then_huge, sizeof loc_then_huge, 8));
    static const uint8_t cut_set_loc[] = { 0x01, 1, 2, 3, 4, 5, 6, 7 };
    assert_false(sw_cfi_insns_bounded(cut_set_loc, sizeof cut_set_loc, 8));
    /* an opcode whose operands are not known (libdwarf refuses it too) */
    static const uint8_t vendor[] = { 0x3f, 0x00 };
    assert_false(sw_cfi_insns_bounded(vendor, sizeof vendor, 8));
}

static void
test_cie_layout_follows_the_augmentation(void **state)
{
    (void)state;
    struct sw_cfi_cie_layout lay;
    /* length, id 0, version 1, "zR", caf 1, daf -8, ra 16, 1 byte of data, def_cfa */
    static const uint8_t zr[] = {
        0x11, 0,    0,    0,    0,    0,    0,    0,    1,    'z',  'R',
        0,    0x01, 0x78, 0x10, 0x01, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01
    };
    assert_int_equal(sw_cfi_cie_layout(zr, sizeof zr, 8, &lay), 0);
    assert_int_equal(lay.insns_off, 17);
    assert_int_equal(lay.addr_size, 8);
    /* the same CIE saying 50 bytes of augmentation data: past its end */
    uint8_t long_aug[sizeof zr];
    memcpy(long_aug, zr, sizeof zr);
    long_aug[15] = 50;
    assert_int_equal(sw_cfi_cie_layout(long_aug, sizeof long_aug, 8, &lay), -1);
    /* no augmentation; version 3: a ULEB return address column */
    static const uint8_t plain[] = { 0x0c, 0, 0,    0,    0xff, 0xff, 0xff, 0xff,
                                     3,    0, 0x04, 0x7c, 0x90, 0x01, 0x0c, 0x07 };
    assert_int_equal(sw_cfi_cie_layout(plain, sizeof plain, 4, &lay), 0);
    assert_int_equal(lay.insns_off, 14);
    /* version 4: its own address size */
    static const uint8_t v4[] = { 0x0c, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
                                  4,    0, 4, 0, 0x01, 0x7c, 0x0e, 0x0c };
    assert_int_equal(sw_cfi_cie_layout(v4, sizeof v4, 8, &lay), 0);
    assert_int_equal(lay.addr_size, 4);
    assert_int_equal(lay.insns_off, 15);
    /* 64-bit DWARF: 12 bytes of length, 8 of id */
    static const uint8_t dw64[] = { 0xff, 0xff, 0xff, 0xff, 0x0e, 0,    0,    0,    0,
                                    0,    0,    0,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 3,    0,    0x01, 0x78, 0x10, 0x00 };
    assert_int_equal(sw_cfi_cie_layout(dw64, sizeof dw64, 8, &lay), 0);
    assert_int_equal(lay.insns_off, 25);
    /* an augmentation not laid out here; a string without its NUL */
    static const uint8_t eh[] = {
        0x10, 0, 0, 0, 0, 0, 0, 0, 1, 'e', 'h', 0, 1, 2, 3, 4, 5, 6, 7, 8
    };
    assert_int_equal(sw_cfi_cie_layout(eh, sizeof eh, 8, &lay), 1);
    assert_int_equal(sw_cfi_cie_layout(eh, 11, 8, &lay), -1);
}

/* fuzz_ehhdr's input: [flags][hdr_len:2][hdr_addr:8][eh_addr:8][pc:8][pc:8][hdr][eh] */
static const uint8_t finding[] = {
    0x00, 0x44, 0x00, 0x18, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x60, 0x06, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x84, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc2, 0x0f, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x1b, 0x03, 0x3b, 0x44, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x68,
    0x01, 0x00, 0x00, 0x60, 0x00, 0x6b, 0x79, 0xf8, 0x01, 0x00, 0x00, 0x74, 0x00, 0x00, 0x00, 0xa8,
    0x04, 0x00, 0x00, 0xa0, 0x00, 0x00, 0x00, 0xd7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x62,
    0x08, 0x00, 0x00, 0xec, 0x00, 0x00, 0x00, 0xe8, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x28,
    0x09, 0x01, 0x00, 0xe8, 0xfe, 0x00, 0x00, 0x94, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x7a, 0x52, 0x00, 0x01, 0x78, 0x10, 0x32, 0x1b, 0x0c, 0x07, 0x08, 0x2e, 0x72, 0x65, 0x6c, 0x61,
    0x2e, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x91, 0x31, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x2e, 0x00, 0x28, 0x00, 0x00, 0x00, 0x31, 0x00, 0x00, 0x00, 0x7c, 0x01, 0x00, 0x00, 0xab,
    0x02, 0x00, 0x00, 0x00, 0x41, 0x6d, 0x74, 0x86, 0x02, 0x4a, 0x0d, 0x06, 0x02, 0xaa, 0x0a, 0xc6,
    0x0c, 0x07, 0x08, 0x55, 0x0b, 0x02, 0x50, 0x0a, 0xc6, 0x0c, 0x07, 0x08, 0x55, 0x0b, 0x10, 0x00,
    0xff, 0xff, 0xff, 0xff, 0xfd, 0xfd, 0xfd, 0xff, 0xff, 0x3d, 0xf7, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xc9, 0xe6, 0xf6, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0x66, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x7c, 0x01, 0x00, 0x00, 0xab,
    0x02, 0x00, 0x68, 0x08, 0x00, 0x00, 0xec, 0x00, 0x00, 0x00, 0xe8, 0x08, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x28, 0x09, 0x00, 0x00, 0x18, 0x01, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x7a, 0x52, 0x00, 0x01, 0x78, 0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14,
    0x00, 0x00, 0x00, 0xbc, 0x00, 0x00, 0x00, 0xe0, 0x07, 0x00, 0x00, 0x2c, 0x8d, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x8c, 0x06, 0x83, 0x07, 0xfd, 0x01, 0x0a, 0xc3
};

static uint64_t
le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The second: the CIE's instructions start with DW_CFA_set_loc, whose address
 * libdwarf reads as 8 bytes, then an expression block of about 2^63 bytes. */
static const uint8_t finding_set_loc[] = {
    0x00, 0x44, 0x00, 0x18, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x60, 0x06, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x84, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc2, 0x0f, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x10, 0x01, 0x1b, 0x03, 0x3b, 0x44, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x68,
    0x01, 0x00, 0x00, 0x60, 0x00, 0x6b, 0x79, 0xf8, 0x01, 0x00, 0x00, 0x74, 0x00, 0x00, 0x00, 0xa8,
    0x04, 0x00, 0x00, 0xa0, 0x00, 0x00, 0x00, 0xd7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x62,
    0x08, 0x00, 0x00, 0xec, 0x00, 0x00, 0x00, 0xe8, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x28,
    0x09, 0x01, 0x00, 0xe8, 0xfe, 0x00, 0x00, 0x94, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x7a, 0x52, 0x00, 0x01, 0x78, 0x10, 0x32, 0x1b, 0x0c, 0x07, 0x08, 0x2e, 0x72, 0x65, 0x6c, 0x61,
    0x2e, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x91, 0x31, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x2e, 0x00, 0x28, 0x00, 0x00, 0x00, 0x31, 0x00, 0x00, 0x00, 0x7c, 0xff, 0xff, 0xff, 0xff,
    0x00, 0x62, 0x08, 0x00, 0x00, 0xec, 0x00, 0x00, 0x00, 0xe8, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x28, 0x09, 0x01, 0x0b, 0x02, 0x50, 0x0a, 0xc6, 0x0c, 0x07, 0x08, 0x55, 0x0b, 0x10, 0x00,
    0xff, 0xff, 0xff, 0xff, 0xfd, 0xfd, 0xfd, 0xff, 0xff, 0x3d, 0xf7, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xc9, 0xe6, 0xf6, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0x66, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x7c, 0x01, 0x00, 0x00, 0xab,
    0x02, 0x00, 0x68, 0x08, 0x00, 0x00, 0xec, 0x00, 0x00, 0x00, 0xe8, 0x08, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x28, 0x09, 0x00, 0x00, 0x18, 0x01, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x7a, 0x52, 0x00, 0x01, 0x78, 0x10, 0x01, 0x80, 0x00, 0x00, 0x00, 0x00, 0x14,
    0x00, 0x00, 0x00, 0xbc, 0x00, 0x00, 0x00, 0xe0, 0x07, 0x00, 0x00, 0x2c, 0x8d, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x8c, 0x06, 0x83, 0x07, 0xfd, 0x01, 0x0a, 0xc3
};

/* Replay a fuzz_ehhdr input: the row at its first pc.  Returns what
 * sw_cfi_row_at returned, ERR its message. */
static int
replay(const uint8_t *in, size_t size, struct sw_cfi_row *row, struct sw_errbuf *err)
{
    size_t hdr_len = (size_t)in[1] | (size_t)in[2] << 8;
    const uint8_t *hdr = in + 35, *eh = hdr + hdr_len;
    size_t eh_len = size - 35 - hdr_len;
    uint64_t pc = le64(in + 19);
    struct sw_ehhdr h;
    assert_int_equal(
        sw_ehhdr_init(&h, hdr, hdr_len, le64(in + 3), eh, eh_len, le64(in + 11), false, 8), 0);
    uint64_t off;
    assert_int_equal(sw_ehhdr_find(&h, pc, &off), 1);
    uint8_t *img;
    size_t len;
    assert_int_equal(sw_ehhdr_image(&h, off, 62, 0, &img, &len), 0);
    struct sw_cfi *c;
    assert_int_equal(sw_cfi_open_mem(img, len, "[finding]", 8, &c, err), 0);
    int rc = sw_cfi_row_at(c, pc, row, err);
    sw_cfi_close(c);
    sw_free(img);
    return rc;
}

static void
test_cfi_row_of_an_fde_whose_cie_block_overruns_is_an_error(void **state)
{
    (void)state;
    struct sw_cfi_row row;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(replay(finding, sizeof finding, &row, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "runs past its FDE or CIE"));
}

static void
test_cfi_row_whose_block_follows_a_set_loc_is_an_error(void **state)
{
    (void)state;
    struct sw_cfi_row row;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(replay(finding_set_loc, sizeof finding_set_loc, &row, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "runs past its FDE or CIE"));
}

/* An .eh_frame at EH_ADDR of one CIE ("zR", absolute 8-byte pointers, caf 1,
 * daf -8, ra 16, then CIE_INSNS) and one FDE for [PC0, PC0 + 0x100) with
 * FDE_INSNS, and its .eh_frame_hdr at HDR_ADDR; the row at PC through
 * cfi/cfi.c (or sw_cfi_open_mem's error).  AUG_LEN is what the CIE says of
 * its augmentation data (1). */
#define HDR_ADDR 0x00000e2000000000ull
#define EH_ADDR  (HDR_ADDR + 0x100)
#define PC0      (HDR_ADDR + 0x1000)
static int
row_of(const uint8_t *cie_insns, size_t cie_n, uint8_t aug_len, const uint8_t *fde_insns,
       size_t fde_n, uint64_t pc, struct sw_cfi_row *row, struct sw_errbuf *err)
{
    uint8_t eh[256] = { 0 }, hdr[20] = { 0 };
    size_t cie_len = 13 + cie_n, n = 0;
    cie_len = (cie_len + 3) & ~(size_t)3; /* DW_CFA_nop to a multiple of 4 */
    eh[n] = (uint8_t)cie_len;
    static const uint8_t head[] = { 1, 'z', 'R', 0, 0x01, 0x78, 0x10, 0x01, 0x00 };
    memcpy(eh + 8, head, sizeof head);
    eh[15] = aug_len;
    memcpy(eh + 17, cie_insns, cie_n);
    size_t fde = 4 + cie_len, fde_len = 4 + 8 + 8 + 1 + fde_n;
    eh[fde] = (uint8_t)fde_len;
    eh[fde + 4] = (uint8_t)(fde + 4); /* back to the CIE */
    for (unsigned i = 0; i < 8; i++) {
        eh[fde + 8 + i] = (uint8_t)(PC0 >> (8 * i));
        eh[fde + 16 + i] = (uint8_t)(UINT64_C(0x100) >> (8 * i));
    }
    memcpy(eh + fde + 25, fde_insns, fde_n);
    size_t eh_len = fde + 4 + fde_len + 4; /* and a zero terminator */
    /* version 1, eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4 */
    static const uint8_t hhead[] = {
        1, 0x1b, 0x03, 0x3b, 0xfc, 0, 0, 0, 1, 0, 0, 0, 0, 0x10, 0, 0
    };
    memcpy(hdr, hhead, sizeof hhead);
    hdr[16] = (uint8_t)(0x100 + fde);
    hdr[17] = (uint8_t)((0x100 + fde) >> 8);
    struct sw_ehhdr h;
    assert_int_equal(sw_ehhdr_init(&h, hdr, sizeof hdr, HDR_ADDR, eh, eh_len, EH_ADDR, false, 8),
                     0);
    uint64_t off;
    assert_int_equal(sw_ehhdr_find(&h, pc, &off), 1);
    uint8_t *img;
    size_t len;
    assert_int_equal(sw_ehhdr_image(&h, off, 62, 0, &img, &len), 0);
    struct sw_cfi *c;
    int rc = sw_cfi_open_mem(img, len, "[made]", 8, &c, err);
    if (rc == 0) {
        rc = sw_cfi_row_at(c, pc, row, err);
        sw_cfi_close(c);
    }
    if (rc != 0)
        print_message("row at 0x%" PRIx64 ": %s\n", pc, err->msg);
    sw_free(img);
    return rc;
}

static const uint8_t def_cfa_rsp8[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };

static void
test_cfi_made_eh_frame_gives_its_rows(void **state)
{
    (void)state;
    struct sw_cfi_row row;
    struct sw_errbuf err = { 0, "" };
    static const uint8_t push[] = { 0x41, 0x0e, 0x10 }; /* advance 1, def_cfa_offset 16 */
    assert_int_equal(
        row_of(def_cfa_rsp8, sizeof def_cfa_rsp8, 1, push, sizeof push, PC0, &row, &err), 0);
    assert_int_equal(row.cfa_reg, 7);
    assert_int_equal(row.cfa_offset, 8);
    assert_int_equal(
        row_of(def_cfa_rsp8, sizeof def_cfa_rsp8, 1, push, sizeof push, PC0 + 4, &row, &err), 0);
    assert_int_equal(row.cfa_offset, 16);
}

static void
test_cfi_set_loc_is_read_as_an_address_of_8_bytes(void **state)
{
    (void)state;
    struct sw_cfi_row row;
    struct sw_errbuf err = { 0, "" };
    /* set_loc PC0 + 0x10, def_cfa_offset 16: read as 4 bytes, the address
     * would be 0x1010 (before PC0, an error) and the rest other opcodes */
    uint8_t loc[] = { 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0x10 };
    for (unsigned i = 0; i < 8; i++)
        loc[1 + i] = (uint8_t)((PC0 + 0x10) >> (8 * i));
    assert_int_equal(
        row_of(def_cfa_rsp8, sizeof def_cfa_rsp8, 1, loc, sizeof loc, PC0 + 0x20, &row, &err), 0);
    assert_int_equal(row.cfa_offset, 16);
    assert_int_equal(
        row_of(def_cfa_rsp8, sizeof def_cfa_rsp8, 1, loc, sizeof loc, PC0 + 0x8, &row, &err), 0);
    assert_int_equal(row.cfa_offset, 8);
}

static void
test_cfi_cie_whose_augmentation_data_runs_past_it_is_an_error(void **state)
{
    (void)state;
    struct sw_cfi_row row;
    struct sw_errbuf err = { 0, "" };
    static const uint8_t nop[] = { 0x00 };
    /* libdwarf 20210528 refuses this one itself, when the list is read */
    int rc = row_of(def_cfa_rsp8, sizeof def_cfa_rsp8, 50, nop, sizeof nop, PC0, &row, &err);
    assert_true(rc < 0);
    assert_non_null(strstr(err.msg, "[made]"));
    /* 20 bytes: past the CIE, inside the section, where libdwarf looks;
     * the instructions' length it counts back from the CIE's end wraps */
    rc = row_of(def_cfa_rsp8, sizeof def_cfa_rsp8, 20, nop, sizeof nop, PC0, &row, &err);
    assert_int_equal(rc, SW_EBADELF);
    assert_non_null(strstr(err.msg, "CIE's instructions start past its end"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insns_bounded_takes_whole_operands_and_blocks),
        cmocka_unit_test(test_insns_bounded_refuses_what_runs_past),
        cmocka_unit_test(test_cie_layout_follows_the_augmentation),
        cmocka_unit_test(test_cfi_row_of_an_fde_whose_cie_block_overruns_is_an_error),
        cmocka_unit_test(test_cfi_row_whose_block_follows_a_set_loc_is_an_error),
        cmocka_unit_test(test_cfi_made_eh_frame_gives_its_rows),
        cmocka_unit_test(test_cfi_set_loc_is_read_as_an_address_of_8_bytes),
        cmocka_unit_test(test_cfi_cie_whose_augmentation_data_runs_past_it_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
