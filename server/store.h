/* server/store.h -- rspwalkd's store: targets, snapshots and samples in SQLite.
 *
 * One SQLite database in WAL mode at the path rspwalkd was given (--db).
 * Every call is one transaction, committed before it returns: what a call
 * reported as stored survives a kill -9 of the server the moment after.
 * Documents are stored as the JSON text the server served (the stack
 * document of docs/json.md), so history answers with what was answered then.
 * Not the registry's live state: only what must outlive the process.
 *
 * Threads: a store may be used from any number of threads at once; calls are
 * serialised by one mutex inside.  The callbacks of the _each, _list and
 * _stacks calls run with that mutex held: they must not call the store (that
 * deadlocks) and should be quick (they delay every other caller).
 *
 * Returns: 0 on success, -1 on failure with a one-line message naming the
 * database path and the cause (srv_store_errmsg), unless a call says more.
 */
#ifndef RSPWALK_SERVER_STORE_H
#define RSPWALK_SERVER_STORE_H

#include <stddef.h>
#include <stdint.h>

struct srv_store;

/* The largest document stored (longer ones are refused with an error): a
 * walk of 4096 threads of 256 frames at ~200 bytes a frame is 200 MiB, far
 * past what a client renders; 64 MiB bounds the memory a call can pin. */
#define SRV_STORE_DOC_MAX ((size_t)64 << 20)
/* The longest target, name, exe or sysroot string (PATH_MAX). */
#define SRV_STORE_STR_MAX ((size_t)4096)

/* A registered target as the store keeps it.  Strings are owned by the
 * record when it came from srv_store_target_get (srv_target_rec_fini),
 * borrowed when passed in or handed to a callback. */
struct srv_target_rec {
    int64_t id;
    char *name;         /* NULL: none */
    char *target;       /* the TARGET string as the CLI takes it; required */
    char *exe;          /* NULL: ask the stub */
    char *sysroot;      /* NULL: none */
    char *rtos;         /* NULL: none; "freertos" or "auto" (schema 3) */
    int64_t created_us; /* CLOCK_REALTIME microseconds; 0 on add: now */
};

/* A stored snapshot or sample stack: DOC owned by the record (free()) when
 * it came from a _get, borrowed when handed to a callback. */
struct srv_doc_rec {
    int64_t id;
    int64_t target_id;
    int64_t time_us; /* CLOCK_REALTIME microseconds the walk began */
    char *doc;       /* the stack document, JSON text; NULL in a listing */
};

/* A sample run.  Strings owned (srv_sample_rec_fini) when it came from
 * srv_store_sample_get, borrowed when handed to a callback. */
struct srv_sample_rec {
    int64_t id;
    char *targets; /* JSON array of target ids */
    double hz;
    double seconds;
    int64_t started_us;
    int64_t ended_us; /* 0 while it runs */
    char *state;      /* "running", "done", "failed", "interrupted" */
    int64_t ticks;    /* stacks stored so far */
};

/* The default database path: $XDG_STATE_HOME/rspwalk/rspwalkd.db when that
 * variable is an absolute path, else ~/.local/state/rspwalk/rspwalkd.db
 * ($HOME, else the password database).  Returns 0, or -1 when there is no
 * home directory or BUF (LEN bytes) is too small.  Reads the environment:
 * call it before starting threads. */
int srv_store_default_path(char *buf, size_t len);

/* Open (create when missing, with its missing directories, mode 0700; the
 * file 0600) the database at PATH, turn on WAL and create or migrate the
 * schema.  Refused: a PATH that is a symbolic link or not a regular file, a
 * file that is not an rspwalkd store or has a newer schema, a store another
 * process has open.  A run that was "running" in the file is marked
 * "interrupted" (the server that ran it died), its ended_us the time of its
 * last stored stack.  Returns 0, or -1 with a one-line message naming PATH
 * in ERR.  *OUT: srv_store_close. */
int srv_store_open(const char *path, struct srv_store **out, char *err, size_t errlen);

/* Close ST (the WAL is checkpointed into the file) and free it; no call on
 * ST may be running or start.  NULL is a no-op. */
void srv_store_close(struct srv_store *st);

/* The last failure's message, "" when none (valid until the next call on ST
 * from the same thread). */
const char *srv_store_errmsg(struct srv_store *st);

/* Targets.  add: IN's strings are borrowed (IN->id ignored); *ID gets the
 * new id (ids never reused, even after a delete).  delete: 0, or 1 when
 * there was no such target; the target's snapshots and sample stacks go
 * with it.  get: 0 and *OUT (srv_target_rec_fini), 1 when there is none.
 * each: FN for every target in id order, the record borrowed for the call;
 * FN's non-zero stops the walk and is returned. */
