/* rsp/prefetch.c -- the first stop's objects, asked for in the write that carries '?'.
 *
 * A walk needs the same objects of every stop: the stop reply, target.xml,
 * the library list, the auxiliary vector, the thread list.  None depends on
 * another's reply, so on a stub that serves pipelined requests in order
 * (gdbserver in no-ack mode) they go in one write after QStartNoAckMode:
 * one round trip where asking one by one costs five.  The replies are kept
 * in the session's per-stop cache (s->pre) under the exact request that
 * asked for them (the first chunk of each object, as rsp_xfer_read asks for
 * it), and the exchange's lookup_reply hook, installed here, answers those
 * requests without sending anything.  Dropped with the other per-stop
 * caches (rsp_caches_drop: resume, detach, a new process).  Off in non-stop
 * mode (threads stop and run one by one), with --no-cache, and where
 * rsp_session_config.no_prefetch is set.  A plug-in: nothing below calls it.
 */
#include "rsp/prefetch.h"

#include <stdio.h>
#include <string.h>

#include "rsp/stop.h"
#include "rsp/threads.h"
#include "rsp/xfer.h"

/* The objects asked for with '?', each where the stub offers it. */
static const struct {
    const char *object, *annex;
    enum rsp_pkt kind;
    enum rsp_feat feat;
} prefetch_objects[] = {
    { "features", "target.xml", RSP_PKT_XFER_FEATURES, RSP_FEAT_XFER_FEATURES },
    { "libraries-svr4", "", RSP_PKT_XFER_LIBS_SVR4, RSP_FEAT_XFER_LIBS_SVR4 },
    { "auxv", "", RSP_PKT_XFER_AUXV, RSP_FEAT_XFER_AUXV },
    { "threads", "", RSP_PKT_XFER_THREADS, RSP_FEAT_XFER_THREADS },
};
#define NOBJ (sizeof prefetch_objects / sizeof prefetch_objects[0])

/* The exchange's lookup_reply hook (ARG is the session): the kept reply to
 * exactly PAYLOAD, copied into s->pre_out (valid until the next request),
 * in *R; false when there is none. */
static bool
prefetch_lookup(void *arg, const char *payload, size_t len, struct rsp_reply *r)
{
    struct rsp_session *s = arg;
    for (size_t i = 0; i < s->npre; i++) {
        const struct rsp_prefetched *e = &s->pre[i];
        if (e->req_len != len || memcmp(e->req, payload, len) != 0)
            continue;
        /* A copy: callers undo escapes in place (rsp_xfer_read). */
        s->pre_out.len = 0;
        if (sw_buf_append(&s->pre_out, e->reply, e->len) != 0)
            return false; /* no memory: the request goes out as usual */
        r->p = s->pre_out.data;
        r->len = e->len;
        return true;
    }
    return false;
}

struct prefetch_ctx {
    struct rsp_session *s;
    struct rsp_stop *st;
    struct rsp_batch_item *items;
    int stop_rc;
};

/* Keep reply R to request ITEM in s->pre, which has room for it, whatever
 * it says: rsp_request judges it when it is asked for (empty: unsupported,
 * "E NN": the stub's error).  No memory: not kept, asked for again. */
static void
keep_reply(struct rsp_session *s, const struct rsp_batch_item *item, const struct rsp_reply *r)
{
    struct rsp_prefetched *e = &s->pre[s->npre];
    e->req = sw_malloc(item->len);
    e->reply = sw_malloc(r->len ? r->len : 1);
    if (e->req == NULL || e->reply == NULL) {
        sw_free(e->req);
        sw_free(e->reply);
        return;
    }
    memcpy(e->req, item->payload, item->len);
    e->req_len = item->len;
    memcpy(e->reply, r->p, r->len);
    e->len = r->len;
    s->npre++;
}

/* Keep reply R of request I: the stop for '?', the others in s->pre. */
static int
keep(void *arg, size_t i, int rc, const struct rsp_reply *r)
{
    struct prefetch_ctx *ctx = arg;
    struct rsp_session *s = ctx->s;
    if (i == 0) {
        /* '?': taken in as rsp_query_stop takes it; its failure is the connect's. */
        ctx->stop_rc = rc < 0 ? rc : rsp_take_stop(s, r, "?", true, ctx->st);
        return 0;
    }
    keep_reply(s, &ctx->items[i], r);
    return 0;
}

bool
rsp_prefetch_wanted(const struct rsp_session *s)
{
    return !s->cfg.no_prefetch && !s->no_cache && !s->nonstop && s->x.pipeline && s->x.noack;
}

