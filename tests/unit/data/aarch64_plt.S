/* tests/unit/data/aarch64_plt.S -- a .plt without CFI, for the linker-stub tests.
 *
 * Built by the Makefile with aarch64-linux-gnu-gcc -nostdlib -static -no-pie.  The .plt is
 * laid out as GNU ld writes it (PLT0 of 32 bytes, then one 16-byte entry per function, no
 * symbols, no CFI); main calls the entries as a dynamic program does.  The chain
 * _start -> outer -> main -> a PLT entry (or PLT0) is walked on a fake stack by
 * tests/unit/walker/test_plt.c; offsets are beside each instruction.
 */
    .text
    .globl _start
    .type _start, %function
_start:
    mov x29, #0                 /* +0 */
    bl outer                    /* +4, returns to +8 */
    brk #0                      /* +8 */
    .size _start, . - _start

    .globl outer
    .type outer, %function
outer:
    stp x29, x30, [sp, #-32]!   /* +0 */
    mov x29, sp                 /* +4 */
    bl main                     /* +8, returns to +12 */
    ldp x29, x30, [sp], #32     /* +12 */
    ret                         /* +16 */
    .size outer, . - outer

    .globl main
    .type main, %function
main:
    stp x29, x30, [sp, #-48]!   /* +0 */
    mov x29, sp                 /* +4 */
    bl .Lputs_plt               /* +8, returns to +12 */
    bl .Lexit_plt               /* +12, returns to +16 */
    ldp x29, x30, [sp], #48     /* +16 */
    ret                         /* +20 */
    .size main, . - main

    /* PLT0 pushes x16 (the GOT slot) and x30, then enters the resolver; each entry jumps
     * through its GOT slot, which points at PLT0 until the first call is resolved. */
    .section .plt, "ax", %progbits
    .balign 16
    stp x16, x30, [sp, #-16]!   /* PLT0 +0 */
    adrp x16, got               /* +4 */
    ldr x17, [x16, #:lo12:got+16] /* +8 */
    add x16, x16, #:lo12:got+16 /* +12 */
    br x17                      /* +16 */
    nop                         /* +20 */
    nop                         /* +24 */
    nop                         /* +28 */
.Lputs_plt:
    adrp x16, got               /* +32 */
    ldr x17, [x16, #:lo12:got+24] /* +36 */
    add x16, x16, #:lo12:got+24 /* +40 */
    br x17                      /* +44 */
.Lexit_plt:
    adrp x16, got               /* +48 */
    ldr x17, [x16, #:lo12:got+32] /* +52 */
    add x16, x16, #:lo12:got+32 /* +56 */
    br x17                      /* +60 */

    .data
    .balign 8
got:
    .quad 0, 0, 0, 0, 0
