/* server/deadline.h -- run a call on its own thread and stop waiting for it at a deadline.
 *
 * A request must be answered within --request-timeout even when what it asked
 * for (a walk of a stub that stopped answering) takes longer.  The call runs
 * on a thread of its own; the caller waits until it ends or the deadline
 * passes.  A call given up on runs to its end and its result is dropped.  The
 * pool counts running calls so that the server can wait for them before it
 * frees what they use.
 */
#ifndef RSPWALK_SERVER_DEADLINE_H
#define RSPWALK_SERVER_DEADLINE_H

#include <stdbool.h>

struct srv_deadline_pool;

/* Returns 0 and *OUT (srv_deadline_pool_free), or -1 (out of memory). */
int srv_deadline_pool_new(struct srv_deadline_pool **out);

/* Wait until every call has ended, then free.  NULL is a no-op. */
void srv_deadline_pool_free(struct srv_deadline_pool *p);

/* Run RUN(ARG) on a new thread and wait at most TIMEOUT_MS for it.  Returns 0
 * when it ended in time (ARG holds its results, the caller owns ARG again);
 * 1 when the deadline passed (the pool then calls DROP(ARG) once RUN has
 * returned: ARG and what RUN put in it must not be touched by the caller);
 * -1 when no thread could be started (nothing ran; the caller owns ARG). */
int srv_deadline_run(struct srv_deadline_pool *p, void (*run)(void *arg), void (*drop)(void *arg),
                     void *arg, int timeout_ms);

#endif /* RSPWALK_SERVER_DEADLINE_H */
