/* rspwalk/render.h -- documents made from walks: the stack document and the merged tree.
 *
 * One renderer for every program: `rspwalk -f json` and rspwalkd's
 * /v1/targets/ID/stacks write the same stack document (docs/json.md) with
 * sw_render_stacks_json.  The merged prefix tree (sw_tree) folds many call
 * paths, each a task's (a thread of a process of a target), into one tree
 * whose nodes carry task sets and counts; it is written as JSON, as STAT's
 * dot or as folded stacks.  Nothing here talks to a stub except through the
 * walker it is given.
 *
 * Threads: a tree is used by one thread at a time; sw_render_stacks_json
 * uses its walker, which follows the walker's rule (rspwalk/walker.h).
 */
#ifndef RSPWALK_RENDER_H
#define RSPWALK_RENDER_H

#include <stdio.h>

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_walker;

/* What the stack document says besides the walks.  Zero is the default of
 * every member. */
struct sw_render_opts {
    const char *target; /* the document's "target" member; NULL: null */
    bool locals;        /* each frame's "locals" (docs/json.md) */
    bool stats;         /* the session's "stats" object; false: "stats": null */
    uint64_t start_us;  /* CLOCK_MONOTONIC microseconds the run began: stats' wall_us */
};

/* Walk the N threads TIDS of W and write the stack document for them to F
 * (docs/json.md: {"version", "arch", "target", "threads": [...], "stats"}).
 * A thread whose walk failed is in the document with "end": "error" and its
 * "error" message.  Returns 0, or the first failed walk's code (SW_ECONN,
 * SW_ETIMEDOUT, ...) with its message in ERR; the document is complete in
 * both cases.  SW_EIO when F could not be written. */
SW_API int sw_render_stacks_json(FILE *f, const struct sw_render_opts *o, struct sw_walker *w,
                                 const sw_tid *tids, size_t n, struct sw_errbuf *err);

/* ---- the merged prefix tree -------------------------------------------- */

struct sw_tree;

/* One frame of a call path: both strings borrowed for the call; either may
 * be NULL (no symbol: the tree names the frame by its pc, "0x..."). */
struct sw_tree_frame {
    const char *function;
    const char *module;
    sw_addr pc;
};

enum sw_tree_format {
    SW_TREE_JSON,   /* {"version": 1, "tasks": N, "tasks_index": [...], "tree": {...}} */
    SW_TREE_DOT,    /* STAT's prefix-tree dot: graph [type="stat_4_1"], bv="[0-3,5]" */
    SW_TREE_FOLDED, /* root;caller;...;leaf COUNT, one line a distinct path */
};

/* An empty tree.  Returns 0 or SW_ENOMEM; *OUT: caller frees with sw_tree_free. */
SW_API int sw_tree_new(struct sw_tree **out);

/* NULL is a no-op. */
SW_API void sw_tree_free(struct sw_tree *t);

/* Number a new task: thread THREAD (its label, "p1f2.1f2") of process PID of
 * TARGET (any of the strings may be NULL; copied).  Tasks are numbered from
 * 0 in the order they are added; *TASK gets the number.  Returns 0 or
 * SW_ENOMEM. */
SW_API int sw_tree_add_task(struct sw_tree *t, const char *target, int64_t pid, const char *thread,
                            size_t *task);

/* Add one call path of task TASK, N frames, outermost caller first (main
 * before the function it calls), COUNT times (1 for a snapshot, the number
 * of samples for a profile).  Returns 0, SW_EINVAL (no such task) or
 * SW_ENOMEM. */
SW_API int sw_tree_add_path(struct sw_tree *t, size_t task, const struct sw_tree_frame *path,
                            size_t n, uint64_t count);

/* Write T in FORMAT to F.  Returns 0 or SW_EIO. */
SW_API int sw_tree_write(const struct sw_tree *t, enum sw_tree_format format, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_RENDER_H */
