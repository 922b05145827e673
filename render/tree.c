/* render/tree.c -- the merged prefix tree: tasks, paths merged root first, task ranges.
 *
 * STAT's model (docs/json.md, "The merged tree"): every call path of every
 * task is merged into one tree from the outermost caller in; each node
 * keeps the set of tasks through it and a count (tasks for a snapshot,
 * samples for a profile).  The writers are in render/tree_write.c.
 */
#include "render/tree.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/errors.h"
#include "util/util.h"

/* ---- task sets ------------------------------------------------------------ */

int
sw_rangeset_reserve(struct sw_rangeset *s, size_t k)
{
    struct sw_range *r = sw_grow(s->r, &s->cap, s->n + k, sizeof *r, 4);
    if (r == NULL)
        return SW_ENOMEM;
    s->r = r;
    return 0;
}

/* Add LO..HI: the ranges it touches or overlaps become one, else it is
 * inserted in order.  Only an insertion needs room. */
int
sw_rangeset_add_range(struct sw_rangeset *s, size_t lo, size_t hi)
{
    if (s->n > 0) {
        struct sw_range *last = &s->r[s->n - 1];
        /* Tasks come mostly in order: extend or append at the end. */
        if (lo >= last->lo && lo <= last->hi + 1) {
            if (hi > last->hi)
                last->hi = hi;
            return 0;
        }
    }
    /* I: the first range that ends at or after LO - 1; J: the first that
     * starts after HI + 1.  Ranges I..J-1 touch LO..HI. */
    size_t a = 0, b = s->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (s->r[m].hi + 1 < lo)
            a = m + 1;
        else
            b = m;
    }
    size_t i = a;
    b = s->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (s->r[m].lo <= hi + 1)
            a = m + 1;
        else
            b = m;
    }
    size_t j = a;
    if (i == j) {
        if (sw_rangeset_reserve(s, 1) < 0)
            return SW_ENOMEM;
        memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof s->r[0]);
        s->r[i] = (struct sw_range){ lo, hi };
        s->n++;
        return 0;
    }
    if (s->r[i].lo < lo)
        lo = s->r[i].lo;
    if (s->r[j - 1].hi > hi)
        hi = s->r[j - 1].hi;
    s->r[i] = (struct sw_range){ lo, hi };
    memmove(&s->r[i + 1], &s->r[j], (s->n - j) * sizeof s->r[0]);
    s->n -= j - i - 1;
    return 0;
}

int
sw_rangeset_add(struct sw_rangeset *s, size_t task)
{
    return sw_rangeset_add_range(s, task, task);
}

int
sw_rangeset_add_set(struct sw_rangeset *s, const struct sw_rangeset *src, size_t shift)
{
    if (sw_rangeset_reserve(s, src->n) < 0)
        return SW_ENOMEM;
    for (size_t i = 0; i < src->n; i++)
        sw_rangeset_add_range(s, src->r[i].lo + shift, src->r[i].hi + shift);
    return 0;
}

void
sw_rangeset_keep_first(struct sw_rangeset *s)
{
    if (s->n > 0) {
        s->r[0].hi = s->r[0].lo;
        s->n = 1;
    }
}

bool
sw_rangeset_has(const struct sw_rangeset *s, size_t task)
{
    size_t a = 0, b = s->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (s->r[m].hi < task)
            a = m + 1;
        else
            b = m;
    }
    return a < s->n && s->r[a].lo <= task;
}

void
sw_rangeset_fini(struct sw_rangeset *s)
{
    sw_free(s->r);
    *s = (struct sw_rangeset){ 0 };
}

void
sw_rangeset_write(const struct sw_rangeset *s, FILE *f)
{
    fputc('[', f);
    for (size_t i = 0; i < s->n; i++) {
        if (s->r[i].lo == s->r[i].hi)
            fprintf(f, "%s%zu", i ? "," : "", s->r[i].lo);
        else
            fprintf(f, "%s%zu-%zu", i ? "," : "", s->r[i].lo, s->r[i].hi);
    }
    fputc(']', f);
}

/* ---- nodes ---------------------------------------------------------------- */

static int
key_cmp(const char *name, const char *module, const struct sw_tree_node *n)
{
    int c = strcmp(name, n->name);
    if (c != 0)
        return c;
    if (module == NULL || n->module == NULL)
        return (module != NULL) - (n->module != NULL);
    return strcmp(module, n->module);
}

