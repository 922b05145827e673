/* server/link.h -- the thread that keeps one target's link.
 *
 * It connects (and reconnects with backoff), takes the stops the stub
 * reports, and serves the requests posted to the target (server/target.h),
 * one at a time: one conversation on the link, and a stub that hangs or
 * dies holds up this thread alone.
 */
#ifndef RSPWALK_SERVER_LINK_H
#define RSPWALK_SERVER_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "server/target.h"

/* A new target from SPEC with ID, its link thread started (connecting in
 * the background).  Returns 0, or a code with the message in ERR.  *OUT
 * holds one reference: srv_target_unref after srv_target_join. */
int srv_target_start(const struct srv_link_env *env, const struct srv_target_spec *spec, int64_t id,
                     bool persisted, struct srv_target **out, char *err, size_t errlen);

/* Ask the link thread to end: it fails what is queued, leaves the target
 * as found (running if it ran, stopped if it was stopped) and closes the
 * link without detaching.  Does not wait. */
void srv_target_quit(struct srv_target *t);

/* Whether the link thread has ended (srv_target_join will not block). */
bool srv_target_done(struct srv_target *t);

/* Wait for the link thread to end, at most until DEADLINE_US (CLOCK_MONOTONIC
 * microseconds; 0: no limit).  Returns true when it has. */
bool srv_target_wait_done(struct srv_target *t, uint64_t deadline_us);

/* Join the link thread (after srv_target_quit).  Once per target. */
void srv_target_join(struct srv_target *t);

#endif /* RSPWALK_SERVER_LINK_H */
