/* targets/rsp_mem.c -- target memory of the RSP ProcessState: per-stop windows.
 *
 * Reads go through a cache of windows as large as the stub safely serves in
 * one 'm', extended window by window as a walk goes outward; a batch of
 * ranges goes in one round trip where the stub takes pipelined requests, and
 * carries the stopped thread's first stack window with it.  Dropped when the
 * target resumes (docs/design.md).  Not registers (rsp_proc.c).
 */
#include "targets/rsp_proc_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

/* Below this a failing block is not split further; the request is read as is. */
#define TGT_MIN_BLOCK 64
/* Windows are at most this (gdbserver 13 serves 9211-byte 'm', 14+ about
 * 64 KiB; rsp_mem_chunk keeps each reply within PacketSize). */
#define TGT_MAX_WINDOW 65536
/* Mappings end on a page boundary (the smallest page of the arches). */
#define TGT_PAGE 4096

static int
proc_fail_from_session(struct tgt_rsp_proc *rp, int code)
{
    return sw_fail(&rp->base.err, code, "%s", rsp_session_errmsg(rp->s));
}

void
tgt_rsp_mem_drop(struct tgt_rsp_proc *rp)
{
    for (size_t i = 0; i < rp->nmem; i++)
        sw_free(rp->mem[i].data);
    sw_free(rp->mem);
    rp->mem = NULL;
    rp->nmem = rp->capmem = 0;
}

static int
mem_cache_add(struct tgt_rsp_proc *rp, sw_addr addr, size_t len, const uint8_t *data)
{
    if (rp->nmem == rp->capmem) {
        size_t cap = rp->capmem ? rp->capmem * 2 : 16;
        struct tgt_mem_range *m = sw_realloc(rp->mem, cap * sizeof *m);
        if (m == NULL)
            return SW_ENOMEM;
        rp->mem = m;
        rp->capmem = cap;
    }
    uint8_t *copy = NULL;
    if (data != NULL) {
        copy = sw_malloc(len);
        if (copy == NULL)
            return SW_ENOMEM;
        memcpy(copy, data, len);
    }
    rp->mem[rp->nmem++] =
        (struct tgt_mem_range){ .addr = addr, .len = len, .data = copy, .used_hi = addr };
    return 0;
}

int
tgt_rsp_mem_keep(struct tgt_rsp_proc *rp, sw_addr addr, size_t len, const uint8_t *data)
{
    return mem_cache_add(rp, addr, len, data);
}

/* Copy [ADDR, ADDR+LEN) from the cached windows, which may take several
 * adjacent ones.  False with *MISS at the first byte no window holds (or
 * that a window knows to be unreadable, *UNREADABLE set). */
static bool
mem_cache_copy(struct tgt_rsp_proc *rp, sw_addr addr, uint8_t *buf, size_t len, sw_addr *miss,
               bool *unreadable)
{
    size_t done = 0;
    *unreadable = false;
    while (done < len) {
        sw_addr a = addr + done;
        struct tgt_mem_range *hit = NULL;
        for (size_t i = 0; i < rp->nmem && hit == NULL; i++) {
            struct tgt_mem_range *m = &rp->mem[i];
            if (a >= m->addr && a - m->addr < m->len)
                hit = m;
        }
        if (hit == NULL || hit->data == NULL) {
            *miss = a;
            *unreadable = hit != NULL;
            return false;
        }
        size_t off = (size_t)(a - hit->addr);
        size_t n = hit->len - off < len - done ? hit->len - off : len - done;
        if (buf != NULL) {
            memcpy(buf + done, hit->data + off, n);
            if (a + n > hit->used_hi)
                hit->used_hi = a + n;
        }
        done += n;
    }
    return true;
}

bool
tgt_rsp_mem_cached(struct tgt_rsp_proc *rp, sw_addr addr, size_t len)
{
    sw_addr miss;
    bool unreadable;
    if (rp->no_cache || len == 0 || addr + len < addr)
        return false;
    return mem_cache_copy(rp, addr, NULL, len, &miss, &unreadable);
}

