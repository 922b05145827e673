/* rsp/nonstop.c -- non-stop mode: %Stop notifications, vStopped, vCont;t, stopped threads.
 *
 * The GDB manual ("Remote Non-Stop", "Notification Packets"): after QNonStop:1 a vCont is answered
 * OK at once and resumes or stops only the threads it names; each stop or exit comes later as
 * "%Stop:<stop reply>".  We acknowledge it with vStopped, which the stub
 * answers with the next stop it has queued, or OK when none is left; it
 * sends no other %Stop before that OK.  '?' reports every stopped thread the
 * same way (the first in its reply, the others to vStopped).
 *
 * Seen on gdbserver 13.1: "vCont;t:TID" -> OK, then "%Stop:T00...thread:TID"
 * (signal 0); 'g' of a running thread answers all 'x' (no error), 'm' reads
 * while threads run; closing the link keeps each thread as it is.
 *
 * A plug-in of the session: rsp_ns_enter installs the exchange's notify
 * hook, so a %Stop that comes while we wait for another reply is queued
 * (s->ns: the stops taken in but not yet returned by rsp_wait_stop, oldest
 * first, and the threads known stopped) and acknowledged at the next
 * rsp_wait_stop, never in the middle of a request.  rsp/run.c hands its
 * entries over to the halves here in non-stop mode.  Not the all-stop
 * protocol: rsp/run.c.
 */
#include "rsp/nonstop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/threads.h"

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
    for (size_t i = 0; i < s->ns.nstopped; i++)
        if (same_thread(s->ns.stopped[i], id)) {
            s->ns.stopped[i] = id;
            return;
        }
    if (s->ns.nstopped == s->ns.capstopped) {
        size_t cap = s->ns.capstopped ? s->ns.capstopped * 2 : 16;
        struct rsp_thread_id *n = sw_realloc(s->ns.stopped, cap * sizeof *n);
        if (n == NULL)
            return; /* unknown then: reads of it are refused, never wrong */
        s->ns.stopped = n;
        s->ns.capstopped = cap;
    }
    s->ns.stopped[s->ns.nstopped++] = id;
}

/* Forget the stopped threads ID names: one thread, every thread of a
 * process (tid -1), or all (pid 0, tid -1). */
static void
mark_running(struct rsp_session *s, struct rsp_thread_id id)
{
    size_t k = 0;
    for (size_t i = 0; i < s->ns.nstopped; i++) {
        struct rsp_thread_id t = s->ns.stopped[i];
        bool hit =
            id.tid == -1 ? (id.pid == 0 || id.pid == -1 || t.pid == id.pid) : same_thread(t, id);
        if (!hit)
            s->ns.stopped[k++] = t;
    }
    s->ns.nstopped = k;
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
    if (s->ns.nevents == s->ns.capevents) {
        size_t cap = s->ns.capevents ? s->ns.capevents * 2 : 8;
        if (cap > NS_MAX_EVENTS)
            return sw_fail(&s->err, SW_EPROTO, "non-stop: more than %d stops queued",
                           NS_MAX_EVENTS);
        struct rsp_stop *n = sw_realloc(s->ns.events, cap * sizeof *n);
        if (n == NULL)
            return sw_fail(&s->err, SW_ENOMEM, "non-stop: queueing a stop: out of memory");
        s->ns.events = n;
        s->ns.capevents = cap;
    }
    s->ns.events[s->ns.nevents++] = *st;
    note_stop(s, st);
    return 0;
}

/* The exchange's notify hook: notification P of LEN bytes arrived (ARG is
 * the session); true when it was a Stop, now queued. */
static bool
ns_notified(void *arg, const uint8_t *p, size_t len)
{
    struct rsp_session *s = arg;
    struct rsp_stop st;
    struct sw_errbuf ignored;
    if (len < 5 || memcmp(p, "Stop:", 5) != 0)
        return false; /* another notification (OpenOCD's keep-alive): ignored */
    /* A corrupt notification is ignored (the manual); the vStopped that
     * follows still fetches what the stub queued after it. */
    if (rsp_stop_parse((const char *)p + 5, len - 5, &st, &ignored) == 0)
        (void)push_event(s, &st);
    s->ns.ack_due = true;
    return true;
}

