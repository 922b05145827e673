/* walker/steppers/frame_func.c -- FrameFuncStepper: the dispatcher over per-arch frame rules.
 *
 * The stepper and sw_frame_func_alloc (the seed's FrameFuncHelper) pick the
 * architecture's rules from frame_func_<arch>.c by the target's ELF machine.
 * This file holds no frame layout of its own.
 */
#include "walker/steppers/frame_func.h"

#include "walker/walker_internal.h"

/* EM_* numbers from the ELF gABI / processor supplements. */
#define EM_386     3
#define EM_X86_64  62
#define EM_PPC     20
#define EM_PPC64   21
#define EM_AARCH64 183

static const struct sw_ff_arch *
ff_arch_for(const struct arch_desc *a)
{
    switch (a->elf_machine) {
    case EM_386:
    case EM_X86_64:
        return &sw_ff_x86;
    case EM_AARCH64:
        return &sw_ff_aarch64;
    case EM_PPC:
    case EM_PPC64:
        return &sw_ff_ppc;
    default:
        return NULL;
    }
}

enum sw_gcf
sw_ff_read_word(struct sw_walker *w, sw_addr addr, sw_word *val)
{
    int rc = sw_walker_read_word(w, addr, val);
    if (rc == 0)
        return SW_GCF_SUCCESS;
    if (sw_is_link_error(rc)) {
        sw_walker_fail_from_proc(w, rc);
        return SW_GCF_ERROR;
    }
    return SW_GCF_NOT_ME;
}

int
sw_frame_func_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out)
{
    const struct sw_ff_arch *ff = ff_arch_for(sw_walker_proc(w)->arch);
    if (ff == NULL || ff->alloc == NULL) {
        *out = (struct sw_frame_alloc){ SW_FRAME_UNKNOWN_T, SW_FRAME_UNKNOWN_S };
        return SW_ENOARCH;
    }
    return ff->alloc(w, pc, exact, out);
}

static enum sw_gcf
frame_func_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    const struct sw_ff_arch *ff = ff_arch_for(sw_walker_proc(s->walker)->arch);
    if (ff == NULL)
        return SW_GCF_NOT_ME;
    return ff->caller_frame(s, in, out);
}

static const struct sw_stepper_ops frame_func_ops = {
    .name = "frame-func",
    .priority = SW_PRIO_FRAME_FUNC,
    .caller_frame = frame_func_caller_frame,
};

struct sw_stepper *
sw_stepper_frame_func_new(void)
{
    struct sw_stepper *s = sw_calloc(1, sizeof *s);
    if (s)
        s->ops = &frame_func_ops;
    return s;
}