/* Fetch one window holding ADDR (and NEED bytes from it where it can): as
 * large as the stub serves in one 'm' (rsp_mem_chunk: 9152 bytes on
 * gdbserver 13, 2048 on QEMU user), from ADDR rounded down
 * to 64 bytes -- or, when a window already ends just below ADDR, from its end,
 * so a walk that leaves the window costs one more read of fresh bytes.
 * Halved while the stub refuses (gdbserver answers E01 for a read that
 * crosses the end of a mapping), not below what holds the
 * request nor below TGT_MIN_BLOCK.  SW_EMEM when no window was readable. */
/* The first window mem_fetch_window reads for NEED bytes at ADDR: *START
 * and *SIZE. */
static void
window_plan(struct tgt_rsp_proc *rp, sw_addr addr, size_t need, sw_addr *startp, size_t *sizep)
{
    size_t chunk = rsp_mem_chunk(rp->s);
    sw_addr start = addr & ~(sw_addr)(TGT_MIN_BLOCK - 1);

    if (chunk > TGT_MAX_WINDOW)
        chunk = TGT_MAX_WINDOW;
    for (size_t i = 0; i < rp->nmem; i++) {
        sw_addr end = rp->mem[i].addr + rp->mem[i].len;
        if (rp->mem[i].data != NULL && end <= addr && end > start)
            start = end;
    }
    if (start + chunk < start)
        chunk = (size_t)(UINT64_MAX - start) + 1;
    /* Linux puts the executable's name at the top of the main stack: a
     * window does not cross the end of that page (one refused read saved). */
    if (rp->stack_end > addr && start + chunk > rp->stack_end && rp->stack_end - start >= need)
        chunk = (size_t)(rp->stack_end - start);
    *startp = start;
    *sizep = chunk;
}

static int
mem_fetch_window(struct tgt_rsp_proc *rp, sw_addr addr, size_t need)
{
    sw_addr start;
    size_t chunk;

    window_plan(rp, addr, need, &start, &chunk);
    uint8_t *buf = sw_malloc(chunk ? chunk : 1);
    if (buf == NULL)
        return sw_fail(&rp->base.err, SW_ENOMEM, "reading memory: out of memory");
    int rc;
    for (size_t size = chunk;;) {
        rc = rsp_mem_read(rp->s, start, buf, size);
        if (rc == 0) {
            rc = mem_cache_add(rp, start, size, buf) < 0 ? SW_ENOMEM : 0;
            break;
        }
        if (rc != SW_EMEM) {
            rc = proc_fail_from_session(rp, rc);
            break;
        }
        /* Next: half, or up to the end of the page that holds the request
         * when that is smaller (a mapping ends on a page boundary). */
        sw_addr page_end = (addr + need + TGT_PAGE - 1) & ~(sw_addr)(TGT_PAGE - 1);
        size_t next = size / 2;
        if (page_end > start && page_end - start < next)
            next = (size_t)(page_end - start);
        if (next < TGT_MIN_BLOCK || start + next < addr + need)
            break; /* a smaller window won't hold the request */
        size = next;
    }
    sw_free(buf);
    return rc;
}

/* Whether [ADDR, ADDR+LEN) is one of the ranges checked at each stop
 * (sw_proc_stop_reads: a library list's link-map entries).  Those are read
 * exactly: they lie anywhere in a module's data, often near the end of its
 * mapping, where a window would cross it and be refused once. */
static const struct sw_mem_req *
stop_read(const struct tgt_rsp_proc *rp, sw_addr addr, size_t len)
{
    for (size_t i = 0; i < rp->warm.nreads; i++)
        if (addr >= rp->warm.reads[i].addr && len <= rp->warm.reads[i].len &&
            addr - rp->warm.reads[i].addr <= rp->warm.reads[i].len - len)
            return &rp->warm.reads[i];
    return NULL;
}

/* Read stop read R whole into the cache (unreadable: remembered so). */
static int
stop_read_fetch(struct tgt_rsp_proc *rp, const struct sw_mem_req *r)
{
    uint8_t *b = sw_malloc(r->len);
    if (b == NULL)
        return sw_fail(&rp->base.err, SW_ENOMEM, "reading memory: out of memory");
    int rc = rsp_mem_read(rp->s, r->addr, b, r->len);
    if (rc == 0 || rc == SW_EMEM)
        rc = mem_cache_add(rp, r->addr, r->len, rc == 0 ? b : NULL) < 0 ? SW_ENOMEM : 0;
    else
        rc = proc_fail_from_session(rp, rc);
    sw_free(b);
    return rc;
}

