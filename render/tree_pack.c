/* render/tree_pack.c -- the merged tree packed to bytes and merged back from them.
 *
 * What rspwalk-mpi's ranks send up their tree of ranks: the layout is in
 * docs/design.md ("The merged tree on the wire").  The reader takes bytes
 * from another process, so every length and number is checked before use
 * and an error names the offset; it never recurses.  The tree is in
 * render/tree.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/tree.h"
#include "rspwalk/errors.h"
#include "util/util.h"

/* "SWT" and the layout's version. */
static const char pack_magic[4] = { 'S', 'W', 'T', '1' };

enum { PACK_FLAG_COUNTREP = 1 };

/* ---- writing -------------------------------------------------------------- */

/* V as LEB128: seven bits a byte, low first, the high bit set on all but
 * the last. */
static int
put_uint(struct sw_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = v & 0x7f;
        v >>= 7;
        if (v != 0)
            tmp[n] |= 0x80;
        n++;
    } while (v != 0);
    return sw_buf_append(b, tmp, n);
}

/* S as its length and bytes; NULL as 0 and "" as 1 when NULLABLE (the
 * length is then one more than the string's). */
static int
put_str(struct sw_buf *b, const char *s, bool nullable)
{
    if (s == NULL)
        return put_uint(b, 0);
    size_t n = strlen(s);
    if (put_uint(b, n + (nullable ? 1 : 0)) < 0)
        return SW_ENOMEM;
    return sw_buf_append(b, s, n);
}

/* A task set: its number of ranges, then each range as the gap from the end
 * of the one before (the first from 0) and its length less one. */
static int
put_set(struct sw_buf *b, const struct sw_rangeset *s)
{
    size_t next = 0;
    int rc = put_uint(b, s->n);
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        rc = put_uint(b, s->r[i].lo - next);
        if (rc == 0)
            rc = put_uint(b, s->r[i].hi - s->r[i].lo);
        next = s->r[i].hi + 1;
    }
    return rc;
}

static int
pack_node(void *arg, const struct sw_tree_visit *v)
{
    struct sw_buf *b = arg;
    const struct sw_tree_node *n = v->stack[v->depth];
    size_t kids = 0;
    int rc = 0;

    if (v->post)
        return 0;
    /* The walk skips nodes without tasks (left by a failed add): so does
     * the count of children. */
    for (size_t i = 0; i < n->nkids; i++)
        kids += n->kids[i]->tasks.n > 0;
    if (v->depth > 0) {
        rc = put_str(b, n->name, false);
        if (rc == 0)
            rc = put_str(b, n->module, true);
    }
    if (rc == 0)
        rc = put_uint(b, n->count);
    if (rc == 0)
        rc = put_uint(b, n->self);
    if (rc == 0)
        rc = put_set(b, &n->tasks);
    if (rc == 0)
        rc = put_set(b, &n->ends);
    if (rc == 0)
        rc = put_uint(b, kids);
    return rc;
}

int
sw_tree_pack(const struct sw_tree *t, void **buf, size_t *len)
{
    struct sw_buf b;
    int rc;

    sw_buf_init(&b);
    rc = sw_buf_append(&b, pack_magic, sizeof pack_magic);
    if (rc == 0)
        rc = put_uint(&b, t->countrep ? PACK_FLAG_COUNTREP : 0);
    if (rc == 0)
        rc = put_uint(&b, t->ntargets);
    for (size_t i = 0; rc == 0 && i < t->ntargets; i++)
        rc = put_str(&b, t->targets[i], false);
    if (rc == 0)
        rc = put_uint(&b, t->ntasks);
    for (size_t i = 0; rc == 0 && i < t->ntasks; i++) {
        const struct sw_tree_task *k = &t->tasks[i];
        /* The pid zigzagged, so that a small negative one stays short. */
        uint64_t pid = ((uint64_t)k->pid << 1) ^ (uint64_t)(k->pid >> 63);
        rc = put_uint(&b, k->target == SIZE_MAX ? 0 : (uint64_t)k->target + 1);
        if (rc == 0)
            rc = put_uint(&b, pid);
        if (rc == 0)
            rc = put_str(&b, k->thread, true);
    }
    if (rc == 0)
        rc = sw_tree_walk(t, false, pack_node, &b);
    if (rc < 0) {
        sw_buf_fini(&b);
        return SW_ENOMEM;
    }
    if (b.data == NULL && (b.data = sw_malloc(1)) == NULL)
        return SW_ENOMEM;
    *buf = b.data;
    *len = b.len;
    return 0;
}

/* ---- reading -------------------------------------------------------------- */

