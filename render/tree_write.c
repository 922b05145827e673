/* render/tree_write.c -- the merged tree as JSON, as STAT's dot, as folded stacks.
 *
 * docs/json.md ("The merged tree") is the JSON's schema; the dot is what
 * STAT's graphlib writes (graph type stat_4_1, node ids a hash of the path,
 * edge task sets in "bv") with labels filled, so that plain graphviz draws
 * it; folded stacks are flamegraph.pl's input.  The tree is in render/tree.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/json.h"
#include "render/tree.h"
#include "rspwalk/errors.h"
#include "util/util.h"

/* ---- JSON ----------------------------------------------------------------- */

/* Indentation of the JSON: one space a level, so that a tree reads as one
 * node a line; no deeper than this, or a runaway recursion's path of
 * 100000 frames would take gigabytes of spaces. */
#define TREE_JSON_MAX_INDENT 64

static void
indent(FILE *f, size_t n)
{
    fputc('\n', f);
    for (size_t i = 0; i < n && i < TREE_JSON_MAX_INDENT; i++)
        fputc(' ', f);
}

static int
json_node(void *arg, const struct sw_tree_visit *v)
{
    FILE *f = arg;
    const struct sw_tree_node *n = v->stack[v->depth];

    if (v->post) {
        fputs("]}", f);
        return 0;
    }
    if (v->depth > 0) {
        if (v->index > 0)
            fputc(',', f);
        indent(f, v->depth + 1);
    }
    fputs("{\"function\": ", f);
    sw_json_str(f, n->name);
    if (v->depth > 0) {
        fputs(", \"module\": ", f);
        sw_json_str(f, n->module);
    }
    fprintf(f, ", \"count\": %" PRIu64 ", \"tasks\": \"", n->count);
    sw_rangeset_write(&n->tasks, f);
    fputc('"', f);
    if (v->tree->countrep && n->tasks.n > 0)
        fprintf(f, ", \"rep\": %zu", n->tasks.r[0].lo);
    fputs(", \"children\": [", f);
    return 0;
}

struct class_run {
    FILE *f;
    size_t written;
};

/* The equivalence classes: where paths end, with the tasks whose path ends
 * there (STAT's classes of a snapshot are the task sets of the leaves). */
static int
json_class(void *arg, const struct sw_tree_visit *v)
{
    struct class_run *c = arg;
    const struct sw_tree_node *n = v->stack[v->depth];

    if (v->post || n->ends.n == 0)
        return 0;
    fputs(c->written++ ? ",\n  {\"tasks\": \"" : "\n  {\"tasks\": \"", c->f);
    sw_rangeset_write(&n->ends, c->f);
    fprintf(c->f, "\", \"count\": %" PRIu64 ", \"path\": [", n->self);
    for (size_t d = 1; d <= v->depth; d++) {
        if (d > 1)
            fputs(", ", c->f);
        sw_json_str(c->f, v->stack[d]->name);
    }
    fputs("]}", c->f);
    return 0;
}

int
sw_tree_write_json_members(const struct sw_tree *t, FILE *f)
{
    fprintf(f, "\"version\": 1, \"tasks\": %zu, \"tasks_index\": [", t->ntasks);
    for (size_t i = 0; i < t->ntasks; i++) {
        const struct sw_tree_task *k = &t->tasks[i];
        fprintf(f, "%s\n  {\"task\": %zu, \"target\": ", i ? "," : "", i);
        sw_json_str(f, k->target == SIZE_MAX ? NULL : t->targets[k->target]);
        if (k->pid != 0)
            fprintf(f, ", \"pid\": %" PRId64 ", \"thread\": ", k->pid);
        else
            fputs(", \"pid\": null, \"thread\": ", f);
        sw_json_str(f, k->thread);
        fputc('}', f);
    }
    fputs("],\n \"tree\": ", f);
    int rc = sw_tree_walk(t, true, json_node, f);
    if (rc < 0)
        return rc;
    fputs(",\n \"classes\": [", f);
    struct class_run c = { .f = f };
    rc = sw_tree_walk(t, true, json_class, &c);
    if (rc < 0)
        return rc;
    fputc(']', f);
    return 0;
}

/* ---- STAT's dot ----------------------------------------------------------- */

/* S inside a dot string: escaped for text first (sw_text_fputs: no control
 * character or invalid UTF-8 reaches graphviz, which wants UTF-8), then
 * quotes and backslashes escaped; for a record label (LABEL) also the
 * characters that shape records ("{}|<>"), which C++ names are full of. */
static void
dot_str(FILE *f, const char *s, bool label)
{
    char *safe = sw_text_escape(s, 0);
    fputc('"', f);
    for (const char *p = safe ? safe : "?"; *p; p++) {
        if (*p == '"' || *p == '\\' || (label && strchr("{}|<>", *p) != NULL))
            fputc('\\', f);
        fputc(*p, f);
    }
    fputc('"', f);
    free(safe);
}