int
tgt_rsp_read_mem(struct sw_proc *p, sw_addr addr, void *buf, size_t len)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    int rc;

    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "reading memory: the target has exited");
    if (len == 0)
        return 0;
    if (addr + len < addr)
        return sw_fail(&p->err, SW_EMEM, "reading %zu bytes at 0x%" PRIx64 ": wraps around", len,
                       addr);
    if (rp->no_cache || len > rsp_mem_chunk(rp->s)) {
        rc = rsp_mem_read(rp->s, addr, buf, len);
        return rc < 0 ? proc_fail_from_session(rp, rc) : 0;
    }
    /* A read crossing a window's end costs at most one more window. */
    for (int tries = 0; tries < 3; tries++) {
        sw_addr miss;
        bool unreadable;
        if (mem_cache_copy(rp, addr, buf, len, &miss, &unreadable))
            return 0;
        if (unreadable)
            break;
        const struct sw_mem_req *sr = tries == 0 ? stop_read(rp, addr, len) : NULL;
        if (sr != NULL) {
            if ((rc = stop_read_fetch(rp, sr)) < 0)
                return rc;
            continue; /* served from the cache, or found unreadable */
        }
        rc = mem_fetch_window(rp, miss, (size_t)(addr + len - miss));
        if (rc == SW_EMEM)
            break;
        if (rc < 0)
            return rc;
    }
    /* No window holds it (only the exact bytes are readable, or none): read
     * exactly what was asked, and remember an unreadable range too -- unless
     * a read of a part of it already failed this stop. */
    for (size_t i = 0; i < rp->nmem; i++) {
        const struct tgt_mem_range *m = &rp->mem[i];
        if (m->data == NULL && m->addr >= addr && m->len <= len && m->addr - addr <= len - m->len)
            return sw_fail(&p->err, SW_EMEM,
                           "reading %zu bytes at 0x%" PRIx64 ": 0x%" PRIx64 "+%zu not readable",
                           len, addr, m->addr, m->len);
    }
    rc = rsp_mem_read(rp->s, addr, buf, len);
    if (rc == SW_EMEM) {
        mem_cache_add(rp, addr, len, NULL);
        return sw_fail(&p->err, SW_EMEM, "reading %zu bytes at 0x%" PRIx64 ": %s", len, addr,
                       rsp_session_errmsg(rp->s));
    }
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    mem_cache_add(rp, addr, len, buf);
    return 0;
}

/* ---- batches -------------------------------------------------------------- */

/* The stopped thread's SP when its stop reply carried it (gdbserver
 * expedites it), else 0. */
static sw_addr
expedited_sp(struct tgt_rsp_proc *rp)
{
    const struct arch_desc *a = rp->base.arch;
    if (!rp->stop.has_thread || a->dw_sp < 0)
        return 0;
    for (size_t i = 0; i < a->nregs && i < TGT_MAX_ROWS; i++) {
        if (a->regs[i].role != ARCH_ROLE_SP || !rp->map[i].mapped)
            continue;
        for (size_t k = 0; k < rp->stop.nexpedited; k++) {
            const struct rsp_expedited *e = &rp->stop.expedited[k];
            if (e->regnum == rp->map[i].regnum && e->len >= rp->map[i].size)
                return arch_load(a, e->bytes, rp->map[i].size);
        }
    }
    return 0;
}

/* Plan the window a read of ADDR would fetch, for a batch: into RANGES[*K]
 * with its own buffer, unless the cache holds ADDR or knows it unreadable,
 * or a window planned already (RANGES[FIRST..*K)) holds it.  Returns 0 or
 * SW_ENOMEM. */
static int
plan_window(struct tgt_rsp_proc *rp, sw_addr addr, struct rsp_mem_range *ranges, size_t first,
            size_t *k)
{
    sw_addr miss, start;
    bool unreadable;
    size_t size;
    if (mem_cache_copy(rp, addr, NULL, 1, &miss, &unreadable) || unreadable)
        return 0;
    for (size_t j = first; j < *k; j++)
        if (addr >= ranges[j].addr && addr - ranges[j].addr < ranges[j].len)
            return 0;
    window_plan(rp, addr, 1, &start, &size);
    uint8_t *buf = sw_malloc(size ? size : 1);
    if (buf == NULL)
        return SW_ENOMEM;
    ranges[(*k)++] = (struct rsp_mem_range){ start, size, buf, 0 };
    return 0;
}

