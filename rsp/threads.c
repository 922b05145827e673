/* rsp/threads.c -- thread ids, the thread list and the Hg selection.
 *
 * Syntax (gdb manual, "thread-id syntax"): big-endian hex, "pPID.TID" with
 * multiprocess, "pPID" = all threads of PID, "-1" all, "0" any.  QEMU pads
 * with zeros ("p01.2b67").  The list comes from the qfThreadInfo and
 * qsThreadInfo replies a stop's first write asked for (rsp/prefetch.c), else
 * from qXfer:threads where offered, else qfThreadInfo/qsThreadInfo asked
 * one by one.  Not the walker's thread model.
 */
#include "rsp/threads.h"

#include <stdio.h>
#include <string.h>

/* A thread id has at most 16 hex digits per part; QEMU's padding included. */
#define ID_DIGITS 16
/* The default cap on a thread list (rsp_session_config.max_threads), and
 * the bound on qsThreadInfo round trips whatever the cap. */
#define MAX_THREADS 65536

bool
rsp_thread_id_read(struct rsp_cur *c, struct rsp_thread_id *out)
{
    out->pid = 0;
    if (rsp_cur_accept(c, 'p')) {
        out->pid = rsp_cur_shex(c, ID_DIGITS);
        if (rsp_cur_accept(c, '.'))
            out->tid = rsp_cur_shex(c, ID_DIGITS);
        else
            out->tid = -1;
    } else {
        out->tid = rsp_cur_shex(c, ID_DIGITS);
    }
    return !c->failed;
}

static int
fmt_part(char *buf, size_t len, int64_t v)
{
    if (v < 0)
        return snprintf(buf, len, "-%llx", (unsigned long long)-v);
    return snprintf(buf, len, "%llx", (unsigned long long)v);
}

void
rsp_thread_id_format(const struct rsp_session *s, struct rsp_thread_id id, char *buf, size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    if (s != NULL && s->x.feat[RSP_FEAT_MULTIPROCESS] && id.pid != 0) {
        int n = snprintf(buf, len, "p");
        if (n < 0 || (size_t)n >= len)
            return;
        int m = fmt_part(buf + n, len - (size_t)n, id.pid);
        if (m < 0 || (size_t)(n + m) >= len)
            return;
        n += m;
        n += snprintf(buf + n, len - (size_t)n, ".");
        if ((size_t)n >= len)
            return;
        fmt_part(buf + n, len - (size_t)n, id.tid);
        return;
    }
    fmt_part(buf, len, id.tid);
}

struct rsp_thread_id
rsp_thread_resolve(const struct rsp_session *s, struct rsp_thread_id id)
{
    if (id.pid == 0 && id.tid == 0 && s->has_stop && s->last_stop.has_thread)
        return s->last_stop.thread;
    return id;
}

void
rsp_thread_stop_taken(struct rsp_session *s, const struct rsp_stop *st, bool query)
{
    bool sent = s->hg_sent;
    if (!query)
        s->hg_sent = false;
    /* Non-stop stubs leave the selection alone (gdbserver's prepare_resume_reply). */
    if (s->no_cache || s->nonstop || !s->stop_selects_hg || !st->has_thread ||
        st->thread.tid <= 0) {
        s->hg_valid = false;
        return;
    }
    /* Measured (gdbserver 13.1 and QEMU 7.2 user): a stop reply after a resume selects its thread
     * on both;
     * '?' does on gdbserver (handle_status), while QEMU answers it with the
     * stopped vCPU and leaves g_cpu where the last 'Hg' put it -- which is
     * the stopped thread only when no 'Hg' went out since the stop. */
    if (query && !s->query_selects_hg && sent)
        return; /* our own 'Hg' still holds (hg, hg_valid as it left them) */
    s->hg = st->thread;
    s->hg_valid = true;
}

bool
rsp_thread_is_selected(const struct rsp_session *s, struct rsp_thread_id id)
{
    return s->hg_valid && s->hg.pid == id.pid && s->hg.tid == id.tid;
}

bool
rsp_thread_selected(const struct rsp_session *s, struct rsp_thread_id id)
{
    return rsp_thread_is_selected(s, rsp_thread_resolve(s, id));
}

