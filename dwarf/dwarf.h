/* dwarf/dwarf.h -- inlined subroutines, tail-call sites and variables from .debug_info.
 *
 * What gdb reads to show frames that are not on the machine stack: the
 * DW_TAG_inlined_subroutine scopes covering an address, and the
 * DW_TAG_call_site (DW_TAG_GNU_call_site) entries of tail calls; and the
 * variables of a function.  Implemented by dwarf/dwarf.c (handle, units),
 * dwarf/scopes.c, dwarf/chains.c, dwarf/types.c and dwarf/vars.c, which share
 * dwarf/dwarf_internal.h and are, with cfi/cfi.c (CFI), the
 * files that include <libdwarf.h>.  Addresses are link-time; nothing here reads
 * the target.
 */
#ifndef RSPWALK_DWARF_H
#define RSPWALK_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/types.h"

struct sw_dinfo;
struct sw_elf;

/* One inlined subroutine. */
struct sw_dinfo_name {
    /* Borrowed, valid until sw_dinfo_close: DW_AT_linkage_name, else DW_AT_name,
     * found through DW_AT_abstract_origin / DW_AT_specification (what gdb
     * prints); NULL when the DWARF names none (gdb prints "??"). */
    const char *name;
    sw_addr entry; /* DW_AT_entry_pc, else the first address of its first range */
    uint64_t die;  /* the DIE's offset in .debug_info: which function or inlined copy */
};

/* One tail-call frame: an intermediate function that jumped to the next. */
struct sw_dinfo_tail {
    /* Borrowed, valid until sw_dinfo_close: the innermost function, inlined or
     * not, covering PC - 1 (how gdb 13 names a tail-call frame); may be NULL. */
    const char *name;
    sw_addr pc; /* the tail call's return address: the address after the jump */
};

/* Open the debug information of the ELF file PATH, read from its separate
 * debug file DEBUG_PATH (may be NULL) when that one has .debug_info, else from
 * PATH itself.  Nothing is parsed until the first query.  ELF (optional,
 * borrowed: must outlive the sw_dinfo) resolves call targets that the DWARF
 * only declares, by symbol name, as gdb does with minimal symbols; without it
 * such targets end the tail-call search.  A file without .debug_info opens
 * fine and answers every query with no frames.  Returns 0, SW_ENOENT (no such
 * PATH), SW_EBADELF (PATH is not ELF, or libdwarf rejects it), SW_EIO,
 * SW_ENOMEM; the message in ERR names the file.  *OUT: sw_dinfo_close. */
int sw_dinfo_open(const char *path, const char *debug_path, struct sw_elf *elf,
                  struct sw_dinfo **out, struct sw_errbuf *err);

/* Close D and free every cached compilation unit.  NULL is a no-op. */
void sw_dinfo_close(struct sw_dinfo *d);

/* Whether D found .debug_info at all (false: every query gives nothing). */
bool sw_dinfo_has_info(const struct sw_dinfo *d);

/* Read now what D's first query reads whatever its address: the table from
 * address to unit.  For the library state, while a round trip is under way.
 * Returns 0 or SW_ENOMEM; NULL is a no-op. */
int sw_dinfo_warm(struct sw_dinfo *d);

/* Open libdw now (sw_dinfo_open would, on first use); false with the reason
 * in *WHY. */
bool sw_dinfo_load(const char **why);

/* The file the DWARF is read from (PATH or DEBUG_PATH), or NULL.  Borrowed. */
const char *sw_dinfo_source(const struct sw_dinfo *d);

/* The message of the last failure on D; valid until the next call on D. */
const char *sw_dinfo_errmsg(const struct sw_dinfo *d);

/* The inlined subroutines whose ranges cover VADDR, innermost first: up to
 * MAX in OUT, their number in *N (0 when VADDR is in no inlined code or has
 * no debug information; the outermost ones are dropped beyond MAX).  Returns
 * 0, SW_ENOMEM, or SW_EBADELF when the compilation unit's DWARF is malformed
 * (message on D; the unit then stays empty). */
int sw_dinfo_inline_chain(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_name *out, size_t max,
                          size_t *n);

/* The entry of the concrete function (DW_TAG_subprogram) covering VADDR, as
 * gdb computes it (its low pc, or the start of its first DW_AT_ranges entry).
 * Returns 0, SW_ENOENT (no DWARF function covers VADDR), SW_ENOMEM, SW_EBADELF. */
int sw_dinfo_function_entry(struct sw_dinfo *d, sw_addr vaddr, sw_addr *entry);

/* The concrete function (DW_TAG_subprogram) covering VADDR: its name as gdb
 * prints it (one name for the hot and cold parts GCC splits a function into:
 * "fib", where the ELF symbol of the cold part is "fib.cold") and its entry.
 * Returns 0, SW_ENOENT, SW_ENOMEM, SW_EBADELF. */
