/* tests/unit/data/aarch64_bigframe.S -- AArch64 frames too large for an immediate, no CFI.
 *
 * Built by the Makefile with aarch64-linux-gnu-gcc -nostdlib -static -no-pie.  Shaped after
 * gcc -O2 (the judge's jmprec.c, W3: pong's `mov x12, #0x15f0; sub sp, sp, x12`) and
 * -fstack-clash-protection's probe loop.  Beside each instruction: its offset and the
 * height (CFA - SP) before it, which tests/unit/walker/test_analysis_big.c checks; unknown where
 * the analysis cannot know it.  test_wanderer.c scans from unk, whose frame size is in a
 * register at run time, into caller2.
 */
    .text
    .globl _start
    .type _start, %function
_start:
    mov x29, #0                 /* +0 */
    bl caller2                  /* +4, returns to +8 */
    brk #0                      /* +8 */
    .size _start, . - _start

    /* 5616 bytes of locals: neither imm12 nor imm12 << 12. */
    .globl pong
    .type pong, %function
pong:
    mov x12, #0x15f0            /* +0  h=0 */
    sub sp, sp, x12             /* +4  h=0 */
    str x30, [sp]               /* +8  h=0x15f0 */
    bl leaf                     /* +12 h=0x15f0, returns to +16 */
    ldr x30, [sp]               /* +16 h=0x15f0 */
    mov x12, #0x15f0            /* +20 h=0x15f0 */
    add sp, sp, x12             /* +24 h=0x15f0 */
    ret                         /* +28 h=0 */
    .size pong, . - pong

    /* movz + movk, and w registers (the upper half zeroed). */
    .globl movk
    .type movk, %function
movk:
    movz x9, #0x1, lsl #16      /* +0  h=0 */
    movk x9, #0x2340            /* +4  h=0 */
    sub sp, sp, x9              /* +8  h=0 */
    stp x29, x30, [sp]          /* +12 h=0x12340 */
    bl leaf                     /* +16 h=0x12340, returns to +20 */
    ldp x29, x30, [sp]          /* +20 h=0x12340 */
    mov w10, #0x2340            /* +24 h=0x12340 */
    movk w10, #0x1, lsl #16     /* +28 h=0x12340 */
    add sp, sp, x10             /* +32 h=0x12340 */
    ret                         /* +36 h=0 */
    .size movk, . - movk

    /* A call clobbers x12: its value before the call is not its value after. */
    .globl clobber
    .type clobber, %function
clobber:
    stp x29, x30, [sp, #-16]!   /* +0  h=0 */
    mov x12, #0x100             /* +4  h=16 */
    bl leaf                     /* +8  h=16, returns to +12 */
    sub sp, sp, x12             /* +12 h=16 */
    brk #0                      /* +16 unknown */
    .size clobber, . - clobber

    /* -fstack-clash-protection, a 0x10000-byte probe loop: the bound in x12. */
    .globl probe
    .type probe, %function
probe:
    sub x12, sp, #0x10, lsl #12 /* +0  h=0: x12 = CFA - 0x10000 */
1:  sub sp, sp, #0x1, lsl #12   /* +4  loop head: unknown */
    str xzr, [sp, #1024]        /* +8  unknown */
    cmp sp, x12                 /* +12 unknown */
    b.ne 1b                     /* +16 unknown */
    stp x29, x30, [sp, #-16]!   /* +20 h=0x10000 */
    bl leaf                     /* +24 h=0x10010, returns to +28 */
    ldp x29, x30, [sp], #16     /* +28 h=0x10010 */
    add sp, sp, #0x10, lsl #12  /* +32 h=0x10000 */
    ret                         /* +36 h=0 */
    .size probe, . - probe

    .globl leaf
    .type leaf, %function
leaf:
    nop                         /* +0  h=0 */
    ret                         /* +4  h=0 */
    .size leaf, . - leaf

    /* An analysable caller: its own x30 at CFA - 8. */
    .globl caller2
    .type caller2, %function
caller2:
    sub sp, sp, #48             /* +0  h=0 */
    stp x29, x30, [sp, #32]     /* +4  h=48 */
    mov x0, #0x40               /* +8  h=48 */
    bl unk                      /* +12 h=48, returns to +16 */
    ldp x29, x30, [sp, #32]     /* +16 h=48 */
    add sp, sp, #48             /* +20 h=48 */
    ret                         /* +24 h=0 */
    .size caller2, . - caller2

    /* A frame sized at run time (x0): no analysis knows unk's height. */
    .globl unk
    .type unk, %function
unk:
    sub sp, sp, x0              /* +0  h=0 */
    str x30, [sp]               /* +4  unknown */
    bl leaf                     /* +8  unknown, returns to +12 */
    ldr x30, [sp]               /* +12 unknown */
    add sp, sp, x0              /* +16 unknown */
    ret                         /* +20 unknown */
    .size unk, . - unk
