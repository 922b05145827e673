/* rsp/regs_mem.c -- registers ('g', 'p') and memory ('m') of a stopped target.
 *
 * 'g' is cached per thread for the current stop (not with no_cache: read
 * again each time, the returned buffer replaced), and several threads' 'Hg'
 * and 'g' may go in one write (rsp_regs_read_batch); memory is not cached here
 * (the ProcessState backend in targets/ keeps stack blocks).  Requests are
 * split so no reply outgrows the stub's buffer (PacketSize, rsp_mem_chunk).
 */
#include "rsp/session.h"

#include <stdio.h>
#include <string.h>

#include "rsp/threads.h"

/* Hex register data where "xx" marks an unavailable byte (kept as 0). */
static bool
decode_regs(const char *p, size_t len, uint8_t *out)
{
    /* All hex, as nearly every reply is: in one pass (a 'g' of x86_64 with
     * AVX-512 is 2416 bytes, of every thread at every sample). */
    if (sw_hex_decode(p, len / 2, out) == 0)
        return true;
    for (size_t i = 0; i < len / 2; i++) {
        if ((p[2 * i] == 'x' || p[2 * i] == 'X') && (p[2 * i + 1] == 'x' || p[2 * i + 1] == 'X')) {
            out[i] = 0;
            continue;
        }
        if (sw_hex_decode(p + 2 * i, 1, out + i) != 0)
            return false;
    }
    return true;
}

/* The row of ID in the session's 'g' cache, or s->nregs when it has none. */
static bool
regs_row_is(const struct rsp_session *s, size_t row, struct rsp_thread_id id)
{
    return row < s->nregs && s->regs[row].id.pid == id.pid && s->regs[row].id.tid == id.tid;
}

/* Through the index; a row that moved (rows are compacted in rsp/pass.c and
 * rsp/reg_write.c) makes it rebuilt once.  Out of memory: row by row. */
static size_t
regs_find(const struct rsp_session *s, struct rsp_thread_id id)
{
    struct rsp_session *w = (struct rsp_session *)s; /* the index is a cache */
    size_t row;
    if (!sw_idmap_get(&s->regs_idx, id.pid, id.tid, &row))
        return s->nregs;
    if (regs_row_is(s, row, id))
        return row;
    sw_idmap_clear(&w->regs_idx);
    for (size_t i = 0; i < s->nregs; i++)
        if (sw_idmap_put(&w->regs_idx, s->regs[i].id.pid, s->regs[i].id.tid, i) != 0) {
            sw_idmap_fini(&w->regs_idx);
            for (size_t k = 0; k < s->nregs; k++)
                if (regs_row_is(s, k, id))
                    return k;
            return s->nregs;
        }
    return sw_idmap_get(&s->regs_idx, id.pid, id.tid, &row) ? row : s->nregs;
}

int
rsp_regs_keep(struct rsp_session *s, struct rsp_thread_id id, const char *tid,
              const struct rsp_reply *r, const struct rsp_regcache **out)
{
    if (r->len % 2 != 0)
        return sw_fail(&s->err, SW_EPROTO,
                       "reading the registers of thread %s: odd-length 'g' reply (%zu digits)", tid,
                       r->len);
    size_t row = regs_find(s, id);
    struct rsp_regcache *rows = s->regs;
    if (row == s->nregs) {
        rows = sw_grow(s->regs, &s->regs_cap, s->nregs + 1, sizeof *rows, 8);
        if (rows == NULL)
            return sw_fail(&s->err, SW_ENOMEM, "reading the registers of thread %s: out of memory",
                           tid);
        s->regs = rows;
    }
    uint8_t *b = sw_malloc(r->len / 2);
    if (b == NULL)
        return sw_fail(&s->err, SW_ENOMEM, "reading the registers of thread %s: out of memory",
                       tid);
    if (!decode_regs(r->p, r->len, b)) {
        sw_free(b);
        return sw_fail(&s->err, SW_EPROTO,
                       "reading the registers of thread %s: bad hex in the 'g' reply", tid);
    }
    if (row == s->nregs) {
        if (sw_idmap_put(&s->regs_idx, id.pid, id.tid, row) != 0) {
            sw_free(b);
            return sw_fail(&s->err, SW_ENOMEM, "reading the registers of thread %s: out of memory",
                           tid);
        }
        s->nregs++;
    } else
        sw_free(rows[row].buf);
    rows[row].id = id;
    rows[row].buf = b;
    rows[row].len = r->len / 2;
    *out = &rows[row];
    return 0;
}

bool
rsp_regs_cached(const struct rsp_session *s, struct rsp_thread_id id)
{
    return !s->no_cache && regs_find(s, rsp_thread_resolve(s, id)) < s->nregs;
}

int
rsp_regs_read(struct rsp_session *s, struct rsp_thread_id id, const uint8_t **buf, size_t *len)
{
    struct rsp_reply r;
    char tid[64];
    int rc;
    id = rsp_thread_resolve(s, id);
    size_t row = regs_find(s, id);
    if (row < s->nregs && !s->no_cache) {
        *buf = s->regs[row].buf;
        *len = s->regs[row].len;
        return 0;
    }
    rsp_thread_id_format(s, id, tid, sizeof tid);
    bool select = !rsp_thread_is_selected(s, id) && !s->x.unsup[RSP_PKT_SET_THREAD_G];
    if (select && s->x.pipeline) {
        /* 'Hg' and 'g' in one write: one round trip. */
        char hg[80], ok[8];
        size_t oklen;
        int n = snprintf(hg, sizeof hg, "Hg%s", tid);
        s->hg_sent = true;
        s->hg_valid = false;
        rc = rsp_request_pair(&s->x, RSP_PKT_SET_THREAD_G, hg, (size_t)n, ok, sizeof ok, &oklen,
                              RSP_PKT_READ_REGS, "g", 1, &r);
        if (rc == SW_ESTUB && oklen > 0 && ok[0] == 'E')
            return sw_fail(&s->err, SW_ENOENT, "selecting thread %s: stub replied %.*s", tid,
                           (int)oklen, ok);
        if (rc == 0 && oklen > 0 && !(oklen == 2 && memcmp(ok, "OK", 2) == 0))
            return sw_fail(&s->err, SW_EPROTO, "reply to 'Hg%s': expected OK, got '%.*s'", tid,
                           (int)oklen, ok);
        if (rc < 0 && rc != SW_EUNSUP)
            return sw_err_prefix(&s->err, "reading the registers of thread %s: ", tid);
        if (rc == SW_EUNSUP && oklen != 0)
            return sw_err_prefix(&s->err, "reading the registers of thread %s: ", tid);
        if (oklen == 2) {
            s->hg = id;
            s->hg_valid = true;
        }
    } else {
        if ((rc = rsp_thread_select(s, id)) < 0)
            return rc;
        rc = rsp_request(&s->x, RSP_PKT_READ_REGS, "g", 1, &r);
    }
    if (rc < 0)
        return sw_err_prefix(&s->err, "reading the registers of thread %s: ", tid);
    const struct rsp_regcache *e;
    if ((rc = rsp_regs_keep(s, id, tid, &r, &e)) < 0)
        return rc;
    *buf = e->buf;
    *len = e->len;
    return 0;
}

/* A batch of 'Hg'/'g' pairs: the thread of each item, and which threads'
 * 'g' reply reads another thread (their 'Hg' was refused). */
struct regs_batch {
    struct rsp_session *s;
    const struct rsp_batch_item *items;
    struct rsp_thread_id *ids; /* the threads asked for, resolved */
    size_t *owner;             /* per item: its thread in IDS */
    bool *other;               /* per thread: its 'g' reads another thread */
};

