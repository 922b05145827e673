/* rspwalk/locals.h -- local variables and parameters of walked frames.
 *
 * StackwalkerAPI's getFunctionForFrame and getLocalVariableValue over DWARF
 * debug information: the variables a frame's function has at its pc, and
 * their values read through the frame's recovered registers and the target's
 * memory.  Not a debugger's expression language: no casts, no deep printing.
 *
 * Threads: these calls use the walker W as any walker call does: one thread
 * at a time per walker.  A struct sw_function may be read from any thread
 * while nothing frees it.
 */
#ifndef RSPWALK_LOCALS_H
#define RSPWALK_LOCALS_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_walker;
struct sw_stack;
struct sw_function;

enum sw_var_kind {
    SW_VAR_LOCAL = 0, /* DW_TAG_variable */
    SW_VAR_PARAM,     /* DW_TAG_formal_parameter */
};

/* One variable of a function: an element of its sw_function's VARS. */
struct sw_local_var {
    const char *name;             /* borrowed, valid as long as FN */
    const char *type_name;        /* as gdb's ptype prints it: "int", "char *" */
    size_t size;                  /* bytes of its value; 0 when the type has none */
    enum sw_var_kind kind;        /* parameter or local */
    const struct sw_function *fn; /* borrowed: the function that lists it */
};

/* getFunctionForFrame: a function and the variables visible at a pc.  Made
 * only by sw_frame_function, which keeps more behind it. */
struct sw_function {
    const char *name; /* borrowed, valid as long as this; gdb's name */
    sw_addr entry;    /* run-time address of its entry (an inlined copy: of its first range) */
    bool inlined;     /* an inlined subroutine: the function of an SW_FRAME_INLINE frame */
    size_t nvars;     /* parameters in order, then locals, innermost block first */
    struct sw_local_var *vars; /* owned: NVARS */
};

/* The function of frame FRAME_INDEX of STACK from its module's DWARF, with
 * the variables visible at the frame's lookup pc: what gdb's info args and
 * info locals list in that frame.  A physical frame has its concrete
 * function (DW_TAG_subprogram): its parameters, the locals of the lexical
 * blocks covering the pc, not those of code inlined into it.  An inline
 * frame (SW_FRAME_INLINE) has the inlined subroutine it stands for
 * (DW_TAG_inlined_subroutine): its parameters and locals, found through
 * DW_AT_abstract_origin, whose values sw_local_value reads with the
 * registers of the physical frame that contains it.  Which inlined
 * subroutine an inline frame is follows from its place among the inline
 * frames before its physical frame, hence STACK and an index rather than a
 * frame.  Parameters and locals of an abstract instance that the concrete
 * code has no copy of are listed too, optimized out (as gdb lists them).
 * Tail-call and signal frames have no function here.  Returns 0, SW_EINVAL
 * (a NULL argument, an index past the stack, a tail-call or signal frame),
 * SW_ENOSYM (no debug information covers the pc), SW_ENOMEM; the message goes
 * on W.  *OUT: caller frees with sw_function_free. */
SW_API int sw_frame_function(struct sw_walker *w, const struct sw_stack *stack, size_t frame_index,
                             struct sw_function **out);

/* Free FN.  NULL is a no-op. */
SW_API void sw_function_free(struct sw_function *fn);

/* getLocalVariableValue: the value of VAR in frame FRAME_INDEX of STACK, in
 * the target's byte order, VAR->size bytes into BUF (SIZE bytes).  Reads
 * through W's process; registers of outer frames are the ones the walk
 * recovered for them (sw_frame_reg); an inline frame has the registers of
 * its physical frame.  DW_OP_call_frame_cfa is the SP of the physical
 * frame's caller in the walk (the frame after it), which is the CFA on every
 * supported architecture.  VAR must be an element of the VARS of a function
 * from sw_frame_function (not a copy).  Returns 0 or, with the message on W
 * (Dyninst's getLocalVariableValue result in brackets):
 *   SW_EINVAL       a NULL argument, a frame index past the stack, a VAR that
 *                   is not one of its function's (glvv_EParam);
 *   SW_EOUTOFSCOPE  the frame is not in the variable's function (for an
 *                   inline frame: not that inlined copy), or no location
 *                   covers its pc: gdb's "<optimized out>" (glvv_EOutOfScope);
 *   SW_EBUFSIZE     SIZE is smaller than VAR->size (glvv_EBufferSize);
 *   SW_EUNAVAIL     a register the frame did not recover, memory that cannot
 *                   be read, a location this library cannot evaluate
 *                   (glvv_EUnknown). */
SW_API int sw_local_value(struct sw_walker *w, const struct sw_stack *stack, size_t frame_index,
                          const struct sw_local_var *var, void *buf, size_t size);

/* Format the value of VAR held in BUF (LEN bytes, target order, as
 * sw_local_value leaves it) as gdb's print does for base types, pointers
 * (hex), enums, structures (one level of members) and arrays (the first 16
 * elements); other types as hex bytes.  W gives the target's byte order.
 * Writes at most OUTLEN bytes with a terminating NUL (truncated if need be)
 * and returns 0, or SW_EINVAL (a NULL argument, a VAR that is not one of
 * its function's). */
SW_API int sw_local_format(struct sw_walker *w, const struct sw_local_var *var, const void *buf,
                           size_t len, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_LOCALS_H */
