/* tests/unit/data/x86_64_bigframe.S -- x86-64 frames sized through a register, no CFI.
 *
 * Linked static and non-PIE like x86_64_frames.S.  A frame size moved into a register
 * before `sub %rax,%rsp`, and -fstack-clash-protection's probe loop (the bound in %r11).
 * Beside each instruction: its offset and the height (CFA - SP) before it, which
 * tests/unit/walker/test_analysis_big.c checks.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    call big                    /* +0, returns to +5 */
    hlt                         /* +5 */
    .size _start, . - _start

    .globl big
    .type big, @function
big:
    mov $0x15f0, %eax           /* +0  h=8 */
    sub %rax, %rsp              /* +5  h=8 */
    call leaf                   /* +8  h=0x15f8, returns to +13 */
    add $0x15f0, %rsp           /* +13 h=0x15f8 */
    ret                         /* +20 h=8 */
    .size big, . - big

    /* The constant is lost when the register is written: xor is no move of a constant. */
    .globl lost
    .type lost, @function
lost:
    mov $0x100, %ecx            /* +0  h=8 */
    xor %ecx, %ecx              /* +5  h=8 */
    sub %rcx, %rsp              /* +7  h=8 */
    hlt                         /* +10 unknown */
    .size lost, . - lost

    .globl probe
    .type probe, @function
probe:
    lea -0x11000(%rsp), %r11    /* +0  h=8: r11 = CFA - 0x11008 */
1:  sub $0x1000, %rsp           /* +8  loop head: unknown */
    orq $0, (%rsp)              /* +15 unknown */
    cmp %r11, %rsp              /* +20 unknown */
    jne 1b                      /* +23 unknown */
    sub $0x178, %rsp            /* +25 h=0x11008 */
    call leaf                   /* +32 h=0x11180, returns to +37 */
    add $0x11178, %rsp          /* +37 h=0x11180 */
    ret                         /* +44 h=8 */
    .size probe, . - probe

    /* The same compare, but the jump is on another condition: no height after it. */
    .globl probe_jl
    .type probe_jl, @function
probe_jl:
    lea -0x11000(%rsp), %r11    /* +0  h=8 */
1:  sub $0x1000, %rsp           /* +8  unknown */
    cmp %r11, %rsp              /* +15 unknown */
    jg 1b                       /* +18 unknown */
    ret                         /* +20 unknown */
    .size probe_jl, . - probe_jl

    .globl leaf
    .type leaf, @function
leaf:
    nop                         /* +0  h=8 */
    ret                         /* +1  h=8 */
    .size leaf, . - leaf
