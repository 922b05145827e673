/* server/walk.h -- what a link thread does with its walker: walks, pause, resume.
 *
 * Called on the link thread alone (server/link.c), with a live link
 * (T->w set).  A failure that breaks the link closes it (srv_target_drop_link).
 */
#ifndef RSPWALK_SERVER_WALK_H
#define RSPWALK_SERVER_WALK_H

#include "server/target.h"

/* Walk T with KEY's options into *DOC (the stack document; caller frees
 * with free()).  A running target is stopped for the walk and resumed
 * after it, a stopped one stays stopped (and the document is cached).
 * *TIME_US: CLOCK_REALTIME microseconds the walk began.  Returns 0 or an
 * enum srv_err with the message in ERR. */
int srv_walk_run(struct srv_target *t, const struct srv_walk_key *key, char **doc, int64_t *time_us,
                 char *err, size_t errlen);

/* Resume T (RESUME) or stop it.  Returns 0 or an enum srv_err. */
int srv_walk_control(struct srv_target *t, bool resume, char *err, size_t errlen);

/* Serve sample run Q (SRV_REQ_SAMPLE_RUN) on T's link: sw_sample_run
 * with Q's rate and length until it ends or Q->sample.cancel is set, the
 * samples folded into call paths and committed to the store in batches at
 * least every 100 ms (server/sample_link.c); Q->sample's counters advance
 * as it goes.  The target is left as found.  Returns 0 or an enum srv_err
 * with the message in ERR (the samples stored so far stand). */
int srv_walk_sample(struct srv_target *t, struct srv_req *q, char *err, size_t errlen);

/* Serve door session Q (SRV_REQ_DOOR) on T's link until its front end
 * leaves (server/doors_link.c): T is stopped for it if it runs; after it,
 * T runs if the front end detached or T ran before, else stays stopped.
 * Returns 0 or an enum srv_err with the message in ERR. */
int srv_walk_door(struct srv_target *t, struct srv_req *q, char *err, size_t errlen);

/* The enum srv_err for library failure RC while doing WHAT (MSG: the
 * library's message), into ERR; a failure that breaks the link closes it
 * (srv_target_drop_link). */
int srv_walk_fail(struct srv_target *t, int rc, const char *what, const char *msg, char *err,
                  size_t errlen);

/* Keep DOC, walked at TIME_US, as a snapshot of T in the store; a failure
 * is reported on stderr (the walk's answer stands). */
void srv_walk_store(struct srv_target *t, int64_t time_us, const char *doc);

#endif /* RSPWALK_SERVER_WALK_H */
