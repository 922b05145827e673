/* tests/unit/data/x86_64_tailcall_lib.S -- the callee module of a cross-module tail-call chain.
 *
 * Built into build/<config>/tests/data/x86_64_tailcall_lib.elf and placed by
 * tests/unit/walker/test_tailcall.c at a bias of its own, next to x86_64_tailcall_main.S, whose
 * call sites name functions of this file only by declarations (a call through the PLT).
 * The code is never run: nops, so the call sites sit where this file says.  DWARF 4 with
 * GNU's call-site forms (DW_TAG_GNU_call_site, DW_AT_low_pc as the return pc,
 * DW_AT_GNU_tail_call, DW_AT_abstract_origin as the target); every site is a tail call
 * whose return pc is its function's start + 8.  Symbols: GLOBAL unless marked LOCAL.
 *
 *   tc_split_cold  the cold part of tc_split (listed second in its DW_AT_ranges)
 *   tc_entry       -> tc_mid                   tc_mid (LOCAL) -> tc_leaf
 *   tc_leaf        no calls
 *   tc_fork        -> tc_mid (+8), tc_alt (+0x18)        tc_alt (LOCAL) -> tc_leaf
 *   tc_fork2       -> tc_mid (+8), tc_mid (+0x18)
 *   tc_dup         -> tc_leaf (x86_64_tailcall_main.S has a LOCAL tc_dup too)
 *   tc_loc (LOCAL) -> tc_leaf (x86_64_tailcall_main.S has a LOCAL tc_loc too)
 *   tc_via         -> tc_split, a definition with DW_AT_ranges (hot first, then cold)
 *   tc_named       -> "tc_leaf", a declaration: resolved by name
 *   tc_split       hot part -> tc_leaf
 */
#define FUNC(name, len) \
        .type name, @function; name: .fill len, 1, 0x90; .size name, len

        .text
        .globl  _start
_start:
        .fill   0x10, 1, 0x90
.Llib_start:
        FUNC(tc_split_cold, 0x10)
        .globl  tc_entry, tc_leaf, tc_fork, tc_fork2, tc_dup, tc_via, tc_named, tc_split
        FUNC(tc_entry, 0x10)
        FUNC(tc_mid, 0x10)
        FUNC(tc_leaf, 0x10)
        FUNC(tc_fork, 0x20)
        FUNC(tc_alt, 0x10)
        FUNC(tc_fork2, 0x20)
        FUNC(tc_dup, 0x10)
        FUNC(tc_loc, 0x10)
        FUNC(tc_via, 0x10)
        FUNC(tc_named, 0x10)
        FUNC(tc_split, 0x10)
.Llib_end:

#define TAG_compile_unit      0x11
#define TAG_subprogram        0x2e
#define TAG_GNU_call_site     0x4109
#define AT_name               0x03
#define AT_low_pc             0x11
#define AT_high_pc            0x12
#define AT_language           0x13
#define AT_producer           0x25
#define AT_abstract_origin    0x31
#define AT_declaration        0x3c
#define AT_external           0x3f
#define AT_ranges             0x55
#define AT_GNU_tail_call      0x2115
#define FORM_addr             0x01
#define FORM_data1            0x0b
#define FORM_data8            0x07
#define FORM_string           0x08
#define FORM_ref4             0x13
#define FORM_sec_offset       0x17
#define FORM_flag_present     0x19

#define A_CU      1
#define A_FUNC    2
#define A_FUNC_RG 3
#define A_TAIL    4
#define A_DECL    5

        .section .debug_abbrev,"",@progbits
.Labbrev:
        .uleb128 A_CU, TAG_compile_unit
        .byte   1
        .uleb128 AT_producer, FORM_string, AT_language, FORM_data1, AT_name, FORM_string
        .uleb128 AT_low_pc, FORM_addr, AT_high_pc, FORM_data8
        .byte   0, 0
        .uleb128 A_FUNC, TAG_subprogram
        .byte   1
        .uleb128 AT_name, FORM_string, AT_low_pc, FORM_addr, AT_high_pc, FORM_data8
        .byte   0, 0
        .uleb128 A_FUNC_RG, TAG_subprogram
        .byte   1
        .uleb128 AT_name, FORM_string, AT_ranges, FORM_sec_offset
        .byte   0, 0
        .uleb128 A_TAIL, TAG_GNU_call_site
        .byte   0
        .uleb128 AT_low_pc, FORM_addr, AT_GNU_tail_call, FORM_flag_present
        .uleb128 AT_abstract_origin, FORM_ref4
        .byte   0, 0
        .uleb128 A_DECL, TAG_subprogram
        .byte   0
        .uleb128 AT_name, FORM_string, AT_declaration, FORM_flag_present
        .uleb128 AT_external, FORM_flag_present
        .byte   0, 0
        .byte   0

