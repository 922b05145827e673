/* tests/unit/data/x86_64_locals.S -- DWARF variables of every location kind, written by hand.
 *
 * Built into build/<config>/tests/data/x86_64_locals.elf (static, not PIE: the addresses are
 * the link-time ones) and read by tests/unit/walker/test_locals.c, which gives the frames registers
 * and memory in a fake process and checks each value.  The code is never run: nops, so that
 * each variable's location is known here rather than chosen by a compiler.  DWARF 4 with
 * .debug_loc location lists; x86-64 register numbers (rbx 3, rbp 6, r9 9, r12-r15 12-15).
 *
 *   lv_func [F, F+0x100), frame base DW_OP_call_frame_cfa
 *     a (int) reg3 | b (long int) fbreg -24            parameters
 *     c (char) breg6 -1 | p (int *) reg12
 *     pt (struct pt) reg13 piece 4, fbreg -32 piece 3, piece 1 (padding: no location)
 *     half (struct pt) reg13 piece 4, piece 4 (y and tag: no location)
 *     ll (long int) list [F, F+0x40) reg14, [F+0x60, F+0x100) lit7 stack_value
 *     sv (int) breg3 5 stack_value | ok (_Bool) lit1 stack_value
 *     iv (int) implicit_value 2a 00 00 00 | br (int) rbx < 0 ? 9 : 5, by bra and skip
 *     cv (int) const_value -77
 *     cf (float) const_value block 1.5f | gone (int) no location
 *     ev (int) entry_value(reg5) stack_value | cfav (long int) call_frame_cfa consts -40 plus
 *     g (int) addr lv_global | unk (int) reg9 | bad (int) fbreg -4096
 *     d (double) fbreg -48 | arr (int [3]) fbreg -64 | ext: a declaration, not a local
 *     block [F+0x80, F+0xc0): inner (int) fbreg -52
 *       lv_inl inlined [F+0x88, F+0xb0) (abstract: k, q params; sq, gone2, block {blk})
 *         k reg15 | block [F+0x88, F+0xb0): sq fbreg -72, block of blk [F+0x90, F+0xa0):
 *         blk lit3 stack_value   (q and gone2 are not in the inlined copy)
 *   lv_other [F+0x100, F+0x120), frame base DW_OP_call_frame_cfa: o (int) fbreg -20
 */
        .text
        .globl  _start
_start:
lv_func:
        .fill   0x100, 1, 0x90
lv_other:
        .fill   0x20, 1, 0x90
lv_end:

        .data
        .globl  lv_global
        .type   lv_global, @object
        .size   lv_global, 4
lv_global:
        .long   99

/* ---- abbreviations ---------------------------------------------------------------------- */
#define TAG_compile_unit       0x11
#define TAG_base_type          0x24
#define TAG_pointer_type       0x0f
#define TAG_structure_type     0x13
#define TAG_member             0x0d
#define TAG_subprogram         0x2e
#define TAG_formal_parameter   0x05
#define TAG_variable           0x34
#define TAG_lexical_block      0x0b
#define TAG_inlined_subroutine 0x1d
#define TAG_array_type         0x01
#define TAG_subrange_type      0x21
#define AT_location       0x02
#define AT_name           0x03
#define AT_byte_size      0x0b
#define AT_low_pc         0x11
#define AT_high_pc        0x12
#define AT_language       0x13
#define AT_const_value    0x1c
#define AT_inline         0x20
#define AT_producer       0x25
#define AT_upper_bound    0x2f
#define AT_abstract_origin 0x31
#define AT_data_member_location 0x38
#define AT_declaration    0x3c
#define AT_external       0x3f
#define AT_encoding       0x3e
#define AT_frame_base     0x40
#define AT_type           0x49
#define FORM_addr         0x01
#define FORM_block1       0x0a
#define FORM_data1        0x0b
#define FORM_data8        0x07
#define FORM_string       0x08
#define FORM_sdata        0x0d
#define FORM_ref4         0x13
#define FORM_sec_offset   0x17
#define FORM_exprloc      0x18
#define FORM_flag_present 0x19

