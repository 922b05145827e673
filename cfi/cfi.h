/* cfi/cfi.h -- DWARF call frame information for one ELF file.
 *
 * The only interface to libdwarf (opened on first use: cfi/libdwarf_dl.h)
 * for unwinding: open a file's .eh_frame and
 * .debug_frame (also those of its separate debug file), or an in-memory
 * image's (the vDSO's), and give the row of
 * rules that holds at a link-time address.  Implemented in
 * cfi/cfi.c, the only file that includes <libdwarf.h>.
 * Expressions are returned as byte blocks and evaluated by cfi/expr.c.
 */
#ifndef RSPWALK_CFI_H
#define RSPWALK_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/frame.h"
#include "rspwalk/types.h"

struct sw_cfi;

enum sw_cfi_rule_kind {
    SW_CFI_UNDEFINED = 0,  /* not recoverable (a DW_CFA_undefined RA ends the walk) */
    SW_CFI_SAME,           /* same value as in the callee (also: no rule given) */
    SW_CFI_OFFSET,         /* saved at CFA + OFFSET */
    SW_CFI_VAL_OFFSET,     /* the value is CFA + OFFSET */
    SW_CFI_REGISTER,       /* in register REG of the callee */
    SW_CFI_EXPRESSION,     /* saved at the address the expression computes */
    SW_CFI_VAL_EXPRESSION, /* the value is what the expression computes */
};

struct sw_cfi_rule {
    enum sw_cfi_rule_kind kind;
    int64_t offset;
    unsigned reg;
    const uint8_t *expr; /* borrowed: valid as long as the sw_cfi */
    size_t expr_len;
};

/* The rules that hold at one address. */
struct sw_cfi_row {
    sw_addr lo, hi;   /* link-time range of the FDE row */
    bool cfa_is_expr; /* CFA = evaluate(cfa_expr) instead of reg + offset */
    unsigned cfa_reg;
    int64_t cfa_offset;
    const uint8_t *cfa_expr;
    size_t cfa_expr_len;
    unsigned ra_column; /* the CIE's return address register */
    bool signal_frame;  /* the CIE augmentation has 'S' */
    /* AArch64: the return address carries a pointer authentication code
     * here (DW_CFA_AARCH64_negate_ra_state toggled RA_SIGN_STATE). */
    bool ra_signed;
    struct sw_cfi_rule rules[SW_FRAME_MAX_REGS];
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
 * Uses scratch space inside C: one caller at a time per sw_cfi.
 * Returns 0, SW_ENOCFI (no FDE covers it), or an error in ERR. */
int sw_cfi_row_at(struct sw_cfi *c, sw_addr vaddr, struct sw_cfi_row *row, struct sw_errbuf *err);

/* Evaluate the DWARF expression EXPR (LEN bytes) for frame F (registers by
 * DWARF number from F, memory through READ).  PUSH_CFA pushes CFA first, as
 * DW_CFA_expression and DW_CFA_val_expression rules require; only then may
 * the expression use DW_OP_call_frame_cfa.  Values are ADDR_SIZE bytes wide
 * and wrap there.  Returns 0 with the top of the stack in *RESULT, the code
 * READ returned when memory could not be read (SW_EMEM, or a link error),
 * SW_EPROTO on a bad, unsupported or runaway expression, SW_ENOREG when a
 * needed register is unknown; the message goes to ERR when it is not NULL. */
struct sw_expr_ctx {
    const struct sw_frame *frame;
    unsigned addr_size; /* 4 or 8 */
    bool big_endian;    /* operands and memory */
    int (*read)(void *arg, sw_addr addr, void *buf, size_t len);
    void *arg;
    struct sw_errbuf *err; /* may be NULL */
};
int sw_dwarf_expr_eval(const struct sw_expr_ctx *ctx, const uint8_t *expr, size_t len,
                       bool push_cfa, sw_addr cfa, sw_addr *result);

#endif /* RSPWALK_CFI_H */