static int
regs_batch_reply(void *arg, size_t i, int rc, const struct rsp_reply *r)
{
    struct regs_batch *b = arg;
    struct rsp_session *s = b->s;
    size_t k = b->owner[i];
    if (b->items[i].kind == RSP_PKT_SET_THREAD_G) {
        if (rc == 0 && r->len == 2 && memcmp(r->p, "OK", 2) == 0) {
            s->hg = b->ids[k];
            s->hg_valid = true;
        } else if (rc != SW_EUNSUP) {
            /* E01: the thread is gone, and gdbserver keeps the thread it had
             * (server.c, 'H'): the 'g' after it reads that one, which must
             * not be kept under this id.  A stub without 'Hg' (empty reply)
             * has one thread, which its 'g' reads, as in rsp_regs_read. */
            b->other[k] = true;
            if (rc == 0)
                s->hg_valid = false; /* a reply we do not understand: nothing known */
        }
        return 0;
    }
    if (b->other[k] || rc < 0)
        return 0; /* not kept: rsp_regs_read asks again and reports what is wrong */
    char tid[64];
    const struct rsp_regcache *e;
    rsp_thread_id_format(s, b->ids[k], tid, sizeof tid);
    rc = rsp_regs_keep(s, b->ids[k], tid, r, &e);
    return rc == SW_ENOMEM ? rc : 0; /* a malformed reply: as above */
}

int
rsp_regs_read_batch(struct rsp_session *s, const struct rsp_thread_id *ids, size_t n)
{
    if (s->no_cache || !rsp_session_pipelined(s) || s->x.unsup[RSP_PKT_READ_REGS] || n == 0)
        return 0;
    struct rsp_batch_item *items = sw_calloc(2 * n, sizeof *items);
    struct rsp_thread_id *want = sw_calloc(n, sizeof *want);
    size_t *owner = sw_calloc(2 * n, sizeof *owner);
    bool *other = sw_calloc(n, sizeof *other);
    char *text = sw_malloc(n * 80);
    size_t k = 0, nwant = 0;
    int rc = 0;

    if (items == NULL || want == NULL || owner == NULL || other == NULL || text == NULL) {
        rc = sw_fail(&s->err, SW_ENOMEM, "reading the registers of %zu threads: out of memory", n);
        goto out;
    }
    /* 'Hg' where the stub's general thread is another: only the first
     * thread can go without (the threads are distinct, so after one 'Hg'
     * every later one needs its own). */
    bool known = s->hg_valid;
    struct rsp_thread_id sel = s->hg;
    for (size_t i = 0; i < n; i++) {
        struct rsp_thread_id id = rsp_thread_resolve(s, ids[i]);
        bool dup = regs_find(s, id) < s->nregs;
        for (size_t j = 0; j < nwant && !dup; j++)
            dup = want[j].pid == id.pid && want[j].tid == id.tid;
        if (dup)
            continue;
        want[nwant] = id;
        if (!(known && sel.pid == id.pid && sel.tid == id.tid) &&
            !s->x.unsup[RSP_PKT_SET_THREAD_G]) {
            char *t = text + 80 * nwant;
            char tid[64];
            rsp_thread_id_format(s, id, tid, sizeof tid);
            int len = snprintf(t, 80, "Hg%s", tid);
            owner[k] = nwant;
            items[k++] = (struct rsp_batch_item){ RSP_PKT_SET_THREAD_G, t, (size_t)len };
            known = true;
            sel = id;
        }
        owner[k] = nwant++;
        items[k++] = (struct rsp_batch_item){ RSP_PKT_READ_REGS, "g", 1 };
    }
    if (nwant == 0)
        goto out;
    if (k > nwant)
        s->hg_sent = true;
    struct regs_batch b = { s, items, want, owner, other };
    rc = rsp_request_batch(&s->x, items, k, regs_batch_reply, &b);
    if (rc < 0) {
        s->hg_valid = false; /* the link failed somewhere in the batch: nothing known */
        if (rc != SW_ENOMEM)
            sw_err_prefix(&s->err, "reading the registers of %zu threads: ", nwant);
    }
out:
    sw_free(items);
    sw_free(want);
    sw_free(owner);
    sw_free(other);
    sw_free(text);
    return rc;
}

int
rsp_reg_read(struct rsp_session *s, struct rsp_thread_id id, unsigned regnum, uint8_t *buf,
             size_t cap, size_t *len)
{
    struct rsp_reply r;
    char tid[64];
    int rc;
    if (s->x.unsup[RSP_PKT_READ_REG])
        return sw_fail(&s->err, SW_EUNSUP, "reading register %u: the stub has no 'p' packet",
                       regnum);
    id = rsp_thread_resolve(s, id);
    if ((rc = rsp_thread_select(s, id)) < 0)
        return rc;
    rsp_thread_id_format(s, id, tid, sizeof tid);
    rc = rsp_requestf(&s->x, RSP_PKT_READ_REG, &r, "p%x", regnum);
    if (rc == SW_EUNSUP)
        return sw_fail(&s->err, SW_EUNSUP, "reading register %u: the stub has no 'p' packet",
                       regnum);
    if (rc == SW_ESTUB)
        return sw_fail(&s->err, SW_ENOREG, "reading register %u of thread %s: stub replied %.*s",
                       regnum, tid, (int)(r.len > 40 ? 40 : r.len), r.p);
    if (rc < 0)
        return rc;
    s->x.feat[RSP_FEAT_P_PACKET] = true;
    if (r.len % 2 != 0 || r.len / 2 > cap)
        return sw_fail(&s->err, SW_EPROTO,
                       "reading register %u of thread %s: reply of %zu digits for %zu bytes",
                       regnum, tid, r.len, cap);
    if (!decode_regs(r.p, r.len, buf))
        return sw_fail(&s->err, SW_EPROTO, "reading register %u of thread %s: bad hex '%.*s'",
                       regnum, tid, (int)(r.len > 40 ? 40 : r.len), r.p);
    *len = r.len / 2;
    return 0;
}

/* QEMU answers E22 (EINVAL) to an 'm' longer than it can hold (its
 * gdbstub.c, handle_read_mem). */
#define MEM_TOO_LONG "E22"
/* Halving stops here: below this an E22 is about the address, not the size. */
#define MEM_MIN_RETRY 0x100

/* Whether [ADDR, ADDR+LEN) lies in the stub's memory map, where it has one (read on the
 * first call: rsp/symbols.c).  1 yes or no map, 0 not (with the message in S), or a link
 * error.  gdb refuses such reads too ("mem inaccessible-by-default"); OpenOCD would answer
 * them with zeros. */
static int
mem_in_map(struct rsp_session *s, uint64_t addr, size_t len)
{
    const struct rsp_mem_region *m;
    size_t n;
    int rc = rsp_memory_map(s, &m, &n);
    if (rc < 0)
        return rc;
    if (n == 0)
        return 1;
    /* Regions are sorted; adjacent ones hold a read across their border. */
    uint64_t at = addr, end = addr + len;
    for (size_t i = 0; i < n && at < end; i++)
        if (m[i].start <= at && at - m[i].start < m[i].length)
            at = m[i].start + m[i].length < at ? end : m[i].start + m[i].length;
    if (at >= end)
        return 1;
    sw_fail(&s->err, SW_EMEM,
            "reading %zu bytes at 0x%llx: 0x%llx is outside the stub's memory map", len,
            (unsigned long long)addr, (unsigned long long)at);
    return 0;
}

int
rsp_mem_read(struct rsp_session *s, uint64_t addr, void *buf, size_t len)
{
    uint8_t *out = buf;
    size_t done = 0;
    int inside = len > 0 ? mem_in_map(s, addr, len) : 1;
    if (inside <= 0)
        return inside < 0 ? inside : SW_EMEM;
    while (done < len) {
        struct rsp_reply r;
        uint64_t a = addr + done;
        size_t want = len - done;
        size_t chunk = rsp_mem_chunk(s);
        if (want > chunk)
            want = chunk;
        int rc =
            rsp_requestf(&s->x, RSP_PKT_READ_MEM, &r, "m%llx,%zx", (unsigned long long)a, want);
        if (rc == SW_ESTUB) {
            if (r.len == 3 && memcmp(r.p, MEM_TOO_LONG, 3) == 0 && want > MEM_MIN_RETRY) {
                s->mem_cap = (want / 2) & ~(size_t)63;
                continue;
            }
            return sw_fail(&s->err, SW_EMEM, "reading %zu bytes at 0x%llx: stub replied %.*s", want,
                           (unsigned long long)a, (int)(r.len > 100 ? 100 : r.len), r.p);
        }
        if (rc == SW_EUNSUP)
            return sw_fail(&s->err, SW_EUNSUP,
                           "reading %zu bytes at 0x%llx: the stub has no 'm' packet", want,
                           (unsigned long long)a);
        if (rc < 0)
            return rc;
        /* A short reply is a partial read: go on from where it stopped. */
        if (r.len % 2 != 0 || r.len / 2 > want || sw_hex_decode(r.p, r.len / 2, out + done) != 0)
            return sw_fail(&s->err, SW_EPROTO,
                           "reading %zu bytes at 0x%llx: malformed reply '%.*s' (%zu digits)", want,
                           (unsigned long long)a, (int)(r.len > 40 ? 40 : r.len), r.p, r.len);
        done += r.len / 2;
    }
    return 0;
}

