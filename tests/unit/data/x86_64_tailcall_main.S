/* tests/unit/data/x86_64_tailcall_main.S -- the caller module of cross-module tail-call chains.
 *
 * Built into build/<config>/tests/data/x86_64_tailcall_main.elf; tests/unit/walker/test_tailcall.c
 * places it before x86_64_tailcall_lib.S, whose functions main_fn calls through
 * declarations only, as a program calls a shared library's functions through the PLT.
 * The code is never run: nops.  DWARF 5 call sites (DW_TAG_call_site, DW_AT_call_return_pc,
 * DW_AT_call_origin), none of them a tail call.  main_fn's call sites, by return pc:
 *
 *   main_fn + 0x10  tc_entry: a concrete DIE that only names its abstract origin, a
 *                   declaration in another unit's DIEs (the shape of an LTO unit: python3.11)
 *   main_fn + 0x20  tc_fork        main_fn + 0x30  tc_fork2       main_fn + 0x40  tc_missing
 *   main_fn + 0x50  tc_dup         main_fn + 0x60  tc_loc         main_fn + 0x70  tc_leaf
 *   main_fn + 0x80  tc_via         main_fn + 0x90  tc_split       main_fn + 0xa0  tc_named
 *   main_fn + 0xb0  DW_AT_call_target (an indirect call: no target without registers)
 *
 * tc_dup and tc_loc are also LOCAL functions of this file, with no call sites (a tail-call
 * search that picked them would find no chain); tc_missing is defined nowhere.
 */
#define FUNC(name, len) \
        .type name, @function; name: .fill len, 1, 0x90; .size name, len

        .text
        .globl  _start, main_fn
_start:
        .fill   0x10, 1, 0x90
.Lmain_start:
        FUNC(main_fn, 0x100)
        FUNC(tc_dup, 0x10)
        FUNC(tc_loc, 0x10)
.Lmain_end:

#define TAG_compile_unit      0x11
#define TAG_subprogram        0x2e
#define TAG_call_site         0x48
#define AT_name               0x03
#define AT_low_pc             0x11
#define AT_high_pc            0x12
#define AT_language           0x13
#define AT_producer           0x25
#define AT_abstract_origin    0x31
#define AT_declaration        0x3c
#define AT_external           0x3f
#define AT_call_return_pc     0x7d
#define AT_call_origin        0x7f
#define AT_call_target        0x83
#define FORM_addr             0x01
#define FORM_data1            0x0b
#define FORM_data8            0x07
#define FORM_string           0x08
#define FORM_ref4             0x13
#define FORM_exprloc          0x18
#define FORM_flag_present     0x19

#define A_CU      1
#define A_FUNC    2
#define A_DECL    3
#define A_ORIGIN  4
#define A_SITE    5
#define A_SITE_IND 6

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
        .uleb128 A_DECL, TAG_subprogram
        .byte   0
        .uleb128 AT_name, FORM_string, AT_declaration, FORM_flag_present
        .uleb128 AT_external, FORM_flag_present
        .byte   0, 0
        .uleb128 A_ORIGIN, TAG_subprogram
        .byte   0
        .uleb128 AT_abstract_origin, FORM_ref4
        .byte   0, 0
        .uleb128 A_SITE, TAG_call_site
        .byte   0
        .uleb128 AT_call_return_pc, FORM_addr, AT_call_origin, FORM_ref4
        .byte   0, 0
        .uleb128 A_SITE_IND, TAG_call_site
        .byte   0
        .uleb128 AT_call_return_pc, FORM_addr, AT_call_target, FORM_exprloc
        .byte   0, 0
        .byte   0

#define REF(l)  .4byte l - .Lcu
/* The call returning to main_fn + OFF, to the DIE at TARGET. */
#define SITE(off, target) \
        .uleb128 A_SITE; .quad main_fn + off; REF(target)
#define DECL(label, name) \
        label: .uleb128 A_DECL; .asciz name

        .section .debug_info,"",@progbits
.Lcu:
        .4byte  .Lcu_end - .Lcu - 4
        .2byte  5
        .byte   1                       /* DW_UT_compile */
        .byte   8
        .4byte  .Labbrev
        .uleb128 A_CU
        .asciz  "hand-written"
        .byte   0x1d                    /* DW_LANG_C11 */
        .asciz  "x86_64_tailcall_main.S"
        .quad   .Lmain_start
        .quad   .Lmain_end - .Lmain_start

        .uleb128 A_FUNC
        .asciz  "main_fn"
        .quad   main_fn, 0x100
        SITE(0x10, .Ld_entry_concrete)
        SITE(0x20, .Ld_fork)
        SITE(0x30, .Ld_fork2)
        SITE(0x40, .Ld_missing)
        SITE(0x50, .Ld_dup)
        SITE(0x60, .Ld_loc)
        SITE(0x70, .Ld_leaf)
        SITE(0x80, .Ld_via)
        SITE(0x90, .Ld_split)
        SITE(0xa0, .Ld_named)
        .uleb128 A_SITE_IND
        .quad   main_fn + 0xb0
        .uleb128 2
        .byte   0x70, 0                 /* DW_OP_breg0 0: the address in rax */
        .byte   0                       /* end of main_fn */
        .uleb128 A_FUNC
        .asciz  "tc_dup"
        .quad   tc_dup, 0x10
        .byte   0
        .uleb128 A_FUNC
        .asciz  "tc_loc"
        .quad   tc_loc, 0x10
        .byte   0

.Ld_entry_concrete:
        .uleb128 A_ORIGIN
        REF(.Ld_entry)
        DECL(.Ld_entry, "tc_entry")
        DECL(.Ld_fork, "tc_fork")
        DECL(.Ld_fork2, "tc_fork2")
        DECL(.Ld_missing, "tc_missing")
        DECL(.Ld_dup, "tc_dup")
        DECL(.Ld_loc, "tc_loc")
        DECL(.Ld_leaf, "tc_leaf")
        DECL(.Ld_via, "tc_via")
        DECL(.Ld_split, "tc_split")
        DECL(.Ld_named, "tc_named")
        .byte   0                       /* end of the unit */
.Lcu_end:
