/* tests/unit/data/x86_64_cfi_split.S -- a program whose only CFI is .debug_frame.
 *
 * `.cfi_sections .debug_frame`: no .eh_frame, so once `objcopy --strip-debug`
 * has removed .debug_frame the program has no CFI of its own, and the
 * separate debug file `objcopy --only-keep-debug` made from it has all of it.
 * tests/unit/cfi/test_cfi_split.c makes both at run time and puts the debug file
 * where gdb would look: by .gnu_debuglink, by build-id.  Linked static and
 * non-PIE (link-time addresses are runtime ones); the linker gives it a
 * build-id.
 */
    .cfi_sections .debug_frame
    .text
    .globl _start
    .type _start, @function
_start:
    .cfi_startproc
    .cfi_undefined %rip
    xor %ebp, %ebp
    call split_caller
    .globl split_start_ra
split_start_ra:
    hlt
    .cfi_endproc
    .size _start, . - _start

    .globl split_caller
    .type split_caller, @function
split_caller:
    .cfi_startproc
    push %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_offset %rbp, -16
    call split_leaf
    .globl split_caller_ra
split_caller_ra:
    pop %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbp
    ret
    .cfi_endproc
    .size split_caller, . - split_caller

    .globl split_leaf
    .type split_leaf, @function
split_leaf:
    .cfi_startproc
    nop
    ret
    .cfi_endproc
    .size split_leaf, . - split_leaf