int
rsp_prefetch_stop(struct rsp_session *s, struct rsp_stop *st)
{
    char reqs[NOBJ][128];
    struct rsp_batch_item items[NOBJ + 1] = { { RSP_PKT_HALT_REASON, "?", 1 } };
    size_t n = 1;

    rsp_caches_drop(s);
    for (size_t i = 0; i < NOBJ; i++) {
        if (!s->x.feat[prefetch_objects[i].feat] || s->x.unsup[prefetch_objects[i].kind])
            continue;
        char *req = reqs[n - 1];
        int len = rsp_xfer_request(s, prefetch_objects[i].object, prefetch_objects[i].annex, 0, req,
                                   sizeof reqs[0]);
        if (len < 0)
            continue;
        items[n] = (struct rsp_batch_item){ prefetch_objects[i].kind, req, (size_t)len };
        n++;
    }
    s->pre = sw_calloc(n, sizeof *s->pre);
    if (s->pre == NULL)
        return rsp_query_stop(s, st); /* no memory for the replies: one by one */
    s->x.hooks.lookup_reply = prefetch_lookup;
    s->x.hooks.arg = s;
    struct prefetch_ctx ctx = { s, st, items, 0 };
    int rc = rsp_request_batch(&s->x, items, n, keep, &ctx);
    if (rc < 0)
        return rc;
    return ctx.stop_rc;
}

/* ---- a later stop: the threads, their registers and memory, in one write ---- */

/* A stop's first write asks for the thread list with qfThreadInfo and
 * qsThreadInfo where the last list had fewer threads than this, else with
 * qXfer:threads (one reply, where the other takes one a thread). */
#define RSP_STOP_INFO_MAX 4096
/* ... with this many qsThreadInfo more than the last list needs: threads
 * that came since are in the same write (gdbserver answers "l" again after
 * the end; a thread started and joined between two stops otherwise cost one
 * round trip more at each, run-warm.sh's churn: 3.6 a stop against 3.0). */
#define RSP_STOP_INFO_SPARE 2

/* What each item of a stop fetch is, and its reply's place. */
enum fetch_part { PART_THREADS, PART_INFO, PART_HG, PART_G, PART_MEM };

struct fetch_ctx {
    struct rsp_session *s;
    const struct rsp_batch_item *items;
    enum fetch_part *part;
    size_t *owner;             /* per item: its thread in IDS, or its range */
    struct rsp_thread_id *ids; /* the threads asked for, resolved */
    bool *other;               /* per thread: its 'g' reads another thread (its 'Hg' failed) */
    struct rsp_mem_range *ranges;
    size_t *nspan;    /* per 'm' item: how many ranges from its owner on it reads */
    bool *again;      /* per range: its 'm', shared with its neighbours, was refused */
    bool info_failed; /* a thread list reply was not kept: none is */
};

/* Keep reply R to a qfThreadInfo or qsThreadInfo of this stop in s->info,
 * which has room for it; false when out of memory. */
static bool
keep_info(struct rsp_session *s, const struct rsp_reply *r)
{
    struct rsp_prefetched *e = &s->info[s->ninfo];
    e->reply = sw_malloc(r->len ? r->len : 1);
    if (e->reply == NULL)
        return false;
    memcpy(e->reply, r->p, r->len);
    e->len = r->len;
    s->ninfo++;
    return true;
}

static void
drop_info(struct rsp_session *s)
{
    for (size_t i = 0; i < s->ninfo; i++)
        sw_free(s->info[i].reply);
    s->ninfo = 0;
}

