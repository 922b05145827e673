/* rspwalk/render.h -- documents made from walks: the stack document and the merged tree.
 *
 * One renderer for every program: `rspwalk -f json` and rspwalkd's
 * /v1/targets/ID/stacks write the same stack document (docs/json.md) with
 * sw_render_stacks_json.  The merged prefix tree (sw_tree) folds many call
 * paths, each a task's (a thread of a process of a target), into one tree
 * whose nodes carry task sets and counts; it is written as JSON, as STAT's
 * dot or as folded stacks (docs/json.md, "The merged tree").  Nothing here
 * talks to a stub except through the walker it is given.
 *
 * Threads: a tree is used by one thread at a time; the sw_render_* calls use
 * their walker, and follow the walker's rule (rspwalk/walker.h).
 */
#ifndef RSPWALK_RENDER_H
#define RSPWALK_RENDER_H

#include <stdarg.h>
#include <stdio.h>

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_walker;
struct sw_stack;
struct sw_frame;
struct sw_symbol;
struct sw_local_var;
struct sw_tree;

/* What the stack document says besides the walks, and where else the walks
 * go.  Zero is the default of every member. */
struct sw_render_opts {
    const char *target; /* the document's "target" member, a tree task's target; NULL: null */
    bool locals;        /* each frame's "locals" (docs/json.md) */
    /* Each frame's "file" and "line" from DWARF line tables (docs/json.md):
     * a line table read per module, which a one-off run pays for. */
    bool lines;
    bool stats; /* the session's "stats" object; false: "stats": null */
    /* The document's members alone, without its braces and final newline, to
     * be embedded in a larger object ({"id": 3, <members>}). */
    bool members_only;
    uint64_t start_us; /* CLOCK_MONOTONIC microseconds the run began: stats' wall_us (0: 0) */
    /* At most this many frames a thread ("end": "depth" where the walk was
     * cut), below the walker's own limit; 0: the walker's limit. */
    size_t max_frames;
    /* OPTIONAL: called with one line (no newline, borrowed for the call) for
     * each thread whose walk failed ("thread p1f2.1f3: <why>") and for a
     * failed fetch ahead ("fetching 3 threads ahead: <why>"), which the
     * document also says; rspwalk prints them on stderr.  NULL: none. */
    void (*warn)(void *arg, const char *line);
    void *warn_arg;
    /* OPTIONAL: every walked thread also becomes a task of TREE (borrowed;
     * sw_render_stacks_tree says how).  NULL: none. */
    struct sw_tree *tree;
};

/* Walk the N threads TIDS of W and write the stack document for them to F
 * (docs/json.md: {"version", "arch", "target", "threads": [...], "stats"}),
 * a newline after its closing brace.  A thread whose walk failed is in the
 * document with "end": "error" (or "link") and its "error" message.
 * Returns 0, or the first failed walk's code (SW_ECONN, SW_ETIMEDOUT, ...)
 * with its message in ERR (may be NULL); the document is complete in both
 * cases.  SW_EIO when F could not be written, SW_ENOMEM when O->tree could
 * not take a walk (the document is complete then too). */
SW_API int sw_render_stacks_json(FILE *f, const struct sw_render_opts *o, struct sw_walker *w,
                                 const sw_tid *tids, size_t n, struct sw_errbuf *err);

/* The same for NPROC processes of one link (rspwalk --attach): W[i] walks
 * process PIDS[i], whose NTIDS[i] threads are TIDS[i]; the document has
 * "processes": [{"pid", "threads": [...]}] in place of "threads", "arch"
 * from the first walker.  Returns as sw_render_stacks_json. */
SW_API int sw_render_processes_json(FILE *f, const struct sw_render_opts *o,
                                    struct sw_walker *const *w, const int64_t *pids,
                                    sw_tid *const *tids, const size_t *ntids, size_t nproc,
                                    struct sw_errbuf *err);

