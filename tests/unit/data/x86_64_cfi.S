/* tests/unit/data/x86_64_cfi.S -- hand-written CFI for the debug stepper's tests.
 *
 * Linked static and non-PIE like x86_64_frames.S (link-time addresses are
 * runtime ones).  Its .eh_frame has what compilers emit and the stepper must
 * get right: DW_CFA_GNU_args_size around a call with pushed arguments (i386
 * code and x86-64 calls with more than six integer arguments), and a function
 * whose CFI covers only part of it (an FDE that starts after the function
 * does, and a cold part with an FDE of its own, as gcc's hot/cold splitting
 * leaves them).  The tests find every address by symbol; the offsets noted
 * beside the instructions are what they rely on.
 */
    .text
    .globl _start
    .type _start, @function
_start:                       /* the bottom: its CFI marks the RA undefined */
    .cfi_startproc
    .cfi_undefined %rip
    xor %ebp, %ebp
    call args_caller
    .globl start_ra
start_ra:
    hlt
    .cfi_endproc
    .size _start, . - _start

    /* Two words of arguments pushed for one call: the CFA grows with each
     * push, and DW_CFA_GNU_args_size (0x2e) says 16 bytes of the frame are
     * arguments, which a landing pad would find popped. */
    .globl args_caller
    .type args_caller, @function
args_caller:
    .cfi_startproc
    push %rbp                 /* +0 */
    .cfi_adjust_cfa_offset 8
    .cfi_offset %rbp, -16
    push $1                   /* +1 */
    .cfi_adjust_cfa_offset 8
    push $2                   /* +3 */
    .cfi_adjust_cfa_offset 8
    .cfi_escape 0x2e, 0x10    /* DW_CFA_GNU_args_size 16 */
    call args_callee          /* +5: CFA = rsp + 32 here */
    .globl args_caller_ra
args_caller_ra:
    add $16, %rsp             /* +10 */
    .cfi_adjust_cfa_offset -16
    .cfi_escape 0x2e, 0x00    /* DW_CFA_GNU_args_size 0 */
    pop %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbp
    ret
    .cfi_endproc
    .size args_caller, . - args_caller

    .globl args_callee
    .type args_callee, @function
args_callee:
    .cfi_startproc
    nop                       /* +0: CFA = rsp + 8 */
    ret
    .cfi_endproc
    .size args_callee, . - args_callee

    /* The FDE starts after the prologue: the first two instructions have no
     * CFI at all. */
    .globl partial
    .type partial, @function
partial:
    push %rbp                 /* +0 */
    mov %rsp, %rbp            /* +1 */
    .globl partial_fde
partial_fde:                  /* +4: the FDE starts here */
    .cfi_startproc
    .cfi_def_cfa %rbp, 16
    .cfi_offset %rbp, -16
    call args_callee
    test %eax, %eax
    jnz partial_cold
    pop %rbp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size partial, . - partial

    /* Code no FDE covers, between the hot part and its cold part. */
    .globl nocfi
    .type nocfi, @function
nocfi:
    nop
    ret
    .size nocfi, . - nocfi

    /* The cold part of `partial`: an FDE of its own, its CFA still rbp-based. */
    .type partial_cold, @function
partial_cold:
    .cfi_startproc
    .cfi_def_cfa %rbp, 16
    .cfi_offset %rbp, -16
    xor %eax, %eax            /* +0 */
    pop %rbp                  /* +2 */
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size partial_cold, . - partial_cold
