/* tests/unit/data/ppc64_frames.S -- PowerPC64 functions for the analysis and frame-func tests.
 *
 * Built by the Makefile with powerpc64-linux-gnu-gcc (big-endian ELFv1: function symbols
 * name descriptors in .opd) and, through ppc64le_frames.S, powerpc64le-linux-gnu-gcc
 * (ELFv2); -nostdlib -static -no-pie, no CFI.  Beside each instruction: its offset from the
 * function's code, then the height (CFA - SP) before it and the FrameFuncHelper's pair there,
 * which tests/unit/walker/test_frame_func_ppc.c checks.  The chain _start -> outer -> multi ->
 * leaf is walked on a fake stack.
 */
#if defined(_CALL_ELF) && _CALL_ELF == 2
#define FUNC(name)                                                                             \
    .globl name;                                                                               \
    .type name, @function;                                                                     \
    name:
#define END(name) .size name, .- name
#define CODE(name) name
#else
#define FUNC(name)                                                                             \
    .globl name;                                                                               \
    .section ".opd", "aw";                                                                     \
    .balign 8;                                                                                 \
    name:                                                                                      \
    .quad .L.name, .TOC.@tocbase, 0;                                                           \
    .previous;                                                                                 \
    .type name, @function;                                                                     \
    .L.name:
#define END(name) .size name, .- .L.name
#define CODE(name) .L.name
#endif

    .text
FUNC(_start)
    li 31, 0                    /* +0 */
    bl CODE(outer)              /* +4, returns to +8 */
    trap                        /* +8 */
END(_start)

    /* gcc -O0: the LR saved in the caller's header, r31 saved and pointed at the frame. */
FUNC(outer)
    mflr 0                      /* +0  h=0   standard unset */
    std 0, 16(1)                /* +4  h=0   unset (the LR in r0) */
    std 31, -8(1)               /* +8  h=0   halfset (LR saved, nothing allocated) */
    stdu 1, -128(1)             /* +12 h=0   halfset */
    mr 31, 1                    /* +16 h=128 set */
    bl CODE(multi)              /* +20 h=128 set, returns to +24 */
    nop                         /* +24 h=128 set */
    addi 1, 1, 128              /* +28 h=128 set */
    ld 0, 16(1)                 /* +32 h=0   halfset (popped, the LR ahead) */
    mtlr 0                      /* +36 h=0   halfset */
    ld 31, -8(1)                /* +40 h=0   unset */
    blr                         /* +44 h=0   unset */
END(outer)

    /* gcc -O2: shrink-wrapped (a conditional return before the prologue), more stack
     * allocated after the frame (sp arithmetic), two exits. */
FUNC(multi)
    cmpdi 3, 0                  /* +0  h=0  standard unset */
    beqlr                       /* +4  h=0  unset: the first exit */
    mflr 0                      /* +8  h=0  unset */
    std 0, 16(1)                /* +12 h=0  unset */
    stdu 1, -64(1)              /* +16 h=0  halfset */
    stdu 1, -32(1)              /* +20 h=64 set */
    bl CODE(leaf)               /* +24 h=96 set, returns to +28 */
    nop                         /* +28 h=96 set */
    addi 1, 1, 96               /* +32 h=96 set */
    ld 0, 16(1)                 /* +36 h=0  halfset */
    mtlr 0                      /* +40 h=0  halfset */
    blr                         /* +44 h=0  unset: the second exit */
END(multi)

    /* Frameless: lives in its caller's frame, the return address in the LR. */
FUNC(leaf)
    addi 3, 3, 1                /* +0 h=0 no-frame unset */
    blr                         /* +4 h=0 unset */
END(leaf)

    /* A leaf with a frame (locals, r31), the LR never saved. */
FUNC(savefp)
    stdu 1, -48(1)              /* +0  h=0  savefp-only unset */
    std 31, 40(1)               /* +4  h=48 set */
    mr 31, 1                    /* +8  h=48 set */
    ld 31, 40(1)                /* +12 h=48 set */
    addi 1, 1, 48               /* +16 h=48 set */
    blr                         /* +20 h=0  unset */
END(savefp)

    /* Code reached only through bctr: the analysis stops there. */
FUNC(switchy)
    mflr 0                      /* +0  h=0   standard unset */
    std 0, 16(1)                /* +4  h=0   unset */
    stdu 1, -112(1)             /* +8  h=0   halfset */
    mtctr 3                     /* +12 h=112 set */
    bctr                        /* +16 h=112 set */
    bl CODE(leaf)               /* +20 not reached; returns to +24 */
    nop                         /* +24 not reached */
    b 1f                        /* +28 not reached, a branch before any return */
1:  addi 1, 1, 112              /* +32 not reached: a return follows (the exit scan) */
    ld 0, 16(1)                 /* +36 */
    mtlr 0                      /* +40 */
    blr                         /* +44 */
END(switchy)

    /* No symbol covers these: a tail the exit scan reads. */
    addi 1, 1, 32               /* gap+0 */
    blr                         /* gap+4 */

    .section .note.GNU-stack, "", @progbits
