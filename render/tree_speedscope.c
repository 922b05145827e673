/* render/tree_speedscope.c -- the merged tree as a speedscope profile.
 *
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * the distinct frames once in "shared", then one "sampled" profile whose samples
 * are the tree's distinct paths, root first, each weighted by the count of the
 * paths that end there.  Time order is not kept (the tree has none): speedscope's
 * left-heavy and sandwich views need none.  The tree is in render/tree.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/json.h"
#include "render/tree.h"
#include "rspwalk/errors.h"
#include "util/util.h"

/* A frame of the profile: a (function, module) pair, numbered in the order
 * first met. */
struct ss_frame {
    const char *name;   /* borrowed from the tree */
    const char *module; /* borrowed; NULL: none */
    size_t index;
};

struct ss_run {
    FILE *f;
    struct ss_frame *slots; /* owned: CAP (a power of two), N used */
    size_t n, cap;
    const struct sw_tree_node **order; /* owned: the frames' first nodes, by index */
    bool written;                      /* a sample was written */
    uint64_t total;
};

static uint64_t
ss_hash(const char *name, const char *module)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *c = module ? module : ""; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

static bool
ss_same(const struct ss_frame *s, const char *name, const char *module)
{
    if (strcmp(s->name, name) != 0)
        return false;
    if (s->module == NULL || module == NULL)
        return s->module == module;
    return strcmp(s->module, module) == 0;
}

static int
ss_grow(struct ss_run *r)
{
    size_t cap = r->cap ? 2 * r->cap : 256;
    struct ss_frame *slots = sw_calloc(cap, sizeof *slots);
    const struct sw_tree_node **order = sw_realloc(r->order, cap * sizeof *order);
    if (slots == NULL || order == NULL) {
        sw_free(slots);
        if (order != NULL)
            r->order = order;
        return SW_ENOMEM;
    }
    r->order = order;
    for (size_t i = 0; i < r->cap; i++) {
        if (r->slots[i].name == NULL)
            continue;
        size_t j = ss_hash(r->slots[i].name, r->slots[i].module) & (cap - 1);
        while (slots[j].name != NULL)
            j = (j + 1) & (cap - 1);
        slots[j] = r->slots[i];
    }
    sw_free(r->slots);
    r->slots = slots;
    r->cap = cap;
    return 0;
}

/* The index of node N's frame, numbered now if new.  Returns 0 or SW_ENOMEM. */
static int
ss_index(struct ss_run *r, const struct sw_tree_node *n, size_t *out)
{
    if (2 * (r->n + 1) > r->cap && ss_grow(r) < 0)
        return SW_ENOMEM;
    size_t j = ss_hash(n->name, n->module) & (r->cap - 1);
    while (r->slots[j].name != NULL) {
        if (ss_same(&r->slots[j], n->name, n->module)) {
            *out = r->slots[j].index;
            return 0;
        }
        j = (j + 1) & (r->cap - 1);
    }
    r->slots[j] = (struct ss_frame){ .name = n->name, .module = n->module, .index = r->n };
    r->order[r->n] = n;
    *out = r->n++;
    return 0;
}

/* First pass: every node's frame numbered, depth first in storage order. */
static int
ss_number(void *arg, const struct sw_tree_visit *v)
{
    struct ss_run *r = arg;
    size_t idx;
    if (v->post || v->depth == 0)
        return 0;
    return ss_index(r, v->stack[v->depth], &idx);
}

/* Second pass: a sample for every node where paths end. */
static int
ss_sample(void *arg, const struct sw_tree_visit *v)
{
    struct ss_run *r = arg;
    const struct sw_tree_node *n = v->stack[v->depth];
    if (v->post || v->depth == 0 || n->self == 0)
        return 0;
    fputs(r->written ? ",\n   [" : "\n   [", r->f);
    for (size_t d = 1; d <= v->depth; d++) {
        size_t idx;
        int rc = ss_index(r, v->stack[d], &idx);
        if (rc < 0)
            return rc;
        fprintf(r->f, d > 1 ? ",%zu" : "%zu", idx);
    }
    fputc(']', r->f);
    r->written = true;
    r->total += n->self;
    return 0;
}

static int
ss_weight(void *arg, const struct sw_tree_visit *v)
{
    struct ss_run *r = arg;
    const struct sw_tree_node *n = v->stack[v->depth];
    if (v->post || v->depth == 0 || n->self == 0)
        return 0;
    fprintf(r->f, r->written ? ", %" PRIu64 : "%" PRIu64, n->self);
    r->written = true;
    return 0;
}

int
sw_tree_write_speedscope(const struct sw_tree *t, const char *name, FILE *f)
{
    struct ss_run r = { .f = f };
    int rc = sw_tree_walk(t, true, ss_number, &r);
    if (rc < 0)
        goto out;
    fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
          " \"exporter\": \"rspwalk\",\n \"name\": ",
          f);
    sw_json_str(f, name ? name : "rspwalk");
    fputs(",\n \"activeProfileIndex\": 0,\n \"shared\": {\"frames\": [", f);
    for (size_t i = 0; i < r.n; i++) {
        fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        sw_json_str(f, r.order[i]->name);
        if (r.order[i]->module != NULL) {
            fputs(", \"file\": ", f);
            sw_json_str(f, r.order[i]->module);
        }
        fputc('}', f);
    }
    fputs("]},\n \"profiles\": [{\"type\": \"sampled\", \"name\": ", f);
    sw_json_str(f, name ? name : "rspwalk");
    fputs(", \"unit\": \"none\", \"startValue\": 0,\n  \"samples\": [", f);
    if ((rc = sw_tree_walk(t, true, ss_sample, &r)) < 0)
        goto out;
    fputs("],\n  \"weights\": [", f);
    r.written = false;
    if ((rc = sw_tree_walk(t, true, ss_weight, &r)) < 0)
        goto out;
    fprintf(f, "],\n  \"endValue\": %" PRIu64 "}]}\n", r.total);
out:
    sw_free(r.slots);
    sw_free(r.order);
    return rc;
}
