/* tests/fuzz/fuzz_elfimage.c -- libFuzzer target for ELF images read from the target.
 *
 * The input is an image as the vDSO or a fetched file arrives: the header
 * walk (size, build-id note) of elf/image.c on every prefix the walk asks
 * for, then the whole image through libelf in memory (sw_elfcache_open_mem):
 * its build-id note, symbols, sections and reads; and its CFI as the vDSO's
 * is read (sw_cfi_open_mem: libdwarf over the image, rows at two pcs).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/cfi.h"
#include "elf/elf.h"
#include "elf/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly SIZE bytes, so ASan sees any over-read */
    uint8_t *img = malloc(size ? size : 1);
    memcpy(img, data, size);
    struct sw_errbuf err = { 0, "" };

    /* the header walk, as the vDSO reader grows its prefix */
    size_t have = size < 64 ? size : 64, need = 0;
    for (int i = 0; i < 8; i++) {
        if (sw_elf_image_size(img, have, "[fuzz]", &need, &err) != 0)
            break;
        if (need <= have || need > size)
            break;
        have = need;
    }

    const uint8_t *id, *note;
    size_t id_len, note_len;
    sw_addr vaddr;
    if (sw_elf_image_build_id(img, size, &id, &id_len, &need) == 0 && id_len > 0 &&
        (id < img || id + id_len > img + size))
        abort();
    if (sw_elf_image_build_id_note(img, size, &vaddr, &note, &note_len) == 0 &&
        (note < img || note + note_len > img + size))
        abort();

    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e;
    if (c != NULL && sw_elfcache_open_mem(c, "[fuzz]", img, size, &e, &err) == 0) {
        (void)sw_elf_build_id_note(e, &vaddr, &note, &note_len);
        sw_elf_build_id(e, &id, &id_len);
        sw_addr lo, hi;
        sw_elf_load_range(e, &lo, &hi);
        struct sw_elfsym sym;
        (void)sw_elf_symbol_at(e, sw_elf_entry(e), &sym);
        (void)sw_elf_symbol_at(e, lo + (hi - lo) / 2, &sym);
        (void)sw_elf_symbol_by_name(e, "__vdso_clock_gettime", &sym);
        const uint8_t *sec;
        size_t sec_len;
        sw_addr sec_addr;
        (void)sw_elf_section(e, ".eh_frame", false, &sec, &sec_len, &sec_addr);
        (void)sw_elf_section(e, ".eh_frame_hdr", false, &sec, &sec_len, &sec_addr);
        uint8_t buf[64];
        (void)sw_elf_read(e, lo, buf, sizeof buf);
        (void)sw_elf_interp(e);
        struct sw_cfi *cfi;
        if (sw_cfi_open_mem(img, size, "[fuzz]", 8, &cfi, &err) == 0) {
            struct sw_cfi_row row;
            (void)sw_cfi_row_at(cfi, sw_elf_entry(e), &row, &err);
            (void)sw_cfi_row_at(cfi, lo + (hi - lo) / 2, &row, &err);
            sw_cfi_close(cfi);
        }
    }
    sw_elfcache_free(c);
    free(img);
    return 0;
}
