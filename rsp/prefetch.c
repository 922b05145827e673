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

/* Keep reply R of request I, whatever it says: rsp_request judges it when
 * it is asked for (empty: unsupported, "E NN": the stub's error). */
static int
keep(void *arg, size_t i, int rc, const struct rsp_reply *r)
{
    struct prefetch_ctx *ctx = arg;
    struct rsp_session *s = ctx->s;
    (void)rc;
    if (i == 0) {
        /* '?': taken in as rsp_query_stop takes it; its failure is the connect's. */
        ctx->stop_rc = rc < 0 ? rc : rsp_take_stop(s, r, "?", true, ctx->st);
        return 0;
    }
    struct rsp_prefetched *e = &s->pre[s->npre];
    e->req = sw_malloc(ctx->items[i].len);
    e->reply = sw_malloc(r->len ? r->len : 1);
    if (e->req == NULL || e->reply == NULL) {
        sw_free(e->req);
        sw_free(e->reply);
        return 0; /* not kept: asked for again when needed */
    }
    memcpy(e->req, ctx->items[i].payload, ctx->items[i].len);
    e->req_len = ctx->items[i].len;
    memcpy(e->reply, r->p, r->len);
    e->len = r->len;
    s->npre++;
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
