/* tests/fuzz/fuzz_ehhdr.c -- libFuzzer target for .eh_frame_hdr and CFI through the adapter.
 *
 * The input is [flags:1][hdr_len:2][hdr_addr:8][eh_addr:8][pc:8][pc:8][hdr]
 * [eh_frame], numbers little-endian (the seeds are a vDSO's sections at
 * their addresses): the header is set up over the .eh_frame, searched for
 * the two pcs and a few others, each FDE found copied into a small ELF
 * image, and that image read by libdwarf through cfi/cfi.c
 * (sw_cfi_open_mem, sw_cfi_row_at), as a walk would.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/cfi.h"
#include "cfi/eh_frame_hdr.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD 35

static uint64_t
le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEAD)
        return 0;
    unsigned flags = data[0];
    size_t hdr_len = (size_t)data[1] | (size_t)data[2] << 8;
    uint64_t hdr_addr = le64(data + 3), eh_addr = le64(data + 11);
    uint64_t pcs[] = { le64(data + 19), le64(data + 27), 0, hdr_addr, eh_addr + 0x40, UINT64_MAX };
    if (hdr_len > size - HEAD)
        hdr_len = size - HEAD;
    size_t eh_len = size - HEAD - hdr_len;
    /* copies of exactly their sizes, so ASan sees any over-read */
    uint8_t *hdr = malloc(hdr_len ? hdr_len : 1), *eh = malloc(eh_len ? eh_len : 1);
    memcpy(hdr, data + HEAD, hdr_len);
    memcpy(eh, data + HEAD + hdr_len, eh_len);
    bool msb = flags & 1;
    unsigned addr_size = flags & 2 ? 4 : 8;

    struct sw_ehhdr h;
    if (sw_ehhdr_init(&h, hdr, hdr_len, hdr_addr, eh, eh_len, eh_addr, msb, addr_size) == 0) {
        for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++) {
            uint64_t off;
            if (sw_ehhdr_find(&h, pcs[i], &off) != 1)
                continue;
            uint8_t *img;
            size_t len;
            if (sw_ehhdr_image(&h, off, 62 /* EM_X86_64 */, 0, &img, &len) != 0)
                continue;
            /* the adapter for the input's own pcs only: libdwarf's parse
             * is slow beside the header's */
            if (i < 2) {
                struct sw_cfi *c;
                struct sw_errbuf err = { 0, "" };
                if (sw_cfi_open_mem(img, len, "[fuzz]", addr_size, &c, &err) == 0) {
                    struct sw_cfi_row row;
                    (void)sw_cfi_row_at(c, pcs[i], &row, &err);
                    (void)sw_cfi_row_at(c, pcs[i] + 1, &row, &err);
                    sw_cfi_close(c);
                }
            }
            sw_free(img);
        }
    }
    free(hdr);
    free(eh);
    return 0;
}
