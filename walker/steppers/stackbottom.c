/* walker/steppers/stackbottom.c -- BottomOfStackStepper: where walks end.
 *
 * The outermost frame of a process is in the entry point (_start) and the
 * outermost frame of a thread in the clone wrapper that started it; a PC of
 * zero is nothing at all.  This stepper never computes a caller: it says
 * STACKBOTTOM or NOT_ME, before every other stepper (priority 0x10000).
 */
#include "rspwalk/stepper.h"

#include <string.h>

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

static enum sw_gcf
stackbottom_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_symbol sym;
    (void)out;

    if (in->ra == 0)
        return SW_GCF_STACKBOTTOM;
    if (sw_frame_symbol(s->walker, in, &sym) == 0 && sym.name && is_bottom_name(sym.name))
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
