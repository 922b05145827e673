/* server/sample_link.c -- a link thread's share of a sample run: the library sampler, batches.
 *
 * The link thread hands its walker to sw_sample_run (rspwalk/sampler.h) for
 * the whole run; each walked thread's call path is folded into the store's
 * form (server/store.h) and counted in a batch, committed at least every
 * COMMIT_US and at the end.  Not the pacing of a run across targets, nor
 * its events (server/sampler.c).
 */
#include "server/walk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/rspwalk.h"
#include "server/store.h"

/* A batch is committed once its oldest sample is this old, so a kill -9 of
 * the server loses at most the samples of the last 100 ms; a commit (one
 * SQLite transaction in WAL mode) costs well under a millisecond, so ten a
 * second per target cost the link nothing it would notice. */
#define COMMIT_US 100000u

/* One distinct (thread, path) of a batch. */
struct path_ent {
    char *thread; /* owned; NULL: empty slot */
    char *path;   /* owned */
    uint64_t hash;
    int64_t count;
};

struct batch {
    struct path_ent *e; /* open addressing, N used of CAP (a power of 2) */
    size_t n, cap;
    uint64_t samples;  /* in the batch */
    uint64_t first_us; /* CLOCK_MONOTONIC time of its first sample */
    int64_t last_us;   /* CLOCK_REALTIME time of its last */
};

struct run_ctx {
    struct srv_target *t;
    struct srv_req *q;
    struct sw_walker *w;
    struct batch b;
    bool store;       /* the samples go to the store */
    bool commit_each; /* a sample a period of COMMIT_US or more: commit each at once */
    bool store_failed;
    bool nomem;
    char *buf; /* one path being folded, LEN of CAP bytes */
    size_t len, cap;
};

/* ---- the batch ------------------------------------------------------------ */

