/* dwarf/libdw_dl.h -- elfutils' libdw for the walker/dwarf_*.c files, opened on first use.
 *
 * libdw is not linked: dwarf/die.c opens it with dlopen(RTLD_LOCAL)
 * (util/dl.h says why: libdwarf, the CFI adapter's, exports 34 functions of
 * the same names).  Each libdw call of those files goes through a pointer
 * of sw_libdw, filled by sw_libdw_load, which sw_dinfo_open calls first.
 * Include this instead of <elfutils/libdw.h>.
 */
#ifndef RSPWALK_DWARF_LIBDW_DL_H
#define RSPWALK_DWARF_LIBDW_DL_H

#include <stdbool.h>

#include <elfutils/libdw.h>

/* libdw's functions the DWARF readers use, with their own prototypes. */
struct sw_libdw_fns {
    __typeof__(&dwarf_attr) attr;
    __typeof__(&dwarf_begin_elf) begin_elf;
    __typeof__(&dwarf_child) child;
    __typeof__(&dwarf_diecu) diecu;
    __typeof__(&dwarf_dieoffset) dieoffset;
    __typeof__(&dwarf_end) end;
    __typeof__(&dwarf_errmsg) errmsg;
    __typeof__(&dwarf_errno) errno_;
    __typeof__(&dwarf_filesrc) filesrc;
    __typeof__(&dwarf_formaddr) formaddr;
    __typeof__(&dwarf_formblock) formblock;
    __typeof__(&dwarf_formflag) formflag;
    __typeof__(&dwarf_formref_die) formref_die;
    __typeof__(&dwarf_formsdata) formsdata;
    __typeof__(&dwarf_formstring) formstring;
    __typeof__(&dwarf_formudata) formudata;
    __typeof__(&dwarf_getarangeinfo) getarangeinfo;
    __typeof__(&dwarf_getaranges) getaranges;
    __typeof__(&dwarf_getlocations) getlocations;
    __typeof__(&dwarf_getsrc_die) getsrc_die;
    __typeof__(&dwarf_getsrcfiles) getsrcfiles;
    __typeof__(&dwarf_hasattr) hasattr;
    __typeof__(&dwarf_lineno) lineno;
    __typeof__(&dwarf_linesrc) linesrc;
    __typeof__(&dwarf_nextcu) nextcu;
    __typeof__(&dwarf_offdie) offdie;
    __typeof__(&dwarf_onearange) onearange;
    __typeof__(&dwarf_ranges) ranges;
    __typeof__(&dwarf_siblingof) siblingof;
    __typeof__(&dwarf_srclang) srclang;
    __typeof__(&dwarf_tag) tag;
    __typeof__(&dwarf_whatform) whatform;
};
extern struct sw_libdw_fns sw_libdw;

/* Open libdw once; false with the reason (naming the library) in *WHY. */
bool sw_libdw_load(const char **why);

#define dwarf_attr          sw_libdw.attr
#define dwarf_begin_elf     sw_libdw.begin_elf
#define dwarf_child         sw_libdw.child
#define dwarf_diecu         sw_libdw.diecu
#define dwarf_dieoffset     sw_libdw.dieoffset
#define dwarf_end           sw_libdw.end
#define dwarf_errmsg        sw_libdw.errmsg
#define dwarf_errno         sw_libdw.errno_
#define dwarf_filesrc       sw_libdw.filesrc
#define dwarf_formaddr      sw_libdw.formaddr
#define dwarf_formblock     sw_libdw.formblock
#define dwarf_formflag      sw_libdw.formflag
#define dwarf_formref_die   sw_libdw.formref_die
#define dwarf_formsdata     sw_libdw.formsdata
#define dwarf_formstring    sw_libdw.formstring
#define dwarf_formudata     sw_libdw.formudata
#define dwarf_getarangeinfo sw_libdw.getarangeinfo
#define dwarf_getaranges    sw_libdw.getaranges
#define dwarf_getlocations  sw_libdw.getlocations
#define dwarf_getsrc_die    sw_libdw.getsrc_die
#define dwarf_getsrcfiles   sw_libdw.getsrcfiles
#define dwarf_hasattr       sw_libdw.hasattr
#define dwarf_lineno        sw_libdw.lineno
#define dwarf_linesrc       sw_libdw.linesrc
#define dwarf_nextcu        sw_libdw.nextcu
#define dwarf_offdie        sw_libdw.offdie
#define dwarf_onearange     sw_libdw.onearange
#define dwarf_ranges        sw_libdw.ranges
#define dwarf_siblingof     sw_libdw.siblingof
#define dwarf_srclang       sw_libdw.srclang
#define dwarf_tag           sw_libdw.tag
#define dwarf_whatform      sw_libdw.whatform

#endif /* RSPWALK_DWARF_LIBDW_DL_H */
