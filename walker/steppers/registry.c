/* walker/steppers/registry.c -- the default steppers by name.
 *
 * The one list of the stepper kinds rspwalk ships, in priority order, for
 * the walker's default set and for choosing steppers by name (the CLI's
 * --steppers).  Above every stepper, below the walker; not the group that
 * orders steppers at walk time (walker/stepper_group.c).
 */
#include "rspwalk/stepper.h"

#include <string.h>

#include "rspwalk/errors.h"

/* The default steppers in priority order, by their ops->name. */
static const struct {
    const char *name;
    struct sw_stepper *(*ctor)(void);
} named_steppers[] = {
    { "stackbottom", sw_stepper_stackbottom_new },
    { "sighandler", sw_stepper_sighandler_new },
    { "debug", sw_stepper_debug_new },
    { "ehabi", sw_stepper_ehabi_new },
    { "frame-func", sw_stepper_frame_func_new },
    { "analysis", sw_stepper_analysis_new },
    { "wanderer", sw_stepper_wanderer_new },
};

const char *
sw_stepper_default_name(size_t i)
{
    return i < sizeof named_steppers / sizeof named_steppers[0] ? named_steppers[i].name : NULL;
}

int
sw_stepper_new_named(const char *name, struct sw_stepper **out)
{
    *out = NULL;
    for (size_t i = 0; name != NULL && i < sizeof named_steppers / sizeof named_steppers[0]; i++) {
        if (strcmp(name, named_steppers[i].name) == 0) {
            *out = named_steppers[i].ctor();
            return *out != NULL ? 0 : SW_ENOMEM;
        }
    }
    return SW_ENOENT;
}
