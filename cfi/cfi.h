/* cfi/cfi.h -- DWARF call frame information for one ELF file.
 *
 * The only interface to libdwarf (opened on first use: cfi/libdwarf_dl.h)
 * for unwinding: open a file's .eh_frame and
 * .debug_frame (also those of its separate debug file), or an in-memory
 * image's (the vDSO's), and give the row of
 * rules that holds at a link-time address.  Implemented in
 * cfi/cfi.c, the only file that includes <libdwarf.h>.
 * Expressions are returned decoded, as operations for expr/expr.h's
 * evaluator.
 * A sw_cfi is opened and owned by a module (libstate/module.h), and may be
 * queried from several threads at once.
 */
#ifndef RSPWALK_CFI_H
#define RSPWALK_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/types.h"

struct sw_cfi;
struct sw_expr_op;

/* The register columns a row carries: DWARF numbers 0..127, as many as a
 * frame holds (include/rspwalk/frame.h's SW_FRAME_MAX_REGS). */
#define SW_CFI_MAX_REGS 128

enum sw_cfi_rule_kind {
    SW_CFI_UNDEFINED = 0,  /* not recoverable (a DW_CFA_undefined RA ends the walk) */
    SW_CFI_SAME,           /* same value as in the callee (also: no rule given) */
    SW_CFI_OFFSET,         /* saved at CFA + OFFSET */
    SW_CFI_VAL_OFFSET,     /* the value is CFA + OFFSET */
    SW_CFI_REGISTER,       /* in register REG of the callee */
    SW_CFI_EXPRESSION,     /* saved at the address the expression computes */
    SW_CFI_VAL_EXPRESSION, /* the value is what the expression computes */
};

/* The DWARF expression of a rule or of the CFA, decoded once by libdwarf
 * (DWARF 5 section 6.4.2). */
struct sw_cfi_expr {
    const struct sw_expr_op *ops; /* borrowed: valid as long as the sw_cfi */
    size_t nops;
    /* libdwarf could not decode the block (an operation it does not know, a
     * truncated operand): there are no operations, and evaluating the rule
     * must fail as a malformed expression does (SW_EPROTO). */
    bool undecodable;
};

struct sw_cfi_rule {
    enum sw_cfi_rule_kind kind;
    int64_t offset;
    unsigned reg;
    struct sw_cfi_expr expr; /* SW_CFI_EXPRESSION, SW_CFI_VAL_EXPRESSION */
};

/* The rules that hold at one address. */
struct sw_cfi_row {
    sw_addr lo, hi;   /* link-time range of the FDE row */
    bool cfa_is_expr; /* CFA = evaluate(cfa_expr) instead of reg + offset */
    unsigned cfa_reg;
    int64_t cfa_offset;
    struct sw_cfi_expr cfa_expr;
    unsigned ra_column; /* the CIE's return address register */
    bool signal_frame;  /* the CIE augmentation has 'S' */
    /* AArch64: the return address carries a pointer authentication code
     * here (DW_CFA_AARCH64_negate_ra_state toggled RA_SIGN_STATE). */
    bool ra_signed;
    struct sw_cfi_rule rules[SW_CFI_MAX_REGS];
};

/* Open the CFI of PATH and of DEBUG_PATH (may be NULL).  ADDR_SIZE is the
 * target's word size.  Returns 0, SW_ENOCFI (neither file has frame
 * information), SW_EBADELF, SW_ENOMEM, SW_EUNSUP (libdwarf cannot be
 * loaded); message in ERR.  *OUT: sw_cfi_close. */
int sw_cfi_open(const char *path, const char *debug_path, unsigned addr_size, struct sw_cfi **out,
                struct sw_errbuf *err);

/* Open the CFI of an ELF image held in memory (the vDSO, read from target
 * memory: it has no file), LEN bytes at IMAGE, copied (the caller keeps
 * IMAGE).  NAME ("[vdso]") is for messages.  Reads .eh_frame and
 * .debug_frame through the image's section headers.  Returns as sw_cfi_open;
 * *OUT: sw_cfi_close. */
int sw_cfi_open_mem(const uint8_t *image, size_t len, const char *name, unsigned addr_size,
                    struct sw_cfi **out, struct sw_errbuf *err);
void sw_cfi_close(struct sw_cfi *c);

/* Open libdwarf now (sw_cfi_open would, on first use: 0.4 ms of relocations);
 * false with the reason in *WHY. */
bool sw_cfi_load(const char **why);

/* The row at link-time address VADDR: .eh_frame first, then .debug_frame.
 * May be called from several threads at once: C's lock makes them take turns
 * (libdwarf's handles, scratch space and the rows kept).  Returns 0,
 * SW_ENOCFI (no FDE covers it), or an error in ERR. */
int sw_cfi_row_at(struct sw_cfi *c, sw_addr vaddr, struct sw_cfi_row *row, struct sw_errbuf *err);

#endif /* RSPWALK_CFI_H */