/* Walk the N threads TIDS of W into T, writing nothing: each thread is a
 * new task (target O->target, pid of W's process, the thread's label
 * "p1f2.1f3"), its path the walk's frames outermost first named as the
 * document names them ("function", else the pc; "module"), added once.  A
 * thread whose walk failed is a task with an empty path.  A frame without a
 * function is named "MODULE+0xOFFSET" (the module's file name and the pc's
 * offset in it), so the same code merges across processes.  O may be NULL
 * (its members' defaults); O->tree is not used.  Returns 0, the first failed
 * walk's code with its message in ERR (may be NULL), or SW_ENOMEM. */
SW_API int sw_render_stacks_tree(struct sw_tree *t, const struct sw_render_opts *o,
                                 struct sw_walker *w, const sw_tid *tids, size_t n,
                                 struct sw_errbuf *err);

/* Escaping names from the target for text (sw_text_fputs, sw_text_escape):
 * control characters (C0, DEL, C1), invalid UTF-8 bytes, the line separators
 * and the bidirectional overrides become \xHH per byte and a backslash
 * becomes two, so a name cannot start a line, move the cursor or reorder
 * what a terminal shows; other UTF-8 is kept.  With this flag ';' becomes
 * \x3b too (folded stacks separate frames with it). */
#define SW_TEXT_ESCAPE_SEMICOLON 0x1u
/* With this flag a backslash is kept as it is: for text already in C's
 * escape syntax (a value as sw_render_local_value writes it, '\n'), whose
 * other bytes still need the escaping. */
#define SW_TEXT_KEEP_BACKSLASH 0x2u

/* S (NULL: "(null)") escaped as above onto F. */
SW_API void sw_text_fputs(FILE *f, const char *s, unsigned flags);

/* S (NULL: "(null)") escaped as above: a new string (caller frees with
 * free()), NULL when out of memory. */
SW_API char *sw_text_escape(const char *s, unsigned flags);

/* The line vprintf would make of FMT and AP, escaped as above: a new string
 * (caller frees with free()), NULL when out of memory.  For error and log
 * lines that quote what a target said. */
SW_API char *sw_text_vescapef(unsigned flags, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* The function of frame FR as gdb's backtrace names it, the document's
 * "function": FR's DWARF name, else SYM's name (SYM: FR's symbol, from
 * sw_frame_symbol; NULL when it has none), a C++ name demangled as gdb does.
 * Returns a new string (caller frees with free()), NULL when FR has no name
 * or out of memory. */
SW_API char *sw_render_frame_function(const struct sw_frame *fr, const struct sw_symbol *sym);

/* The value of variable V of frame K of ST as the document's "locals" and
 * rspwalk's text write it: gdb's print format (sw_local_format), or
 * "<optimized out>", "<too large>", "<unavailable>", "<error>".  Writes at
 * most LEN bytes to BUF, always terminated (LEN > 0). */
SW_API void sw_render_local_value(struct sw_walker *w, const struct sw_stack *st, size_t k,
                                  const struct sw_local_var *v, char *buf, size_t len);

/* ---- the merged prefix tree -------------------------------------------- */

/* One frame of a call path: both strings borrowed for the call; either may
 * be NULL.  A frame without a function is named by its pc, "0x401136".
 * Frames merge when both names are equal (the pc then does not matter). */
struct sw_tree_frame {
    const char *function;
    const char *module;
    sw_addr pc;
};

enum sw_tree_format {
    SW_TREE_JSON,   /* {"version": 1, "tasks": N, "tasks_index": [...], "tree": {...}, "classes"} */
    SW_TREE_DOT,    /* STAT's prefix-tree dot: graph [type="stat_4_1"], bv="[0-3,5]" */
    SW_TREE_FOLDED, /* root;caller;...;leaf COUNT, one line a distinct path, sorted */
    /* speedscope's JSON (https://www.speedscope.app/file-format-schema.json):
     * one "sampled" profile, a sample a distinct path weighted by its count */
    SW_TREE_SPEEDSCOPE,
};

/* An empty tree.  Returns 0 or SW_ENOMEM; *OUT: caller frees with sw_tree_free. */
SW_API int sw_tree_new(struct sw_tree **out);

/* NULL is a no-op. */
SW_API void sw_tree_free(struct sw_tree *t);

/* Number a new task: thread THREAD (its label, "p1f2.1f2") of process PID
 * (0: unknown, written null) of TARGET (either string may be NULL; copied).
 * Tasks are numbered from 0 in the order they are added; *TASK (may be
 * NULL) gets the number.  Returns 0 or SW_ENOMEM. */
SW_API int sw_tree_add_task(struct sw_tree *t, const char *target, int64_t pid, const char *thread,
                            size_t *task);

/* The number of tasks added so far. */
SW_API size_t sw_tree_tasks(const struct sw_tree *t);

/* Add one call path of task TASK, N frames, outermost caller first (main
 * before the function it calls), COUNT times (1 for a snapshot, the number
 * of samples for a profile): every node on the path gains TASK and COUNT,
 * the last one (the root for N = 0) also as where the path ends.  Returns
 * 0, SW_EINVAL (no such task), or SW_ENOMEM with T as before the call. */
SW_API int sw_tree_add_path(struct sw_tree *t, size_t task, const struct sw_tree_frame *path,
                            size_t n, uint64_t count);

/* Add every task and path of SRC to DST: SRC's task I becomes DST's task
 * sw_tree_tasks(DST) + I, equal nodes add their counts and task sets (the
 * merge of STAT's daemons' trees).  SRC is unchanged.  Returns 0 or
 * SW_ENOMEM (DST then holds SRC's tasks and part of its paths). */
SW_API int sw_tree_merge(struct sw_tree *dst, const struct sw_tree *src);

/* Count+rep mode, STAT's for very large runs: each node keeps its count
 * and one representative task (its lowest) in place of its task set, so
 * that a node costs the same at 10^6 tasks as at 10.  The writers then give
 * the representative ("rep" in JSON and in dot; "tasks" and bv carry it
 * alone).  Sticky: a tree merged from a count+rep tree becomes one.
 * Returns 0, or SW_EINVAL when T already has a path. */
SW_API int sw_tree_set_countrep(struct sw_tree *t);

/* T in a compact binary form to send to another process (docs/design.md,
 * "The merged tree on the wire"): its tasks, then its nodes root first, task
 * sets as ranges.  Returns 0 or SW_ENOMEM; *BUF (caller frees with free())
 * holds *LEN bytes. */
SW_API int sw_tree_pack(const struct sw_tree *t, void **buf, size_t *len);

/* Merge the tree packed in BUF (LEN bytes, from sw_tree_pack, maybe in
 * another process: checked as untrusted input) into DST as sw_tree_merge
 * does: its task I becomes DST's task sw_tree_tasks(DST) + I.  Returns 0,
 * SW_EPROTO for bytes that are not a packed tree (ERR, which may be NULL,
 * says at which offset and why), or SW_ENOMEM; after a failure DST holds
 * part of the packed tree (sw_tree_unpack does not). */
SW_API int sw_tree_merge_packed(struct sw_tree *dst, const void *buf, size_t len,
                                struct sw_errbuf *err);

/* A new tree from BUF as sw_tree_merge_packed reads it.  Returns 0 with
 * *OUT (caller frees with sw_tree_free), or its error with *OUT untouched. */
SW_API int sw_tree_unpack(const void *buf, size_t len, struct sw_tree **out, struct sw_errbuf *err);

/* Write T in FORMAT to F (docs/json.md, "The merged tree").  Children are
 * in a stable order: by descending count, then by function and module
 * name.  Returns 0, SW_EINVAL (no such format), SW_ENOMEM or SW_EIO. */
SW_API int sw_tree_write(const struct sw_tree *t, enum sw_tree_format format, FILE *f);

/* T as SW_TREE_SPEEDSCOPE, the profile (and the file) named NAME (NULL:
 * "rspwalk"), without the final check of F.  Returns 0 or SW_ENOMEM. */
SW_API int sw_tree_write_speedscope(const struct sw_tree *t, const char *name, FILE *f);

/* The members of T's JSON document without its braces
 * ("\"version\": 1, ..., \"classes\": [...]"), for a document that adds its
 * own (a profile's "samples" and "seconds").  Returns as sw_tree_write. */
SW_API int sw_tree_write_json_members(const struct sw_tree *t, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_RENDER_H */
