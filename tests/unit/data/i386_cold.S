/* tests/unit/data/i386_cold.S -- i386 code without CFI: a cold part, a PIC thunk, big frames.
 *
 * Built by the Makefile with i686-linux-gnu-gcc -nostdlib -static -no-pie.  Shaped after gcc
 * -O2 -fPIC output (the judge's jmprec.c, W2): finish saves %ebx, calls
 * __x86.get_pc_thunk.bx (whose return address stays below SP), and reaches its cold part
 * finish.cold by `jne`, with 12 bytes of finish's frame live; nothing calls finish.cold.
 * Beside each instruction: its offset and the height (CFA - SP) before it, which
 * tests/unit/walker/test_analysis_big.c and test_wanderer.c check.  The chain _start -> pang ->
 * finish -> finish.cold -> stop is walked on a fake stack.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    call pang                   /* +0, returns to +5 */
    hlt                         /* +5 */
    .size _start, . - _start

    /* gcc puts the cold part in .text.unlikely, before the function. */
    .type finish.cold, @function
finish.cold:
    call stop                   /* +0  h=16 (finish's), returns to +5 */
    hlt                         /* +5 */
    .size finish.cold, . - finish.cold

    .globl pang
    .type pang, @function
pang:
    sub $0x1c, %esp             /* +0  h=4 */
    push $7                     /* +3  h=32 */
    call finish                 /* +5  h=36, returns to +10 */
    add $0x20, %esp             /* +10 h=36 */
    ret                         /* +13 h=4 */
    .size pang, . - pang

    .globl finish
    .type finish, @function
finish:
    push %ebx                   /* +0  h=4 */
    call __x86.get_pc_thunk.bx  /* +1  h=8, returns to +6 */
    add $0x1000, %ebx           /* +6  h=8 */
    sub $8, %esp                /* +12 h=8 */
    mov 0x10(%esp), %eax        /* +15 h=16 */
    test %eax, %eax             /* +19 h=16 */
    {disp32} jne finish.cold    /* +21 h=16 (rel32, 0f 85, as gcc links it) */
    add $8, %esp                /* +27 h=16 */
    pop %ebx                    /* +30 h=8 */
    ret                         /* +31 h=4 */
    .size finish, . - finish

    .type __x86.get_pc_thunk.bx, @function
__x86.get_pc_thunk.bx:
    mov (%esp), %ebx            /* +0  h=4 */
    ret                         /* +3  h=4 */
    .size __x86.get_pc_thunk.bx, . - __x86.get_pc_thunk.bx

    .globl stop
    .type stop, @function
stop:
    nop                         /* +0  h=4 */
    ret                         /* +1  h=4 */
    .size stop, . - stop

    /* A conditional tail call (gcc emits `jne func` for `if (x) return func();`): whoever
     * called router is the caller of target. */
    .globl router
    .type router, @function
router:
    test %eax, %eax             /* +0  h=4 */
    jne target                  /* +2  h=4 */
    ret                         /* +4  h=4 */
    .size router, . - router

    .globl target
    .type target, @function
target:
    nop                         /* +0  h=4 */
    ret                         /* +1  h=4 */
    .size target, . - target

    .globl via_router
    .type via_router, @function
via_router:
    sub $12, %esp               /* +0  h=4 */
    call router                 /* +3  h=16, returns to +8 */
    add $12, %esp               /* +8  h=16 */
    ret                         /* +11 h=4 */
    .size via_router, . - via_router

    /* Nothing calls lone. */
    .globl lone
    .type lone, @function
lone:
    nop
    ret
    .size lone, . - lone

    /* -fstack-clash-protection's probe loop for a 0x11000-byte frame: the bound in %eax. */
    .globl probe32
    .type probe32, @function
probe32:
    push %ebx                   /* +0  h=4 */
    lea -0x11000(%esp), %eax    /* +1  h=8: eax = CFA - 0x11008 */
1:  sub $0x1000, %esp           /* +8  loop head: unknown */
    orl $0, (%esp)              /* +14 */
    cmp %eax, %esp              /* +18 */
    jne 1b                      /* +20 */
    sub $0x184, %esp            /* +22 h=0x11008 */
    call stop                   /* +28 h=0x1118c, returns to +33 */
    add $0x11184, %esp          /* +33 h=0x1118c */
    pop %ebx                    /* +39 h=8 */
    ret                         /* +40 h=4 */
    .size probe32, . - probe32