static int
dot_node(void *arg, const struct sw_tree_visit *v)
{
    FILE *f = arg;
    const struct sw_tree_node *n = v->stack[v->depth];

    if (v->post)
        return 0;
    fprintf(f, "\t%" PRIu64 " [function=", v->hash[v->depth]);
    dot_str(f, n->name, false);
    if (v->depth > 0) {
        fputs(",module=", f);
        dot_str(f, n->module, false);
    }
    fputs(",label=", f);
    dot_str(f, n->name, true);
    fputs("];\n", f);
    return 0;
}

static int
dot_edge(void *arg, const struct sw_tree_visit *v)
{
    FILE *f = arg;
    const struct sw_tree_node *n = v->stack[v->depth];

    if (v->post || v->depth == 0)
        return 0;
    fprintf(f, "\t%" PRIu64 " -> %" PRIu64 " [bv=\"", v->hash[v->depth - 1], v->hash[v->depth]);
    sw_rangeset_write(&n->tasks, f);
    fprintf(f, "\",count=%" PRIu64, n->count);
    /* Count+rep: STAT's rep attribute, and the label says the set is one
     * task of many. */
    if (v->tree->countrep && n->tasks.n > 0)
        fprintf(f, ",rep=%zu", n->tasks.r[0].lo);
    fprintf(f, ",label=\"%" PRIu64 ":", n->count);
    sw_rangeset_write(&n->tasks, f);
    if (v->tree->countrep && n->count > 1)
        fputs("...", f);
    fputs("\"];\n", f);
    return 0;
}

static int
write_dot(const struct sw_tree *t, FILE *f)
{
    fputs("digraph G {\n"
          "\tgraph [type=\"stat_4_1\"];\n"
          "\tnode [shape=record,style=filled,labeljust=c,height=0.2];\n",
          f);
    int rc = sw_tree_walk(t, true, dot_node, f);
    if (rc == 0)
        rc = sw_tree_walk(t, true, dot_edge, f);
    fputs("}\n", f);
    return rc;
}

/* ---- folded stacks -------------------------------------------------------- */

struct folded_run {
    char **lines; /* owned, each owned */
    size_t n, cap;
};

/* A name in a folded line: ';' separates frames there and a line is one
 * line, so both are escaped with every control character (sw_text_escape). */
static int
folded_name(struct sw_buf *b, const char *name)
{
    char *safe = sw_text_escape(name, SW_TEXT_ESCAPE_SEMICOLON);
    int rc = safe != NULL ? sw_buf_append(b, safe, strlen(safe)) : SW_ENOMEM;
    free(safe);
    return rc < 0 ? SW_ENOMEM : 0;
}

static int
folded_line(void *arg, const struct sw_tree_visit *v)
{
    struct folded_run *r = arg;
    const struct sw_tree_node *n = v->stack[v->depth];
    struct sw_buf b;

    if (v->post || v->depth == 0 || n->self == 0)
        return 0;
    char **lines = sw_grow(r->lines, &r->cap, r->n + 1, sizeof *lines, 16);
    if (lines == NULL)
        return SW_ENOMEM;
    r->lines = lines;
    sw_buf_init(&b);
    int rc = 0;
    for (size_t d = 1; rc == 0 && d <= v->depth; d++) {
        if (d > 1)
            rc = sw_buf_append(&b, ";", 1);
        if (rc == 0)
            rc = folded_name(&b, v->stack[d]->name);
    }
    if (rc == 0)
        rc = sw_buf_printf(&b, " %" PRIu64, n->self);
    if (rc == 0)
        rc = sw_buf_terminate(&b);
    if (rc < 0) {
        sw_buf_fini(&b);
        return SW_ENOMEM;
    }
    lines[r->n++] = b.data;
    return 0;
}

static int
line_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
write_folded(const struct sw_tree *t, FILE *f)
{
    struct folded_run r = { 0 };
    int rc = sw_tree_walk(t, false, folded_line, &r);

    if (rc == 0 && r.n > 0) {
        qsort(r.lines, r.n, sizeof *r.lines, line_cmp);
        for (size_t i = 0; i < r.n; i++)
            fprintf(f, "%s\n", r.lines[i]);
    }
    for (size_t i = 0; i < r.n; i++)
        sw_free(r.lines[i]);
    sw_free(r.lines);
    return rc;
}

/* ---- the entry ------------------------------------------------------------ */

int
sw_tree_write(const struct sw_tree *t, enum sw_tree_format format, FILE *f)
{
    int rc;

    switch (format) {
    case SW_TREE_JSON:
        fputc('{', f);
        rc = sw_tree_write_json_members(t, f);
        fputs("}\n", f);
        break;
    case SW_TREE_DOT:
        rc = write_dot(t, f);
        break;
    case SW_TREE_FOLDED:
        rc = write_folded(t, f);
        break;
    case SW_TREE_SPEEDSCOPE:
        rc = sw_tree_write_speedscope(t, NULL, f);
        break;
    default:
        return SW_EINVAL;
    }
    if (rc == 0 && (fflush(f) != 0 || ferror(f)))
        rc = SW_EIO;
    return rc;
}
