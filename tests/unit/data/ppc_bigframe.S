/* tests/unit/data/ppc_bigframe.S -- PowerPC (32-bit SysV) frames beyond stwu's displacement.
 *
 * Built by the Makefile with powerpc-linux-gnu-gcc -nostdlib -static -no-pie; no CFI.
 * Shaped after gcc -O2 (the judge's jmprec.c: `lis r0,-2; ori r0,r0,61056; stwux r1,r1,r0`)
 * and -fstack-clash-protection's probe loop.  Beside each instruction: its offset and the
 * height (CFA - SP) before it, which tests/unit/walker/test_analysis_big.c checks.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    bl big32                    /* +0, returns to +4 */
    trap                        /* +4 */
    .size _start, . - _start

    /* 0x11180 bytes: r0 = -0x11180 from lis and ori. */
    .globl big32
    .type big32, @function
big32:
    lis 0, -2                   /* +0  h=0 */
    mr 12, 1                    /* +4  h=0 */
    ori 0, 0, 61056             /* +8  h=0 */
    stwux 1, 1, 0               /* +12 h=0 */
    mflr 0                      /* +16 h=0x11180 */
    stw 0, 4(12)                /* +20 h=0x11180: the RA at CFA + 4, through r12 */
    bl leaf32                   /* +24 h=0x11180, returns to +28 */
    addi 1, 1, -16              /* +28 h=0x11180 */
    addi 1, 1, 16               /* +32 h=0x11190 */
    lwz 11, 0(1)                /* +36 h=0x11180 */
    lwz 0, 4(11)                /* +40 h=0x11180 */
    mr 1, 11                    /* +44 h=0x11180 */
    mtlr 0                      /* +48 unknown (r1 from r11) */
    blr                         /* +52 unknown */
    .size big32, . - big32

    /* -fstack-clash-protection: the bound r0 = r1 - 0x11000 from lis, ori and add. */
    .globl probe32
    .type probe32, @function
probe32:
    lis 0, -2                   /* +0  h=0 */
    mr 12, 1                    /* +4  h=0 */
    ori 0, 0, 61440             /* +8  h=0 */
    add 0, 1, 0                 /* +12 h=0 */
1:  stwu 12, -4096(1)           /* +16 loop head: unknown */
    cmpw 1, 0                   /* +20 unknown */
    bne 1b                      /* +24 unknown */
    stwu 12, -384(1)            /* +28 h=0x11000 */
    bl leaf32                   /* +32 h=0x11180, returns to +36 */
    lwz 1, 0(1)                 /* +36 h=0x11180 */
    blr                         /* +40 h=0 */
    .size probe32, . - probe32

    /* The judge's jmprec.c pang at -O2: between `mr r12,r1` and the store through r12,
     * `addis r9,r1,1` sets another register from SP (two are tracked). */
    .globl pang32
    .type pang32, @function
pang32:
    lis 0, -2                   /* +0  h=0 */
    mr 12, 1                    /* +4  h=0 */
    ori 0, 0, 61056             /* +8  h=0 */
    cmpwi 3, 0                  /* +12 h=0 */
    stwux 1, 1, 0               /* +16 h=0 */
    mflr 0                      /* +20 h=0x11180 */
    addis 9, 1, 1               /* +24 h=0x11180 */
    stw 0, 4(12)                /* +28 h=0x11180: the RA at CFA + 4 */
    stb 3, 8(1)                 /* +32 h=0x11180 */
    bl leaf32                   /* +36 h=0x11180, returns to +40 */
    lwz 11, 0(1)                /* +40 h=0x11180 */
    lwz 0, 4(11)                /* +44 h=0x11180 */
    mr 1, 11                    /* +48 */
    mtlr 0                      /* +52 */
    blr                         /* +56 */
    .size pang32, . - pang32

    /* The LR copied to r0 and never stored: after the call r0 holds no return address
     * (volatile), whatever it held before. */
    .globl nostore32
    .type nostore32, @function
nostore32:
    stwu 1, -16(1)              /* +0  h=0 */
    mflr 0                      /* +4  h=16 */
    bl leaf32                   /* +8  h=16, returns to +12 */
    trap                        /* +12 h=16 */
    .size nostore32, . - nostore32

    .globl leaf32
    .type leaf32, @function
leaf32:
    nop                         /* +0  h=0 */
    blr                         /* +4  h=0 */
    .size leaf32, . - leaf32
