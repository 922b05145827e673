/* walker/source.c -- the source file and line of a walked frame (rspwalk/walker.h).
 *
 * gdb's rule: the innermost frame at a pc takes the line-table row of its
 * lookup pc; each frame that code was inlined into takes the call site of
 * the inlined subroutine just inside it.  The DWARF reading is
 * dwarf/lines.c's; this file only decides which of the two a frame gets.
 */
#include "rspwalk/walker.h"

#include <inttypes.h>

#include "dwarf/dwarf.h"
#include "walker/walker_internal.h"

/* Inline levels looked at (walker/virtual.c keeps 32). */
#define SRC_MAX_INLINE 32

int
sw_frame_source(struct sw_walker *w, const struct sw_stack *stack, size_t frame_index,
                struct sw_source_line *out)
{
    const struct sw_lib *lib = NULL;
    struct sw_dinfo *d = NULL;

    if (w == NULL || stack == NULL || out == NULL)
        return SW_EINVAL;
    if (frame_index >= stack->n)
        return sw_walker_fail(w, SW_EINVAL, "source line: no frame %zu in a stack of %zu",
                              frame_index, stack->n);
    const struct sw_frame *fr = &stack->frames[frame_index];
    if (fr->kind == SW_FRAME_SIGNAL)
        return sw_walker_fail(w, SW_ENOSYM, "source line: frame %zu is a signal frame",
                              frame_index);
    sw_addr pc = sw_frame_lookup_pc(fr);
    int rc = sw_walker_dinfo_at(w, pc, &lib, &d);
    if (rc < 0)
        return rc;
    if (d == NULL)
        return sw_walker_fail(w, SW_ENOSYM, "source line at 0x%" PRIx64 ": no debug info", pc);

    /* The inline frames of a physical frame come right before it, innermost
     * first: DEPTH is this frame's place in that run. */
    size_t depth = 0;
    if (fr->kind == SW_FRAME_INLINE || fr->kind == SW_FRAME_NORMAL)
        while (depth < frame_index &&
               stack->frames[frame_index - depth - 1].kind == SW_FRAME_INLINE)
            depth++;
    struct sw_source_line src = { 0 };
    if (depth == 0)
        rc = sw_dinfo_line(d, pc - lib->bias, &src.file, &src.dir, &src.line);
    else {
        struct sw_dinfo_name chain[SRC_MAX_INLINE];
        size_t n = 0;
        rc = sw_dinfo_inline_chain(d, pc - lib->bias, chain, SRC_MAX_INLINE, &n);
        if (rc == SW_ENOMEM)
            return sw_walker_fail(w, rc, "source line: out of memory");
        rc = rc == 0 && depth - 1 < n
                 ? sw_dinfo_call_line(d, chain[depth - 1].die, &src.file, &src.dir, &src.line)
                 : SW_ENOENT;
    }
    if (rc < 0)
        return sw_walker_fail(w, SW_ENOSYM, "source line at 0x%" PRIx64 ": no line in %s", pc,
                              lib->path);
    *out = src;
    return 0;
}