/* tc_split's ranges, from the unit's low pc: the hot part first, as GCC lists them. */
        .section .debug_ranges,"",@progbits
.Lranges_split:
        .quad   tc_split - .Llib_start, tc_split + 0x10 - .Llib_start
        .quad   tc_split_cold - .Llib_start, tc_split_cold + 0x10 - .Llib_start
        .quad   0, 0

#define REF(l)  .4byte l - .Lcu
/* A function of SIZE bytes at NAME with no call sites. */
#define DEF(name, len) \
        .uleb128 A_FUNC; .asciz #name; .quad name; .quad len; .byte 0
/* The tail call at NAME + OFF to the DIE at TARGET. */
#define TAIL(name, off, target) \
        .uleb128 A_TAIL; .quad name + off; REF(target)

        .section .debug_info,"",@progbits
.Lcu:
        .4byte  .Lcu_end - .Lcu - 4
        .2byte  4
        .4byte  .Labbrev
        .byte   8
        .uleb128 A_CU
        .asciz  "hand-written"
        .byte   0x0c                    /* DW_LANG_C99 */
        .asciz  "x86_64_tailcall_lib.S"
        .quad   .Llib_start
        .quad   .Llib_end - .Llib_start

.Ld_entry:
        .uleb128 A_FUNC
        .asciz  "tc_entry"
        .quad   tc_entry, 0x10
        TAIL(tc_entry, 8, .Ld_mid)
        .byte   0
.Ld_mid:
        .uleb128 A_FUNC
        .asciz  "tc_mid"
        .quad   tc_mid, 0x10
        TAIL(tc_mid, 8, .Ld_leaf)
        .byte   0
.Ld_leaf:
        DEF(tc_leaf, 0x10)
        .uleb128 A_FUNC
        .asciz  "tc_fork"
        .quad   tc_fork, 0x20
        TAIL(tc_fork, 8, .Ld_mid)
        TAIL(tc_fork, 0x18, .Ld_alt)
        .byte   0
.Ld_alt:
        .uleb128 A_FUNC
        .asciz  "tc_alt"
        .quad   tc_alt, 0x10
        TAIL(tc_alt, 8, .Ld_leaf)
        .byte   0
        .uleb128 A_FUNC
        .asciz  "tc_fork2"
        .quad   tc_fork2, 0x20
        TAIL(tc_fork2, 8, .Ld_mid)
        TAIL(tc_fork2, 0x18, .Ld_mid)
        .byte   0
        .uleb128 A_FUNC
        .asciz  "tc_dup"
        .quad   tc_dup, 0x10
        TAIL(tc_dup, 8, .Ld_leaf)
        .byte   0
        .uleb128 A_FUNC
        .asciz  "tc_loc"
        .quad   tc_loc, 0x10
        TAIL(tc_loc, 8, .Ld_leaf)
        .byte   0
        .uleb128 A_FUNC
        .asciz  "tc_via"
        .quad   tc_via, 0x10
        TAIL(tc_via, 8, .Ld_split)
        .byte   0
        .uleb128 A_FUNC
        .asciz  "tc_named"
        .quad   tc_named, 0x10
        TAIL(tc_named, 8, .Ld_leaf_decl)
        .byte   0
.Ld_split:
        .uleb128 A_FUNC_RG
        .asciz  "tc_split"
        .4byte  .Lranges_split
        TAIL(tc_split, 8, .Ld_leaf)
        .byte   0
.Ld_leaf_decl:
        .uleb128 A_DECL
        .asciz  "tc_leaf"
        .byte   0                       /* end of the unit */
.Lcu_end:
