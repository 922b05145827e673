/* tests/unit/data/ppc64_plt.S -- PowerPC64 call stubs, for the linker-stub tests.
 *
 * Built by the Makefile with powerpc64-linux-gnu-gcc (big-endian ELFv1) and, through
 * ppc64le_plt.S, powerpc64le-linux-gnu-gcc (ELFv2); -nostdlib -static -no-pie, no CFI.  The
 * stub is laid out as GNU ld writes a plt_call stub in .text, with the sizeless local symbol
 * ld names it by (ELFv1's saves the TOC at 40(r1) and may branch to the lazy resolver's
 * entry, ELFv2's saves it at 24(r1)).  The chain _start -> outer -> main -> the stub is walked
 * on a fake stack by tests/unit/walker/test_plt.c; offsets are beside each instruction.
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

FUNC(outer)
    mflr 0                      /* +0 */
    std 0, 16(1)                /* +4 */
    stdu 1, -128(1)             /* +8 */
    bl CODE(main)               /* +12, returns to +16 */
    nop                         /* +16 */
    addi 1, 1, 128              /* +20 */
    ld 0, 16(1)                 /* +24 */
    mtlr 0                      /* +28 */
    blr                         /* +32 */
END(outer)

FUNC(main)
    mflr 0                      /* +0 */
    std 0, 16(1)                /* +4 */
    stdu 1, -112(1)             /* +8 */
    bl "0000001b.plt_call.puts" /* +12, returns to +16 */
    nop                         /* +16 (ld 2 once linked against a library) */
    addi 1, 1, 112              /* +20 */
    ld 0, 16(1)                 /* +24 */
    mtlr 0                      /* +28 */
    blr                         /* +32 */
END(main)

    .balign 32
"0000001b.plt_call.puts":
#if defined(_CALL_ELF) && _CALL_ELF == 2
    std 2, 24(1)                /* +0 */
    ld 12, -32416(2)            /* +4 */
    mtctr 12                    /* +8 */
    bctr                        /* +12 */
#else
    std 2, 40(1)                /* +0 */
    ld 12, -32200(2)            /* +4 */
    mtctr 12                    /* +8 */
    ld 2, -32192(2)             /* +12 */
    cmpldi 2, 0                 /* +16 */
    bnectr+                     /* +20 */
    b __glink_PLTresolve        /* +24 */
#endif
    .long 0

    /* A sizeless symbol that is no stub: code after it stays unknown. */
helper:
    addi 3, 3, 1                /* +0 */
    b helper                    /* +4 */

__glink_PLTresolve:
    mflr 0                      /* +0 */
    trap                        /* +4 */
