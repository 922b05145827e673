/* rsp/nonstop.h -- non-stop mode, a plug-in of the session (rsp/nonstop.c).
 *
 * Not installed.  rsp_ns_enter installs the exchange's notify hook; the
 * halves of run control below are called by rsp/run.c in non-stop mode.
 */
#ifndef RSPWALK_RSP_NONSTOP_H
#define RSPWALK_RSP_NONSTOP_H

#include "rsp/session.h"

/* QNonStop:1 (connect, when asked and offered): on OK the link is in
 * non-stop mode and %Stop notifications are queued from then on.  A stub
 * that refuses leaves the link all-stop (returns 0). */
int rsp_ns_enter(struct rsp_session *s);
/* The non-stop halves of '?', rsp_wait_stop and rsp_resume (PKT of LEN
 * bytes is the vCont built by rsp_resume). */
int rsp_ns_query_stop(struct rsp_session *s, struct rsp_stop *out);
int rsp_ns_wait(struct rsp_session *s, int timeout_ms, struct rsp_stop *out);
int rsp_ns_resume(struct rsp_session *s, const char *pkt, size_t len, struct rsp_thread_id id,
                  bool only_one);
/* Forget the stopped threads of PID (detached; 0: all). */
void rsp_ns_forget(struct rsp_session *s, int64_t pid);
/* Free the queues (rsp_session_close). */
void rsp_ns_fini(struct rsp_session *s);

#endif /* RSPWALK_RSP_NONSTOP_H */
