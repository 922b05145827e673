/* walker/steppers/frame_func.c -- FrameFuncStepper and FrameFuncHelper: the dispatcher.
 *
 * Both ask the stack-height analysis (analysis.h) what the function covering
 * a PC does and what holds at the PC, and hand the facts to the rules of the
 * target's family (frame_func_record.c, frame_func_ppc.c), picked by the
 * ELF machine.  The stepper holds the walker's analysis cache when the
 * walker has no analysis stepper.  No frame layout lives here.
 */
#include "walker/steppers/frame_func.h"

#include <inttypes.h>

#include "walker/walker_internal.h"

/* EM_* numbers from the ELF gABI / processor supplements. */
#define EM_386     3
#define EM_X86_64  62
#define EM_PPC     20
#define EM_PPC64   21
#define EM_AARCH64 183

struct ff_stepper {
    struct sw_stepper base;
    struct sw_an_cache *cache; /* owned: made on first use, if no analysis stepper has one */
};

static const struct sw_stepper_ops frame_func_ops;

static const struct sw_ff_arch *
ff_arch_for(const struct arch_desc *a)
{
    switch (a->elf_machine) {
    case EM_386:
    case EM_X86_64:
    case EM_AARCH64:
        return &sw_ff_record;
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

bool
sw_ff_ra_as_called(const struct arch_desc *a, const struct sw_an_pc *at)
{
    if (!a->call_ra_on_stack)
        return at->ra == SW_AN_RA_LIVE;
    return at->ra == SW_AN_RA_SLOT && at->ra_off == -(int64_t)a->word_size && at->sp_known &&
           !at->sp_alt && at->height == a->word_size;
}

/* Whether AT says where the CFA and the return address are. */
static bool
facts_enough(const struct sw_an_pc *at)
{
    return ((at->sp_known && !at->sp_alt) || at->fp_cfa) && at->ra != SW_AN_RA_UNKNOWN;
}

int
sw_ff_facts(struct sw_walker *w, sw_addr pc, bool exact, struct sw_ff_facts *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    const struct sw_ff_arch *ff = ff_arch_for(a);

    *out = (struct sw_ff_facts){ .rc = SW_ENOSYM };
    if (ff == NULL)
        return SW_ENOARCH;
    int rc = sw_analysis_func(w, pc, exact, &out->fn, &out->at);
    if (rc == SW_ENOMEM || sw_is_link_error(rc))
        return sw_walker_fail(w, rc, "analysing the function at %#" PRIx64 ": %s", (uint64_t)pc,
                              sw_strerror(rc));
    out->rc = rc;
    out->have_fn = rc == 0 || rc == SW_EINVAL;
    out->have_at = rc == 0;
    /* Where the analysis cannot say (no symbol, a path it does not reach, a
     * join of different heights, SP restored from a register it does not
     * follow), the code between PC and a return may. */
    if (exact && !(out->have_at && facts_enough(&out->at))) {
        struct sw_an_pc scan;
        rc = sw_analysis_exit(w, pc, &scan);
        if (rc == SW_ENOMEM || sw_is_link_error(rc))
            return sw_walker_fail(w, rc, "reading the code at %#" PRIx64 ": %s", (uint64_t)pc,
                                  sw_strerror(rc));
        if (rc == 0) {
            out->at = scan;
            out->have_at = true;
        }
    }
    ff->classify(a, out->have_fn ? &out->fn : NULL, out->have_at ? &out->at : NULL, &out->fa);
    return 0;
}

int
sw_frame_func_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out)
{
    struct sw_ff_facts ff;
    *out = (struct sw_frame_alloc){ SW_FRAME_UNKNOWN_T, SW_FRAME_UNKNOWN_S };
    int rc = sw_ff_facts(w, pc, exact, &ff);
    if (rc < 0)
        return rc;
    if (!ff.have_fn)
        return ff.rc; /* the seed: an invalid address is unknown_t, unknown_s */
    *out = ff.fa;
    return ff.have_at ? 0 : SW_EINVAL;
}

struct sw_an_cache **
sw_ff_cache_slot(struct sw_stepper *s)
{
    return s->ops == &frame_func_ops ? &((struct ff_stepper *)s)->cache : NULL;
}

static enum sw_gcf
frame_func_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    const struct sw_ff_arch *ff = ff_arch_for(sw_walker_proc(s->walker)->arch);
    if (ff == NULL)
        return SW_GCF_NOT_ME;
    return ff->caller_frame(s, in, out);
}

static void
frame_func_library_changed(struct sw_stepper *s, const struct sw_lib *lib,
                           enum sw_lib_change change)
{
    (void)lib;
    struct ff_stepper *fs = (struct ff_stepper *)s;
    if (change == SW_LIB_UNLOAD && fs->cache)
        sw_an_cache_clear(fs->cache);
}

static void
frame_func_destroy(struct sw_stepper *s)
{
    struct ff_stepper *fs = (struct ff_stepper *)s;
    sw_an_cache_free(fs->cache);
    sw_free(fs);
}

static const struct sw_stepper_ops frame_func_ops = {
    .name = "frame-func",
    .priority = SW_PRIO_FRAME_FUNC,
    .caller_frame = frame_func_caller_frame,
    .library_changed = frame_func_library_changed,
    .destroy = frame_func_destroy,
};

struct sw_stepper *
sw_stepper_frame_func_new(void)
{
    struct ff_stepper *fs = sw_calloc(1, sizeof *fs);
    if (fs == NULL)
        return NULL;
    fs->base.ops = &frame_func_ops;
    return &fs->base;
}
