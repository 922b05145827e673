/* rsp/nonstop.c -- non-stop mode: %Stop notifications, vStopped, vCont;t, stopped threads.
 *
 * notes/rsp.md §1.5 and the GDB manual ("Remote Non-Stop", "Notification
 * Packets"): after QNonStop:1 a vCont is answered OK at once and resumes or
 * stops only the threads it names; each stop or exit comes later as
 * "%Stop:<stop reply>".  We acknowledge it with vStopped, which the stub
 * answers with the next stop it has queued, or OK when none is left; it
 * sends no other %Stop before that OK.  '?' reports every stopped thread the
 * same way (the first in its reply, the others to vStopped).
 *
 * Seen on gdbserver 13.1: "vCont;t:TID" -> OK, then "%Stop:T00...thread:TID"
 * (signal 0); 'g' of a running thread answers all 'x' (no error), 'm' reads
 * while threads run; closing the link keeps each thread as it is.
 *
 * The session keeps the stops taken in but not yet returned by rsp_wait_stop
 * (events, oldest first) and the threads known stopped.  A %Stop that comes
 * while we wait for another reply is queued by session.c (rsp_ns_notified)
 * and acknowledged at the next rsp_wait_stop, never in the middle of a
 * request.  Not the all-stop protocol: rsp/stop.c.
 */
#include "rsp/rsp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bound on the stops one vStopped drain may bring (a runaway stub). */
#define NS_MAX_EVENTS 65536

static bool
same_thread(struct rsp_thread_id a, struct rsp_thread_id b)
{
    return a.tid == b.tid && (a.pid == b.pid || a.pid == 0 || b.pid == 0);
}

static void
mark_stopped(struct rsp_session *s, struct rsp_thread_id id)
{
    for (size_t i = 0; i < s->nstopped; i++)
        if (same_thread(s->stopped[i], id)) {
            s->stopped[i] = id;
            return;
        }
    if (s->nstopped == s->capstopped) {
        size_t cap = s->capstopped ? s->capstopped * 2 : 16;
        struct rsp_thread_id *n = sw_realloc(s->stopped, cap * sizeof *n);
        if (n == NULL)
            return; /* unknown then: reads of it are refused, never wrong */
        s->stopped = n;
        s->capstopped = cap;
    }
    s->stopped[s->nstopped++] = id;
}

/* Forget the stopped threads ID names: one thread, every thread of a
 * process (tid -1), or all (pid 0, tid -1). */
static void
mark_running(struct rsp_session *s, struct rsp_thread_id id)
{
    size_t k = 0;
    for (size_t i = 0; i < s->nstopped; i++) {
        struct rsp_thread_id t = s->stopped[i];
        bool hit =
            id.tid == -1 ? (id.pid == 0 || id.pid == -1 || t.pid == id.pid) : same_thread(t, id);
        if (!hit)
            s->stopped[k++] = t;
    }
    s->nstopped = k;
}

/* What stop ST says about the threads. */
static void
note_stop(struct rsp_session *s, const struct rsp_stop *st)
{
    switch (st->kind) {
    case RSP_STOP_SIGNAL:
        if (st->has_thread)
            mark_stopped(s, st->thread);
        break;
    case RSP_STOP_EXITED:
    case RSP_STOP_KILLED:
        mark_running(
            s, (struct rsp_thread_id){ .pid = st->has_thread ? st->thread.pid : 0, .tid = -1 });
        break;
    default:
        break;
    }
}

static int
push_event(struct rsp_session *s, const struct rsp_stop *st)
{
    if (s->nevents == s->capevents) {
        size_t cap = s->capevents ? s->capevents * 2 : 8;
        if (cap > NS_MAX_EVENTS)
            return sw_fail(&s->err, SW_EPROTO, "non-stop: more than %d stops queued",
                           NS_MAX_EVENTS);
        struct rsp_stop *n = sw_realloc(s->events, cap * sizeof *n);
        if (n == NULL)
            return sw_fail(&s->err, SW_ENOMEM, "non-stop: queueing a stop: out of memory");
        s->events = n;
        s->capevents = cap;
    }
    s->events[s->nevents++] = *st;
    note_stop(s, st);
    return 0;
}

bool
rsp_ns_notified(struct rsp_session *s, const uint8_t *p, size_t len)
{
    struct rsp_stop st;
    struct sw_errbuf ignored;
    if (len < 5 || memcmp(p, "Stop:", 5) != 0)
        return false; /* another notification (OpenOCD's keep-alive): ignored */
    /* A corrupt notification is ignored (the manual); the vStopped that
     * follows still fetches what the stub queued after it. */
    if (rsp_stop_parse((const char *)p + 5, len - 5, &st, &ignored) == 0)
        (void)push_event(s, &st);
    s->ns_ack_due = true;
    return true;
}

/* Acknowledge the %Stop taken in: vStopped until OK, queueing each stop. */
static int
drain(struct rsp_session *s)
{
    while (s->ns_ack_due) {
        struct rsp_reply r;
        struct rsp_stop st;
        int rc = rsp_request(s, RSP_PKT_VSTOPPED, "vStopped", 8, &r);
        s->hg_valid = false; /* gdbserver's general thread may have moved */
        if (rc < 0)
            return rc;
        if (r.len == 2 && memcmp(r.p, "OK", 2) == 0) {
            s->ns_ack_due = false;
            break;
        }
        if ((rc = rsp_stop_parse(r.p, r.len, &st, &s->err)) < 0)
            return sw_err_prefix(&s->err, "reply to 'vStopped': ");
        if ((rc = push_event(s, &st)) < 0)
            return rc;
    }
    return 0;
}

int
rsp_ns_enter(struct rsp_session *s)
{
    struct rsp_reply r;
    int rc = rsp_request(s, RSP_PKT_NON_STOP, "QNonStop:1", 10, &r);
    if (rc == SW_EUNSUP || rc == SW_ESTUB)
        return 0; /* stays all-stop; rsp_non_stop says so */
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to 'QNonStop:1': expected OK, got '%.*s'",
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    s->nonstop = true;
    return 0;
}

int
rsp_ns_query_stop(struct rsp_session *s, struct rsp_stop *out)
{
    struct rsp_reply r;
    struct rsp_stop st;
    bool first = true;
    int rc = rsp_request(s, RSP_PKT_HALT_REASON, "?", 1, &r);
    memset(out, 0, sizeof *out);
    out->core = -1;
    while (rc == 0 && !(r.len == 2 && memcmp(r.p, "OK", 2) == 0)) {
        if ((rc = rsp_stop_parse(r.p, r.len, &st, &s->err)) < 0)
            return sw_err_prefix(&s->err, "reply to '%s': ", first ? "?" : "vStopped");
        note_stop(s, &st); /* the state now, not events to report */
        if (first) {
            s->last_stop = st;
            s->has_stop = true;
            *out = st;
            first = false;
        }
        rc = rsp_request(s, RSP_PKT_VSTOPPED, "vStopped", 8, &r);
    }
    if (rc < 0)
        return rc;
    /* gdbserver 13.1 leaves no general thread after the last vStopped and
     * aborts at the next qXfer:features (tdesc.cc:195): select one. */
    s->hg_valid = false;
    struct rsp_thread_id any = s->has_stop ? s->last_stop.thread : (struct rsp_thread_id){ 0, 0 };
    if (!s->has_stop) {
        struct rsp_thread_id *ids;
        size_t n;
        if ((rc = rsp_threads(s, &ids, &n)) < 0)
            return rc;
        if (n > 0)
            any = ids[0];
        free(ids);
    }
    if (any.tid > 0 && (rc = rsp_thread_select(s, any)) < 0)
        return rc;
    return 0;
}

