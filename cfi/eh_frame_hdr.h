/* cfi/eh_frame_hdr.h -- the FDE for an address through .eh_frame_hdr.
 *
 * libdwarf builds every FDE of a .eh_frame to look one up (libc: 28 M
 * instructions a run).  The linker's .eh_frame_hdr holds a table of
 * (initial location, FDE address) pairs sorted by location: a binary search
 * finds the one FDE a pc needs, and sw_ehhdr_image copies it and its CIE
 * into a small ELF image that libdwarf reads instead (cfi/cfi.c),
 * the FDE at its own address so that pc-relative encodings keep their values.
 * Pure byte work: no libdwarf, no libelf.  Borrows every buffer it is given.
 */
#ifndef RSPWALK_CFI_EH_FRAME_HDR_H
#define RSPWALK_CFI_EH_FRAME_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sw_ehhdr {
    const uint8_t *hdr; /* borrowed: .eh_frame_hdr's bytes */
    size_t hdr_len;
    uint64_t hdr_addr;
    const uint8_t *eh; /* borrowed: .eh_frame's bytes */
    size_t eh_len;
    uint64_t eh_addr;
    bool msb;           /* file byte order */
    unsigned addr_size; /* 4 or 8: the file's class */
    const uint8_t *table;
    uint64_t count;
    unsigned table_enc;
    size_t entry_size; /* one pair */
};

/* Check the header HDR (HDR_LEN bytes at link-time HDR_ADDR) against the
 * .eh_frame EH (EH_LEN bytes at EH_ADDR) and set H up.  Returns 0, or -1 when
 * the header cannot be used (an unknown version or encoding, no table, a
 * table past the section, an .eh_frame_ptr that is not EH_ADDR): the caller
 * then reads the whole .eh_frame. */
int sw_ehhdr_init(struct sw_ehhdr *h, const uint8_t *hdr, size_t hdr_len, uint64_t hdr_addr,
                  const uint8_t *eh, size_t eh_len, uint64_t eh_addr, bool msb, unsigned addr_size);

/* The FDE whose initial location is the greatest at or below PC: 1 with its
 * offset in .eh_frame in *FDE_OFF, 0 when PC is below every entry. */
int sw_ehhdr_find(const struct sw_ehhdr *h, uint64_t pc, uint64_t *fde_off);

/* An ELF image (class and byte order of H; E_MACHINE and E_FLAGS as given)
 * whose only content section is an .eh_frame holding the CIE of the FDE at
 * FDE_OFF, that FDE at its original address (its CIE pointer rewritten) and
 * a zero terminator.  Returns 0 with *IMAGE (owned by the caller: sw_free)
 * and *LEN, -1 when the FDE or its CIE is malformed, -2 out of memory. */
int sw_ehhdr_image(const struct sw_ehhdr *h, uint64_t fde_off, unsigned e_machine, uint32_t e_flags,
                   uint8_t **image, size_t *len);

#endif