#define A_CU        1
#define A_BASE      2
#define A_PTR       3
#define A_STRUCT    4
#define A_MEMBER    5
#define A_FUNC      6
#define A_PARAM     7
#define A_VAR       8
#define A_VAR_LIST  9
#define A_VAR_NONE  10
#define A_VAR_CONST 11
#define A_BLOCK     12
#define A_ABS_FUNC  13
#define A_ABS_PARAM 14
#define A_ABS_VAR   15
#define A_INLINED   16
#define A_CPARAM    17
#define A_CVAR      18
#define A_VAR_DECL  19
#define A_VAR_BLOCK 20
#define A_ARRAY     21
#define A_SUBRANGE  22
#define A_ABS_BLOCK 23
#define A_CBLOCK    24

        .section .debug_abbrev,"",@progbits
.Labbrev:
        .uleb128 A_CU, TAG_compile_unit
        .byte   1
        .uleb128 AT_producer, FORM_string, AT_language, FORM_data1, AT_name, FORM_string
        .uleb128 AT_low_pc, FORM_addr, AT_high_pc, FORM_data8
        .byte   0, 0
        .uleb128 A_BASE, TAG_base_type
        .byte   0
        .uleb128 AT_name, FORM_string, AT_byte_size, FORM_data1, AT_encoding, FORM_data1
        .byte   0, 0
        .uleb128 A_PTR, TAG_pointer_type
        .byte   0
        .uleb128 AT_byte_size, FORM_data1, AT_type, FORM_ref4
        .byte   0, 0
        .uleb128 A_STRUCT, TAG_structure_type
        .byte   1
        .uleb128 AT_name, FORM_string, AT_byte_size, FORM_data1
        .byte   0, 0
        .uleb128 A_MEMBER, TAG_member
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4, AT_data_member_location, FORM_data1
        .byte   0, 0
        .uleb128 A_FUNC, TAG_subprogram
        .byte   1
        .uleb128 AT_name, FORM_string, AT_low_pc, FORM_addr, AT_high_pc, FORM_data8
        .uleb128 AT_frame_base, FORM_exprloc
        .byte   0, 0
        .uleb128 A_PARAM, TAG_formal_parameter
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4, AT_location, FORM_exprloc
        .byte   0, 0
        .uleb128 A_VAR, TAG_variable
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4, AT_location, FORM_exprloc
        .byte   0, 0
        .uleb128 A_VAR_LIST, TAG_variable
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4, AT_location, FORM_sec_offset
        .byte   0, 0
        .uleb128 A_VAR_NONE, TAG_variable
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4
        .byte   0, 0
        .uleb128 A_VAR_CONST, TAG_variable
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4, AT_const_value, FORM_sdata
        .byte   0, 0
        .uleb128 A_BLOCK, TAG_lexical_block
        .byte   1
        .uleb128 AT_low_pc, FORM_addr, AT_high_pc, FORM_data8
        .byte   0, 0
        .uleb128 A_ABS_FUNC, TAG_subprogram
        .byte   1
        .uleb128 AT_name, FORM_string, AT_inline, FORM_data1
        .byte   0, 0
        .uleb128 A_ABS_PARAM, TAG_formal_parameter
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4
        .byte   0, 0
        .uleb128 A_ABS_VAR, TAG_variable
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4
        .byte   0, 0
        .uleb128 A_INLINED, TAG_inlined_subroutine
        .byte   1
        .uleb128 AT_abstract_origin, FORM_ref4, AT_low_pc, FORM_addr, AT_high_pc, FORM_data8
        .byte   0, 0
        .uleb128 A_CPARAM, TAG_formal_parameter
        .byte   0
        .uleb128 AT_abstract_origin, FORM_ref4, AT_location, FORM_exprloc
        .byte   0, 0
        .uleb128 A_CVAR, TAG_variable
        .byte   0
        .uleb128 AT_abstract_origin, FORM_ref4, AT_location, FORM_exprloc
        .byte   0, 0
        .uleb128 A_VAR_DECL, TAG_variable
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4
        .uleb128 AT_declaration, FORM_flag_present, AT_external, FORM_flag_present
        .byte   0, 0
        .uleb128 A_VAR_BLOCK, TAG_variable
        .byte   0
        .uleb128 AT_name, FORM_string, AT_type, FORM_ref4, AT_const_value, FORM_block1
        .byte   0, 0
        .uleb128 A_ARRAY, TAG_array_type
        .byte   1
        .uleb128 AT_type, FORM_ref4
        .byte   0, 0
        .uleb128 A_SUBRANGE, TAG_subrange_type
        .byte   0
        .uleb128 AT_upper_bound, FORM_data1
        .byte   0, 0
        .uleb128 A_ABS_BLOCK, TAG_lexical_block
        .byte   1
        .byte   0, 0
        .uleb128 A_CBLOCK, TAG_lexical_block
        .byte   1
        .uleb128 AT_abstract_origin, FORM_ref4, AT_low_pc, FORM_addr, AT_high_pc, FORM_data8
        .byte   0, 0
        .byte   0

