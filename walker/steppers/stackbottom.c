/* walker/steppers/stackbottom.c -- BottomOfStackStepper: where walks end.
 *
 * The outermost frame of a process is in the entry point (_start) and the
 * outermost frame of a thread in the clone wrapper that started it; a PC of
 * zero is nothing at all.  A stripped executable's entry function is found
 * by e_entry; on PowerPC, where _start is not on the stack, the zeros the
 * start code leaves in the outermost frame say it.  This stepper never computes a caller: it says
 * STACKBOTTOM or NOT_ME, before every other stepper (priority 0x10000).
 */
#include "rspwalk/stepper.h"

#include <string.h>

#include "libstate/lib.h"
#include "walker/walker_internal.h"

/* The functions gdb also ends at: glibc marks their return address
 * undefined in CFI (sysdeps/unix/sysv/linux/x86_64/clone3.S, start.S), and
 * the other arches' start files do the same.  start_thread is not here: it
 * has a caller (clone3) and gdb shows it. */
static const char *const bottom_names[] = {
    "_start",         "__start",      "_start_c", "clone3",
    "__clone3",       "clone",        "__clone",  "__clone_internal_fallback",
    "__thread_start", "thread_start", NULL,
};

static bool
is_bottom_name(const char *name)
{
    for (size_t i = 0; bottom_names[i]; i++)
        if (strcmp(name, bottom_names[i]) == 0)
            return true;
    return false;
}

/* How far past the entry point a stripped executable's _start can hold its
 * return address (x86-64: 33 bytes, after the call of __libc_start_main). */
#define ENTRY_REACH 64

/* Whether F is in the executable's entry function when no symbol names it
 * (a stripped program): its lookup PC within ENTRY_REACH bytes of e_entry
 * with no symbol starting in between.  (ppc64 ELFv1's e_entry is a
 * descriptor, but PowerPC's _start is never on the stack.) */
static bool
in_stripped_entry(struct sw_walker *w, const struct sw_frame *f, const struct sw_symbol *sym,
                  bool have_sym)
{
    const struct sw_lib *lib;
    sw_addr pc = sw_frame_lookup_pc(f);

    if (sw_libstate_lib_at(sw_walker_libstate(w), pc, &lib) != 0 || !lib->is_exe ||
        sw_lib_elf(lib) == NULL)
        return false;
    sw_addr entry = sw_elf_entry(sw_lib_elf(lib)) + lib->bias;
    if (pc < entry || pc - entry >= ENTRY_REACH)
        return false;
    return !have_sym || sym->start <= entry;
}

/* PowerPC: every frame's first word is the back chain, the caller's SP, and
 * a function saves its return address in its caller's frame header (the
 * arch's backchain_ra_offset: SP + 4 on 32-bit, SP + 16 on 64-bit).  The outermost frames hold
 * zeros: _start's initial frame, and a thread's first frame made by clone, have a zero back chain,
 * and __libc_start_main, entered from _start by a branch without link, saves a zero return address
 * (glibc's start.S, clone.S; gdb shows it as a last frame at pc 0).  So F is the bottom when its
 * back chain is 0, or when the return address it saved is 0.  Not for frames whose PC is exact
 * (frame 0, a signal's interrupted frame): they may not have made a frame or saved their return
 * address yet; nor for a frame whose PC came from the link register, whose SP is its callee's, not
 * yet its own. */
static bool
ppc_zero_chain(struct sw_walker *w, const struct sw_frame *f)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    sw_word chain, ra;

    if (f->top || f->non_call || f->sp == 0 || f->ra_loc.kind == SW_LOC_REGISTER)
        return false;
    if (sw_walker_read_word(w, f->sp, &chain) != 0)
        return false;
    if (chain == 0)
        return true;
    if (chain <= f->sp)
        return false;
    return sw_walker_read_word(w, chain + a->backchain_ra_offset, &ra) == 0 && ra == 0;
}

static enum sw_gcf
stackbottom_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_symbol sym;
    (void)out;

    if (in->ra == 0)
        return SW_GCF_STACKBOTTOM;
    bool have_sym = sw_frame_symbol(s->walker, in, &sym) == 0 && sym.name;
    if (have_sym && is_bottom_name(sym.name))
        return SW_GCF_STACKBOTTOM;
    if (in_stripped_entry(s->walker, in, &sym, have_sym))
        return SW_GCF_STACKBOTTOM;
    if (sw_walker_proc(s->walker)->arch->backchain_ra_offset != 0 && ppc_zero_chain(s->walker, in))
        return SW_GCF_STACKBOTTOM;
    return SW_GCF_NOT_ME;
}

static const struct sw_stepper_ops stackbottom_ops = {
    .name = "stackbottom",
    .priority = SW_PRIO_STACKBOTTOM,
    .caller_frame = stackbottom_caller_frame,
};

struct sw_stepper *
sw_stepper_stackbottom_new(void)
{
    struct sw_stepper *s = sw_calloc(1, sizeof *s);
    if (s)
        s->ops = &stackbottom_ops;
    return s;
}
