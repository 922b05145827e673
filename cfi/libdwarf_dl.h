/* cfi/libdwarf_dl.h -- libdwarf for the CFI adapter (cfi/cfi.c), opened on first
 * use.
 *
 * libdwarf is not linked: cfi/cfi.c opens it with dlopen(RTLD_LOCAL)
 * (util/dl.h says why: elfutils' libdw, which reads the DIEs, exports 34
 * functions of the same names).  Each libdwarf call of the adapter goes
 * through a pointer of sw_libdwarf, filled by sw_libdwarf_load, which
 * sw_cfi_open and sw_cfi_open_mem call first.  Include this instead of
 * <libdwarf.h>.
 */
#ifndef RSPWALK_CFI_LIBDWARF_DL_H
#define RSPWALK_CFI_LIBDWARF_DL_H

#include <stdbool.h>

#include <dwarf.h>
#include <libdwarf.h>

struct sw_libdwarf_fns {
    __typeof__(&dwarf_dealloc_error) dealloc_error;
    __typeof__(&dwarf_elf_init_b) elf_init_b;
    __typeof__(&dwarf_errmsg) errmsg;
    __typeof__(&dwarf_fde_cie_list_dealloc) fde_cie_list_dealloc;
    __typeof__(&dwarf_finish) finish;
    __typeof__(&dwarf_get_address_size) get_address_size;
    __typeof__(&dwarf_get_cie_info_b) get_cie_info_b;
    __typeof__(&dwarf_get_cie_of_fde) get_cie_of_fde;
    __typeof__(&dwarf_get_fde_at_pc) get_fde_at_pc;
    __typeof__(&dwarf_get_fde_info_for_all_regs3) get_fde_info_for_all_regs3;
    __typeof__(&dwarf_get_fde_info_for_cfa_reg3_b) get_fde_info_for_cfa_reg3_b;
    __typeof__(&dwarf_get_fde_instr_bytes) get_fde_instr_bytes;
    __typeof__(&dwarf_get_fde_list) get_fde_list;
    __typeof__(&dwarf_get_fde_range) get_fde_range;
    __typeof__(&dwarf_get_fde_list_eh) get_fde_list_eh;
    __typeof__(&dwarf_get_locdesc_entry_d) get_locdesc_entry_d;
    __typeof__(&dwarf_get_location_op_value_c) get_location_op_value_c;
    __typeof__(&dwarf_loc_head_c_dealloc) loc_head_c_dealloc;
    __typeof__(&dwarf_loclist_from_expr_c) loclist_from_expr_c;
    __typeof__(&dwarf_set_frame_cfa_value) set_frame_cfa_value;
    __typeof__(&dwarf_set_frame_rule_initial_value) set_frame_rule_initial_value;
    __typeof__(&dwarf_set_frame_rule_table_size) set_frame_rule_table_size;
    __typeof__(&dwarf_set_frame_same_value) set_frame_same_value;
    __typeof__(&dwarf_set_frame_undefined_value) set_frame_undefined_value;
};
extern struct sw_libdwarf_fns sw_libdwarf;

/* Open libdwarf once; false with the reason (naming the library) in *WHY. */
bool sw_libdwarf_load(const char **why);

#define dwarf_dealloc_error                sw_libdwarf.dealloc_error
#define dwarf_elf_init_b                   sw_libdwarf.elf_init_b
#define dwarf_errmsg                       sw_libdwarf.errmsg
#define dwarf_fde_cie_list_dealloc         sw_libdwarf.fde_cie_list_dealloc
#define dwarf_finish                       sw_libdwarf.finish
#define dwarf_get_address_size             sw_libdwarf.get_address_size
#define dwarf_get_cie_info_b               sw_libdwarf.get_cie_info_b
#define dwarf_get_cie_of_fde               sw_libdwarf.get_cie_of_fde
#define dwarf_get_fde_at_pc                sw_libdwarf.get_fde_at_pc
#define dwarf_get_fde_info_for_all_regs3   sw_libdwarf.get_fde_info_for_all_regs3
#define dwarf_get_fde_info_for_cfa_reg3_b  sw_libdwarf.get_fde_info_for_cfa_reg3_b
#define dwarf_get_fde_instr_bytes          sw_libdwarf.get_fde_instr_bytes
#define dwarf_get_fde_range                sw_libdwarf.get_fde_range
#define dwarf_get_fde_list                 sw_libdwarf.get_fde_list
#define dwarf_get_fde_list_eh              sw_libdwarf.get_fde_list_eh
#define dwarf_get_locdesc_entry_d          sw_libdwarf.get_locdesc_entry_d
#define dwarf_get_location_op_value_c      sw_libdwarf.get_location_op_value_c
#define dwarf_loc_head_c_dealloc           sw_libdwarf.loc_head_c_dealloc
#define dwarf_loclist_from_expr_c          sw_libdwarf.loclist_from_expr_c
#define dwarf_set_frame_cfa_value          sw_libdwarf.set_frame_cfa_value
#define dwarf_set_frame_rule_initial_value sw_libdwarf.set_frame_rule_initial_value
#define dwarf_set_frame_rule_table_size    sw_libdwarf.set_frame_rule_table_size
#define dwarf_set_frame_same_value         sw_libdwarf.set_frame_same_value
#define dwarf_set_frame_undefined_value    sw_libdwarf.set_frame_undefined_value

#endif /* RSPWALK_CFI_LIBDWARF_DL_H */