/* ---- location lists (offsets from the unit's low pc, F) ---------------------------------- */
        .section .debug_loc,"",@progbits
.Lloc_ll:
        .quad   0, 0x40
        .2byte  1
        .byte   0x5e                    /* DW_OP_reg14 */
        .quad   0x60, 0x100
        .2byte  2
        .byte   0x37, 0x9f              /* DW_OP_lit7 DW_OP_stack_value */
        .quad   0, 0

/* ---- the unit ----------------------------------------------------------------------------- */
#define REF(l)  .4byte l - .Lcu
        .section .debug_info,"",@progbits
.Lcu:
        .4byte  .Lcu_end - .Lcu - 4
        .2byte  4
        .4byte  .Labbrev
        .byte   8
        .uleb128 A_CU
        .asciz  "hand-written"
        .byte   0x0c                    /* DW_LANG_C99 */
        .asciz  "x86_64_locals.S"
        .quad   lv_func
        .quad   lv_end - lv_func

.Lt_int:
        .uleb128 A_BASE
        .asciz  "int"
        .byte   4, 5                    /* DW_ATE_signed */
.Lt_long:
        .uleb128 A_BASE
        .asciz  "long int"
        .byte   8, 5
.Lt_short:
        .uleb128 A_BASE
        .asciz  "short int"
        .byte   2, 5
.Lt_char:
        .uleb128 A_BASE
        .asciz  "char"
        .byte   1, 6                    /* DW_ATE_signed_char */
.Lt_bool:
        .uleb128 A_BASE
        .asciz  "_Bool"
        .byte   1, 2                    /* DW_ATE_boolean */
.Lt_float:
        .uleb128 A_BASE
        .asciz  "float"
        .byte   4, 4                    /* DW_ATE_float */
.Lt_double:
        .uleb128 A_BASE
        .asciz  "double"
        .byte   8, 4
.Lt_pint:
        .uleb128 A_PTR
        .byte   8
        REF(.Lt_int)
.Lt_pt:
        .uleb128 A_STRUCT
        .asciz  "pt"
        .byte   8
        .uleb128 A_MEMBER
        .asciz  "x"
        REF(.Lt_int)
        .byte   0
        .uleb128 A_MEMBER
        .asciz  "y"
        REF(.Lt_short)
        .byte   4
        .uleb128 A_MEMBER
        .asciz  "tag"
        REF(.Lt_char)
        .byte   6
        .byte   0
.Lt_arr:
        .uleb128 A_ARRAY
        REF(.Lt_int)
        .uleb128 A_SUBRANGE
        .byte   2
        .byte   0