int
rsp_ns_wait(struct rsp_session *s, int timeout_ms, struct rsp_stop *out)
{
    uint64_t deadline = sw_now_us() + (uint64_t)timeout_ms * 1000;
    for (;;) {
        int rc = drain(s);
        if (rc < 0)
            return rc;
        if (s->nevents > 0) {
            *out = s->events[0];
            memmove(s->events, s->events + 1, (s->nevents - 1) * sizeof *s->events);
            s->nevents--;
            rsp_event_fd_update(s);
            rsp_caches_drop(s);
            s->last_stop = *out;
            s->has_stop = true;
            return 0;
        }
        uint64_t now = sw_now_us();
        if (timeout_ms > 0 && now >= deadline)
            return sw_fail(&s->err, SW_ETIMEDOUT,
                           "waiting for a stop notification: none within %d ms", timeout_ms);
        int left = timeout_ms > 0 ? (int)((deadline - now + 999) / 1000) : 0;
        if ((rc = rsp_recv_notify(s, left)) == SW_ETIMEDOUT && timeout_ms == 0)
            return sw_fail(&s->err, SW_ETIMEDOUT, "waiting for a stop notification: none yet");
        if (rc == SW_ETIMEDOUT)
            return sw_fail(&s->err, SW_ETIMEDOUT,
                           "waiting for a stop notification: none within %d ms", timeout_ms);
        if (rc < 0)
            return rc;
    }
}

int
rsp_ns_resume(struct rsp_session *s, const char *pkt, size_t len, struct rsp_thread_id id,
              bool only_one)
{
    struct rsp_reply r;
    int rc = rsp_request(s, RSP_PKT_VCONT, pkt, len, &r);
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to '%.*s': expected OK (non-stop), got '%.*s'",
                       (int)(len > 40 ? 40 : len), pkt, (int)(r.len > 40 ? 40 : r.len), r.p);
    rsp_caches_drop(s);
    mark_running(s, only_one ? id : (struct rsp_thread_id){ .pid = 0, .tid = -1 });
    if (!only_one || (s->has_stop && same_thread(s->last_stop.thread, id)))
        s->has_stop = false;
    return 0;
}

void
rsp_ns_forget(struct rsp_session *s, int64_t pid)
{
    mark_running(s, (struct rsp_thread_id){ .pid = pid, .tid = -1 });
}

void
rsp_ns_fini(struct rsp_session *s)
{
    sw_free(s->events);
    sw_free(s->stopped);
    s->events = NULL;
    s->stopped = NULL;
    s->nevents = s->capevents = s->nstopped = s->capstopped = 0;
}

/* ---- public ------------------------------------------------------------- */

bool
rsp_non_stop(const struct rsp_session *s)
{
    return s != NULL && s->nonstop;
}

int
rsp_stop_thread(struct rsp_session *s, struct rsp_thread_id id)
{
    char tid[64], buf[96];
    struct rsp_reply r;
    if (!s->nonstop)
        return sw_fail(&s->err, SW_EUNSUP,
                       "stopping one thread: the link is in all-stop mode (only the interrupt "
                       "stops, and it stops every thread)");
    rsp_thread_id_format(s, id, tid, sizeof tid);
    int n = snprintf(buf, sizeof buf, "vCont;t:%s", tid);
    int rc = rsp_request(s, RSP_PKT_VCONT, buf, (size_t)n, &r);
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to '%s': expected OK, got '%.*s'", buf,
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    return 0;
}

bool
rsp_thread_stopped(const struct rsp_session *s, struct rsp_thread_id id)
{
    if (!s->nonstop)
        return s->has_stop && s->last_stop.kind == RSP_STOP_SIGNAL;
    for (size_t i = 0; i < s->nstopped; i++)
        if (same_thread(s->stopped[i], id))
            return true;
    return false;
}

size_t
rsp_stops_pending(const struct rsp_session *s)
{
    return s->nevents + (s->ns_ack_due ? 1 : 0);
}
