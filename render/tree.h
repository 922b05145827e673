/* render/tree.h -- the merged prefix tree's storage, for render/tree.c and render/tree_write.c.
 *
 * Task sets are sorted lists of inclusive ranges: the tasks of a snapshot
 * come in order, so a node of a million tasks in a few states holds a few
 * ranges, not a million bits.  Not installed; the API is rspwalk/render.h.
 */
#ifndef RSPWALK_RENDER_TREE_H
#define RSPWALK_RENDER_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rspwalk/render.h"

/* Tasks LO..HI, both included. */
struct sw_range {
    size_t lo, hi;
};

/* A set of tasks: N ranges sorted by LO, disjoint and not adjacent (1-3 and
 * 4-5 are one range 1-5).  Zeroed: empty. */
struct sw_rangeset {
    struct sw_range *r; /* owned: CAP entries, N used */
    size_t n, cap;
};

/* Make room for K more ranges, so that the next K sw_rangeset_add calls do
 * not allocate.  Returns 0 or SW_ENOMEM (S unchanged). */
int sw_rangeset_reserve(struct sw_rangeset *s, size_t k);
/* Add TASK; allocates only when S has no room (sw_rangeset_reserve).
 * Returns 0 or SW_ENOMEM (S unchanged). */
int sw_rangeset_add(struct sw_rangeset *s, size_t task);
/* Add LO..HI (LO <= HI), joined with the ranges it touches; allocates only
 * when S has no room, as sw_rangeset_add. */
int sw_rangeset_add_range(struct sw_rangeset *s, size_t lo, size_t hi);
/* Keep only S's lowest task (count+rep mode's representative). */
void sw_rangeset_keep_first(struct sw_rangeset *s);
/* Add every task of SRC shifted by SHIFT.  Returns 0 or SW_ENOMEM. */
int sw_rangeset_add_set(struct sw_rangeset *s, const struct sw_rangeset *src, size_t shift);
bool sw_rangeset_has(const struct sw_rangeset *s, size_t task);
void sw_rangeset_fini(struct sw_rangeset *s);
/* "[0-3,5,8-9]", "[]" for none. */
void sw_rangeset_write(const struct sw_rangeset *s, FILE *f);

/* A node: the frame named NAME in module MODULE reached by one path from
 * the root.  Children are kept sorted by (name, module) for look-up; the
 * writers order them by count. */
struct sw_tree_node {
    char *name;                 /* owned: the function, or "0x..." for a frame without one */
    char *module;               /* owned; NULL: unknown */
    uint64_t count;             /* the counts of the paths through this node */
    uint64_t self;              /* the counts of the paths that end here */
    struct sw_rangeset tasks;   /* tasks with a path through this node */
    struct sw_rangeset ends;    /* tasks with a path that ends here */
    struct sw_tree_node **kids; /* owned, each owned: NKIDS, sorted by name then module */
    size_t nkids, capkids;
    struct sw_tree_node *link; /* sw_tree_free's list of nodes still to free */
};

struct sw_tree_task {
    size_t target; /* index into the tree's TARGETS; SIZE_MAX: none */
    int64_t pid;   /* 0: unknown */
    char *thread;  /* owned; NULL: none */
};

struct sw_tree {
    struct sw_tree_node root;   /* named "/", no module */
    struct sw_tree_task *tasks; /* owned: NTASKS */
    size_t ntasks, captasks;
    char **targets; /* owned, each owned: the distinct target strings */
    size_t ntargets, captargets;
    /* Count+rep mode (sw_tree_set_countrep): each node's task sets keep
     * their lowest task only, the writers write it as the representative. */
    bool countrep;
    struct sw_tree_node **scratch; /* owned: sw_tree_add_path's nodes of a path */
    size_t capscratch;
};

/* The child of P named NAME in MODULE (MODULE may be NULL), made without
 * tasks if P has none.  NULL when out of memory. */
struct sw_tree_node *sw_tree_node_child(struct sw_tree_node *p, const char *name,
                                        const char *module);

/* The index of TARGET in T's targets, added if new; SIZE_MAX for NULL.
 * Returns 0 or SW_ENOMEM. */
int sw_tree_target(struct sw_tree *t, const char *target, size_t *out);

/* A depth-first walk of a tree without recursion (paths can be as deep as a
 * walk's --max-frames).  STACK[0..DEPTH] are the nodes from the root to the
 * current one; HASH[D] is the STAT node id of STACK[D]'s path (0 for the
 * root).  FN is called before a node's children (POST false) and after
 * them (POST true); a non-zero return ends the walk with that value.
 * SORTED: children by descending count, then name and module (the writers'
 * order), else in storage order.  Nodes without tasks (left by a path that
 * failed half-way) are skipped.  Returns 0, FN's value or SW_ENOMEM. */
struct sw_tree_visit {
    const struct sw_tree_node *const *stack;
    const uint64_t *hash;
    size_t depth;
    size_t index; /* STACK[DEPTH]'s place among its parent's children written (0 first) */
    bool post;
    const struct sw_tree *tree; /* the tree walked */
};
int sw_tree_walk(const struct sw_tree *t, bool sorted,
                 int (*fn)(void *arg, const struct sw_tree_visit *v), void *arg);

#endif /* RSPWALK_RENDER_TREE_H */