int srv_store_target_add(struct srv_store *st, const struct srv_target_rec *in, int64_t *id);
int srv_store_target_delete(struct srv_store *st, int64_t id);
int srv_store_target_get(struct srv_store *st, int64_t id, struct srv_target_rec *out);
int srv_store_target_each(struct srv_store *st,
                          int (*fn)(void *arg, const struct srv_target_rec *r), void *arg);

/* Snapshots: one stack document of one stored target (a target_id that is
 * not in the store is refused).  add: *ID gets its id.  list: the target's
 * snapshots newer than AFTER_ID (0: from the first), oldest first, at most
 * LIMIT (0: no limit), each record borrowed for FN's call; WITH_DOC false
 * leaves doc NULL (a listing).  FN's non-zero stops the walk and is
 * returned.  get: 0 and *OUT (srv_doc_rec_fini), 1 when there is none. */
int srv_store_snapshot_add(struct srv_store *st, int64_t target_id, int64_t time_us,
                           const char *doc, int64_t *id);
int srv_store_snapshot_list(struct srv_store *st, int64_t target_id, int64_t after_id, size_t limit,
                            int with_doc, int (*fn)(void *arg, const struct srv_doc_rec *r),
                            void *arg);
int srv_store_snapshot_get(struct srv_store *st, int64_t id, struct srv_doc_rec *out);

/* Sample runs.  new: TARGETS is a JSON array of ids; HZ and SECONDS finite
 * and not negative; state "running".  add: one stack document of one stored
 * target at one tick, committed before the call returns.  finish: STATE
 * ("done", "failed" or "interrupted") and ENDED_US; -1 when there is no such
 * run.  get: 0 and *OUT (srv_sample_rec_fini), 1 when there is none.
 * stacks: the run's stored documents in the order they were added, each
 * borrowed for FN's call.  each: every run, newest first, at most LIMIT (0:
 * no limit).  FN's non-zero stops the walk and is returned. */
int srv_store_sample_new(struct srv_store *st, const char *targets, double hz, double seconds,
                         int64_t started_us, int64_t *id);
int srv_store_sample_add(struct srv_store *st, int64_t sample_id, int64_t target_id,
                         int64_t time_us, const char *doc);
int srv_store_sample_finish(struct srv_store *st, int64_t sample_id, const char *state,
                            int64_t ended_us);
int srv_store_sample_get(struct srv_store *st, int64_t sample_id, struct srv_sample_rec *out);
int srv_store_sample_stacks(struct srv_store *st, int64_t sample_id,
                            int (*fn)(void *arg, const struct srv_doc_rec *r), void *arg);
int srv_store_sample_each(struct srv_store *st, size_t limit,
                          int (*fn)(void *arg, const struct srv_sample_rec *r), void *arg);

/* A sample run's samples as folded call paths (written from schema 2 on).
 * PATH is a call path, outermost caller first, its frames separated by
 * '\n', each "FUNCTION\tMODULE" (MODULE may be empty; FUNCTION is the
 * merged tree's name of the frame, rspwalk/render.h), COUNT the samples of
 * thread THREAD (its label, "p1f2.1f3") of target TARGET_ID that walked it.
 * Strings borrowed: for the call (add) or the callback (paths); TARGET is
 * the target's TARGET string, set in the callback only.
 * paths_add: N paths of one batch of SAMPLES samples of one target, the
 * last at TIME_US, added to the counts already there, in one transaction
 * committed before the call returns; the run's "ticks" grows by SAMPLES.
 * paths: every path of the run with its count, each borrowed for FN's call;
 * FN's non-zero stops the walk and is returned. */
struct srv_path_rec {
    int64_t target_id;
    const char *target;
    const char *thread;
    const char *path;
    int64_t count;
};
int srv_store_sample_paths_add(struct srv_store *st, int64_t sample_id, int64_t target_id,
                               int64_t time_us, uint64_t samples, const struct srv_path_rec *paths,
                               size_t n);
int srv_store_sample_paths(struct srv_store *st, int64_t sample_id,
                           int (*fn)(void *arg, const struct srv_path_rec *r), void *arg);

/* Free a record's owned strings and zero it.  NULL is a no-op. */
void srv_target_rec_fini(struct srv_target_rec *r);
void srv_doc_rec_fini(struct srv_doc_rec *r);
void srv_sample_rec_fini(struct srv_sample_rec *r);

#endif /* RSPWALK_SERVER_STORE_H */