/* The child of P named NAME in MODULE, made (without tasks) if P has none.
 * NULL when out of memory. */
struct sw_tree_node *
sw_tree_node_child(struct sw_tree_node *p, const char *name, const char *module)
{
    size_t a = 0, b = p->nkids;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        int c = key_cmp(name, module, p->kids[m]);
        if (c == 0)
            return p->kids[m];
        if (c > 0)
            a = m + 1;
        else
            b = m;
    }
    struct sw_tree_node **kids = sw_grow(p->kids, &p->capkids, p->nkids + 1, sizeof *kids, 2);
    if (kids == NULL)
        return NULL;
    p->kids = kids;
    struct sw_tree_node *n = sw_calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->name = sw_strdup(name);
    n->module = module ? sw_strdup(module) : NULL;
    if (n->name == NULL || (module != NULL && n->module == NULL)) {
        sw_free(n->name);
        sw_free(n->module);
        sw_free(n);
        return NULL;
    }
    memmove(&kids[a + 1], &kids[a], (p->nkids - a) * sizeof *kids);
    kids[a] = n;
    p->nkids++;
    return n;
}

static void
node_fini(struct sw_tree_node *n)
{
    sw_free(n->name);
    sw_free(n->module);
    sw_rangeset_fini(&n->tasks);
    sw_rangeset_fini(&n->ends);
    sw_free(n->kids);
}

/* ---- the tree ------------------------------------------------------------- */

int
sw_tree_new(struct sw_tree **out)
{
    struct sw_tree *t = sw_calloc(1, sizeof *t);
    if (t == NULL)
        return SW_ENOMEM;
    t->root.name = sw_strdup("/");
    if (t->root.name == NULL) {
        sw_free(t);
        return SW_ENOMEM;
    }
    *out = t;
    return 0;
}

void
sw_tree_free(struct sw_tree *t)
{
    if (t == NULL)
        return;
    /* Without recursion: a list threaded through LINK, each node's
     * children pushed on it before the node goes. */
    struct sw_tree_node *todo = NULL;
    for (size_t i = 0; i < t->root.nkids; i++) {
        t->root.kids[i]->link = todo;
        todo = t->root.kids[i];
    }
    while (todo != NULL) {
        struct sw_tree_node *n = todo;
        todo = n->link;
        for (size_t i = 0; i < n->nkids; i++) {
            n->kids[i]->link = todo;
            todo = n->kids[i];
        }
        node_fini(n);
        sw_free(n);
    }
    node_fini(&t->root);
    for (size_t i = 0; i < t->ntasks; i++)
        sw_free(t->tasks[i].thread);
    sw_free(t->tasks);
    for (size_t i = 0; i < t->ntargets; i++)
        sw_free(t->targets[i]);
    sw_free(t->targets);
    sw_free(t->scratch);
    sw_free(t);
}

int
sw_tree_target(struct sw_tree *t, const char *target, size_t *out)
{
    *out = SIZE_MAX;
    if (target == NULL)
        return 0;
    /* Tasks of one target come together: look from the last one back. */
    for (size_t i = t->ntargets; i-- > 0;)
        if (strcmp(t->targets[i], target) == 0) {
            *out = i;
            return 0;
        }
    char **v = sw_grow(t->targets, &t->captargets, t->ntargets + 1, sizeof *v, 4);
    if (v == NULL)
        return SW_ENOMEM;
    t->targets = v;
    if ((v[t->ntargets] = sw_strdup(target)) == NULL)
        return SW_ENOMEM;
    *out = t->ntargets++;
    return 0;
}

int
sw_tree_add_task(struct sw_tree *t, const char *target, int64_t pid, const char *thread,
                 size_t *task)
{
    struct sw_tree_task k = { .pid = pid };
    struct sw_tree_task *v = sw_grow(t->tasks, &t->captasks, t->ntasks + 1, sizeof *v, 16);

    if (v == NULL)
        return SW_ENOMEM;
    t->tasks = v;
    if (sw_tree_target(t, target, &k.target) < 0)
        return SW_ENOMEM;
    if (thread != NULL && (k.thread = sw_strdup(thread)) == NULL)
        return SW_ENOMEM;
    v[t->ntasks] = k;
    if (task != NULL)
        *task = t->ntasks;
    t->ntasks++;
    return 0;
}

size_t
sw_tree_tasks(const struct sw_tree *t)
{
    return t->ntasks;
}

