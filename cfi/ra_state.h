/* cfi/ra_state.h -- AArch64 RA_SIGN_STATE from call frame instructions; their bounds, the CIE's
 * layout.
 *
 * libdwarf 20210528 reads DW_CFA_AARCH64_negate_ra_state and keeps nothing:
 * cfi/cfi.c replays the CIE's and the FDE's instructions here, and checks
 * here first that they stay inside their entry and start where the CIE's
 * augmentation says.  Pure byte work.
 */
#ifndef RSPWALK_CFI_RA_STATE_H
#define RSPWALK_CFI_RA_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RA_STATE_DEPTH 16 /* nested remember_state: GCC emits one level */

/* Replay LEN bytes of call frame instructions at INSNS from LOC, up to and
 * including the instructions at TARGET, toggling *SIGNED (STACK holds
 * RA_STATE_DEPTH remembered states, *DEPTH of them in use; CAF is the code
 * alignment factor, MSB the byte order).  Returns false when an instruction
 * cannot be followed (DW_CFA_set_loc, a vendor opcode, truncated operands):
 * the state then is what it was before it. */
bool sw_cfi_replay_ra_state(const uint8_t *insns, size_t len, uint64_t loc, uint64_t target,
                            uint64_t caf, bool msb, bool *signed_, bool *stack, unsigned *depth);

/* Whether the LEN bytes of call frame instructions at INSNS keep every
 * operand and expression block inside them.  libdwarf 20210528 follows a
 * block's length past the end of its section (a SEGV in
 * _dwarf_exec_frame_instr on a hostile .eh_frame): cfi/cfi.c asks this
 * first.  DW_CFA_set_loc's operand is ADDR_SIZE bytes, as libdwarf reads
 * it (the CIE's address size, not the 'R' encoding of .eh_frame); an
 * opcode whose operands are not known is refused (libdwarf refuses it too). */
bool sw_cfi_insns_bounded(const uint8_t *insns, size_t len, unsigned addr_size);

/* Where a CIE's instructions start, and its address size. */
struct sw_cfi_cie_layout {
    size_t insns_off;   /* from the CIE's first byte (its length field) */
    unsigned addr_size; /* version 4's field, or the default given */
};

/* Lay out the LEN bytes of the CIE at CIE (from its length field to its
 * end) as DWARF's .debug_frame and the LSB's .eh_frame give it: length
 * (4 bytes, or 0xffffffff and 8), CIE id, version, augmentation string,
 * address and segment size (version 4), code and data alignment factors,
 * return address column (a byte in version 1), then for a 'z' augmentation
 * its data length (ULEB) and that many bytes.  ADDR_SIZE is the address size
 * before version 4.  Returns 0 with *OUT set, 1 for an augmentation whose
 * layout is not known here ("eh", vendors': only OUT->addr_size is known,
 * the start is libdwarf's), -1 when a field or the augmentation data runs
 * past LEN. */
int sw_cfi_cie_layout(const uint8_t *cie, size_t len, unsigned addr_size,
                      struct sw_cfi_cie_layout *out);

#endif
