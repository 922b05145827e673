/* tests/unit/data/aarch64_pac_cfi.S -- AArch64 CFI with return-address signing.
 *
 * Assembled by the host: the code is x86 nops that only give the FDE its
 * addresses, while the CFI speaks of AArch64 DWARF registers (x29 29, x30
 * 30, sp 31; the CIE's return column 30), which is all sw_cfi reads.  The
 * FDE is what `gcc -mbranch-protection=pac-ret` emits around `paciasp`, a
 * frame record, `autiasp`, with DW_CFA_AARCH64_negate_ra_state (0x2d) and a
 * remember/restore pair around one exit, as tests/unit/cfi/test_cfi_arches.c
 * expects at each 4-byte step noted below.  Column 16 (x86's rip in the
 * host's CIE) is made same-value: x16 is no saved register on AArch64.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    ret
    .size _start, . - _start

    .globl pac_fn
    .type pac_fn, @function
pac_fn:
    .cfi_startproc
    .cfi_return_column 30
    .cfi_def_cfa 31, 0
    .cfi_same_value 16
    .fill 4, 1, 0x90          /* +0: paciasp (x30 not signed yet) */
    .cfi_escape 0x2d
    .fill 4, 1, 0x90          /* +4: stp x29, x30, [sp, #-16]! (x30 signed) */
    .cfi_def_cfa_offset 16
    .cfi_offset 29, -16
    .cfi_offset 30, -8
    .fill 4, 1, 0x90          /* +8: the body, frame record saved */
    .cfi_remember_state
    .fill 4, 1, 0x90          /* +12: ldp x29, x30, [sp], #16 */
    .cfi_restore 29
    .cfi_restore 30
    .cfi_def_cfa_offset 0
    .fill 4, 1, 0x90          /* +16: autiasp (x30 in the register, signed) */
    .cfi_escape 0x2d
    .fill 4, 1, 0x90          /* +20: ret (x30 authenticated) */
    .cfi_restore_state
    .fill 4, 1, 0x90          /* +24: another exit: frame record and signing back */
    .cfi_endproc
    .size pac_fn, . - pac_fn
