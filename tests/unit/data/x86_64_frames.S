/* tests/unit/data/x86_64_frames.S -- functions with known prologues for stepper tests.
 *
 * Linked static and non-PIE (-nostdlib -static -no-pie), so link-time
 * addresses are runtime addresses and the tests can place a fake stack
 * around them.  No CFI on purpose: only the frame-func stepper applies.
 * Offsets used by the tests are noted beside each instruction.
 */
    .text
    .globl _start
    .type _start, @function
_start:                       /* stackbottom: walks end here */
    xor %ebp, %ebp
    call std_func
    hlt
    .size _start, . - _start

    .globl std_func
    .type std_func, @function
std_func:
    endbr64                   /* +0 */
    push %rbp                 /* +4 */
    mov %rsp, %rbp            /* +5 */
    sub $16, %rsp             /* +8: frame set from here */
    call savefp_func          /* +12 */
    nop                       /* +17 */
    leave                     /* +18 */
    ret                       /* +19 */
    .size std_func, . - std_func

    .globl savefp_func
    .type savefp_func, @function
savefp_func:
    push %rbp                 /* +0 */
    nop                       /* +1: half set */
    pop %rbp                  /* +2 */
    ret                       /* +3 */
    .size savefp_func, . - savefp_func

    .globl noframe_func
    .type noframe_func, @function
noframe_func:
    sub $8, %rsp              /* +0 */
    add $8, %rsp              /* +4 */
    ret                       /* +8 */
    .size noframe_func, . - noframe_func

    .globl sig_tramp
    .type sig_tramp, @function
sig_tramp:                    /* the x86-64 rt_sigreturn trampoline bytes */
    mov $15, %rax
    syscall
    .size sig_tramp, . - sig_tramp

    .section .note.GNU-stack, "", @progbits
