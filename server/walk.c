/* server/walk.c -- a link thread's walks: stop if running, walk, resume; pause; resume.
 *
 * The stack document comes from the library's renderer, the one `rspwalk
 * -f json` writes.  Only the link thread of T calls these (server/link.c);
 * nothing here waits for other threads or takes the registry's lock.
 */
#include "server/walk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rspwalk/rspwalk.h"
#include "server/store.h"

/* gdb's number for SIGINT: the stop an interrupt (0x03) brings. */
#define GDB_SIGINT 2

/* The enum srv_err for a library code. */
static int
srv_code(int rc)
{
    switch (rc) {
    case SW_EINVAL:
        return SRV_EINVAL;
    case SW_ENOMEM:
        return SRV_EINTERNAL;
    case SW_ETIMEDOUT:
        return SRV_ETIMEOUT;
    case SW_EEXITED:
        return SRV_ECONFLICT;
    case SW_ENOENT:
        return SRV_ENOTFOUND;
    default:
        return SRV_ESTUB;
    }
}

/* Whether RC leaves the link unusable: the session cannot tell where in
 * the conversation the stub is after a timeout or a broken reply, so the
 * link is made again. */
static bool
link_broken(int rc)
{
    return rc == SW_ECONN || rc == SW_ETIMEDOUT || rc == SW_EPROTO || rc == SW_EIO ||
           rc == SW_EEXITED;
}

int
srv_walk_fail(struct srv_target *t, int rc, const char *what, const char *msg, char *err,
              size_t errlen)
{
    int code = srv_fail(err, errlen, srv_code(rc), "target %" PRId64 " (%s): %s: %s", t->id,
                        t->target, what, msg);
    if (link_broken(rc))
        srv_target_drop_link(t, rc, msg);
    return code;
}

/* Every thread of W into *TIDS (caller frees with free()) and *N. */
static int
list_threads(struct sw_walker *w, sw_tid **tids, size_t *n)
{
    size_t cap = 16;
    sw_tid *t = NULL;
    for (;;) {
        sw_tid *nt = realloc(t, cap * sizeof *nt);
        if (nt == NULL) {
            free(t);
            return SW_ENOMEM;
        }
        t = nt;
        int rc = sw_threads(w, t, cap, n);
        if (rc < 0) {
            free(t);
            return rc;
        }
        if (*n <= cap)
            break;
        cap = *n;
    }
    *tids = t;
    return 0;
}

/* The thread ARG names, by its label ("p1f2.1f2") or its number, as the
 * CLI's --thread takes it. */
static bool
find_thread(struct sw_proc *p, const char *arg, const sw_tid *tids, size_t n, sw_tid *out)
{
    char label[64], *end;
    for (size_t i = 0; i < n; i++) {
        sw_proc_thread_label(p, tids[i], label, sizeof label);
        if (strcasecmp(label, arg) == 0) {
            *out = tids[i];
            return true;
        }
    }
    unsigned long long v = strtoull(arg, &end, 0);
    if (*arg == '\0' || *end != '\0')
        return false;
    for (size_t i = 0; i < n; i++)
        if (tids[i] == v) {
            *out = tids[i];
            return true;
        }
    return false;
}

/* Stop T for a walk if it runs.  *PAUSED: the server stopped it, and so
 * resumes it after.  A target that stopped on its own meanwhile (a
 * breakpoint, a fault: not the interrupt's SIGINT) stays stopped. */
static int
stop_for_walk(struct srv_target *t, bool *paused, char *err, size_t errlen)
{
    struct sw_proc *p = sw_walker_proc(t->w);
    *paused = false;
    if (sw_proc_rsp_thread_stopped(p, SW_TID_DEFAULT))
        return 0;
    if (p->debug == NULL)
        return srv_fail(err, errlen, SRV_ECONFLICT, "target %" PRId64 ": cannot be stopped", t->id);
    int rc = p->debug->pause(p, SW_TID_DEFAULT);
    if (rc < 0)
        return srv_walk_fail(t, rc, "stopping it", sw_proc_errmsg(p), err, errlen);
    const struct rsp_stop *st = rsp_last_stop(sw_proc_rsp_session(p));
    if (st != NULL && st->kind == RSP_STOP_SIGNAL && st->signal != GDB_SIGINT && st->signal != 0) {
        srv_target_publish(t, SRV_STOPPED, NULL, st->signal);
        return 0;
    }
    *paused = true;
    return 0;
}

