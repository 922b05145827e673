/* tests/unit/data/x86_64_aliases.S -- symbol tables for gdb's choice of a name.
 *
 * Several names at one address, sized and sizeless, global, weak and local,
 * nested and in two code sections: tests/unit/elf/test_elf.c asks the ELF cache
 * for the name of addresses around each group and expects the name
 * gdb-multiarch 13.1's `info symbol` gives for the same linked file (its
 * minimal symbols: gdb/minsyms.c).  The bytes are never run; tests find
 * each group by one of its names.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    hlt
    .size _start, . - _start

/* Three names of one function: local, global, weak; the greatest by strcmp
 * wins whatever its binding ("nanosleep", not "__nanosleep"). */
    .p2align 6
__GI___nanosleep:
    .type __GI___nanosleep, @function
__nanosleep:
    .globl __nanosleep
    .type __nanosleep, @function
    .weak nanosleep
    .type nanosleep, @function
nanosleep:
    .fill 0x10, 1, 0x90
    .size __GI___nanosleep, 0x10
    .size __nanosleep, 0x10
    .size nanosleep, 0x10

/* A local name sorting last and a global one of the same size: gdb steps
 * back to the global (mst_text) one; of another size the local one stays. */
    .p2align 6
    .globl aa_global
    .type aa_global, @function
aa_global:
    .type zz_local, @function
zz_local:
    .fill 0x10, 1, 0x90
    .size aa_global, 0x10
    .size zz_local, 0x10
    .p2align 5
    .globl ab_global
    .type ab_global, @function
ab_global:
    .type zy_local, @function
zy_local:
    .fill 0x10, 1, 0x90
    .size ab_global, 0x8
    .size zy_local, 0x10

/* An ifunc resolver and a global function at one address and size: the
 * global one (mst_text over mst_text_gnu_ifunc). */
    .p2align 6
    .globl ac_plain
    .type ac_plain, @function
ac_plain:
    .globl zx_ifunc
    .type zx_ifunc, @gnu_indirect_function
zx_ifunc:
    .fill 0x10, 1, 0x90
    .size ac_plain, 0x10
    .size zx_ifunc, 0x10

/* Sized and sizeless at one address: the sized one while it covers, then
 * the sizeless one up to the next symbol of the section. */
    .p2align 6
    .globl sized_fn
    .type sized_fn, @function
sized_fn:
    .globl zz_sizeless
    .type zz_sizeless, @function
zz_sizeless:
    .fill 0x40, 1, 0x90
    .size sized_fn, 0x8

/* A sized function with a label inside it and a nested sized one: the label
 * never hides the function; past the nested one's end the outer one, which
 * reaches further; but past a nested one with the label just below it,
 * nothing (gdb compares one neighbour only). */
    .p2align 6
    .type outer_fn, @function
outer_fn:
    .fill 0x8, 1, 0x90
inner_label:
    .fill 0x8, 1, 0x90
    .type inner_fn, @function
inner_fn:
    .fill 0x8, 1, 0x90
    .size inner_fn, 0x8
    .fill 0x18, 1, 0x90
    .size outer_fn, 0x30
    .p2align 6
    .type outer2_fn, @function
outer2_fn:
    .fill 0x8, 1, 0x90
    .type inner2_fn, @function
inner2_fn:
    .fill 0x8, 1, 0x90
    .size inner2_fn, 0x8
    .fill 0x18, 1, 0x90
    .size outer2_fn, 0x28

/* Data in code: an object named like a function (gdb types a minimal
 * symbol by its section). */
    .p2align 6
    .type code_table, @object
code_table:
    .fill 0x10, 1, 0
    .size code_table, 0x10
/* A second code section: its first bytes have no symbol of their own, and
 * the sizeless symbols of .text do not reach into it. */
    .section .stubs, "ax", @progbits
    .p2align 6
    .fill 0x10, 1, 0x90
    .globl other_fn
    .type other_fn, @function
other_fn:
    .fill 0x10, 1, 0x90
    .size other_fn, 0x10
