/* mpi/rmpi.h -- what the files of mpi/ (rspwalk-mpi) share.
 *
 * rspwalk-mpi: every rank walks its share of a targets file (or makes
 * synthetic stacks), builds a merged tree, and the trees merge up a k-ary
 * tree of ranks to rank 0.  Only MPI calls and librspwalk's public API here.
 */
#ifndef RSPWALK_MPI_RMPI_H
#define RSPWALK_MPI_RMPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/rspwalk.h"

/* One line of the targets file: the CLI's arguments. */
struct rmpi_target {
    char *target;     /* owned: HOST:PORT, or another form rsp_session_open takes */
    char *exe;        /* owned; NULL: none */
    char *sysroot;    /* owned; NULL: none */
    char *lib_path;   /* owned; NULL: none */
    char *debug_dir;  /* owned; NULL: none */
    char *token_file; /* owned: an rspwalkd's --token-file; NULL: none */
    int64_t *pids;    /* owned: --attach's NPIDS pids; NULL: one process, the stub's */
    size_t npids;
    size_t max_frames; /* 0: the library's default */
    int timeout_ms;    /* 0: the library's default */
    unsigned line;     /* its line in the file, for messages */
};

/* The targets of TEXT (the file's contents, LEN bytes; FILE names it in
 * messages): one a line, blank lines and lines starting with '#' skipped.
 * Returns 0 with *OUT (free with rmpi_targets_free) and *N, or -1 with a
 * one-line message in ERR (LEN bytes). */
int rmpi_targets_parse(const char *file, const char *text, size_t len, struct rmpi_target **out,
                       size_t *n, char *err, size_t errlen);
void rmpi_targets_free(struct rmpi_target *v, size_t n);

/* Walk the N targets V concurrently (at most MAX_THREADS at a time), each
 * target's threads its tasks in file order, into T.  A target that cannot
 * be walked is reported on stderr ("rspwalk-mpi: FILE:LINE: TARGET: why")
 * and adds no task.  Returns 0, -1 when a target failed, SW_ENOMEM. */
int rmpi_walk_targets(struct sw_tree *t, const char *file, const struct rmpi_target *v, size_t n,
                      size_t max_threads);

/* STATBench's emulation: TASKS tasks in all, each rank making tasks
 * FIRST..FIRST+COUNT-1 of them; a task's path has DEPTH frames and is one
 * of CLASSES, by blocks of neighbouring tasks or, SCATTER, task G in class
 * G mod CLASSES (docs/usage.md, "rspwalk-mpi").  Returns 0 or SW_ENOMEM. */
int rmpi_emulate(struct sw_tree *t, uint64_t tasks, size_t depth, size_t classes, bool scatter,
                 uint64_t first, uint64_t count);

/* A line `http://HOST:PORT/[?targets=...]`: the merged tree of an rspwalkd's
 * targets (GET /v1/tree, mpi/rspwalkd.c), its tasks and paths added to T.
 * Returns 0, or -1 with a one-line message in ERR (LEN bytes). */
int rmpi_rspwalkd_tree(struct sw_tree *t, const struct rmpi_target *tg, char *err, size_t len);

/* Whether TARGET names an rspwalkd (http://). */
bool rmpi_target_is_rspwalkd(const char *target);

/* What the merge up the ranks measured on this rank. */
struct rmpi_merge_stats {
    uint64_t bytes_in;  /* packed bytes received from the children */
    uint64_t bytes_out; /* packed bytes sent to the parent */
    uint64_t unpack_us; /* time merging the children's trees in */
    uint64_t pack_us;   /* time packing this rank's tree */
};

/* Merge up the k-ary tree of ranks (rank R's parent is (R - 1) / FANOUT):
 * receive each child's packed tree in rank order and merge it into T, then
 * send T to the parent.  On rank 0, T ends as the whole run's tree.  FAILED:
 * this rank failed before (its message printed): it still receives from its
 * children and tells its parent with an empty message.  Returns 0, or -1
 * when this rank or a rank below it failed (messages on stderr). */
int rmpi_merge_up(struct sw_tree *t, int rank, int size, int fanout, bool failed,
                  struct rmpi_merge_stats *st);

/* The ranks of a FANOUT-ary tree of SIZE ranks in preorder (a rank, then its
 * children's subtrees in rank order), the order in which the merge
 * concatenates their tasks: *POS gets RANK's place in it.  Returns 0, or -1
 * when out of memory. */
int rmpi_preorder_position(int rank, int size, int fanout, int *pos);

/* CLOCK_MONOTONIC in microseconds. */
uint64_t rmpi_now_us(void);

#endif /* RSPWALK_MPI_RMPI_H */