/* A frame's node name: its function, else its pc. */
static const char *
frame_name(const struct sw_tree_frame *fr, char *buf, size_t len)
{
    if (fr->function != NULL)
        return fr->function;
    snprintf(buf, len, "0x%" PRIx64, fr->pc);
    return buf;
}

int
sw_tree_add_path(struct sw_tree *t, size_t task, const struct sw_tree_frame *path, size_t n,
                 uint64_t count)
{
    if (task >= t->ntasks)
        return SW_EINVAL;
    /* First every node and room for the task in each, so that nothing is
     * counted unless all of it is: a node made here and left without tasks
     * by a failure is invisible to the writers and reused later.  The nodes
     * are kept in T's scratch array for the second pass. */
    struct sw_tree_node **at = sw_grow(t->scratch, &t->capscratch, n + 1, sizeof *at, 64);
    if (at == NULL)
        return SW_ENOMEM;
    t->scratch = at;
    struct sw_tree_node *node = &t->root;
    at[0] = node;
    if (sw_rangeset_reserve(&node->tasks, 1) < 0)
        return SW_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char pc[24];
        node = sw_tree_node_child(node, frame_name(&path[i], pc, sizeof pc), path[i].module);
        if (node == NULL || sw_rangeset_reserve(&node->tasks, 1) < 0)
            return SW_ENOMEM;
        at[i + 1] = node;
    }
    if (sw_rangeset_reserve(&node->ends, 1) < 0)
        return SW_ENOMEM;

    for (size_t i = 0; i <= n; i++) {
        at[i]->count += count;
        sw_rangeset_add(&at[i]->tasks, task);
        if (t->countrep)
            sw_rangeset_keep_first(&at[i]->tasks);
    }
    node->self += count;
    sw_rangeset_add(&node->ends, task);
    if (t->countrep)
        sw_rangeset_keep_first(&node->ends);
    return 0;
}

int
sw_tree_set_countrep(struct sw_tree *t)
{
    if (t->root.tasks.n > 0)
        return SW_EINVAL;
    t->countrep = true;
    return 0;
}

/* ---- depth-first walks ---------------------------------------------------- */

struct walk_frame {
    const struct sw_tree_node *node;
    const struct sw_tree_node **kids; /* owned when the walk is SORTED, else NODE's own */
    size_t nkids, next, written;
};

/* A walk's stacks: FR, STACK and HASH have LIVE initialized entries. */
struct walk_state {
    bool sorted;
    struct walk_frame *fr;
    const struct sw_tree_node **stack;
    uint64_t *hash;
    size_t cap, capstack, caphash, live;
};

static int
kids_order(const void *a, const void *b)
{
    const struct sw_tree_node *x = *(const struct sw_tree_node *const *)a;
    const struct sw_tree_node *y = *(const struct sw_tree_node *const *)b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return key_cmp(x->name, x->module, y);
}

/* The STAT node id of node N under a node with id H: sdbm (the hash STAT's
 * daemons give a call path, so that equal paths get equal ids) continued
 * over "NAME\nMODULE\n". */
static uint64_t
path_hash(uint64_t h, const struct sw_tree_node *n)
{
    for (const unsigned char *p = (const unsigned char *)n->name; *p; p++)
        h = *p + (h << 6) + (h << 16) - h;
    h = '\n' + (h << 6) + (h << 16) - h;
    for (const unsigned char *p = (const unsigned char *)(n->module ? n->module : ""); *p; p++)
        h = *p + (h << 6) + (h << 16) - h;
    return '\n' + (h << 6) + (h << 16) - h;
}

/* Push N at depth W->live with its id H.  Returns 0 or SW_ENOMEM. */
static int
walk_push(struct walk_state *w, const struct sw_tree_node *n, uint64_t h)
{
    size_t d = w->live;
    struct walk_frame *fr = sw_grow(w->fr, &w->cap, d + 1, sizeof *fr, 16);
    if (fr == NULL)
        return SW_ENOMEM;
    w->fr = fr;
    const struct sw_tree_node **stack = sw_grow(w->stack, &w->capstack, d + 1, sizeof *stack, 16);
    if (stack == NULL)
        return SW_ENOMEM;
    w->stack = stack;
    uint64_t *hash = sw_grow(w->hash, &w->caphash, d + 1, sizeof *hash, 16);
    if (hash == NULL)
        return SW_ENOMEM;
    w->hash = hash;
    fr[d] = (struct walk_frame){ .node = n, .nkids = n->nkids };
    if (w->sorted && n->nkids > 0) {
        fr[d].kids = sw_malloc(n->nkids * sizeof *fr[d].kids);
        if (fr[d].kids == NULL)
            return SW_ENOMEM;
        memcpy(fr[d].kids, n->kids, n->nkids * sizeof *fr[d].kids);
        qsort(fr[d].kids, n->nkids, sizeof *fr[d].kids, kids_order);
    } else {
        fr[d].kids = (const struct sw_tree_node **)n->kids;
    }
    stack[d] = n;
    hash[d] = h;
    w->live++;
    return 0;
}