static int
fetch_reply(void *arg, size_t i, int rc, const struct rsp_reply *r)
{
    struct fetch_ctx *c = arg;
    struct rsp_session *s = c->s;
    size_t k = c->owner[i];
    switch (c->part[i]) {
    case PART_THREADS:
        /* Kept as the first stop's objects are: rsp_threads' request finds it. */
        keep_reply(s, &c->items[i], r);
        return 0;
    case PART_INFO:
        /* In order, for rsp_threads; one that is not a list (refused, no
         * memory) drops them all, and rsp_threads asks as it would. */
        if (c->info_failed || rc < 0 || !keep_info(s, r)) {
            c->info_failed = true;
            drop_info(s);
        }
        return 0;
    case PART_HG:
        if (rc == 0 && r->len == 2 && memcmp(r->p, "OK", 2) == 0) {
            s->hg = c->ids[k];
            s->hg_valid = true;
        } else if (rc != SW_EUNSUP) {
            /* E01: the thread is gone, and the 'g' after it reads the thread
             * gdbserver kept: not kept under this id (rsp_regs_read_batch). */
            c->other[k] = true;
            if (rc == 0)
                s->hg_valid = false;
        }
        return 0;
    case PART_G: {
        if (c->other[k] || rc < 0)
            return 0; /* not kept: a later read asks again and says what is wrong */
        char tid[64];
        const struct rsp_regcache *e;
        rsp_thread_id_format(s, c->ids[k], tid, sizeof tid);
        rc = rsp_regs_keep(s, c->ids[k], tid, r, &e);
        return rc == SW_ENOMEM ? rc : 0;
    }
    case PART_MEM: {
        /* Ranges that follow each other, read with one 'm': each decoded from
         * its slice.  Refused, short or malformed: no fact about the bytes, a
         * read asks again; where the 'm' was shared, each range is asked
         * alone (a refused piece, such as a margin below a stack that runs
         * into its guard page, loses nothing else). */
        size_t total = 0, off = 0;
        for (size_t j = k; j < k + c->nspan[i]; j++)
            total += c->ranges[j].len;
        bool whole = rc == 0 && r->len == 2 * total;
        for (size_t j = k; j < k + c->nspan[i]; j++) {
            struct rsp_mem_range *m = &c->ranges[j];
            m->rc = SW_EMEM;
            if (whole && sw_hex_decode(r->p + 2 * off, m->len, m->buf) == 0)
                m->rc = 0;
            else if (!whole && c->nspan[i] > 1)
                c->again[j] = true;
            off += m->len;
        }
        return 0;
    }
    }
    return 0;
}

/* Item *M: 'm' of LEN bytes at ADDR for the N ranges from FIRST on, its
 * request in TEXT's slot *M. */
static void
mem_item(struct rsp_batch_item *items, enum fetch_part *part, size_t *owner, size_t *nspan,
         size_t *m, char *text, size_t first, size_t n, uint64_t addr, size_t len)
{
    char *t = text + 128 * *m;
    int l = snprintf(t, 128, "m%llx,%zx", (unsigned long long)addr, len);
    part[*m] = PART_MEM;
    owner[*m] = first;
    nspan[*m] = n;
    items[(*m)++] = (struct rsp_batch_item){ RSP_PKT_READ_MEM, t, (size_t)l };
}

int
rsp_stop_fetch(struct rsp_session *s, const struct rsp_thread_id *ids, size_t n,
               struct rsp_mem_range *ranges, size_t k)
{
    if (!rsp_prefetch_wanted(s) || !s->has_stop)
        return SW_EUNSUP;
    struct rsp_prefetched *info = NULL;
    size_t ninfo = s->last_nthreads + 1 + RSP_STOP_INFO_SPARE;
    size_t cap = ninfo + 2 * n + k;
    struct rsp_batch_item *items = sw_calloc(cap, sizeof *items);
    enum fetch_part *part = sw_calloc(cap, sizeof *part);
    size_t *owner = sw_calloc(cap, sizeof *owner);
    struct rsp_thread_id *want = sw_calloc(n ? n : 1, sizeof *want);
    bool *other = sw_calloc(n ? n : 1, sizeof *other);
    char *text = sw_malloc(cap * 128);
    size_t *nspan = sw_calloc(cap, sizeof *nspan);
    bool *again = sw_calloc(k ? k : 1, sizeof *again);
    struct rsp_prefetched *pre = sw_realloc(s->pre, (s->npre + 1) * sizeof *pre);
    size_t m = 0, nwant = 0;
    int rc = 0;