int
tgt_rsp_read_mem_batch(struct sw_proc *p, struct sw_mem_req *reqs, size_t n)
{
    return tgt_rsp_read_mem_batch_while(p, reqs, n, NULL, NULL);
}

int
tgt_rsp_read_mem_batch_while(struct sw_proc *p, struct sw_mem_req *reqs, size_t n,
                             bool (*while_fn)(void *), void *arg)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    struct rsp_mem_range *ranges = NULL;
    size_t *idx = NULL, k = 0, nreq = 0; /* ranges [0, nreq) exact, [nreq, k) windows */
    int rc = 0;

    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "reading memory: the target has exited");
    ranges = sw_calloc(n + 1, sizeof *ranges);
    idx = sw_calloc(n + 1, sizeof *idx);
    if (ranges == NULL || idx == NULL) {
        rc = sw_fail(&p->err, SW_ENOMEM, "reading %zu memory ranges: out of memory", n);
        goto out;
    }
    /* The exact bytes first: a batch asks for small scattered things
     * (build-id notes), where a window each would be bytes for nothing. */
    for (size_t i = 0; i < n; i++) {
        sw_addr miss;
        bool unreadable;
        reqs[i].rc = 0;
        if (reqs[i].len == 0 || reqs[i].buf == NULL)
            continue;
        if (reqs[i].addr + reqs[i].len < reqs[i].addr) {
            reqs[i].rc = SW_EMEM;
            continue;
        }
        if (!rp->no_cache &&
            mem_cache_copy(rp, reqs[i].addr, reqs[i].buf, reqs[i].len, &miss, &unreadable))
            continue;
        ranges[k] = (struct rsp_mem_range){ reqs[i].addr, reqs[i].len, reqs[i].buf, 0 };
        idx[k++] = i;
    }
    nreq = k;
    /* Then windows, which only fill the cache: the ranges asked for without
     * a buffer (sw_mem_req: a later read's, such as the vDSO's image), and
     * the stopped thread's first stack window, which rides along when the
     * batch costs one round trip anyway: its walk then starts with no round
     * trip of its own.  None without a cache. */
    if (!rp->no_cache) {
        for (size_t i = 0; i < n && rc == 0; i++)
            if (reqs[i].buf == NULL && reqs[i].len > 0)
                rc = plan_window(rp, reqs[i].addr, ranges, nreq, &k);
        sw_addr sp = k > 0 && rsp_session_pipelined(rp->s) ? expedited_sp(rp) : 0;
        if (rc == 0 && sp != 0)
            rc = plan_window(rp, sp, ranges, nreq, &k);
        if (rc != 0) {
            rc = sw_fail(&p->err, SW_ENOMEM, "reading memory: out of memory");
            goto out;
        }
    }
    if (k == 0)
        goto out; /* nothing goes on the link: no round trip to fill */
    rc = rsp_mem_read_batch_while(rp->s, ranges, k, while_fn, arg);
    if (rc < 0) {
        rc = proc_fail_from_session(rp, rc);
        goto out;
    }
    for (size_t j = 0; j < k; j++) {
        /* A refused window is no fact about its bytes: a read halves it. */
        if (j >= nreq) {
            if (ranges[j].rc == 0 &&
                mem_cache_add(rp, ranges[j].addr, ranges[j].len, ranges[j].buf) < 0)
                rc = sw_fail(&p->err, SW_ENOMEM, "reading memory: out of memory");
            continue;
        }
        reqs[idx[j]].rc = ranges[j].rc;
        if (rp->no_cache)
            continue;
        if (mem_cache_add(rp, ranges[j].addr, ranges[j].len,
                          ranges[j].rc == 0 ? ranges[j].buf : NULL) < 0)
            rc = sw_fail(&p->err, SW_ENOMEM, "reading memory: out of memory");
    }
out:
    for (size_t j = nreq; ranges != NULL && j < k; j++)
        sw_free(ranges[j].buf);
    sw_free(ranges);
    sw_free(idx);
    return rc;
}
