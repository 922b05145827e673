/* server/sampler.h -- a sample run: stop, walk every thread, resume, at a rate, for a time.
 *
 * One background thread per run posts one long request to each target's
 * link, which samples its target with the library's sampler and stores the
 * samples as it goes (server/sample_link.c); the thread sends "sample"
 * events and records how the run ended.  Each target is left as found.
 * Not the registry's bookkeeping of runs (server/registry.c).
 */
#ifndef RSPWALK_SERVER_SAMPLER_H
#define RSPWALK_SERVER_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/target.h"

struct srv_run;

/* Start run ID over the N targets T (the run takes over the caller's
 * reference to each, also on failure) at HZ for SECONDS; a link that has not
 * ended DEADLINE_MS after the run's end (or after srv_run_stop) is left to
 * end alone.  Returns 0, or a code with the message in
 * ERR.  *OUT: srv_run_free after srv_run_stop or once srv_run_finished. */
int srv_run_start(const struct srv_link_env *env, int deadline_ms, int64_t id,
                  struct srv_target **t, size_t n, double hz, double seconds, struct srv_run **out,
                  char *err, size_t errlen);

/* Ask the run to end now ("interrupted"): it still leaves the targets as
 * found.  Does not wait. */
void srv_run_stop(struct srv_run *run);

/* The run's id. */
int64_t srv_run_id(const struct srv_run *run);

/* Whether the run has ended (srv_run_free will not wait). */
bool srv_run_finished(struct srv_run *run);

/* Wait for the run's thread, drop its references and free it.  NULL is a
 * no-op. */
void srv_run_free(struct srv_run *run);

#endif /* RSPWALK_SERVER_SAMPLER_H */
