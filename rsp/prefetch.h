/* rsp/prefetch.h -- the first stop's objects asked for with '?', a plug-in (rsp/prefetch.c).
 *
 * Not installed.  rsp_prefetch_stop installs the exchange's lookup_reply
 * hook, which answers the requests asked for ahead from the session's
 * per-stop cache.
 */
#ifndef RSPWALK_RSP_PREFETCH_H
#define RSPWALK_RSP_PREFETCH_H

#include "rsp/session.h"

/* Whether this link gets the first stop's objects with '?' (pipelined,
 * no-ack, all-stop, caches on, not cfg.no_prefetch). */
bool rsp_prefetch_wanted(const struct rsp_session *s);
/* '?' and the first chunk of target.xml, the library list, auxv and the
 * thread list (where offered), in one write; the stop in *ST as
 * rsp_query_stop gives it, the other replies kept for rsp_request. */
int rsp_prefetch_stop(struct rsp_session *s, struct rsp_stop *st);

/* rsp_stop_fetch is public (rspwalk/rsp.h). */

#endif /* RSPWALK_RSP_PREFETCH_H */