/* FNV-1a over the thread and the path. */
static uint64_t
ent_hash(const char *thread, const char *path)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = thread; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    h = (h ^ 0xffu) * 0x100000001b3ull;
    for (const char *s = path; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void
batch_clear(struct batch *b)
{
    for (size_t i = 0; i < b->cap; i++) {
        free(b->e[i].thread);
        free(b->e[i].path);
        b->e[i] = (struct path_ent){ 0 };
    }
    b->n = 0;
    b->samples = 0;
}

static void
batch_fini(struct batch *b)
{
    batch_clear(b);
    free(b->e);
    *b = (struct batch){ 0 };
}

static bool
batch_grow(struct batch *b)
{
    size_t cap = b->cap ? b->cap * 2 : 64;
    struct path_ent *e = calloc(cap, sizeof *e);
    if (!e)
        return false;
    for (size_t i = 0; i < b->cap; i++) {
        if (!b->e[i].thread)
            continue;
        size_t j = b->e[i].hash & (cap - 1);
        while (e[j].thread)
            j = (j + 1) & (cap - 1);
        e[j] = b->e[i];
    }
    free(b->e);
    b->e = e;
    b->cap = cap;
    return true;
}

/* Count PATH of THREAD once more. */
static bool
batch_add(struct batch *b, const char *thread, const char *path)
{
    if ((b->n + 1) * 2 > b->cap && !batch_grow(b))
        return false;
    uint64_t h = ent_hash(thread, path);
    size_t j = h & (b->cap - 1);
    for (; b->e[j].thread; j = (j + 1) & (b->cap - 1))
        if (b->e[j].hash == h && strcmp(b->e[j].path, path) == 0 &&
            strcmp(b->e[j].thread, thread) == 0) {
            b->e[j].count++;
            return true;
        }
    char *tc = strdup(thread), *pc = strdup(path);
    if (!tc || !pc) {
        free(tc);
        free(pc);
        return false;
    }
    b->e[j] = (struct path_ent){ .thread = tc, .path = pc, .hash = h, .count = 1 };
    b->n++;
    return true;
}

/* ---- folding a stack ------------------------------------------------------ */

/* Append name S (RAW false: its separators blanked) or separator S. */
static bool
buf_append(struct run_ctx *c, const char *s, bool raw)
{
    size_t n = strlen(s);
    if (c->len + n + 1 > c->cap) {
        size_t cap = (c->len + n + 1) * 2;
        char *nb = realloc(c->buf, cap);
        if (!nb)
            return false;
        c->buf = nb;
        c->cap = cap;
    }
    /* The separators of the store's form never occur inside a name. */
    for (size_t i = 0; i < n; i++)
        c->buf[c->len + i] = !raw && (s[i] == '\n' || s[i] == '\t') ? ' ' : s[i];
    c->len += n;
    c->buf[c->len] = '\0';
    return true;
}

static bool
buf_put(struct run_ctx *c, const char *s)
{
    return buf_append(c, s, false);
}

/* Frame FR named as the merged tree names it (sw_render_stacks_tree): its
 * function, else its module and offset, else its pc; then its module. */
static bool
fold_frame(struct run_ctx *c, const struct sw_frame *fr)
{
    struct sw_symbol sym;
    bool have = sw_frame_symbol(c->w, fr, &sym) == 0;
    char *name = sw_render_frame_function(fr, have ? &sym : NULL);
    const char *fn = name ? name : fr->vname ? fr->vname : have ? sym.name : NULL;
    const char *mod = have ? sym.module : NULL, *lib = NULL;
    char alt[320];
    sw_addr off = 0;
    if (!have && sw_frame_lib_offset(c->w, fr, &lib, &off) == 0)
        mod = lib;
    if (fn == NULL && mod != NULL) {
        const char *base = strrchr(mod, '/');
        snprintf(alt, sizeof alt, "%s+0x%" PRIx64, base ? base + 1 : mod, (uint64_t)off);
        fn = alt;
    } else if (fn == NULL) {
        snprintf(alt, sizeof alt, "0x%" PRIx64, (uint64_t)fr->ra);
        fn = alt;
    }
    bool ok = buf_put(c, fn) && buf_append(c, "\t", true) && buf_put(c, mod ? mod : "");
    free(name);
    return ok;
}

/* The stack ST as the store's path: outermost caller first. */
static bool
fold_stack(struct run_ctx *c, const struct sw_stack *st)
{
    c->len = 0;
    if (!buf_put(c, ""))
        return false;
    for (size_t i = st->n; i-- > 0;)
        if ((i + 1 < st->n && !buf_append(c, "\n", true)) || !fold_frame(c, &st->frames[i]))
            return false;
    return true;
}

/* ---- committing ----------------------------------------------------------- */

/* The batch into the store, then counted as stored.  A failed commit is
 * reported once on stderr and its samples are not counted as stored. */
static void
commit(struct run_ctx *c)
{
    struct batch *b = &c->b;
    if (b->samples == 0)
        return;
    bool stored = true;
    if (c->store) {
        struct srv_path_rec *p = calloc(b->n ? b->n : 1, sizeof *p);
        size_t k = 0;
        for (size_t i = 0; p && i < b->cap; i++)
            if (b->e[i].thread)
                p[k++] = (struct srv_path_rec){ .thread = b->e[i].thread,
                                                .path = b->e[i].path,
                                                .count = b->e[i].count };
        struct srv_store *store = c->t->env->store;
        stored = p != NULL && srv_store_sample_paths_add(store, c->q->sample.run_id, c->t->id,
                                                         b->last_us, b->samples, p, k) == 0;
        if (!stored && !c->store_failed) {
            c->store_failed = true;
            srv_log("sample %" PRId64 ": target %" PRId64 ": %s", c->q->sample.run_id, c->t->id,
                    p ? srv_store_errmsg(store) : "out of memory");
        }
        free(p);
    }
    pthread_mutex_lock(&c->t->mu);
    if (stored)
        c->q->sample.stored += b->samples;
    pthread_mutex_unlock(&c->t->mu);
    batch_clear(b);
}

/* ---- the sampler's callbacks ---------------------------------------------- */

static void
on_sample(void *arg, const struct sw_sample *s)
{
    struct run_ctx *c = arg;
    if (c->b.samples == 0)
        c->b.first_us = srv_now_us();
    for (size_t i = 0; i < s->nthreads && !c->nomem; i++) {
        const struct sw_sample_thread *th = &s->threads[i];
        if (th->state != SW_SAMPLE_WALKED || th->stack == NULL)
            continue;
        if (!fold_stack(c, th->stack) || !batch_add(&c->b, th->label, c->buf))
            c->nomem = true;
    }
    if (c->nomem) {
        c->q->sample.cancel = true; /* the run ends: nothing more could be kept */
        return;
    }
    c->b.samples++;
    c->b.last_us = srv_wall_us();
    pthread_mutex_lock(&c->t->mu);
    c->q->sample.samples++;
    pthread_mutex_unlock(&c->t->mu);
    if (c->commit_each || srv_now_us() - c->b.first_us >= COMMIT_US)
        commit(c);
}

int
srv_walk_sample(struct srv_target *t, struct srv_req *q, char *err, size_t errlen)
{
    struct sw_proc *p = sw_walker_proc(t->w);
    const struct rsp_stats *rs = rsp_session_stats(sw_proc_rsp_session(p));
    uint64_t rt0 = rs->round_trips;
    struct run_ctx c = {
        .t = t,
        .q = q,
        .w = t->w,
        .store = t->env->store != NULL && t->persisted,
        .commit_each = q->sample.hz > 0 && 1e6 / q->sample.hz >= COMMIT_US,
    };
    struct sw_sample_config cfg = {
        .seconds = q->sample.seconds,
        .hz = q->sample.hz,
        .on_sample = on_sample,
        .arg = &c,
        .cancel = &q->sample.cancel,
    };
    struct sw_sample_stats st = { 0 };
    struct sw_errbuf e = { 0 };

    srv_target_publish(t, SRV_RUNNING, NULL, -1);
    int rc = sw_sample_run(t->w, &cfg, &st, &e);
    commit(&c);
    batch_fini(&c.b);
    free(c.buf);
    pthread_mutex_lock(&t->mu);
    t->round_trips += rs->round_trips - rt0;
    t->walks += st.walks;
    pthread_mutex_unlock(&t->mu);
    if (c.nomem && rc == 0)
        rc = SW_ENOMEM, snprintf(e.msg, sizeof e.msg, "folding a sample: out of memory");
    if (rc < 0)
        rc = srv_walk_fail(t, rc, "sampling", e.msg[0] ? e.msg : sw_strerror(rc), err, errlen);
    if (t->w == NULL) /* the link broke or the target exited: published so */
        return rc;
    /* As sw_sample_run left it: stopped if it was stopped at the start. */
    if (sw_proc_rsp_thread_stopped(p, SW_TID_DEFAULT)) {
        const struct rsp_stop *stop = rsp_last_stop(sw_proc_rsp_session(p));
        srv_target_publish(t, SRV_STOPPED, NULL, stop ? stop->signal : -1);
    } else {
        srv_target_publish(t, SRV_RUNNING, NULL, -1);
    }
    return rc;
}
