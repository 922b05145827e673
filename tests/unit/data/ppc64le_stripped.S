/* tests/unit/data/ppc64le_stripped.S -- 64-bit PowerPC -Os code whose functions have no symbols.
 *
 * Built by the Makefile with powerpc64le-linux-gnu-gcc -nostdlib -static -no-pie and linked -s:
 * no .symtab and no CFI, as Debian's stripped busybox-static.  main saves its LR through an
 * out-of-line register save routine (gcc -Os: mflr r0; bl _savegpr0_30, which stores r0 at
 * r1 + 16) before it allocates its frame.  tests/unit/walker/test_believe.c walks
 * leaf -> main -> _start on a fake stack, with the offsets below.
 */
    .abiversion 2
    .text
    .globl _start
    .type _start, @function
_start:
    li 31, 0                    /* +0 */
    bl .Lmain                   /* +4, returns to +8 */
    trap                        /* +8 */
    .size _start, . - _start

    .org 0x80                   /* past the 64 bytes a stripped _start may span */
.Lmain:                         /* +0x80 = main */
    mflr 0                      /* main+0 */
    bl .Lsave                   /* main+4: r0 (the LR) stored at SP + 16 */
    stdu 1, -64(1)              /* main+8 */
    bl .Lleaf                   /* main+12, returns to main+16 */
    addi 1, 1, 64               /* main+16 */
    ld 0, 16(1)                 /* main+20 */
    mtlr 0                      /* main+24 */
    ld 30, -16(1)               /* main+28 */
    ld 31, -8(1)                /* main+32 */
    blr                         /* main+36 */

.Lleaf:                         /* main+40 = leaf */
    addi 3, 3, 1                /* leaf+0 */
    blr                         /* leaf+4 */

    /* _savegpr0_30 as libgcc has it. */
.Lsave:
    std 30, -16(1)
    std 31, -8(1)
    std 0, 16(1)
    blr
