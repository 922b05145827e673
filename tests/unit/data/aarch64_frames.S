/* tests/unit/data/aarch64_frames.S -- AArch64 functions for the analysis and frame-func tests.
 *
 * Built by the Makefile with aarch64-linux-gnu-gcc -nostdlib -static -no-pie; no CFI, so only
 * the analysis decides.  Beside each instruction: its offset, then the height (CFA - SP)
 * before it and the FrameFuncHelper's pair there, which tests/unit/walker/test_frame_func.c checks.
 * The chain _start -> outer -> multi (second exit) -> leaf is walked on a fake stack.
 */
    .text
    .globl _start
    .type _start, %function
_start:
    mov x29, #0                 /* +0 */
    bl outer                    /* +4, returns to +8 */
    brk #0                      /* +8 */
    .size _start, . - _start

    /* A standard frame: the record at the bottom, x29 pointing at it. */
    .globl outer
    .type outer, %function
outer:
    stp x29, x30, [sp, #-32]!   /* +0  h=0  standard unset */
    mov x29, sp                 /* +4  h=32 halfset */
    str x19, [sp, #16]          /* +8  h=32 set */
    bl multi                    /* +12 h=32 set, returns to +16 */
    ldr x19, [sp, #16]          /* +16 h=32 set */
    ldp x29, x30, [sp], #32     /* +20 h=32 set (x29 still at the record) */
    ret                         /* +24 h=0  unset */
    .size outer, . - outer

    /* Locals below the record (sp arithmetic), two exits at different depths. */
    .globl multi
    .type multi, %function
multi:
    sub sp, sp, #64             /* +0  h=0  standard unset */
    stp x29, x30, [sp, #48]     /* +4  h=64 unset */
    add x29, sp, #48            /* +8  h=64 halfset */
    cbz x0, 1f                  /* +12 h=64 set */
    ldp x29, x30, [sp, #48]     /* +16 h=64 set: the first exit */
    add sp, sp, #64             /* +20 h=64 unset */
    ret                         /* +24 h=0  unset */
1:  sub sp, sp, #32             /* +28 h=64 set */
    bl leaf                     /* +32 h=96 set, returns to +36 */
    add sp, sp, #32             /* +36 h=96 set */
    ldp x29, x30, [sp, #48]     /* +40 h=64 set: the second exit */
    add sp, sp, #64             /* +44 h=64 unset */
    ret                         /* +48 h=0  unset */
    .size multi, . - multi

    /* Frameless: stack for a local, the return address stays in x30. */
    .globl leaf
    .type leaf, %function
leaf:
    sub sp, sp, #16             /* +0  h=0  no-frame unset */
    str x0, [sp, #8]            /* +4  h=16 unset */
    add sp, sp, #16             /* +8  h=16 unset */
    ret                         /* +12 h=0  unset */
    .size leaf, . - leaf

    /* x29 saved with x30 as a callee-saved register, never pointed at the frame
     * (-O2 -fomit-frame-pointer). */
    .globl savefp
    .type savefp, %function
savefp:
    stp x29, x30, [sp, #-16]!   /* +0  h=0  savefp-only unset */
    mov x29, x0                 /* +4  h=16 halfset */
    bl leaf                     /* +8  h=16 halfset, returns to +12 */
    ldp x29, x30, [sp], #16     /* +12 h=16 halfset */
    ret                         /* +16 h=0  unset */
    .size savefp, . - savefp

    /* x30 saved alone (-fomit-frame-pointer, no record). */
    .globl omitfp
    .type omitfp, %function
omitfp:
    str x30, [sp, #-16]!        /* +0  h=0  no-frame unset */
    bl leaf                     /* +4  h=16 set (x30 moved), returns to +8 */
    ldr x30, [sp], #16          /* +8  h=16 set */
    ret                         /* +12 h=0  unset */
    .size omitfp, . - omitfp

    /* Signs x30: paciasp and autiasp are hints #25 and #29. */
    .globl pacfn
    .type pacfn, %function
pacfn:
    hint #25                    /* +0  h=0  standard unset */
    stp x29, x30, [sp, #-16]!   /* +4  h=0  unset */
    mov x29, sp                 /* +8  h=16 halfset */
    bl leaf                     /* +12 h=16 set, returns to +16 */
    ldp x29, x30, [sp], #16     /* +16 h=16 set */
    hint #29                    /* +20 h=0  unset */
    ret                         /* +24 h=0  unset */
    .size pacfn, . - pacfn

    /* Case blocks reached only through an indirect branch: the analysis stops at br. */
    .globl switchy
    .type switchy, %function
switchy:
    stp x29, x30, [sp, #-32]!   /* +0  h=0  standard unset */
    mov x29, sp                 /* +4  h=32 halfset */
    adr x16, 1f                 /* +8  h=32 set */
    br x16                      /* +12 h=32 set */
1:  bl leaf                     /* +16 not reached; returns to +20 */
    b 2f                        /* +20 not reached, a branch before any return */
2:  ldp x29, x30, [sp], #32     /* +24 not reached: a return follows (the exit scan) */
    ret                         /* +28 */
    .size switchy, . - switchy

    /* No symbol covers these: a frameless tail the exit scan reads. */
    add sp, sp, #16             /* gap+0 */
    ret                         /* gap+4 */

    .section .note.GNU-stack, "", %progbits
