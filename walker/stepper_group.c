/* walker/stepper_group.c -- StepperGroup: address ranges x priority.
 *
 * A flat list of (stepper, range) entries kept sorted by priority, then by
 * insertion order.  The few dozen ranges a walker registers make a linear
 * scan cheaper than a tree.  Not the walk loop (walker/walker.c), not the
 * default steppers by name (walker/steppers/registry.c).
 */
#include "walker/stepper_group.h"

#include "util/util.h"

int
sw_stepper_group_init(struct sw_stepper_group *g)
{
    g->entries = NULL;
    g->n = g->cap = 0;
    g->seq = 0;
    return 0;
}

void
sw_stepper_group_fini(struct sw_stepper_group *g)
{
    sw_free(g->entries);
    g->entries = NULL;
    g->n = g->cap = 0;
}

int
sw_stepper_group_add(struct sw_stepper_group *g, struct sw_stepper *s, sw_addr start, sw_addr end)
{
    if (s == NULL || s->ops == NULL || start >= end)
        return SW_EINVAL;
    struct sw_group_entry *e = sw_grow(g->entries, &g->cap, g->n + 1, sizeof *e, 16);
    if (e == NULL)
        return SW_ENOMEM;
    g->entries = e;
    /* Insert after every entry of lower or equal priority: stable order. */
    size_t i = g->n;
    while (i > 0 && g->entries[i - 1].stepper->ops->priority > s->ops->priority) {
        g->entries[i] = g->entries[i - 1];
        i--;
    }
    g->entries[i] =
        (struct sw_group_entry){ .stepper = s, .start = start, .end = end, .seq = g->seq++ };
    g->n++;
    return 0;
}

void
sw_stepper_group_remove(struct sw_stepper_group *g, struct sw_stepper *s)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->entries[i].stepper != s)
            g->entries[k++] = g->entries[i];
    g->n = k;
}

struct sw_stepper *
sw_stepper_group_find(const struct sw_stepper_group *g, sw_addr addr,
                      const struct sw_stepper *last_tried)
{
    size_t i = 0;

    /* Resume after the first entry of LAST_TRIED that covers ADDR; a stepper
     * with several covering ranges is offered once. */
    if (last_tried != NULL) {
        for (; i < g->n; i++)
            if (g->entries[i].stepper == last_tried && addr >= g->entries[i].start &&
                addr < g->entries[i].end)
                break;
        if (i == g->n)
            return NULL;
        i++;
    }
    for (; i < g->n; i++) {
        const struct sw_group_entry *e = &g->entries[i];
        if (addr < e->start || addr >= e->end || e->stepper == last_tried)
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = g->entries[j].stepper == e->stepper && addr >= g->entries[j].start &&
                   addr < g->entries[j].end;
        if (!seen)
            return e->stepper;
    }
    return NULL;
}

void
sw_stepper_group_steppers(const struct sw_stepper_group *g, struct sw_stepper **out, size_t max,
                          size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = g->entries[j].stepper == g->entries[i].stepper;
        if (seen)
            continue;
        if (k < max)
            out[k] = g->entries[i].stepper;
        k++;
    }
    *n = k;
}
