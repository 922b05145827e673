/* expr/expr.h -- the DWARF expression evaluator, for CFI rules and variable locations alike.
 *
 * One stack machine (DWARF 5 sections 2.5 and 2.6) over operations already decoded, in
 * elfutils' Dwarf_Op form: dwarf/vars.c copies libdw's decoding of a location, cfi/cfi.c
 * has libdwarf decode a rule's block.  Nothing here reads DWARF bytes, ELF files or the
 * target: registers, memory, the CFA and the frame base come through struct sw_expr_ctx.
 */
#ifndef RSPWALK_EXPR_EXPR_H
#define RSPWALK_EXPR_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/types.h"

/* One operation, field for field elfutils' Dwarf_Op (<elfutils/libdw.h>), which cannot be
 * included here: cfi/cfi.c includes <libdwarf.h>, whose Dwarf_Die clashes with libdw's. */
struct sw_expr_op {
    uint8_t atom;     /* DW_OP_* */
    uint64_t number;  /* the first operand; signed ones (DW_OP_consts, DW_OP_bregN, DW_OP_fbreg,
                       * DW_OP_skip...) as their two's complement */
    uint64_t number2; /* the second operand (DW_OP_bregx's offset).  DW_OP_implicit_value: the
                       * host address of its block, which starts with the ULEB128 length
                       * (libdw's form; NUMBER is the length) */
    uint64_t offset;  /* the operation's byte offset in the expression: branch targets */
};

/* Where an expression puts a value: DWARF 5 section 2.6.1.1. */
enum sw_expr_kind {
    SW_EXPR_ADDRESS,  /* a memory location: VALUE is its address */
    SW_EXPR_REGISTER, /* DW_OP_regN, DW_OP_regx: in register REG, whose contents are VALUE */
    SW_EXPR_VALUE,    /* DW_OP_stack_value: VALUE is the value itself */
    SW_EXPR_IMPLICIT, /* DW_OP_implicit_value: the LEN bytes at DATA, in the target's order */
};

struct sw_expr_result {
    enum sw_expr_kind kind;
    sw_word value;
    unsigned reg;
    const uint8_t *data; /* borrowed from the operation's block */
    size_t len;
};

/* What an expression may use besides its operations.  Filled by the caller for one
 * evaluation; the evaluator keeps nothing. */
struct sw_expr_ctx {
    unsigned addr_size; /* REQUIRED, 4 or 8: values are this wide and wrap there */
    bool big_endian;    /* the byte order of memory read by DW_OP_deref and DW_OP_deref_size */
    /* REQUIRED: the value of DWARF register DW in the frame; false when it is not known
     * (the evaluation fails with SW_ENOREG). */
    bool (*reg)(void *arg, unsigned dw, sw_word *val);
    /* OPTIONAL (NULL: every read fails with SW_EMEM): LEN bytes of target memory at ADDR
     * into BUF.  Returns 0, SW_EMEM when the memory cannot be read, or a link error; the
     * evaluation fails with that code. */
    int (*read)(void *arg, sw_addr addr, void *buf, size_t len);
    void *arg; /* for REG and READ */
    /* The CFA, for DW_OP_call_frame_cfa; without it that operation fails.  PUSH_CFA (with
     * HAVE_CFA) also pushes it before the first operation, as DW_CFA_expression and
     * DW_CFA_val_expression rules require (DWARF 5 section 6.4.2.3). */
    bool have_cfa, push_cfa;
    sw_addr cfa;
    /* The frame base, for DW_OP_fbreg; without it that operation fails. */
    bool have_frame_base;
    sw_addr frame_base;
    sw_addr addr_bias;     /* added to DW_OP_addr operands: the module's load bias */
    struct sw_errbuf *err; /* OPTIONAL: the message of a failure */
};

/* Evaluate the NOPS operations OPS (one simple location description: a DW_OP_piece ends
 * it and is refused here; the caller splits composite locations).  Returns 0 with *OUT,
 * or: SW_EPROTO for a malformed, unsupported or runaway expression (stack underflow or
 * overflow, division by zero, a branch to no operation, an unknown operation, more than
 * 10000 steps, nothing left on the stack); SW_ENOREG when a register it needs is not
 * known; SW_ENOENT when it uses DW_OP_entry_value (the value at entry is known only to
 * the caller's call sites), said before any operation runs; the code of CTX->read when
 * memory could not be read (SW_EMEM, or a link error).  The message goes to CTX->err,
 * naming the operation's offset. */
int sw_expr_eval(const struct sw_expr_ctx *ctx, const struct sw_expr_op *ops, size_t nops,
                 struct sw_expr_result *out);

/* sw_expr_eval for an expression whose result is a number (a CFI rule, a frame base): an
 * address, a register's contents or a stack value, in *OUT.  DW_OP_implicit_value is
 * SW_EPROTO here; otherwise returns as sw_expr_eval. */
int sw_expr_eval_word(const struct sw_expr_ctx *ctx, const struct sw_expr_op *ops, size_t nops,
                      sw_word *out);

#endif /* RSPWALK_EXPR_EXPR_H */