int sw_dinfo_function(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_name *out);

/* The tail-call frames gdb shows between a function entered at CALLEE_ENTRY
 * and its caller, whose return address is CALLER_RA: gdb's
 * call_site_find_chain.  The caller's call site whose return pc is CALLER_RA
 * names a target; when that is not CALLEE_ENTRY, the target's tail-call sites
 * are searched, depth first, for chains that reach CALLEE_ENTRY, and only the
 * part that every chain shares is kept.  Up to MAX frames in OUT, innermost
 * (next to the callee) first, their number in *N.  *N is 0, without error,
 * when there is no such call site, the call is direct, the chains share
 * nothing, or a target on the way cannot be resolved (a DW_AT_call_target
 * expression, a name ELF does not define, an address that starts no DWARF
 * function, a target with DW_AT_ranges that is not the callee): cases where
 * gdb 13 gives up too.  Both addresses are in this file:
 * calls between files are not followed (sw_dinfo_tailcall_chain_world does).
 * Returns 0, SW_ENOMEM, SW_EBADELF. */
int sw_dinfo_tailcall_chain(struct sw_dinfo *d, sw_addr caller_ra, sw_addr callee_entry,
                            struct sw_dinfo_tail *out, size_t max, size_t *n);

/* The files a tail-call search may enter, as gdb searches every objfile:
 * walker/virtual.c answers over the target's modules. */
struct sw_dinfo_world {
    void *arg;
    /* The file holding runtime address ADDR: its DWARF in *D (NULL when no
     * module covers ADDR or it has none) and its load bias (runtime minus
     * link-time address) in *BIAS.  Returns 0 or SW_ENOMEM. */
    int (*file_at)(void *arg, sw_addr addr, struct sw_dinfo **d, sw_addr *bias);
    /* The runtime address of the symbol NAME as gdb's lookup_minimal_symbol
     * picks it among every file.  Returns 0, SW_ENOSYM or SW_ENOMEM. */
    int (*symbol)(void *arg, const char *name, sw_addr *addr);
};

/* sw_dinfo_tailcall_chain over the files of W, in runtime addresses: the
 * caller's call site is in the file holding CALLER_RA - 1, a target named by
 * a declaration is W's symbol (a call through the PLT into another module
 * reaches that module's function), and each target's tail-call sites are
 * those of the file holding it.  OUT's pcs are runtime addresses, names
 * borrowed from the file of each call site.  Returns 0, SW_ENOMEM,
 * SW_EBADELF (the caller's unit is malformed), with the message in ERR. */
int sw_dinfo_tailcall_chain_world(const struct sw_dinfo_world *w, sw_addr caller_ra,
                                  sw_addr callee_entry, struct sw_dinfo_tail *out, size_t max,
                                  size_t *n, struct sw_errbuf *err);

/* ---- source lines (dwarf/lines.c) ------------------------------------------------------ */

/* The source file and line of the line-table row covering link-time address
 * VADDR, as gdb's find_pc_line finds them, and the unit's DW_AT_comp_dir in
 * *DIR (NULL when it has none), where a relative *FILE is.  Both borrowed,
 * valid until sw_dinfo_close.  Returns 0, or SW_ENOENT (no debug
 * information or no row covers VADDR). */
int sw_dinfo_line(struct sw_dinfo *d, sw_addr vaddr, const char **file, const char **dir,
                  unsigned *line);

/* The call site of the inlined subroutine whose DIE is at offset DIE (a
 * struct sw_dinfo_name's die): its DW_AT_call_file and DW_AT_call_line, the
 * line gdb shows for the frame of the function it was inlined into, with
 * *DIR as sw_dinfo_line's.  Borrowed, valid until sw_dinfo_close.  Returns
 * 0 or SW_ENOENT. */
int sw_dinfo_call_line(struct sw_dinfo *d, uint64_t die, const char **file, const char **dir,
                       unsigned *line);

/* ---- local variables (dwarf/vars.c; evaluated by walker/locals.c) ---------------------- */

/* How a value of a type is shown (walker/locals.c formats it). */
enum sw_dinfo_tkind {
    SW_DT_OTHER = 0, /* shown as raw bytes */
    SW_DT_SIGNED,    /* DW_ATE_signed */
    SW_DT_UNSIGNED,  /* DW_ATE_unsigned */
    SW_DT_SCHAR,     /* DW_ATE_signed_char */
    SW_DT_UCHAR,     /* DW_ATE_unsigned_char */
    SW_DT_BOOL,      /* DW_ATE_boolean */
    SW_DT_FLOAT,     /* DW_ATE_float */
    SW_DT_POINTER,   /* DW_TAG_pointer_type, reference types */
    SW_DT_ENUM,      /* DW_TAG_enumeration_type: shown as its integer */
    SW_DT_STRUCT,    /* structures and unions: members one level deep */
    SW_DT_ARRAY,     /* one-dimensional array: elements of TARGET */
};

