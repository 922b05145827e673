/* rsp/threads.h -- thread-id syntax and the stub's general thread (rsp/threads.c).
 *
 * Not installed; the thread list and rsp_thread_id_format are public
 * (rspwalk/rsp.h).
 */
#ifndef RSPWALK_RSP_THREADS_H
#define RSPWALK_RSP_THREADS_H

#include "rsp/cursor.h"
#include "rsp/session.h"

/* Read a thread id at C ("pPID.TID", "pPID", "TID", "-1") into *OUT; false
 * (C failed) when there is none. */
bool rsp_thread_id_read(struct rsp_cur *c, struct rsp_thread_id *out);
/* Make ID the stub's general thread ('Hg', sent only when it changes).
 * SW_ENOENT when the stub refuses it (the thread is gone). */
int rsp_thread_select(struct rsp_session *s, struct rsp_thread_id id);
/* ID with {0,0} replaced by the thread of the last stop, when known. */
struct rsp_thread_id rsp_thread_resolve(const struct rsp_session *s, struct rsp_thread_id id);
/* Stop reply ST was taken in (QUERY: the reply to '?', else to a resume):
 * what it tells about the stub's general thread. */
void rsp_thread_stop_taken(struct rsp_session *s, const struct rsp_stop *st, bool query);
/* Whether the stub's general thread is known to be ID (no 'Hg' needed). */
bool rsp_thread_is_selected(const struct rsp_session *s, struct rsp_thread_id id);

#endif /* RSPWALK_RSP_THREADS_H */