    if (pre != NULL)
        s->pre = pre;
    if (items == NULL || part == NULL || owner == NULL || want == NULL || other == NULL ||
        text == NULL || pre == NULL || nspan == NULL || again == NULL) {
        rc = sw_fail(&s->err, SW_ENOMEM, "fetching the stop of %zu threads: out of memory", n);
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        ranges[i].rc = SW_EMEM;
    /* The thread list first: threads that came or went since the last stop.
     * qfThreadInfo and a qsThreadInfo for each thread of the last list and
     * the spares (an "l" among them says no more came; gdbserver answers one
     * id a reply) cost
     * the stub nothing but the replies, where qXfer:threads reads each
     * thread's name and core from /proc (four syscalls each, and the
     * threads' 56 of a sample's 236 on gdbserver with 8 threads).  But
     * qXfer:threads where a front end asks for it (the door): its reply is
     * then kept for that request. */
    if (s->last_nthreads > 0 && s->last_nthreads < RSP_STOP_INFO_MAX && !s->list_by_xfer &&
        !s->x.unsup[RSP_PKT_THREADS_FIRST] && !s->x.unsup[RSP_PKT_THREADS_NEXT] &&
        (info = sw_calloc(ninfo, sizeof *info)) != NULL) {
        drop_info(s);
        sw_free(s->info);
        s->info = info;
        for (size_t i = 0; i < ninfo; i++) {
            enum rsp_pkt kind = i == 0 ? RSP_PKT_THREADS_FIRST : RSP_PKT_THREADS_NEXT;
            const char *label = rsp_pkt_wire(kind);
            part[m] = PART_INFO;
            items[m++] = (struct rsp_batch_item){ kind, label, strlen(label) };
        }
    } else if (s->x.feat[RSP_FEAT_XFER_THREADS] && !s->x.unsup[RSP_PKT_XFER_THREADS]) {
        int len = rsp_xfer_request(s, "threads", "", 0, text, 128);
        if (len > 0) {
            part[m] = PART_THREADS;
            items[m++] = (struct rsp_batch_item){ RSP_PKT_XFER_THREADS, text, (size_t)len };
        }
    }
    /* 'Hg' and 'g' of each thread not read this stop (rsp_regs_read_batch). */
    bool known = s->hg_valid;
    struct rsp_thread_id sel = s->hg;
    for (size_t i = 0; i < n && !s->x.unsup[RSP_PKT_READ_REGS]; i++) {
        struct rsp_thread_id id = rsp_thread_resolve(s, ids[i]);
        if (rsp_regs_cached(s, id))
            continue;
        want[nwant] = id;
        if (!(known && sel.pid == id.pid && sel.tid == id.tid) &&
            !s->x.unsup[RSP_PKT_SET_THREAD_G]) {
            char *t = text + 128 * m, tid[64];
            rsp_thread_id_format(s, id, tid, sizeof tid);
            int len = snprintf(t, 128, "Hg%s", tid);
            part[m] = PART_HG;
            owner[m] = nwant;
            items[m++] = (struct rsp_batch_item){ RSP_PKT_SET_THREAD_G, t, (size_t)len };
            known = true;
            sel = id;
            s->hg_sent = true;
        }
        part[m] = PART_G;
        owner[m] = nwant++;
        items[m++] = (struct rsp_batch_item){ RSP_PKT_READ_REGS, "g", 1 };
    }
    /* Memory last: read through the last 'Hg' thread's process, which is
     * ours.  Ranges that follow each other without a gap (a stack's margin
     * and the stack above it) in one 'm' up to a chunk: the stub reads and
     * sends one reply for them (7 replies fewer a stop of 8 threads). */
    size_t chunk = rsp_mem_chunk(s);
    for (size_t i = 0; i < k;) {
        if (ranges[i].len == 0 || ranges[i].len > chunk) {
            i++;
            continue;
        }
        size_t j = i + 1, len = ranges[i].len;
        while (j < k && ranges[j].len > 0 &&
               ranges[j].addr == ranges[j - 1].addr + ranges[j - 1].len &&
               len + ranges[j].len <= chunk)
            len += ranges[j++].len;
        mem_item(items, part, owner, nspan, &m, text, i, j - i, ranges[i].addr, len);
        i = j;
    }
    if (m == 0)
        goto out;
    s->x.hooks.lookup_reply = prefetch_lookup;
    s->x.hooks.arg = s;
    struct fetch_ctx c = { s, items, part, owner, want, other, ranges, nspan, again, false };
    rc = rsp_request_batch(&s->x, items, m, fetch_reply, &c);
    /* A shared 'm' refused: its ranges alone, one more round trip. */
    size_t m2 = 0;
    for (size_t i = 0; rc >= 0 && i < k; i++)
        if (again[i])
            mem_item(items, part, owner, nspan, &m2, text, i, 1, ranges[i].addr, ranges[i].len);
    if (m2 > 0)
        rc = rsp_request_batch(&s->x, items, m2, fetch_reply, &c);
    if (rc < 0) {
        s->hg_valid = false; /* the link failed somewhere in the batch: nothing known */
        if (rc != SW_ENOMEM)
            sw_err_prefix(&s->err, "fetching the stop of %zu threads: ", n);
    }
out:
    sw_free(items);
    sw_free(part);
    sw_free(owner);
    sw_free(want);
    sw_free(other);
    sw_free(text);
    sw_free(nspan);
    sw_free(again);
    return rc;
}
