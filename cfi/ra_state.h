/* cfi/ra_state.h -- AArch64 RA_SIGN_STATE from call frame instructions, and their bounds.
 *
 * libdwarf 20210528 reads DW_CFA_AARCH64_negate_ra_state and keeps nothing:
 * cfi/cfi.c replays the CIE's and the FDE's instructions here, and checks
 * here first that they stay inside their entry.  Pure byte work.
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
 * first.  The scan stops, true, at an opcode whose operand size it cannot
 * know (DW_CFA_set_loc, vendor opcodes). */
bool sw_cfi_insns_bounded(const uint8_t *insns, size_t len);

#endif
