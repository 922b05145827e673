/* server/doors_link.c -- a link thread's door session: the link lent to one front end.
 *
 * The link thread stops the target, serves the front end with door/'s
 * door_serve_link over its own walker, and leaves the target as
 * docs/design.md ("Doors on the server's links") says.  Not the listeners.
 */
#include "server/walk.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "door/door.h"
#include "rspwalk/rspwalk.h"

int
srv_walk_door(struct srv_target *t, struct srv_req *q, char *err, size_t errlen)
{
    struct sw_proc *p = sw_walker_proc(t->w);
    bool ran = !sw_proc_rsp_thread_stopped(p, SW_TID_DEFAULT);
    int rc;

    if (p->debug == NULL)
        return srv_fail(err, errlen, SRV_ECONFLICT,
                        "target %" PRId64 ": cannot be stopped for a door session", t->id);
    /* An all-stop stub reads no packet while its target runs, and a front
     * end expects a stopped target when it connects. */
    if (ran && (rc = p->debug->pause(p, SW_TID_DEFAULT)) < 0)
        return srv_walk_fail(t, rc, "stopping it for a door session", sw_proc_errmsg(p), err,
                             errlen);
    const struct rsp_stop *st = rsp_last_stop(sw_proc_rsp_session(p));
    srv_target_publish(t, SRV_STOPPED, NULL, st != NULL ? st->signal : -1);
    srv_log("target %" PRId64 ": door session of %s begins (target %s)", t->id, q->door.who,
            ran ? "was running" : "was stopped");

    struct door_config cfg = { .target = t->target,
                               .timeout_ms = t->env->timeout_ms,
                               .deadline_ms = t->env->deadline_ms };
    const struct rsp_stats *stats = rsp_session_stats(sw_proc_rsp_session(p));
    uint64_t rt0 = stats->round_trips;
    bool detached = false;
    rc = door_serve_link(&cfg, t->w, q->door.fd, &detached);
    pthread_mutex_lock(&t->mu);
    t->round_trips += stats->round_trips - rt0;
    pthread_mutex_unlock(&t->mu);
    if (rc < 0)
        return srv_walk_fail(t, SW_ECONN, "door session", "the link to the stub was lost", err,
                             errlen);
    st = rsp_last_stop(sw_proc_rsp_session(p));
    if (p->debug->is_terminated(p) ||
        (st != NULL && (st->kind == RSP_STOP_EXITED || st->kind == RSP_STOP_KILLED))) {
        srv_target_drop_link(t, SW_EEXITED, "the target exited in a door session");
        return 0;
    }
    /* Detached: the front end let it run.  Left without detaching: as the
     * session found it. */
    bool run = detached || ran;
    if (run && (rc = p->debug->resume(p, SW_TID_DEFAULT, 0)) < 0)
        return srv_walk_fail(t, rc, "resuming it after a door session", sw_proc_errmsg(p), err,
                             errlen);
    st = rsp_last_stop(sw_proc_rsp_session(p));
    srv_target_publish(t, run ? SRV_RUNNING : SRV_STOPPED, NULL,
                       run || st == NULL ? -1 : st->signal);
    srv_log("target %" PRId64 ": door session of %s ended%s; the target %s", t->id, q->door.who,
            detached ? " (detached)" : "", run ? "runs" : "stays stopped");
    return 0;
}
