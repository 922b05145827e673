/* tests/unit/data/aarch64_stripped.S -- AArch64 code whose functions have no symbols.
 *
 * Built by the Makefile with aarch64-linux-gnu-gcc -nostdlib -static -no-pie; no CFI and no
 * function symbols but _start's (local labels only), as in Debian's stripped busybox-static.  The analysis finds the functions' extents from the code
 * (walker/steppers/analysis_starts.c): main is reached by an adrp/add pair and a veneer,
 * the others by bl.  tests/unit/walker/test_believe.c walks leaf -> body -> main -> _start
 * on a fake stack whose x29 is stale, with the offsets below.
 */
    .text
    .globl _start
    .type _start, %function
_start:
    mov x29, #0                 /* +0 */
    adrp x0, .Lveneer           /* +4: main's address, as glibc's _start passes it */
    add x0, x0, :lo12:.Lveneer  /* +8 */
    blr x0                      /* +12, returns to +16 */
    brk #0                      /* +16 */
    .size _start, . - _start

.Lveneer:                       /* +20: nop; b main, as a linker's veneer */
    nop
    b .Lmain
    nop                         /* +28 */

    .org 0x80                   /* past the 64 bytes a stripped _start may span */

    /* The issue's prologue: the return address saved at an offset from SP
     * after `sub sp`, a pair of callee-saved registers beside it, no record. */
.Lmain:                         /* +0x80 = main */
    sub sp, sp, #0x40           /* main+0 */
    str x30, [sp, #48]          /* main+4 */
    stp x19, x20, [sp, #16]     /* main+8 */
    bl .Lbody                   /* main+12, returns to main+16 */
    ldp x19, x20, [sp, #16]     /* main+16 */
    ldr x30, [sp, #48]          /* main+20 */
    add sp, sp, #0x40           /* main+24 */
    ret                         /* main+28 */

    /* A pre-indexed pair of callee-saved registers, then x30 below them. */
.Lbody:                         /* main+32 = body */
    stp x19, x20, [sp, #-32]!   /* body+0 */
    str x30, [sp, #16]          /* body+4 */
    bl .Lleaf                   /* body+8, returns to body+12 */
    ldr x30, [sp, #16]          /* body+12 */
    ldp x19, x20, [sp], #32     /* body+16 */
    ret                         /* body+20 */

    /* A leaf that keeps its return address in x30. */
.Lleaf:                         /* body+24 = leaf */
    add x0, x0, #1              /* leaf+0 */
    ret                         /* leaf+4 */
