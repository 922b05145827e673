/* rsp/event_fd.h -- the descriptor to poll for stops (rsp/event_fd.c).
 *
 * Not installed; rsp_session_event_fd itself is public (rspwalk/rsp.h).  It
 * installs the exchange's changed hook when the descriptor is first made.
 */
#ifndef RSPWALK_RSP_EVENT_FD_H
#define RSPWALK_RSP_EVENT_FD_H

#include "rsp/session.h"

/* Close the descriptors (rsp_session_close); a no-op before they are made. */
void rsp_event_fd_close(struct rsp_session *s);

#endif /* RSPWALK_RSP_EVENT_FD_H */
