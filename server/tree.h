/* server/tree.h -- the merged prefix tree of stack documents, for /v1/tree and /v1/samples/ID.
 *
 * Stack documents (docs/json.md) go in as the registry and the store give
 * them, as JSON text; every thread of every document is a call path of a
 * task (a thread of a target) in the library's sw_tree (rspwalk/render.h),
 * which writes the tree as JSON, STAT's dot or folded stacks.  A task is
 * named by its target and thread; the same pair in several documents (the
 * ticks of a sample) is one task whose paths add up.
 */
#ifndef RSPWALK_SERVER_TREE_H
#define RSPWALK_SERVER_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "rspwalk/render.h"

struct srv_tree;

/* Returns 0 and *OUT (srv_tree_free), or -1 (out of memory). */
int srv_tree_new(struct srv_tree **out);
void srv_tree_free(struct srv_tree *t);

/* Add every thread of the stack document DOC (JSON text) of target
 * TARGET_ID, each path COUNT times.  Tasks name their target by the
 * document's "target" member (the string it was registered with), else by
 * its id.  Threads whose walk failed add what frames they have.  Returns 0,
 * or -1 with a one-line message in ERR (DOC is not a stack document, out of
 * memory). */
int srv_tree_add_doc(struct srv_tree *t, int64_t target_id, const char *doc, uint64_t count,
                     char *err, size_t errlen);

/* Add call path PATH (the store's folded form: frames outermost first,
 * separated by '\n', each "FUNCTION\tMODULE", server/store.h) of thread
 * THREAD of target TARGET_ID (named TARGET, NULL: by its id), COUNT times.
 * Returns 0, or -1 with a one-line message in ERR (out of memory). */
int srv_tree_add_path(struct srv_tree *t, int64_t target_id, const char *target, const char *thread,
                      const char *path, uint64_t count, char *err, size_t errlen);

/* Add every target of a /v1/stacks document ({"targets": [{"id", "target",
 * <document>} or {"id", "error"}]}); targets with an error add nothing. */
int srv_tree_add_stacks(struct srv_tree *t, const char *stacks, char *err, size_t errlen);

/* The tree written in FORMAT.  Returns 0 and *OUT, *LEN (caller frees with
 * free()), or -1. */
int srv_tree_write(struct srv_tree *t, enum sw_tree_format format, char **out, size_t *len);

#endif /* RSPWALK_SERVER_TREE_H */