static int
render(struct srv_target *t, const struct srv_walk_key *key, uint64_t start_us, char **doc,
       char *err, size_t errlen)
{
    struct sw_walker *w = t->w;
    struct sw_proc *p = sw_walker_proc(w);
    sw_tid *tids = NULL, one;
    size_t n = 0;
    int rc = list_threads(w, &tids, &n);
    if (rc < 0)
        return srv_walk_fail(t, rc, "listing threads", sw_walker_errmsg(w), err, errlen);
    if (key->thread != NULL) {
        if (!find_thread(p, key->thread, tids, n, &one)) {
            free(tids);
            return srv_fail(err, errlen, SRV_ENOTFOUND,
                            "target %" PRId64 ": thread %s: no such thread (%zu thread%s)", t->id,
                            key->thread, n, n == 1 ? "" : "s");
        }
        tids[0] = one;
        n = 1;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) {
        free(tids);
        return srv_fail(err, errlen, SRV_EINTERNAL, "walking: out of memory");
    }
    struct sw_render_opts ro = {
        .target = t->target,
        .locals = key->locals,
        .lines = key->lines,
        .stats = true,
        .start_us = start_us,
        .max_frames = key->max_frames,
    };
    struct sw_errbuf e = { 0 };
    rc = sw_render_stacks_json(f, &ro, w, tids, n, &e);
    free(tids);
    if (fclose(f) != 0 && rc == 0)
        rc = SW_ENOMEM;
    if (rc < 0 && (link_broken(rc) || rc == SW_EIO || rc == SW_ENOMEM)) {
        free(buf);
        return srv_walk_fail(t, rc, "walking", e.msg[0] ? e.msg : sw_strerror(rc), err, errlen);
    }
    /* Other failures are one thread's ("end": "error" in the document). */
    *doc = buf;
    return 0;
}

int
srv_walk_run(struct srv_target *t, const struct srv_walk_key *key, char **doc, int64_t *time_us,
             char *err, size_t errlen)
{
    struct sw_proc *p = sw_walker_proc(t->w);
    const struct rsp_stats *stats = rsp_session_stats(sw_proc_rsp_session(p));
    uint64_t rt0 = stats->round_trips, start_us = srv_now_us();
    bool paused;
    int rc;

    *doc = NULL;
    *time_us = srv_wall_us();
    if ((rc = stop_for_walk(t, &paused, err, errlen)) < 0)
        return rc;
    rc = render(t, key, start_us, doc, err, errlen);
    if (t->w == NULL) /* the link broke */
        return rc;
    const struct rsp_session *rs = sw_proc_rsp_session(p);
    if (rc == 0 && rs != NULL && rsp_threads_cut(rs))
        srv_log("target %" PRId64 " (%s): the stub lists more than %zu threads: the first %zu "
                "are walked (--max-threads)",
                t->id, t->target, rsp_threads_max(rs), rsp_threads_max(rs));
    if (paused) {
        int rr = p->debug ? p->debug->resume(p, SW_TID_DEFAULT, 0) : SW_EUNSUP;
        if (rr < 0) {
            free(*doc);
            *doc = NULL;
            return srv_walk_fail(t, rr, "resuming", sw_proc_errmsg(p), err, errlen);
        }
        srv_target_publish(t, SRV_RUNNING, NULL, -1);
    }
    /* The session counts the interrupt and its stop reply as a round trip. */
    uint64_t rts = stats->round_trips - rt0;
    pthread_mutex_lock(&t->mu);
    t->round_trips += rts;
    if (rc == 0) {
        t->walks++;
        t->last_round_trips = rts;
    }
    pthread_mutex_unlock(&t->mu);
    if (rc == 0 && !paused)
        srv_target_cache_put(t, key, *doc, p->stop_gen);
    return rc;
}

int
srv_walk_control(struct srv_target *t, bool resume, char *err, size_t errlen)
{
    struct sw_proc *p = sw_walker_proc(t->w);
    bool stopped = sw_proc_rsp_thread_stopped(p, SW_TID_DEFAULT);
    int rc;

    if (p->debug == NULL)
        return srv_fail(err, errlen, SRV_ECONFLICT,
                        "target %" PRId64 ": cannot be stopped or resumed", t->id);
    if (resume && stopped) {
        if ((rc = p->debug->resume(p, SW_TID_DEFAULT, 0)) < 0)
            return srv_walk_fail(t, rc, "resuming", sw_proc_errmsg(p), err, errlen);
        srv_target_publish(t, SRV_RUNNING, NULL, -1);
    } else if (!resume && !stopped) {
        if ((rc = p->debug->pause(p, SW_TID_DEFAULT)) < 0)
            return srv_walk_fail(t, rc, "stopping it", sw_proc_errmsg(p), err, errlen);
        const struct rsp_stop *st = rsp_last_stop(sw_proc_rsp_session(p));
        srv_target_publish(t, SRV_STOPPED, NULL, st ? st->signal : -1);
    }
    return 0;
}

void
srv_walk_store(struct srv_target *t, int64_t time_us, const char *doc)
{
    int64_t id;
    if (srv_store_snapshot_add(t->env->store, t->id, time_us, doc, &id) < 0)
        srv_log("target %" PRId64 ": storing its snapshot: %s", t->id,
                srv_store_errmsg(t->env->store));
}