static void
walk_pop(struct walk_state *w)
{
    w->live--;
    if (w->sorted)
        sw_free(w->fr[w->live].kids);
}

int
sw_tree_walk(const struct sw_tree *t, bool sorted,
             int (*fn)(void *arg, const struct sw_tree_visit *v), void *arg)
{
    struct walk_state w = { .sorted = sorted };
    int rc = walk_push(&w, &t->root, 0);

    if (rc == 0) {
        struct sw_tree_visit v = { w.stack, w.hash, 0, 0, false, t };
        rc = fn(arg, &v);
    }
    while (rc == 0 && w.live > 0) {
        size_t d = w.live - 1;
        struct walk_frame *top = &w.fr[d];
        if (top->next < top->nkids) {
            const struct sw_tree_node *kid = top->kids[top->next++];
            if (kid->tasks.n == 0)
                continue;
            size_t index = top->written++;
            rc = walk_push(&w, kid, path_hash(w.hash[d], kid));
            if (rc == 0) {
                struct sw_tree_visit v = { w.stack, w.hash, d + 1, index, false, t };
                rc = fn(arg, &v);
            }
            continue;
        }
        struct sw_tree_visit v = {
            w.stack, w.hash, d, d > 0 ? w.fr[d - 1].written - 1 : 0, true, t
        };
        rc = fn(arg, &v);
        walk_pop(&w);
    }
    while (w.live > 0)
        walk_pop(&w);
    sw_free(w.fr);
    sw_free(w.stack);
    sw_free(w.hash);
    return rc;
}

/* ---- merging -------------------------------------------------------------- */

struct merge_run {
    struct sw_tree *dst;
    size_t shift;
    struct sw_tree_node **at; /* DST's node at each depth of the walk of SRC */
    size_t cap;
};

static int
merge_visit(void *arg, const struct sw_tree_visit *v)
{
    struct merge_run *m = arg;
    const struct sw_tree_node *s = v->stack[v->depth];

    if (v->post)
        return 0;
    struct sw_tree_node **at = sw_grow(m->at, &m->cap, v->depth + 1, sizeof *at, 16);
    if (at == NULL)
        return SW_ENOMEM;
    m->at = at;
    struct sw_tree_node *d =
        v->depth == 0 ? &m->dst->root : sw_tree_node_child(at[v->depth - 1], s->name, s->module);
    if (d == NULL)
        return SW_ENOMEM;
    at[v->depth] = d;
    if (sw_rangeset_add_set(&d->tasks, &s->tasks, m->shift) < 0 ||
        sw_rangeset_add_set(&d->ends, &s->ends, m->shift) < 0)
        return SW_ENOMEM;
    if (m->dst->countrep) {
        sw_rangeset_keep_first(&d->tasks);
        sw_rangeset_keep_first(&d->ends);
    }
    d->count += s->count;
    d->self += s->self;
    return 0;
}

int
sw_tree_merge(struct sw_tree *dst, const struct sw_tree *src)
{
    struct merge_run m = { .dst = dst, .shift = dst->ntasks };

    /* A tree that kept representatives only cannot give back the task sets
     * it dropped: the merge keeps representatives too. */
    if (src->countrep)
        dst->countrep = true;

    for (size_t i = 0; i < src->ntasks; i++) {
        const struct sw_tree_task *k = &src->tasks[i];
        if (sw_tree_add_task(dst, k->target == SIZE_MAX ? NULL : src->targets[k->target], k->pid,
                             k->thread, NULL) < 0)
            return SW_ENOMEM;
    }
    int rc = sw_tree_walk(src, false, merge_visit, &m);
    sw_free(m.at);
    return rc;
}
