/* rspwalk/walker_set.h -- WalkerSet: one walker per process, over one link or several.
 *
 * StackwalkerAPI's newWalker(pids): the processes are attached together
 * through an extended-remote stub (gdbserver --multi: '!', then vAttach per
 * process), each gets its own walker, and all share the one RSP session.
 * A set may also gather walkers the caller made over links of their own
 * (sw_walker_set_create, sw_walker_set_add: several QEMU user instances,
 * each of another architecture), and hold both kinds.
 * Ownership: the set owns the session and the walkers; each walker owns its
 * process, which only borrows the shared session (sw_proc_rsp_new_shared)
 * or owns its own.
 *
 * Threads: a set, with its walkers and its shared session, is used by one
 * thread at a time (sw_walker_set_walk_all walks them in order, on the
 * calling thread); different sets may be used on different threads at once.
 */
#ifndef RSPWALK_WALKER_SET_H
#define RSPWALK_WALKER_SET_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rsp_session;
struct sw_walker;
struct sw_walker_config;
struct sw_stack;
struct sw_walker_set;

/* Attach to the N processes PIDS over session S (extended mode is turned on
 * first) and create one walker for each with CFG (may be NULL; its exe, if
 * any, is used for every process).  The set takes over S: it is closed by
 * sw_walker_set_free, and on failure, after the processes attached so far
 * were detached again.  Returns 0 or a code with the message in ERR naming
 * the pid; *OUT: caller frees with sw_walker_set_free. */
SW_API int sw_walker_set_new(struct rsp_session *s, const int64_t *pids, size_t n,
                             const struct sw_walker_config *cfg, struct sw_walker_set **out,
                             struct sw_errbuf *err);

/* Free the walkers and close the session, and every added walker's own
 * link, without detaching (gdbserver keeps the processes stopped; QEMU
 * resumes its guest when its client goes).  NULL is a no-op. */
SW_API void sw_walker_set_free(struct sw_walker_set *set);

/* Detach from every process ("D;PID" on the shared link; an added
 * walker's ProcDebug detach otherwise), which the stub resumes.  Returns 0,
 * or the first failure (the others are still tried), message on the set. */
SW_API int sw_walker_set_detach(struct sw_walker_set *set);

/* An empty set, without a shared session: fill it with sw_walker_set_add.
 * *OUT: sw_walker_set_free.  Returns 0 or SW_ENOMEM with the message in ERR. */
SW_API int sw_walker_set_create(struct sw_walker_set **out, struct sw_errbuf *err);

/* Take over walker W (its own process and link, e.g. sw_proc_rsp_new over
 * a session of its own): freed with the set, detached by
 * sw_walker_set_detach through its ProcDebug.  Its pid is its process's.
 * Returns 0, SW_EINVAL (NULL, or W already in the set; W not taken),
 * SW_ENOMEM (W not taken); the message on the set. */
SW_API int sw_walker_set_add(struct sw_walker_set *set, struct sw_walker *w);

/* Called by sw_walker_set_walk_all for each thread: walker I of the set,
 * thread TID, RC of its walk (0 or a code; ST holds what was walked).  ST is
 * reused for the next thread.  Return true to stop, false to go on. */
typedef bool (*sw_walker_set_walk_fn)(void *arg, size_t i, sw_tid tid, int rc,
                                      const struct sw_stack *st);

/* walkStacks: walk every thread of every walker, in the set's order, and
 * hand each stack to FN (may be NULL).  Returns 0, the first walk's failure
 * (every thread is still walked; the message on the set names the process
 * and thread), or a failure to list a walker's threads (which ends it). */
SW_API int sw_walker_set_walk_all(struct sw_walker_set *set, sw_walker_set_walk_fn fn, void *arg);

SW_API size_t sw_walker_set_count(const struct sw_walker_set *set);
/* Walker I (borrowed, valid until sw_walker_set_free) and its process's pid. */
SW_API struct sw_walker *sw_walker_set_walker(struct sw_walker_set *set, size_t i);
SW_API int64_t sw_walker_set_pid(const struct sw_walker_set *set, size_t i);
/* The shared session (borrowed); NULL for a set made by sw_walker_set_create. */
SW_API struct rsp_session *sw_walker_set_session(struct sw_walker_set *set);
/* The message of the last failure on SET. */
SW_API const char *sw_walker_set_errmsg(const struct sw_walker_set *set);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_WALKER_SET_H */
