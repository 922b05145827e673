/* rspwalk/walker_set.h -- WalkerSet: one walker per process, over one link.
 *
 * StackwalkerAPI's newWalker(pids): the processes are attached together
 * through an extended-remote stub (gdbserver --multi: '!', then vAttach per
 * process), each gets its own walker, and all share the one RSP session.
 * Ownership: the set owns the session and the walkers; each walker owns its
 * process, which only borrows the session (sw_proc_rsp_new_shared).
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

/* Free the walkers and close the session without detaching (gdbserver
 * --multi keeps the processes stopped).  NULL is a no-op. */
SW_API void sw_walker_set_free(struct sw_walker_set *set);

/* Detach from every process ("D;PID"), which the stub resumes.  Returns 0,
 * or the first failure (the others are still tried), message on the set. */
SW_API int sw_walker_set_detach(struct sw_walker_set *set);

SW_API size_t sw_walker_set_count(const struct sw_walker_set *set);
/* Walker I (borrowed, valid until sw_walker_set_free) and its process's pid. */
SW_API struct sw_walker *sw_walker_set_walker(struct sw_walker_set *set, size_t i);
SW_API int64_t sw_walker_set_pid(const struct sw_walker_set *set, size_t i);
/* The shared session (borrowed). */
SW_API struct rsp_session *sw_walker_set_session(struct sw_walker_set *set);
/* The message of the last failure on SET. */
SW_API const char *sw_walker_set_errmsg(const struct sw_walker_set *set);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_WALKER_SET_H */