struct sw_dinfo_member;
struct di_blk;
struct sw_expr_op;

/* A type with typedefs and qualifiers resolved to what decides its shape;
 * NAME is what gdb's ptype prints ("int", "char *", "struct pt", "int [4]"). */
struct sw_dinfo_type {
    enum sw_dinfo_tkind kind;
    const char *name;
    uint64_t size;                      /* bytes; 0 when unknown */
    const struct sw_dinfo_type *target; /* array elements; NULL otherwise */
    uint64_t count;                     /* array elements; 0 when unknown */
    size_t nmembers;
    const struct sw_dinfo_member *members; /* SW_DT_STRUCT */
};

struct sw_dinfo_member {
    const char *name; /* NULL for an anonymous member */
    uint64_t offset;  /* DW_AT_data_member_location, bytes */
    const struct sw_dinfo_type *type;
};

/* One entry of a location: OPS hold where the value is for link-time
 * addresses LO <= pc < HI (a plain expression: 0 and UINT64_MAX), libdw's
 * decoding copied as it is, for expr/expr.h's evaluator.  Borrowed, valid
 * until sw_dinfo_func_free; the block of a DW_OP_implicit_value is in the
 * mapped file, valid until sw_dinfo_close. */
struct sw_dinfo_loc {
    sw_addr lo, hi;
    const struct sw_expr_op *ops;
    size_t nops;
};

/* DW_AT_const_value (DWARF 5 section 4.1), for a variable without a
 * location: a block of LEN bytes at DATA in the target's order (in the
 * mapped file: valid until sw_dinfo_close), or, when DATA is NULL, the
 * number NUMBER, which fills the type's size (a type of at most 8 bytes). */
struct sw_dinfo_const {
    const uint8_t *data;
    size_t len;
    int64_t number;
};

struct sw_dinfo_var {
    const char *name;
    const struct sw_dinfo_type *type; /* never NULL */
    bool param;                       /* DW_TAG_formal_parameter */
    size_t nlocs;                     /* 0: no location (optimized out, or CONST) */
    const struct sw_dinfo_loc *locs;
    const struct sw_dinfo_const *cval; /* NULL: none */
};

/* The variables of a function or inlined subroutine at a pc: owned, one block. */
struct sw_dinfo_func {
    const char *name;
    sw_addr entry; /* link-time; as struct sw_dinfo_name's */
    uint64_t die;  /* as struct sw_dinfo_name's: the scope these variables belong to */
    size_t nbase;  /* DW_AT_frame_base */
    const struct sw_dinfo_loc *base;
    size_t nvars; /* parameters in order, then the locals of the innermost
                   * lexical block covering the pc, then of outer ones */
    const struct sw_dinfo_var *vars;
    struct di_blk *arena; /* internal: every allocation, freed together */
};

/* The variables visible at link-time address VADDR in the concrete function
 * (DW_TAG_subprogram) covering it: its parameters and the locals of it and of
 * its lexical blocks that cover VADDR (not those of inlined subroutines), and
 * the parameters and variables of its abstract instance (DW_AT_abstract_origin)
 * that it has no copy of, without a location (gdb's inherit_abstract_dies).
 * Returns 0, SW_ENOENT (no DWARF function covers VADDR), SW_ENOMEM,
 * SW_EBADELF.  *OUT: caller frees with sw_dinfo_func_free. */
int sw_dinfo_frame_vars(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_func **out);

/* The same for the inlined subroutine at DEPTH of the inline chain at VADDR
 * (0: the innermost, as sw_dinfo_inline_chain lists them): its parameters
 * and the locals of it and of its lexical blocks covering VADDR, with what
 * its abstract instance adds; not those of subroutines inlined into it.  The
 * frame base (DW_OP_fbreg) is the concrete function's that contains it.
 * NAME, ENTRY and DIE are the chain's.  Returns 0, SW_ENOENT (fewer than
 * DEPTH + 1 inlined subroutines cover VADDR), SW_ENOMEM, SW_EBADELF.  *OUT:
 * caller frees with sw_dinfo_func_free. */
int sw_dinfo_inline_vars(struct sw_dinfo *d, sw_addr vaddr, size_t depth,
                         struct sw_dinfo_func **out);

/* Free FN.  NULL is a no-op. */
void sw_dinfo_func_free(struct sw_dinfo_func *fn);

#endif /* RSPWALK_DWARF_H */
