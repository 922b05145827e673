/* tests/unit/data/ppc_frames.S -- PowerPC (32-bit SysV) functions for the analysis tests.
 *
 * Built by the Makefile with powerpc-linux-gnu-gcc -nostdlib -static -no-pie; no CFI.
 * Beside each instruction: its offset, then the height (CFA - SP) before it and the
 * FrameFuncHelper's pair there, which tests/unit/walker/test_frame_func_ppc.c checks.  The chain
 * _start -> outer32 -> multi32 -> leaf32 is walked on a fake stack.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    li 31, 0                    /* +0 */
    bl outer32                  /* +4, returns to +8 */
    trap                        /* +8 */
    .size _start, . - _start

    /* gcc -O0: the LR saved in the caller's header after the allocation, r31 the frame
     * pointer, and the epilogue through r11 (the back chain), which the analysis does not
     * follow past `mr r1,r11`: the exit scan answers at the blr. */
    .globl outer32
    .type outer32, @function
outer32:
    stwu 1, -32(1)              /* +0  h=0  standard unset */
    mflr 0                      /* +4  h=32 halfset (allocated, the LR live) */
    stw 0, 36(1)                /* +8  h=32 halfset (the LR in r0) */
    stw 31, 28(1)               /* +12 h=32 set */
    mr 31, 1                    /* +16 h=32 set */
    bl multi32                  /* +20 h=32 set, returns to +24 */
    lwz 11, 0(1)                /* +24 h=32 set */
    lwz 0, 4(11)                /* +28 h=32 set */
    mtlr 0                      /* +32 h=32 set */
    lwz 31, -4(11)              /* +36 h=32 set */
    mr 1, 11                    /* +40 h=32 set */
    blr                         /* +44 SP lost: the exit scan says unset */
    .size outer32, . - outer32

    /* gcc -O2: a conditional return before the prologue, more stack after the frame,
     * two exits. */
    .globl multi32
    .type multi32, @function
multi32:
    cmpwi 3, 0                  /* +0  h=0  standard unset */
    beqlr                       /* +4  h=0  unset: the first exit */
    mflr 0                      /* +8  h=0  unset */
    stwu 1, -16(1)              /* +12 h=0  unset (the LR in r0) */
    stw 0, 20(1)                /* +16 h=16 halfset */
    stwu 1, -16(1)              /* +20 h=16 set */
    bl leaf32                   /* +24 h=32 set, returns to +28 */
    addi 1, 1, 16               /* +28 h=32 set */
    lwz 0, 20(1)                /* +32 h=16 set */
    addi 1, 1, 16               /* +36 h=16 set */
    mtlr 0                      /* +40 h=0  halfset */
    blr                         /* +44 h=0  unset: the second exit */
    .size multi32, . - multi32

    /* Frameless. */
    .globl leaf32
    .type leaf32, @function
leaf32:
    addi 3, 3, 1                /* +0 h=0 no-frame unset */
    blr                         /* +4 h=0 unset */
    .size leaf32, . - leaf32

    /* Code reached only through bctr. */
    .globl switchy32
    .type switchy32, @function
switchy32:
    stwu 1, -16(1)              /* +0  h=0  savefp-only unset */
    mtctr 3                     /* +4  h=16 set */
    bctr                        /* +8  h=16 set */
    b 1f                        /* +12 not reached, a branch before any return */
1:  addi 1, 1, 16               /* +16 not reached: a return follows (the exit scan) */
    blr                         /* +20 */
    .size switchy32, . - switchy32

    /* No symbol covers these. */
    addi 1, 1, 32               /* gap+0 */
    blr                         /* gap+4 */

    .section .note.GNU-stack, "", @progbits