/* Acknowledge the %Stop taken in: vStopped until OK, queueing each stop. */
static int
drain(struct rsp_session *s)
{
    while (s->ns.ack_due) {
        struct rsp_reply r;
        struct rsp_stop st;
        int rc = rsp_request(&s->x, RSP_PKT_VSTOPPED, "vStopped", 8, &r);
        s->hg_valid = false; /* gdbserver's general thread may have moved */
        if (rc < 0)
            return rc;
        if (r.len == 2 && memcmp(r.p, "OK", 2) == 0) {
            s->ns.ack_due = false;
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
    int rc = rsp_request(&s->x, RSP_PKT_NON_STOP, "QNonStop:1", 10, &r);
    if (rc == SW_EUNSUP || rc == SW_ESTUB)
        return 0; /* stays all-stop; rsp_non_stop says so */
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to 'QNonStop:1': expected OK, got '%.*s'",
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    s->nonstop = true;
    s->x.hooks.notify = ns_notified;
    s->x.hooks.arg = s;
    return 0;
}

int
rsp_ns_query_stop(struct rsp_session *s, struct rsp_stop *out)
{
    struct rsp_reply r;
    struct rsp_stop st;
    bool first = true;
    int rc = rsp_request(&s->x, RSP_PKT_HALT_REASON, "?", 1, &r);
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
        rc = rsp_request(&s->x, RSP_PKT_VSTOPPED, "vStopped", 8, &r);
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
        if (s->ns.nevents > 0) {
            *out = s->ns.events[0];
            memmove(s->ns.events, s->ns.events + 1, (s->ns.nevents - 1) * sizeof *s->ns.events);
            s->ns.nevents--;
            rsp_exchange_changed(&s->x);
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
        if ((rc = rsp_recv_notify(&s->x, left)) == SW_ETIMEDOUT && timeout_ms == 0)
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
    int rc = rsp_request(&s->x, RSP_PKT_VCONT, pkt, len, &r);
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
    sw_free(s->ns.events);
    sw_free(s->ns.stopped);
    s->ns.events = NULL;
    s->ns.stopped = NULL;
    s->ns.nevents = s->ns.capevents = s->ns.nstopped = s->ns.capstopped = 0;
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
    int rc = rsp_request(&s->x, RSP_PKT_VCONT, buf, (size_t)n, &r);
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to '%s': expected OK, got '%.*s'", buf,
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    return 0;
}

/* Send "vCont" with the actions of IDS[0..N) (ACT: 't' or 'c'; SIGS[i]
 * nonzero: "C<sig>"), as many packets as they need, each answered OK. */
static int
vcont_set(struct rsp_session *s, char act, const struct rsp_thread_id *ids, const int *sigs,
          size_t n)
{
    /* A packet within the stub's PacketSize, framing and a margin left. */
    size_t cap = s->x.packet_size > 40 ? s->x.packet_size - 8 : 32;
    if (cap > 4096)
        cap = 4096;
    /* Room for one action past CAP: the first of a packet always goes in. */
    char *buf = sw_malloc(cap + 96);
    if (buf == NULL)
        return sw_fail(&s->err, SW_ENOMEM, "vCont for %zu threads: out of memory", n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t len = (size_t)snprintf(buf, cap + 96, "vCont");
        size_t first = i;
        while (i < n) {
            char tid[64], one[96];
            rsp_thread_id_format(s, ids[i], tid, sizeof tid);
            int sig = sigs != NULL ? sigs[i] : 0;
            int m = sig > 0 && act == 'c' ? snprintf(one, sizeof one, ";C%02x:%s", sig & 0xff, tid)
                                          : snprintf(one, sizeof one, ";%c:%s", act, tid);
            if (len + (size_t)m >= cap && i > first)
                break;
            memcpy(buf + len, one, (size_t)m + 1);
            len += (size_t)m;
            i++;
        }
        struct rsp_reply r;
        if ((rc = rsp_request(&s->x, RSP_PKT_VCONT, buf, len, &r)) < 0)
            break;
        if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
            rc = sw_fail(&s->err, SW_EPROTO, "reply to '%.40s': expected OK, got '%.*s'", buf,
                         (int)(r.len > 40 ? 40 : r.len), r.p);
        else if (act == 'c')
            for (size_t k = first; k < i; k++) {
                mark_running(s, ids[k]);
                if (s->has_stop && same_thread(s->last_stop.thread, ids[k]))
                    s->has_stop = false;
            }
    }
    sw_free(buf);
    return rc;
}

int
rsp_stop_threads(struct rsp_session *s, const struct rsp_thread_id *ids, size_t n)
{
    if (!s->nonstop)
        return sw_fail(&s->err, SW_EUNSUP,
                       "stopping %zu threads: the link is in all-stop mode (only the interrupt "
                       "stops, and it stops every thread)",
                       n);
    return n == 0 ? 0 : vcont_set(s, 't', ids, NULL, n);
}

int
rsp_resume_threads(struct rsp_session *s, const struct rsp_thread_id *ids, const int *sigs,
                   size_t n)
{
    if (!s->nonstop)
        return sw_fail(&s->err, SW_EUNSUP,
                       "resuming %zu threads alone: the link is in all-stop mode", n);
    if (n == 0)
        return 0;
    rsp_caches_drop(s);
    return vcont_set(s, 'c', ids, sigs, n);
}

bool
rsp_thread_stopped(const struct rsp_session *s, struct rsp_thread_id id)
{
    if (!s->nonstop)
        return s->has_stop && s->last_stop.kind == RSP_STOP_SIGNAL;
    for (size_t i = 0; i < s->ns.nstopped; i++)
        if (same_thread(s->ns.stopped[i], id))
            return true;
    return false;
}

size_t
rsp_stops_pending(const struct rsp_session *s)
{
    return s->ns.nevents + (s->ns.ack_due ? 1 : 0);
}
