/* cli/locals.c -- --locals: the variables of each frame, after the frame.
 *
 * Text: "    name (type) = value" lines under the frame, as gdb's info args and
 * info locals print them; JSON: the frame object's "locals" array
 * (docs/json.md).  Physical and inline frames have them; tail-call and
 * signal frames none.  Nothing here reads DWARF: it asks rspwalk/locals.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* Values larger than this are shown as "<too large>". */
#define CLI_LOCAL_MAX 4096

/* The value of variable I of FN in frame K as text; VAL has LEN bytes. */
static void
local_text(struct sw_walker *w, const struct sw_stack *st, size_t k, const struct sw_local_var *v,
           char *val, size_t len)
{
    static unsigned char buf[CLI_LOCAL_MAX];
    int rc = sw_local_value(w, st, k, v, buf, sizeof buf);
    switch (rc) {
    case 0:
        if (sw_local_format(w, v, buf, v->size, val, len) < 0)
            snprintf(val, len, "<error>");
        break;
    case SW_EOUTOFSCOPE:
        snprintf(val, len, "<optimized out>");
        break;
    case SW_EBUFSIZE:
        snprintf(val, len, "<too large>");
        break;
    default:
        snprintf(val, len, "<unavailable>");
        break;
    }
}

void
cli_print_locals_text(FILE *f, struct sw_walker *w, const struct sw_stack *st, size_t k)
{
    struct sw_function *fn;
    char val[1024];

    if (sw_frame_function(w, st, k, &fn) < 0)
        return;
    for (size_t i = 0; i < fn->nvars; i++) {
        local_text(w, st, k, &fn->vars[i], val, sizeof val);
        fprintf(f, "    %s (%s) = %s\n", fn->vars[i].name, fn->vars[i].type_name, val);
    }
    sw_function_free(fn);
}

void
cli_print_locals_json(FILE *f, struct sw_walker *w, const struct sw_stack *st, size_t k,
                      void (*str)(FILE *, const char *))
{
    struct sw_function *fn;
    char val[1024];

    fputs(", \"locals\": [", f);
    if (sw_frame_function(w, st, k, &fn) == 0) {
        for (size_t i = 0; i < fn->nvars; i++) {
            const struct sw_local_var *v = &fn->vars[i];
            local_text(w, st, k, v, val, sizeof val);
            fputs(i ? ", {\"name\": " : "{\"name\": ", f);
            str(f, v->name);
            fputs(", \"type\": ", f);
            str(f, v->type_name);
            fputs(", \"value\": ", f);
            str(f, val);
            fputs(", \"kind\": ", f);
            str(f, v->kind == SW_VAR_PARAM ? "param" : "local");
            fputc('}', f);
        }
        sw_function_free(fn);
    }
    fputc(']', f);
}
