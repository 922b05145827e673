/* rsp/tdesc_cache.c -- parsed target descriptions shared by the sessions of one process.
 *
 * A bounded table under one mutex, keyed by the stub's qSupported reply and
 * the exact bytes of its target.xml; the least recently used entry goes
 * when it is full.  Entries are copied in and out, so a session's
 * description never points into the cache.  Nothing is fetched or parsed
 * while the lock is held.
 */
#include "rsp/tdesc_cache.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

#define TDESC_CACHE_DEFAULT_MAX 64

struct tdesc_entry {
    uint64_t hash; /* of the key, to skip most comparisons */
    char *qsup;    /* owned */
    size_t qsup_len;
    char *xml; /* owned */
    size_t xml_len;
    struct rsp_tdesc *td; /* owned */
    uint64_t used;        /* the tick of its last get or put */
};

struct rsp_tdesc_cache {
    pthread_mutex_t mu;
    pthread_cond_t done;            /* a claim ended; on CLOCK_MONOTONIC */
    struct rsp_tdesc_claim *claims; /* borrowed: the keys being fetched */
    struct tdesc_entry *e;          /* owned: n of max entries */
    size_t n, max;
    uint64_t tick;
    struct rsp_tdesc_cache_stats st;
};

/* FNV-1a over both parts, with the first part's length between them so
 * that moving bytes from one to the other changes the hash. */
static uint64_t
key_hash(const char *a, size_t alen, const char *b, size_t blen)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < alen; i++)
        h = (h ^ (unsigned char)a[i]) * 0x100000001b3u;
    for (size_t i = 0; i < sizeof alen; i++)
        h = (h ^ ((alen >> (8 * i)) & 0xff)) * 0x100000001b3u;
    for (size_t i = 0; i < blen; i++)
        h = (h ^ (unsigned char)b[i]) * 0x100000001b3u;
    return h;
}

/* The entry with this key, or NULL.  Under the lock. */
static struct tdesc_entry *
find(struct rsp_tdesc_cache *c, uint64_t h, const char *qsup, size_t qsup_len, const char *xml,
     size_t xml_len)
{
    for (size_t i = 0; i < c->n; i++) {
        struct tdesc_entry *e = &c->e[i];
        if (e->hash == h && e->qsup_len == qsup_len && e->xml_len == xml_len &&
            memcmp(e->qsup, qsup, qsup_len) == 0 && memcmp(e->xml, xml, xml_len) == 0)
            return e;
    }
    return NULL;
}

/* The claim on this key, or NULL.  Under the lock. */
static struct rsp_tdesc_claim *
find_claim(struct rsp_tdesc_cache *c, const struct rsp_tdesc_claim *k)
{
    for (struct rsp_tdesc_claim *p = c->claims; p != NULL; p = p->next)
        if (p->hash == k->hash && p->qsup_len == k->qsup_len && p->xml_len == k->xml_len &&
            memcmp(p->qsup, k->qsup, k->qsup_len) == 0 && memcmp(p->xml, k->xml, k->xml_len) == 0)
            return p;
    return NULL;
}

/* Take CL off the list and wake the waiters.  Under the lock. */
static void
unclaim(struct rsp_tdesc_cache *c, struct rsp_tdesc_claim *cl)
{
    if (!cl->claimed)
        return;
    for (struct rsp_tdesc_claim **pp = &c->claims; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == cl) {
            *pp = cl->next;
            break;
        }
    }
    cl->claimed = false;
    cl->next = NULL;
    pthread_cond_broadcast(&c->done);
}

static void
entry_fini(struct tdesc_entry *e)
{
    sw_free(e->qsup);
    sw_free(e->xml);
    rsp_tdesc_free(e->td);
    memset(e, 0, sizeof *e);
}

int
rsp_tdesc_copy(const struct rsp_tdesc *td, struct rsp_tdesc **out)
{
    *out = NULL;
    struct rsp_tdesc *t = sw_calloc(1, sizeof *t);
    if (t == NULL)
        return SW_ENOMEM;
    bool ok = true;
    if (td->arch != NULL)
        ok &= (t->arch = sw_strdup(td->arch)) != NULL;
    if (td->osabi != NULL)
        ok &= (t->osabi = sw_strdup(td->osabi)) != NULL;
    if (td->nregs > 0 && (t->regs = sw_calloc(td->nregs, sizeof *t->regs)) == NULL)
        ok = false;
    for (size_t i = 0; ok && i < td->nregs; i++) {
        const struct rsp_treg *r = &td->regs[i];
        struct rsp_treg *d = &t->regs[i];
        t->nregs = i + 1; /* counted before the copies, so a half row is freed */
        *d = *r;
        d->name = d->feature = d->type = NULL;
        ok = (d->name = sw_strdup(r->name)) != NULL &&
             (d->feature = sw_strdup(r->feature)) != NULL &&
             (r->type == NULL || (d->type = sw_strdup(r->type)) != NULL);
    }
    if (!ok) {
        rsp_tdesc_free(t);
        return SW_ENOMEM;
    }
    t->nregs = td->nregs;
    t->g_size = td->g_size;
    *out = t;
    return 0;
}

