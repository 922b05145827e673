/* tests/unit/data/x86_64_noframe.S -- frameless functions without CFI for the analysis stepper.
 *
 * Linked static and non-PIE at 0x401000 like x86_64_frames.S; no .cfi
 * directives, so only instruction analysis can walk these.  Offsets used
 * by tests/unit/walker/test_analysis.c are noted beside each instruction (the
 * heights are CFA - SP before the instruction, StackwalkerAPI's stack height).
 */
    .text
    .globl _start
    .type _start, @function
_start:
    xor %ebp, %ebp
    call outer
    hlt
    .size _start, . - _start

    /* outer -> push_sub -> leaf: the plain chain. */
    .globl outer
    .type outer, @function
outer:
    sub $8, %rsp              /* +0  h=8 */
    call push_sub             /* +4  h=16, returns to +9 */
    add $8, %rsp              /* +9  h=16 */
    ret                       /* +13 h=8 */
    .size outer, . - outer

    .globl push_sub
    .type push_sub, @function
push_sub:
    push %rbx                 /* +0  h=8 */
    sub $0x20, %rsp           /* +1  h=16 */
    call leaf                 /* +5  h=48, returns to +10 */
    add $0x20, %rsp           /* +10 h=48 */
    pop %rbx                  /* +14 h=16 */
    ret                       /* +15 h=8 */
    .size push_sub, . - push_sub

    .globl leaf
    .type leaf, @function
leaf:
    nop                       /* +0 h=8 */
    ret                       /* +1 h=8 */
    .size leaf, . - leaf

    /* Two exits at different depths before them. */
    .globl multi_exit
    .type multi_exit, @function
multi_exit:
    push %rbx                 /* +0  h=8 */
    test %edi, %edi           /* +1  h=16 */
    je 1f                     /* +3  h=16 */
    pop %rbx                  /* +5  h=16 */
    ret                       /* +6  h=8: first exit */
1:  sub $16, %rsp             /* +7  h=16 */
    call leaf                 /* +11 h=32, returns to +16 */
    add $16, %rsp             /* +16 h=32 */
    pop %rbx                  /* +20 h=16 */
    ret                       /* +21 h=8: second exit */
    .size multi_exit, . - multi_exit

    /* A loop around a call: the back edge brings the same height. */
    .globl loop_func
    .type loop_func, @function
loop_func:
    push %r12                 /* +0  h=8 */
    mov $10, %r12d            /* +2  h=16 */
1:  sub $8, %rsp              /* +8  h=16: loop head */
    call leaf                 /* +12 h=24, returns to +17 */
    add $8, %rsp              /* +17 h=24 */
    dec %r12d                 /* +21 h=16 */
    jnz 1b                    /* +24 h=16 */
    pop %r12                  /* +26 h=16 */
    ret                       /* +28 h=8 */
    .size loop_func, . - loop_func

    /* Both arms of a branch leave the same height at the join. */
    .globl cond_same
    .type cond_same, @function
cond_same:
    sub $24, %rsp             /* +0  h=8 */
    test %edi, %edi           /* +4  h=32 */
    je 1f                     /* +6  h=32 */
    push $1                   /* +8  h=32 */
    pop %rax                  /* +10 h=40 */
    jmp 2f                    /* +11 h=32 */
1:  mov $2, %eax              /* +13 h=32 */
2:  call leaf                 /* +18 h=32: the join, returns to +23 */
    add $24, %rsp             /* +23 h=32 */
    ret                       /* +27 h=8 */
    .size cond_same, . - cond_same

    /* Arms that disagree: the height at the join is unknown. */
    .globl cond_differ
    .type cond_differ, @function
cond_differ:
    test %edi, %edi           /* +0 h=8 */
    je 1f                     /* +2 h=8 */
    push %rbx                 /* +4 h=8 */
1:  nop                       /* +5 h=? (8 or 16) */
    ret                       /* +6 */
    .size cond_differ, . - cond_differ

    /* Over-aligned locals: SP unknown after the and, FP-based CFA known. */
    .globl aligned
    .type aligned, @function
aligned:
    push %rbp                 /* +0  h=8 */
    mov %rsp, %rbp            /* +1  h=16 */
    and $-32, %rsp            /* +4  h=16, rbp = CFA-16 */
    sub $64, %rsp             /* +8  h=? */
    call leaf                 /* +12 h=?, returns to +17 */
    leave                     /* +17 h=? */
    ret                       /* +18 h=8 */
    .size aligned, . - aligned

    /* A tail call out of the function ends that path. */
    .globl tail
    .type tail, @function
tail:
    push %rbx                 /* +0 h=8 */
    call leaf                 /* +1 h=16, returns to +6 */
    pop %rbx                  /* +6 h=16 */
    jmp leaf                  /* +7 h=8 */
    .size tail, . - tail

    /* gcc's DRAP realignment (i386 main, x86-64 over-aligned frames): the
     * CFA in %r10, saved in the realigned frame at rbp-8. */
    .globl drap
    .type drap, @function
drap:
    lea 8(%rsp), %r10         /* +0  h=8: r10 = CFA */
    and $-32, %rsp            /* +5  h=8 */
    push -8(%r10)             /* +9  L */
    push %rbp                 /* +13 L-8 */
    mov %rsp, %rbp            /* +14 L-16 */
    push %r10                 /* +17 L-16: the CFA saved at L-24 */
    sub $40, %rsp             /* +19 L-24 */
    call leaf                 /* +23 L-64, returns to +28 */
    mov -8(%rbp), %r10        /* +28 L-64 */
    leave                     /* +32 */
    lea -8(%r10), %rsp        /* +33 */
    ret                       /* +37 h=8 */
    .size drap, . - drap

    .section .note.GNU-stack, "", @progbits