int
rsp_thread_select(struct rsp_session *s, struct rsp_thread_id id)
{
    char tid[64];
    struct rsp_reply r;
    id = rsp_thread_resolve(s, id);
    if (rsp_thread_is_selected(s, id))
        return 0;
    if (s->x.unsup[RSP_PKT_SET_THREAD_G])
        return 0; /* a stub without Hg has one thread */
    rsp_thread_id_format(s, id, tid, sizeof tid);
    s->hg_sent = true;
    s->hg_valid = false;
    int rc = rsp_requestf(&s->x, RSP_PKT_SET_THREAD_G, &r, "Hg%s", tid);
    if (rc == SW_EUNSUP)
        return 0;
    if (rc == SW_ESTUB)
        return sw_fail(&s->err, SW_ENOENT, "selecting thread %s: stub replied %.*s", tid,
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to 'Hg%s': expected OK, got '%.*s'", tid,
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    s->hg = id;
    s->hg_valid = true;
    return 0;
}

int
rsp_thread_alive(struct rsp_session *s, struct rsp_thread_id id)
{
    char tid[64];
    struct rsp_reply r;
    rsp_thread_id_format(s, id, tid, sizeof tid);
    int rc = rsp_requestf(&s->x, RSP_PKT_THREAD_ALIVE, &r, "T%s", tid);
    if (rc == SW_ESTUB)
        return 0;
    if (rc == SW_EUNSUP)
        return 1; /* cannot tell: taken as alive */
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to 'T%s': expected OK, got '%.*s'", tid,
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    return 1;
}

size_t
rsp_threads_max(const struct rsp_session *s)
{
    return s->cfg.max_threads > 0 ? s->cfg.max_threads : MAX_THREADS;
}

bool
rsp_threads_cut(const struct rsp_session *s)
{
    return s->threads_cut;
}

struct idlist {
    struct rsp_thread_id *ids;
    size_t n, cap;
};

/* Returns 1 when the list is full (s->threads_cut set: the caller stops
 * reading), 0 when ID was added, or a negative code. */
static int
idlist_add(struct rsp_session *s, struct idlist *l, struct rsp_thread_id id)
{
    if (l->n >= rsp_threads_max(s)) {
        s->threads_cut = true;
        return 1;
    }
    struct rsp_thread_id *p = sw_grow(l->ids, &l->cap, l->n + 1, sizeof *p, 16);
    if (p == NULL)
        return sw_fail(&s->err, SW_ENOMEM, "thread list: out of memory");
    l->ids = p;
    l->ids[l->n++] = id;
    return 0;
}

/* <threads><thread id="p1f.2a" core="0" name="x">extra</thread>...</threads>.
 * Only the id attribute matters; a small scan, not a general XML parser. */
static int
parse_threads_xml(struct rsp_session *s, const char *xml, size_t len, struct idlist *l)
{
    const char *p = xml, *end = xml + len;
    while (p < end) {
        const char *t = memchr(p, '<', (size_t)(end - p));
        if (t == NULL)
            break;
        p = t + 1;
        if ((size_t)(end - p) < 7 || memcmp(p, "thread", 6) != 0 ||
            (p[6] != ' ' && p[6] != '\t' && p[6] != '\n' && p[6] != '\r'))
            continue;
        const char *gt = memchr(p, '>', (size_t)(end - p));
        const char *tag_end = gt ? gt : end;
        const char *a = p + 6;
        const char *id = NULL;
        while (a + 4 <= tag_end) {
            if ((a[-1] == ' ' || a[-1] == '\t' || a[-1] == '\n' || a[-1] == '\r') &&
                memcmp(a, "id=", 3) == 0 && (a[3] == '"' || a[3] == '\'')) {
                id = a + 4;
                break;
            }
            a++;
        }
        if (id == NULL)
            return sw_fail(&s->err, SW_EPROTO,
                           "qXfer:threads reply: <thread> without id at offset %zu",
                           (size_t)(t - xml));
        const char *q = memchr(id, id[-1], (size_t)(tag_end - id));
        struct rsp_cur c;
        struct rsp_thread_id tid;
        rsp_cur_init(&c, "qXfer:threads reply", id, q ? (size_t)(q - id) : 0);
        if (q == NULL || !rsp_thread_id_read(&c, &tid) || !rsp_cur_eof(&c))
            return sw_fail(&s->err, SW_EPROTO, "qXfer:threads reply: bad thread id at offset %zu",
                           (size_t)(id - xml) + rsp_cur_offset(&c));
        int rc = idlist_add(s, l, tid);
        if (rc != 0)
            return rc < 0 ? rc : 0;
        p = tag_end;
    }
    return 0;
}

/* One reply R to LABEL (qfThreadInfo or qsThreadInfo), "m<id>[,<id>...]"
 * or "l", into L; *DONE when it is "l" or the list is full (the rest is not
 * asked for). */
static int
threads_info_reply(struct rsp_session *s, const char *label, const char *p, size_t len,
                   struct idlist *l, bool *done)
{
    *done = len == 1 && p[0] == 'l';
    if (*done)
        return 0;
    struct rsp_cur c;
    rsp_cur_init(&c, "thread list", p, len);
    if (!rsp_cur_lit(&c, 'm'))
        return sw_fail(&s->err, SW_EPROTO, "reply to '%s': expected 'm' or 'l', got '%.*s'", label,
                       (int)(len > 40 ? 40 : len), p);
    do {
        struct rsp_thread_id id;
        if (!rsp_thread_id_read(&c, &id))
            break;
        int rc = idlist_add(s, l, id);
        if (rc != 0) {
            *done = true;
            return rc < 0 ? rc : 0;
        }
    } while (rsp_cur_accept(&c, ','));
    if (c.failed || !rsp_cur_eof(&c))
        return sw_fail(&s->err, SW_EPROTO, "reply to '%s': cannot parse at offset %zu", label,
                       rsp_cur_offset(&c));
    return 0;
}

/* Ask KIND, then qsThreadInfo, until "l". */
static int
threads_info(struct rsp_session *s, struct idlist *l, enum rsp_pkt kind)
{
    for (int round = 0; round <= MAX_THREADS; round++) {
        struct rsp_reply r;
        const char *label = rsp_pkt_wire(kind);
        bool done;
        int rc = rsp_request(&s->x, kind, label, strlen(label), &r);
        if (rc < 0 || (rc = threads_info_reply(s, label, r.p, r.len, l, &done)) < 0)
            return rc;
        if (done)
            return 0;
        kind = RSP_PKT_THREADS_NEXT;
    }
    return sw_fail(&s->err, SW_EPROTO, "thread list: no 'l' after %d replies", MAX_THREADS);
}

/* The list from the replies this stop's first write asked for (s->info:
 * qfThreadInfo, then qsThreadInfo as many times as the last list had
 * threads and a few more), up to the first "l"; where there is none (more
 * threads came since), qsThreadInfo goes on from there. */
static int
threads_info_kept(struct rsp_session *s, struct idlist *l)
{
    bool done = false;
    for (size_t i = 0; i < s->ninfo && !done; i++) {
        const char *label = rsp_pkt_wire(i == 0 ? RSP_PKT_THREADS_FIRST : RSP_PKT_THREADS_NEXT);
        int rc = threads_info_reply(s, label, s->info[i].reply, s->info[i].len, l, &done);
        if (rc < 0)
            return rc;
    }
    int rc = done ? 0 : threads_info(s, l, RSP_PKT_THREADS_NEXT);
    if (rc < 0)
        return rc;
    /* Kept for this stop: the iteration is the stub's and is over. */
    s->info_ids = sw_malloc((l->n ? l->n : 1) * sizeof *s->info_ids);
    if (s->info_ids == NULL)
        return sw_fail(&s->err, SW_ENOMEM, "thread list: out of memory");
    if (l->n > 0)
        memcpy(s->info_ids, l->ids, l->n * sizeof *l->ids);
    s->ninfo_ids = l->n;
    s->info_cut = s->threads_cut;
    s->info_done = true;
    return 0;
}

int
rsp_threads(struct rsp_session *s, struct rsp_thread_id **ids, size_t *n)
{
    struct idlist l = { NULL, 0, 0 };
    int rc = 0;
    *ids = NULL;
    *n = 0;
    s->threads_cut = false;
    if (s->info_done) {
        for (size_t i = 0; i < s->ninfo_ids && rc == 0; i++)
            rc = idlist_add(s, &l, s->info_ids[i]);
        rc = rc < 0 ? rc : 0;
        s->threads_cut = s->threads_cut || s->info_cut;
    } else if (s->ninfo > 0) {
        rc = threads_info_kept(s, &l);
    } else if (s->x.feat[RSP_FEAT_XFER_THREADS] && !s->x.unsup[RSP_PKT_XFER_THREADS]) {
        char *xml;
        size_t len;
        rc = rsp_xfer_read(s, "threads", "", &xml, &len);
        if (rc == 0) {
            rc = parse_threads_xml(s, xml, len, &l);
            sw_free(xml);
        }
        if (rc == SW_EUNSUP)
            rc = threads_info(s, &l, RSP_PKT_THREADS_FIRST);
    } else {
        rc = threads_info(s, &l, RSP_PKT_THREADS_FIRST);
    }
    if (rc < 0) {
        sw_free(l.ids);
        return rc;
    }
    *ids = l.ids;
    *n = l.n;
    s->last_nthreads = l.n;
    return 0;
}
