/* cli/steppers.c -- --steppers: the list checked, and its steppers added to a walker.
 *
 * Shared by the single-process run (cli/main.c) and --attach (cli/attach.c);
 * the names are the library's default steppers (sw_stepper_default_name).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "rspwalk/stepper.h"
#include "rspwalk/walker.h"

/* --steppers: every name one of the library's default steppers, none twice. */
int
cli_check_steppers(const char *list)
{
    char known[256] = "";
    for (size_t i = 0; sw_stepper_default_name(i) != NULL; i++) {
        strcat(known, i ? ", " : "");
        strcat(known, sw_stepper_default_name(i));
    }
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; sw_stepper_default_name(i) != NULL && !found; i++) {
            const char *name = sw_stepper_default_name(i);
            found = strlen(name) == len && strncmp(p, name, len) == 0;
        }
        if (len == 0) {
            fprintf(stderr, "rspwalk: --steppers: an empty name in '%s' (%s)\n", list, known);
            return -1;
        }
        if (!found) {
            fprintf(stderr, "rspwalk: --steppers: unknown stepper '%.*s' (%s)\n", (int)len, p,
                    known);
            return -1;
        }
        for (const char *q = list; q < p; q += strcspn(q, ",") + 1) {
            if (strcspn(q, ",") == len && strncmp(q, p, len) == 0) {
                fprintf(stderr, "rspwalk: --steppers: '%.*s' given twice\n", (int)len, p);
                return -1;
            }
        }
        p += len;
        if (*p == '\0')
            return 0;
    }
}

int
cli_add_steppers(const struct cli_opts *o, struct sw_walker *w)
{
    if (o->steppers == NULL)
        return 0;
    for (const char *p = o->steppers; *p != '\0';) {
        char name[32];
        size_t len = strcspn(p, ",");
        struct sw_stepper *s;
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        int rc = sw_stepper_new_named(name, &s);
        if (rc == 0)
            rc = sw_add_stepper(w, s);
        if (rc < 0) {
            fprintf(stderr, "rspwalk: --steppers: adding %s: %s\n", name,
                    rc == SW_ENOMEM || rc == SW_ENOENT ? sw_strerror(rc) : sw_walker_errmsg(w));
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}
