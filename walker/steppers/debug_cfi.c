/* walker/steppers/debug_cfi.c -- DebugStepper: callers from DWARF call frame information.
 *
 * Finds the module covering the frame's lookup PC, takes its CFI from the
 * module (sw_module_cfi: .eh_frame, .debug_frame, the separate debug
 * file's .debug_frame; for the vDSO, which has no file, those of its image
 * read from target memory; opened once per file of the module cache) and applies the
 * row there (debug_step.c).  Priority 0x10040: after the signal
 * handler stepper, before the frame-pointer one.
 */
#include "rspwalk/stepper.h"

#include <inttypes.h>
#include <string.h>

#include "libstate/lib.h"
#include "libstate/module.h"
#include "walker/steppers/debug_internal.h"
#include "walker/walker_internal.h"

struct debug_stepper {
    struct sw_stepper base;
};

/* How LIB is named in messages: its local file, else (an image read from
 * target memory, the vDSO) its name. */
static const char *
debug_key(const struct sw_lib *lib)
{
    return lib->path ? lib->path : lib->name;
}

static enum sw_gcf
debug_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    struct sw_proc *p = sw_walker_proc(w);
    const struct sw_lib *lib;
    const struct sw_errbuf *why;
    struct sw_cfi *cfi;
    struct sw_errbuf err;
    struct sw_frame f;
    sw_addr pc = sw_frame_lookup_pc(in);

    if (sw_libstate_lib_at(sw_walker_libstate(w), pc, &lib) < 0 || sw_lib_module(lib) == NULL)
        return SW_GCF_NOT_ME;
    /* The module keeps its file's (or image's) CFI, opened at the first
     * frame in it, or ahead, while a round trip was under way (libstate). */
    if (sw_module_cfi(sw_lib_module(lib), p->arch->word_size, &cfi, &why) < 0) {
        sw_walker_fail(w, SW_ENOMEM, "opening the CFI of %s for 0x%" PRIx64 ": out of memory",
                       debug_key(lib), pc);
        return SW_GCF_ERROR;
    }
    if (cfi == NULL)
        return SW_GCF_NOT_ME;

    sw_err_clear(&err);
    enum sw_gcf r = sw_debug_step_with_cfi(p->arch, p, cfi, lib->bias, in, &f, &err);
    if (r == SW_GCF_NOT_ME && sw_walker_frame_lazy(w, in)) {
        /* The row needs a register frame 0 did not read (a CFA in rbx, the
         * RA in x30): again with every lazy register filled in. */
        struct sw_frame full = *in;
        int rc = sw_walker_fill_lazy(w, &full);
        if (rc < 0)
            return SW_GCF_ERROR;
        sw_err_clear(&err);
        r = sw_debug_step_with_cfi(p->arch, p, cfi, lib->bias, &full, &f, &err);
    }
    switch (r) {
    case SW_GCF_SUCCESS:
        f.stepper = s;
        *out = f;
        break;
    case SW_GCF_ERROR:
        sw_walker_fail(w, err.code ? err.code : SW_EIO, "%s (%s)", err.msg, debug_key(lib));
        break;
    case SW_GCF_NOT_ME:
        sw_debug(SW_DBG_STEP, "debug: %s (%s)\n", err.msg, debug_key(lib));
        break;
    case SW_GCF_STACKBOTTOM:
        break;
    }
    return r;
}

static void
debug_destroy(struct sw_stepper *s)
{
    sw_free((struct debug_stepper *)s);
}

static const struct sw_stepper_ops debug_ops = {
    .name = "debug",
    .priority = SW_PRIO_DEBUG,
    .caller_frame = debug_caller_frame,
    .destroy = debug_destroy,
};

struct sw_stepper *
sw_stepper_debug_new(void)
{
    struct debug_stepper *ds = sw_calloc(1, sizeof *ds);
    if (ds == NULL)
        return NULL;
    ds->base.ops = &debug_ops;
    return &ds->base;
}
