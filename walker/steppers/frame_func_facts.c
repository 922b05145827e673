/* walker/steppers/frame_func_facts.c -- FrameFuncHelper: the facts behind a classification.
 *
 * What the stack-height analysis (analysis.h) says of the function covering
 * a PC and of the PC itself, with the exit scan where it says too little,
 * classified by the rules of one family that the caller names; for code no
 * function covers, the entry scan (frame_func_entry.c).  Below the
 * families' files (frame_func_record.c, frame_func_ppc.c) and the stepper
 * that picks one of them (frame_func.c); no frame layout lives here.
 */
#include "walker/steppers/frame_func_facts.h"

#include <inttypes.h>

#include "walker/steppers/frame_func_entry.h"
#include "walker/walker_internal.h"

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

/* Why a read for the analysis failed: a link error's message is the
 * process's, which names the request and the stub's part; the code's text
 * says only what kind of failure it was. */
static const char *
link_why(struct sw_walker *w, int rc)
{
    const char *m = sw_is_link_error(rc) ? sw_proc_errmsg(sw_walker_proc(w)) : NULL;
    return m != NULL && m[0] != '\0' ? m : sw_strerror(rc);
}

int
sw_ff_facts(struct sw_walker *w, const struct sw_ff_arch *ff, sw_addr pc, bool exact,
            struct sw_ff_facts *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;

    *out = (struct sw_ff_facts){ .rc = SW_ENOSYM };
    if (ff == NULL)
        return SW_ENOARCH;
    int rc = sw_analysis_func(w, pc, exact, &out->fn, &out->at);
    if (rc == SW_ENOMEM || sw_is_link_error(rc))
        return sw_walker_fail(w, rc, "analysing the function at %#" PRIx64 ": %s", (uint64_t)pc,
                              link_why(w, rc));
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
                                  link_why(w, rc));
        if (rc == 0) {
            out->at = scan;
            out->have_at = true;
        }
    }
    /* Code no function covers (a JIT's) stopped before its frame record is
     * built: the entry scan sees `push %rbp; mov %rsp,%rbp` ahead. */
    if (exact && !out->have_fn && !out->have_at) {
        struct sw_an_pc scan;
        rc = sw_ff_entry_scan(w, pc, &scan);
        if (rc == SW_ENOMEM || sw_is_link_error(rc))
            return sw_walker_fail(w, rc, "reading the code at %#" PRIx64 ": %s", (uint64_t)pc,
                                  link_why(w, rc));
        if (rc == 0) {
            out->at = scan;
            out->have_at = true;
        }
    }
    ff->classify(a, out->have_fn ? &out->fn : NULL, out->have_at ? &out->at : NULL, &out->fa);
    return 0;
}
