/* cli/locals.c -- --locals: the variables of each frame, after the frame.
 *
 * Text: "    name (type) = value" lines under the frame, as gdb's info args and
 * info locals print them, the values as the JSON's "locals" has them
 * (sw_render_local_value).  Physical and inline frames have them; tail-call
 * and signal frames none.  Nothing here reads DWARF: it asks rspwalk/locals.h.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

void
cli_print_locals_text(FILE *f, struct sw_walker *w, const struct sw_stack *st, size_t k)
{
    struct sw_function *fn;
    char val[1024];

    if (sw_frame_function(w, st, k, &fn) < 0)
        return;
    for (size_t i = 0; i < fn->nvars; i++) {
        sw_render_local_value(w, st, k, &fn->vars[i], val, sizeof val);
        /* Names, types and values (a string read from target memory) are
         * the target's bytes: escaped, so that none ends the line. */
        fputs("    ", f);
        sw_text_fputs(f, fn->vars[i].name, 0);
        fputs(" (", f);
        sw_text_fputs(f, fn->vars[i].type_name, 0);
        fputs(") = ", f);
        sw_text_fputs(f, val, SW_TEXT_KEEP_BACKSLASH); /* C escapes already */
        fputc('\n', f);
    }
    sw_function_free(fn);
}