int
rsp_tdesc_cache_new(size_t max, struct rsp_tdesc_cache **out)
{
    *out = NULL;
    if (max == 0)
        max = TDESC_CACHE_DEFAULT_MAX;
    struct rsp_tdesc_cache *c = sw_calloc(1, sizeof *c);
    if (c == NULL)
        return SW_ENOMEM;
    if ((c->e = sw_calloc(max, sizeof *c->e)) == NULL) {
        sw_free(c);
        return SW_ENOMEM;
    }
    c->max = max;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->done, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&c->mu, NULL);
    *out = c;
    return 0;
}

void
rsp_tdesc_cache_free(struct rsp_tdesc_cache *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n; i++)
        entry_fini(&c->e[i]);
    sw_free(c->e);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->mu);
    sw_free(c);
}

void
rsp_tdesc_cache_stats(struct rsp_tdesc_cache *c, struct rsp_tdesc_cache_stats *out)
{
    pthread_mutex_lock(&c->mu);
    *out = c->st;
    out->entries = c->n;
    pthread_mutex_unlock(&c->mu);
}

int
rsp_tdesc_cache_get(struct rsp_tdesc_cache *c, struct rsp_tdesc_claim *cl, const char *qsup,
                    size_t qsup_len, const char *xml, size_t xml_len, int wait_ms,
                    struct rsp_tdesc **out)
{
    *cl = (struct rsp_tdesc_claim){
        qsup, xml, qsup_len, xml_len, key_hash(qsup, qsup_len, xml, xml_len), false, NULL
    };
    *out = NULL;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (wait_ms > 0) {
        until.tv_sec += wait_ms / 1000;
        until.tv_nsec += (long)(wait_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
    }
    int rc = SW_ENOENT;
    bool waited = false, timed_out = wait_ms <= 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        struct tdesc_entry *e = find(c, cl->hash, qsup, qsup_len, xml, xml_len);
        if (e != NULL) {
            /* Copied under the lock: a put may evict the entry as soon as it is released. */
            e->used = ++c->tick;
            rc = rsp_tdesc_copy(e->td, out);
            break;
        }
        if (find_claim(c, cl) == NULL) {
            cl->claimed = true;
            cl->next = c->claims;
            c->claims = cl;
            break;
        }
        if (timed_out)
            break; /* the one fetching it is slow: fetch it too, unclaimed */
        if (!waited)
            c->st.waits++;
        waited = true;
        if (pthread_cond_timedwait(&c->done, &c->mu, &until) == ETIMEDOUT)
            timed_out = true; /* one more look, then give up */
    }
    if (rc == 0)
        c->st.hits++;
    else
        c->st.misses++;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int
rsp_tdesc_cache_put(struct rsp_tdesc_cache *c, struct rsp_tdesc_claim *cl,
                    const struct rsp_tdesc *td)
{
    /* The copies are made before the lock is taken, and dropped if the key came meanwhile. */
    struct tdesc_entry ne = { cl->hash,
                              sw_strndup(cl->qsup, cl->qsup_len),
                              cl->qsup_len,
                              sw_strndup(cl->xml, cl->xml_len),
                              cl->xml_len,
                              NULL,
                              0 };
    int rc = 0;
    if (ne.qsup == NULL || ne.xml == NULL || rsp_tdesc_copy(td, &ne.td) < 0)
        rc = SW_ENOMEM;
    struct tdesc_entry old = { 0 };
    pthread_mutex_lock(&c->mu);
    unclaim(c, cl);
    if (rc == 0 && find(c, cl->hash, cl->qsup, cl->qsup_len, cl->xml, cl->xml_len) == NULL) {
        size_t slot = c->n;
        if (c->n == c->max) {
            slot = 0;
            for (size_t i = 1; i < c->n; i++)
                if (c->e[i].used < c->e[slot].used)
                    slot = i;
            old = c->e[slot];
            c->st.evictions++;
        } else {
            c->n++;
        }
        ne.used = ++c->tick;
        c->e[slot] = ne;
        memset(&ne, 0, sizeof ne); /* the table's now */
    }
    pthread_mutex_unlock(&c->mu);
    entry_fini(&ne); /* freed outside the lock: a copy not kept, an entry evicted */
    entry_fini(&old);
    return rc;
}

void
rsp_tdesc_cache_release(struct rsp_tdesc_cache *c, struct rsp_tdesc_claim *cl)
{
    if (!cl->claimed)
        return;
    pthread_mutex_lock(&c->mu);
    unclaim(c, cl);
    pthread_mutex_unlock(&c->mu);
}