/* The abstract instance of lv_inl. */
.Labs_inl:
        .uleb128 A_ABS_FUNC
        .asciz  "lv_inl"
        .byte   3                       /* DW_INL_declared_inlined */
.Labs_k:
        .uleb128 A_ABS_PARAM
        .asciz  "k"
        REF(.Lt_int)
.Labs_q:
        .uleb128 A_ABS_PARAM
        .asciz  "q"
        REF(.Lt_int)
.Labs_sq:
        .uleb128 A_ABS_VAR
        .asciz  "sq"
        REF(.Lt_int)
.Labs_gone2:
        .uleb128 A_ABS_VAR
        .asciz  "gone2"
        REF(.Lt_int)
.Labs_block:
        .uleb128 A_ABS_BLOCK
.Labs_blk:
        .uleb128 A_ABS_VAR
        .asciz  "blk"
        REF(.Lt_int)
        .byte   0
        .byte   0

        .uleb128 A_FUNC
        .asciz  "lv_func"
        .quad   lv_func
        .quad   0x100
        .uleb128 1
        .byte   0x9c                    /* DW_OP_call_frame_cfa */

        .uleb128 A_PARAM
        .asciz  "a"
        REF(.Lt_int)
        .uleb128 1
        .byte   0x53                    /* DW_OP_reg3 */
        .uleb128 A_PARAM
        .asciz  "b"
        REF(.Lt_long)
        .uleb128 2
        .byte   0x91                    /* DW_OP_fbreg -24 */
        .sleb128 -24
        .uleb128 A_VAR
        .asciz  "c"
        REF(.Lt_char)
        .uleb128 2
        .byte   0x76                    /* DW_OP_breg6 -1 */
        .sleb128 -1
        .uleb128 A_VAR
        .asciz  "p"
        REF(.Lt_pint)
        .uleb128 1
        .byte   0x5c                    /* DW_OP_reg12 */
        .uleb128 A_VAR
        .asciz  "pt"
        REF(.Lt_pt)
        .uleb128 9
        .byte   0x5d, 0x93, 4           /* DW_OP_reg13 DW_OP_piece 4 */
        .byte   0x91                    /* DW_OP_fbreg -32 DW_OP_piece 3 */
        .sleb128 -32
        .byte   0x93, 3
        .byte   0x93, 1                 /* DW_OP_piece 1: the padding, no location */
        .uleb128 A_VAR
        .asciz  "half"
        REF(.Lt_pt)
        .uleb128 5
        .byte   0x5d, 0x93, 4, 0x93, 4  /* DW_OP_reg13 DW_OP_piece 4 DW_OP_piece 4 */
        .uleb128 A_VAR_LIST
        .asciz  "ll"
        REF(.Lt_long)
        .4byte  .Lloc_ll
        .uleb128 A_VAR
        .asciz  "sv"
        REF(.Lt_int)
        .uleb128 3
        .byte   0x73, 5, 0x9f           /* DW_OP_breg3 5 DW_OP_stack_value */
        .uleb128 A_VAR
        .asciz  "ok"
        REF(.Lt_bool)
        .uleb128 2
        .byte   0x31, 0x9f              /* DW_OP_lit1 DW_OP_stack_value */
        .uleb128 A_VAR
        .asciz  "iv"
        REF(.Lt_int)
        .uleb128 6
        .byte   0x9e, 4, 0x2a, 0, 0, 0  /* DW_OP_implicit_value 4: 42 */
        .uleb128 A_VAR
        .asciz  "br"
        REF(.Lt_int)
        .uleb128 13
        .byte   0x73, 0, 0x30, 0x2d     /* DW_OP_breg3 0 DW_OP_lit0 DW_OP_lt */
        .byte   0x28, 4, 0              /* DW_OP_bra +4: to lit9 when rbx < 0 */
        .byte   0x35, 0x2f, 1, 0        /* DW_OP_lit5 DW_OP_skip +1: to stack_value */
        .byte   0x39, 0x9f              /* DW_OP_lit9 DW_OP_stack_value */
        .uleb128 A_VAR_CONST
        .asciz  "cv"
        REF(.Lt_int)
        .sleb128 -77
        .uleb128 A_VAR_BLOCK
        .asciz  "cf"
        REF(.Lt_float)
        .byte   4, 0x00, 0x00, 0xc0, 0x3f /* 1.5f */
        .uleb128 A_VAR_NONE
        .asciz  "gone"
        REF(.Lt_int)
        .uleb128 A_VAR
        .asciz  "ev"
        REF(.Lt_int)
        .uleb128 4
        .byte   0xa3, 1, 0x55, 0x9f     /* DW_OP_entry_value(DW_OP_reg5) DW_OP_stack_value */
        .uleb128 A_VAR
        .asciz  "cfav"
        REF(.Lt_long)
        .uleb128 4
        .byte   0x9c, 0x11              /* DW_OP_call_frame_cfa DW_OP_consts -40 DW_OP_plus */
        .sleb128 -40
        .byte   0x22
        .uleb128 A_VAR
        .asciz  "g"
        REF(.Lt_int)
        .uleb128 9
        .byte   0x03                    /* DW_OP_addr lv_global */
        .quad   lv_global
        .uleb128 A_VAR
        .asciz  "unk"
        REF(.Lt_int)
        .uleb128 1
        .byte   0x59                    /* DW_OP_reg9 */
        .uleb128 A_VAR
        .asciz  "bad"
        REF(.Lt_int)
        .uleb128 3
        .byte   0x91                    /* DW_OP_fbreg -4096 */
        .sleb128 -4096
        .uleb128 A_VAR
        .asciz  "d"
        REF(.Lt_double)
        .uleb128 2
        .byte   0x91
        .sleb128 -48
        .uleb128 A_VAR
        .asciz  "arr"
        REF(.Lt_arr)
        .uleb128 2
        .byte   0x91
        .sleb128 -64
        .uleb128 A_VAR_DECL
        .asciz  "ext"
        REF(.Lt_int)

        .uleb128 A_BLOCK
        .quad   lv_func + 0x80
        .quad   0x40
        .uleb128 A_VAR
        .asciz  "inner"
        REF(.Lt_int)
        .uleb128 2
        .byte   0x91
        .sleb128 -52

        .uleb128 A_INLINED
        REF(.Labs_inl)
        .quad   lv_func + 0x88
        .quad   0x28
        .uleb128 A_CPARAM
        REF(.Labs_k)
        .uleb128 1
        .byte   0x5f                    /* DW_OP_reg15 */
        /* GCC's shape: the locals in a block of the inlined copy with no origin. */
        .uleb128 A_BLOCK
        .quad   lv_func + 0x88
        .quad   0x28
        .uleb128 A_CVAR
        REF(.Labs_sq)
        .uleb128 3
        .byte   0x91
        .sleb128 -72
        .uleb128 A_CBLOCK
        REF(.Labs_block)
        .quad   lv_func + 0x90
        .quad   0x10
        .uleb128 A_CVAR
        REF(.Labs_blk)
        .uleb128 2
        .byte   0x33, 0x9f              /* DW_OP_lit3 DW_OP_stack_value */
        .byte   0                       /* end of blk's block */
        .byte   0                       /* end of the block with no origin */
        .byte   0                       /* end of lv_inl */
        .byte   0                       /* end of the block of inner */
        .byte   0                       /* end of lv_func */

        .uleb128 A_FUNC
        .asciz  "lv_other"
        .quad   lv_other
        .quad   0x20
        .uleb128 1
        .byte   0x9c
        .uleb128 A_VAR
        .asciz  "o"
        REF(.Lt_int)
        .uleb128 2
        .byte   0x91
        .sleb128 -20
        .byte   0                       /* end of lv_other */
        .byte   0                       /* end of the unit */
.Lcu_end:
