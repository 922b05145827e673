/* rsp/stop.h -- stop replies taken in as the session's last stop (rsp/stop.c).
 *
 * Not installed; rsp_stop_parse itself is public (rspwalk/rsp.h).
 */
#ifndef RSPWALK_RSP_STOP_H
#define RSPWALK_RSP_STOP_H

#include "rsp/session.h"

/* Take in stop reply R to LABEL (QUERY: the reply to '?') as the session's
 * last stop, and what it says about the stub's general thread; *OUT (may be
 * NULL) gets it too.  Returns 0 or SW_EPROTO naming LABEL. */
int rsp_take_stop(struct rsp_session *s, const struct rsp_reply *r, const char *label, bool query,
                  struct rsp_stop *out);

#endif /* RSPWALK_RSP_STOP_H */