/* A cursor over untrusted bytes: the first failure sticks (WHY, at AT),
 * every read after it returns zeros. */
struct pack_cursor {
    const uint8_t *base, *p, *end;
    const char *why; /* NULL while nothing failed */
    size_t at;
};

static void
cur_fail(struct pack_cursor *c, const char *why)
{
    if (c->why == NULL) {
        c->why = why;
        c->at = (size_t)(c->p - c->base);
    }
    c->p = c->end;
}

static uint64_t
get_uint(struct pack_cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (c->p == c->end) {
            cur_fail(c, "the bytes end inside a number");
            return 0;
        }
        uint8_t byte = *c->p++;
        if (shift == 63 && (byte & 0x7e) != 0)
            break;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0)
            return v;
    }
    cur_fail(c, "a number longer than 64 bits");
    return 0;
}

/* A count of things each at least MIN_BYTES long: no more than the bytes
 * left could hold, so that a forged count allocates nothing large. */
static size_t
get_count(struct pack_cursor *c, size_t min_bytes, const char *what)
{
    uint64_t v = get_uint(c);
    if (v > (uint64_t)(c->end - c->p) / min_bytes) {
        cur_fail(c, what);
        return 0;
    }
    return (size_t)v;
}

/* A string into SCRATCH, NUL-terminated: *OUT points into it, NULL for the
 * nullable form's 0.  Returns 0 or SW_ENOMEM (a bad string fails C). */
static int
get_str(struct pack_cursor *c, bool nullable, struct sw_buf *scratch, const char **out)
{
    uint64_t n = get_uint(c);
    *out = NULL;
    if (nullable) {
        if (n == 0)
            return 0;
        n--;
    }
    if (n > (uint64_t)(c->end - c->p)) {
        cur_fail(c, "a string longer than the bytes left");
        return 0;
    }
    if (memchr(c->p, '\0', n) != NULL) {
        cur_fail(c, "a string with a NUL byte");
        return 0;
    }
    scratch->len = 0;
    if (sw_buf_append(scratch, c->p, n) < 0 || sw_buf_terminate(scratch) < 0)
        return SW_ENOMEM;
    c->p += n;
    *out = scratch->data;
    return 0;
}

/* A task set of tasks below NTASKS, each shifted by SHIFT, added to S (kept
 * to its first task for COUNTREP).  Returns 0 or SW_ENOMEM. */
static int
get_set(struct pack_cursor *c, struct sw_rangeset *s, size_t ntasks, size_t shift, bool countrep)
{
    size_t n = get_count(c, 2, "more task ranges than the bytes left could hold");
    uint64_t next = 0;
    /* Room for all at once: N is bounded by the bytes left. */
    if (n > 0 && sw_rangeset_reserve(s, n) < 0)
        return SW_ENOMEM;
    for (size_t i = 0; i < n && c->why == NULL; i++) {
        uint64_t gap = get_uint(c), span = get_uint(c);
        if (gap >= ntasks || next > ntasks - gap || span >= ntasks - (next + gap)) {
            cur_fail(c, "a task range beyond the tree's tasks");
            return 0;
        }
        uint64_t lo = next + gap, hi = lo + span;
        sw_rangeset_add_range(s, (size_t)lo + shift, (size_t)hi + shift);
        /* Sorted and disjoint as written: the next range starts after this
         * one's end. */
        next = hi + 1;
    }
    if (countrep)
        sw_rangeset_keep_first(s);
    return 0;
}

/* The node reader's stack: the node being filled at each depth and how
 * many of its children are still to come. */
struct pack_level {
    struct sw_tree_node *node;
    size_t kids_left;
};

static int
read_nodes(struct pack_cursor *c, struct sw_tree *dst, size_t ntasks, size_t shift)
{
    struct pack_level *lv = NULL;
    size_t cap = 0, depth = 0;
    struct sw_buf name, module;
    int rc = 0;

    sw_buf_init(&name);
    sw_buf_init(&module);
    for (;;) {
        struct sw_tree_node *n;
        if (depth == 0) {
            n = &dst->root;
        } else {
            const char *nm, *mod;
            rc = get_str(c, false, &name, &nm);
            if (rc == 0)
                rc = get_str(c, true, &module, &mod);
            if (rc < 0 || c->why != NULL)
                break;
            n = sw_tree_node_child(lv[depth - 1].node, nm, mod);
            if (n == NULL) {
                rc = SW_ENOMEM;
                break;
            }
        }
        n->count += get_uint(c);
        n->self += get_uint(c);
        rc = get_set(c, &n->tasks, ntasks, shift, dst->countrep);
        if (rc == 0)
            rc = get_set(c, &n->ends, ntasks, shift, dst->countrep);
        /* A child takes at least 6 bytes: name, module, count, self and
         * two empty sets. */
        size_t kids = get_count(c, 6, "more children than the bytes left could hold");
        if (rc < 0 || c->why != NULL)
            break;
        struct pack_level *v = sw_grow(lv, &cap, depth + 1, sizeof *v, 16);
        if (v == NULL) {
            rc = SW_ENOMEM;
            break;
        }
        lv = v;
        lv[depth++] = (struct pack_level){ n, kids };
        /* Up past the nodes whose children are all read. */
        while (depth > 0 && lv[depth - 1].kids_left == 0)
            depth--;
        if (depth == 0)
            break;
        lv[depth - 1].kids_left--;
    }
    sw_free(lv);
    sw_buf_fini(&name);
    sw_buf_fini(&module);
    return rc;
}