struct mem_batch {
    struct rsp_session *s;
    struct rsp_mem_range *ranges;
    size_t *idx; /* the range of each request */
};

static int
mem_batch_reply(void *arg, size_t i, int rc, const struct rsp_reply *r)
{
    struct mem_batch *b = arg;
    struct rsp_mem_range *m = &b->ranges[b->idx[i]];
    if (rc == SW_ESTUB || rc == SW_EUNSUP) {
        m->rc = SW_EMEM;
        return 0;
    }
    if (r->len % 2 != 0 || r->len / 2 > m->len || sw_hex_decode(r->p, r->len / 2, m->buf) != 0) {
        m->rc =
            sw_fail(&b->s->err, SW_EPROTO,
                    "reading %zu bytes at 0x%llx: malformed reply '%.*s' (%zu digits)", m->len,
                    (unsigned long long)m->addr, (int)(r->len > 40 ? 40 : r->len), r->p, r->len);
        return 0;
    }
    /* A short reply is a partial read: the rest is asked for on its own. */
    m->rc = r->len / 2 == m->len ? 0 : 1;
    return 0;
}

int
rsp_mem_read_batch(struct rsp_session *s, struct rsp_mem_range *ranges, size_t n)
{
    return rsp_mem_read_batch_while(s, ranges, n, NULL, NULL);
}

int
rsp_mem_read_batch_while(struct rsp_session *s, struct rsp_mem_range *ranges, size_t n,
                         bool (*while_fn)(void *), void *arg)
{
    struct rsp_batch_item *items = sw_calloc(n ? n : 1, sizeof *items);
    size_t *idx = sw_calloc(n ? n : 1, sizeof *idx);
    char *text = sw_malloc(n ? n * 40 : 1);
    size_t k = 0;
    int rc = 0;

    if (items == NULL || idx == NULL || text == NULL) {
        rc = sw_fail(&s->err, SW_ENOMEM, "reading %zu memory ranges: out of memory", n);
        goto out;
    }
    /* Ranges longer than one reply go alone, through rsp_mem_read's split. */
    for (size_t i = 0; i < n; i++) {
        ranges[i].rc = 0;
        if (ranges[i].len == 0 || ranges[i].len > rsp_mem_chunk(s))
            continue;
        int inside = mem_in_map(s, ranges[i].addr, ranges[i].len);
        if (inside < 0) {
            rc = inside;
            goto out;
        }
        if (inside == 0) {
            ranges[i].rc = SW_EMEM; /* no packet: outside the memory map */
            continue;
        }
        char *t = text + 40 * k;
        int len = snprintf(t, 40, "m%llx,%zx", (unsigned long long)ranges[i].addr, ranges[i].len);
        items[k] = (struct rsp_batch_item){ RSP_PKT_READ_MEM, t, (size_t)len };
        idx[k++] = i;
    }
    struct mem_batch b = { s, ranges, idx };
    if (k > 0 &&
        (rc = rsp_request_batch_while(&s->x, items, k, mem_batch_reply, &b, while_fn, arg)) < 0)
        goto out;
    /* Long ranges, and the ranges a short (partial) reply left unfinished,
     * read on their own through rsp_mem_read, which goes on after a short
     * reply. */
    for (size_t i = 0; i < n; i++) {
        struct rsp_mem_range *m = &ranges[i];
        if (m->len <= rsp_mem_chunk(s) && m->rc != 1)
            continue;
        rc = rsp_mem_read(s, m->addr, m->buf, m->len);
        m->rc = rc == SW_EUNSUP ? SW_EMEM : rc;
        if (rc < 0 && rc != SW_EMEM && rc != SW_EPROTO && rc != SW_EUNSUP)
            goto out;
        rc = 0;
    }
out:
    sw_free(items);
    sw_free(idx);
    sw_free(text);
    return rc;
}
