/* walker/steppers/frame_func.c -- FrameFuncStepper and FrameFuncHelper: the dispatcher.
 *
 * Both hand the analysis facts at a PC (frame_func_facts.c) to the rules of
 * the target's family (frame_func_record.c, frame_func_ppc.c), picked by the
 * arch table.  The stepper makes sure its walker keeps an analysis cache.
 * No frame layout lives here.
 */
#include "walker/steppers/frame_func.h"

#include <inttypes.h>

#include "walker/walker_internal.h"

/* The family's rules, by the arch table's family: the frame record's (x86,
 * x86-64, aarch64) or PowerPC's back chain; NULL for another family. */
static const struct sw_ff_arch *
ff_arch_for(const struct arch_desc *a)
{
    switch (a->family) {
    case ARCH_FAMILY_X86:
    case ARCH_FAMILY_AARCH64:
        return &sw_ff_record;
    case ARCH_FAMILY_PPC:
        return &sw_ff_ppc;
    case ARCH_FAMILY_THUMB: /* r7 points below the saved pair: the analysis stepper's */
    case ARCH_FAMILY_NONE:
        break;
    }
    return NULL; /* no frame rules for code of an unknown family */
}

int
sw_frame_func_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out)
{
    struct sw_ff_facts ff;
    *out = (struct sw_frame_alloc){ SW_FRAME_UNKNOWN_T, SW_FRAME_UNKNOWN_S };
    const struct sw_ff_arch *fa = ff_arch_for(sw_walker_proc(w)->arch);
    if (fa == NULL)
        return SW_ENOARCH;
    int rc = sw_ff_facts(w, fa, pc, exact, &ff);
    if (rc < 0)
        return rc;
    if (!ff.have_fn)
        return ff.rc; /* the seed: an invalid address is unknown_t, unknown_s */
    *out = ff.fa;
    return ff.have_at ? 0 : SW_EINVAL;
}

static enum sw_gcf
frame_func_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    const struct sw_ff_arch *ff = ff_arch_for(sw_walker_proc(s->walker)->arch);
    if (ff == NULL)
        return SW_GCF_NOT_ME;
    return ff->caller_frame(s, in, out);
}

/* Joining a walker: the walker keeps the analysis cache from now on. */
static int
frame_func_group_registered(struct sw_stepper *s, struct sw_stepper_group *g)
{
    int rc = sw_an_cache_attach(s->walker);
    return rc < 0 ? rc : sw_stepper_group_add(g, s, 0, UINT64_MAX);
}

static const struct sw_stepper_ops frame_func_ops = {
    .name = "frame-func",
    .priority = SW_PRIO_FRAME_FUNC,
    .caller_frame = frame_func_caller_frame,
    .group_registered = frame_func_group_registered,
};

struct sw_stepper *
sw_stepper_frame_func_new(void)
{
    struct sw_stepper *s = sw_calloc(1, sizeof *s);
    if (s)
        s->ops = &frame_func_ops;
    return s;
}