int
sw_tree_merge_packed(struct sw_tree *dst, const void *buf, size_t len, struct sw_errbuf *err)
{
    struct pack_cursor c = { .base = buf, .p = buf, .end = (const uint8_t *)buf + len };
    struct sw_buf scratch;
    size_t *targets = NULL; /* the packed tree's target I is DST's TARGETS[I] */
    int rc = 0;

    if (len < sizeof pack_magic || memcmp(buf, pack_magic, sizeof pack_magic) != 0)
        return sw_fail(err, SW_EPROTO, "reading a packed tree: not one (no \"SWT1\" at offset 0)");
    c.p += sizeof pack_magic;
    sw_buf_init(&scratch);
    const uint8_t *at_flags = c.p;
    uint64_t flags = get_uint(&c);
    if (flags & ~(uint64_t)PACK_FLAG_COUNTREP) {
        c.p = at_flags; /* the offset of the field, not of what follows it */
        cur_fail(&c, "unknown flags");
    }
    if (flags & PACK_FLAG_COUNTREP)
        dst->countrep = true;
    size_t ntargets = get_count(&c, 1, "more targets than the bytes left could hold");
    if (c.why == NULL && ntargets > 0 && (targets = sw_calloc(ntargets, sizeof *targets)) == NULL)
        rc = SW_ENOMEM;
    for (size_t i = 0; rc == 0 && c.why == NULL && i < ntargets; i++) {
        const char *s;
        rc = get_str(&c, false, &scratch, &s);
        if (rc == 0 && c.why == NULL)
            rc = sw_tree_target(dst, s, &targets[i]);
    }
    /* A task takes at least 3 bytes: target, pid, thread. */
    size_t ntasks = get_count(&c, 3, "more tasks than the bytes left could hold");
    size_t shift = dst->ntasks;
    if (rc == 0 && c.why == NULL) {
        struct sw_tree_task *v =
            sw_grow(dst->tasks, &dst->captasks, dst->ntasks + ntasks, sizeof *v, 16);
        if (v == NULL)
            rc = SW_ENOMEM;
        else
            dst->tasks = v;
    }
    for (size_t i = 0; rc == 0 && c.why == NULL && i < ntasks; i++) {
        uint64_t target = get_uint(&c), zz = get_uint(&c);
        const char *thread;
        rc = get_str(&c, true, &scratch, &thread);
        if (rc < 0 || c.why != NULL)
            break;
        if (target > ntargets) {
            cur_fail(&c, "a task of a target the tree does not list");
            break;
        }
        struct sw_tree_task k = { .target = target == 0 ? SIZE_MAX : targets[target - 1],
                                  .pid = (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1) };
        if (thread != NULL && (k.thread = sw_strdup(thread)) == NULL)
            rc = SW_ENOMEM;
        else
            dst->tasks[dst->ntasks++] = k;
    }
    if (rc == 0 && c.why == NULL)
        rc = read_nodes(&c, dst, ntasks, shift);
    if (rc == 0 && c.why == NULL && c.p != c.end)
        cur_fail(&c, "bytes after the last node");
    sw_free(targets);
    sw_buf_fini(&scratch);
    if (rc < 0)
        return sw_fail(err, rc, "reading a packed tree: out of memory");
    if (c.why != NULL)
        return sw_fail(err, SW_EPROTO, "reading a packed tree: %s at offset %zu", c.why, c.at);
    return 0;
}

int
sw_tree_unpack(const void *buf, size_t len, struct sw_tree **out, struct sw_errbuf *err)
{
    struct sw_tree *t;
    if (sw_tree_new(&t) < 0)
        return sw_fail(err, SW_ENOMEM, "reading a packed tree: out of memory");
    int rc = sw_tree_merge_packed(t, buf, len, err);
    if (rc < 0) {
        sw_tree_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
