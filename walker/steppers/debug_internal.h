/* walker/steppers/debug_internal.h -- the debug (DWARF CFI) stepper's core.
 *
 * Unwinding one frame by a CFI row needs only the arch, the process and
 * the CFI, not a walker: the stepper in debug_cfi.c adds module lookup and
 * the per-file cache around it, and unit tests call the core directly.
 */
#ifndef RSPWALK_WALKER_DEBUG_INTERNAL_H
#define RSPWALK_WALKER_DEBUG_INTERNAL_H

#include "rspwalk/arch.h"
#include "rspwalk/errors.h"
#include "rspwalk/frame.h"
#include "rspwalk/proc.h"
#include "rspwalk/stepper.h"
#include "cfi/cfi.h"

/* The caller of IN by ROW (the rules at IN's lookup PC), reading saved
 * registers from P.  Writes *OUT only on SW_GCF_SUCCESS; *OUT->stepper is
 * left NULL.  On SW_GCF_ERROR (a link failure or no memory) and on
 * SW_GCF_NOT_ME, ERR says why, naming the address and register. */
enum sw_gcf sw_debug_apply_row(const struct arch_desc *a, struct sw_proc *p,
                               const struct sw_cfi_row *row, const struct sw_frame *in,
                               struct sw_frame *out, struct sw_errbuf *err);

/* Find the row for IN's lookup PC in CFI (of a module loaded at BIAS:
 * runtime address = link-time address + BIAS) and apply it.  NOT_ME when
 * no FDE covers the address. */
enum sw_gcf sw_debug_step_with_cfi(const struct arch_desc *a, struct sw_proc *p, struct sw_cfi *cfi,
                                   sw_addr bias, const struct sw_frame *in, struct sw_frame *out,
                                   struct sw_errbuf *err);

#endif /* RSPWALK_WALKER_DEBUG_INTERNAL_H */
