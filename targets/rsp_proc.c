/* targets/rsp_proc.c -- ProcessState over an RSP session (ProcDebug: rsp_debug.c).
 *
 * Registers come from the stop reply's expedited registers, then one 'g' per
 * thread per stop (pipelined with its 'Hg' where the stub is known to take
 * it, rsp/regs_mem.c); memory through targets/rsp_mem.c's per-stop windows.
 * Everything is dropped when the target resumes (docs/design.md).  The
 * register map joins the arch table to the stub's target description by
 * register name (QEMU and gdbserver number registers differently).
 */
#include "rspwalk/target.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rspwalk/rsp.h"
#include "targets/rsp_proc_internal.h"
#include "targets/targets_internal.h"
#include "util/util.h"

/* Mappings end on a page boundary (the smallest page of the arches). */
#define TGT_PAGE 4096
/* Reads of the target's files up to this size go without asking the
 * file's size (vFile:fstat) first: the first page and HEAD_MAX of
 * libstate/fetch.c, the ranges libstate/cache.c compares. */
#define TGT_VFILE_SMALL_READ (64u * 1024)

/* auxv: the executable's file name, at the top of the main stack. */
#define TGT_AT_EXECFN 31

static int
proc_fail_from_session(struct tgt_rsp_proc *rp, int code)
{
    return sw_fail(&rp->base.err, code, "%s", rsp_session_errmsg(rp->s));
}

static int
load_threads(struct tgt_rsp_proc *rp)
{
    struct rsp_thread_id *ids;
    size_t n;
    int rc = rsp_threads(rp->s, &ids, &n);
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    if (rp->only_pid != 0) {
        /* One link, several processes: keep this one's threads. */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (ids[i].pid == rp->only_pid)
                ids[k++] = ids[i];
        n = k;
    }
    free(rp->threads);
    rp->threads = ids;
    rp->nthreads = n;
    tgt_rsp_threads_indexed(rp);
    tgt_qemu_listed(rp);
    return 0;
}

static bool
thread_known(struct tgt_rsp_proc *rp, sw_tid tid)
{
    size_t row;
    if (rp->stop.has_thread && (sw_tid)rp->stop.thread.tid == tid)
        return true;
    return tgt_rsp_thread_row(rp, tid, &row);
}

/* ---- registers ---------------------------------------------------------- */

static const struct tgt_regmap *
map_for_dwarf(struct tgt_rsp_proc *rp, unsigned regno, size_t *row)
{
    const struct arch_desc *a = rp->base.arch;
    for (size_t i = 0; i < a->nregs && i < TGT_MAX_ROWS; i++) {
        bool hit = a->regs[i].dwarf >= 0 && (unsigned)a->regs[i].dwarf == regno;
        if (!hit && (int)regno == a->dw_pc && a->regs[i].role == ARCH_ROLE_PC)
            hit = true;
        if (hit && rp->map[i].mapped) {
            *row = i;
            return &rp->map[i];
        }
    }
    return NULL;
}

static int
gcache_get(struct tgt_rsp_proc *rp, sw_tid tid, const uint8_t **data, size_t *len)
{
    size_t row = tgt_rsp_gcache_row(rp, tid);
    if (row < rp->ngcache) {
        *data = rp->gcache[row].data;
        *len = rp->gcache[row].len;
        return 0;
    }
    const uint8_t *buf;
    size_t n;
    int rc = rsp_regs_read(rp->s, tgt_rsp_thread_id(rp, tid), &buf, &n);
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    if (rp->no_cache) {
        *data = buf;
        *len = n;
        return 0;
    }
    struct tgt_gcache *g = sw_grow(rp->gcache, &rp->gcache_cap, rp->ngcache + 1, sizeof *g, 8);
    if (g == NULL)
        return sw_fail(&rp->base.err, SW_ENOMEM, "caching registers: out of memory");
    rp->gcache = g;
    uint8_t *copy = sw_malloc(n);
    if (copy == NULL || sw_idmap_put(&rp->gcache_idx, 0, (int64_t)tid, rp->ngcache) != 0) {
        sw_free(copy);
        return sw_fail(&rp->base.err, SW_ENOMEM, "caching registers: out of memory");
    }
    memcpy(copy, buf, n);
    g[rp->ngcache++] = (struct tgt_gcache){ .tid = tid, .data = copy, .len = n };
    *data = copy;
    *len = n;
    return 0;
}

/* M's value for TID from the stop reply's expedited registers, which cost
 * nothing; false when the stop did not carry it (or with no cache). */
static bool
reg_expedited(struct tgt_rsp_proc *rp, sw_tid tid, const struct tgt_regmap *m, sw_word *val)
{
    if (rp->no_cache || !rp->stop.has_thread || (sw_tid)rp->stop.thread.tid != tid)
        return false;
    for (size_t i = 0; i < rp->stop.nexpedited; i++) {
        const struct rsp_expedited *e = &rp->stop.expedited[i];
        if (e->regnum == m->regnum && e->len >= m->size) {
            *val = arch_load(rp->base.arch, e->bytes, m->size);
            return true;
        }
    }
    return false;
}

/* M's value from 'g' reply G of GLEN bytes; false when the reply stops short
 * of it. */
static bool
reg_from_g(struct tgt_rsp_proc *rp, const struct tgt_regmap *m, const uint8_t *g, size_t glen,
           sw_word *val)
{
    if (m->offset + m->size > glen)
        return false;
    *val = arch_load(rp->base.arch, g + m->offset, m->size);
    return true;
}

static int
rsp_read_reg(struct sw_proc *p, sw_tid tid, unsigned regno, sw_word *val)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    const struct arch_desc *a = p->arch;
    const struct tgt_regmap *m;
    size_t row;

    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "reading registers: the target has exited");
    if (tid == SW_TID_DEFAULT)
        tid = p->default_tid;
    if (tgt_rsp_check_stopped(rp, tid) < 0)
        return SW_EINVAL;
    int rc0 = tgt_rsp_warm_due(rp);
    if (rc0 < 0)
        return rc0;
    m = map_for_dwarf(rp, regno, &row);
    if (m == NULL)
        return sw_fail(&p->err, SW_ENOREG, "register %s (DWARF %u): not in the target description",
                       arch_dwarf_name(a, (int)regno) ? arch_dwarf_name(a, (int)regno) : "?",
                       regno);
    if (reg_expedited(rp, tid, m, val))
        return 0;
    const uint8_t *g = NULL;
    size_t glen = 0;
    int rc = gcache_get(rp, tid, &g, &glen);
    if (rc < 0)
        return rc;
    if (reg_from_g(rp, m, g, glen, val))
        return 0;
    /* Outside the 'g' reply (QEMU sends only core registers): try 'p'. */
    uint8_t buf[64];
    size_t n;
    rc = rsp_reg_read(rp->s, tgt_rsp_thread_id(rp, tid), m->regnum, buf, sizeof buf, &n);
    if (rc == 0 && n >= m->size) {
        *val = arch_load(a, buf, m->size);
        return 0;
    }
    if (rc < 0 && rc != SW_EUNSUP && rc != SW_ESTUB)
        return proc_fail_from_session(rp, rc);
    return sw_fail(&p->err, SW_ENOREG, "register %s of thread %" PRIu64 ": not available",
                   a->regs[row].name, tid);
}

/* ---- prefetching the threads walked next ------------------------------------ */

/* Whether the registers of TID were read this stop (no packet to read them). */
static bool
gcache_holds(struct tgt_rsp_proc *rp, sw_tid tid)
{
    if (tgt_rsp_gcache_row(rp, tid) < rp->ngcache)
        return true;
    return !rp->no_cache && rsp_regs_cached(rp->s, tgt_rsp_thread_id(rp, tid));
}

/* TID's SP as rsp_read_reg decodes it, from what this stop holds already
 * (the stop reply, a 'g'); false when that would take a packet. */
static bool
sp_without_packet(struct tgt_rsp_proc *rp, sw_tid tid, sw_addr *sp)
{
    size_t row;
    const struct tgt_regmap *m = map_for_dwarf(rp, (unsigned)rp->base.arch->dw_sp, &row);
    const uint8_t *g;
    size_t glen;
    if (m == NULL)
        return false;
    if (reg_expedited(rp, tid, m, sp))
        return true;
    return gcache_holds(rp, tid) && gcache_get(rp, tid, &g, &glen) == 0 &&
           reg_from_g(rp, m, g, glen, sp);
}

static int select_own(struct tgt_rsp_proc *rp);

/* sw_proc_ops.prefetch_threads: the 'Hg' and 'g' of every thread of TIDS
 * not read this stop in one write (rsp_regs_read_batch), then in another
 * the stack window at each one's SP, the window a read at SP would fetch
 * (a batch of ranges without a buffer, tgt_rsp_read_mem_batch): two round
 * trips for all, where each thread's walk would cost two of its own (its
 * 'Hg' and 'g', its first window).  A thread whose SP came with the stop
 * reply gets no 'g' (its walk may need none).  Only where the stub takes
 * pipelined requests: elsewhere the batches would cost what the walks do.
 * What could not be fetched (a thread gone, a window refused) the walk
 * reads as it would have.  SHARED: one process of several on the link,
 * whose windows are read through the 'Hg' thread's process. */
static int
prefetch_threads(struct sw_proc *p, const sw_tid *tids, size_t n, bool shared)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    struct rsp_thread_id *ids = NULL;
    struct sw_mem_req *reqs = NULL;
    uint8_t *stopbuf = NULL;
    size_t nids = 0, nreqs = 0;
    int rc = 0;

    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "prefetching threads: the target has exited");
    if ((rc = tgt_rsp_warm_due(rp)) < 0)
        return rc;
    if (rp->no_cache || !rsp_session_pipelined(rp->s) || n == 0)
        return 0;
    /* Non-stop: no warm plan (it reads every thread), so the ranges a
     * library state checks at each stop ride along with the stacks. */
    size_t nstop = rsp_non_stop(rp->s) ? rp->warm.nreads : 0, stop_bytes = 0;
    for (size_t i = 0; i < nstop; i++)
        stop_bytes += rp->warm.reads[i].len;
    ids = sw_calloc(n, sizeof *ids);
    reqs = sw_calloc(n + nstop, sizeof *reqs);
    stopbuf = nstop ? sw_malloc(stop_bytes ? stop_bytes : 1) : NULL;
    if (ids == NULL || reqs == NULL || (nstop && stopbuf == NULL)) {
        rc = sw_fail(&p->err, SW_ENOMEM, "prefetching %zu threads: out of memory", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        sw_tid tid = tids[i] == SW_TID_DEFAULT ? p->default_tid : tids[i];
        sw_addr sp;
        /* Non-stop: a running thread's registers are not readable. */
        if (tgt_rsp_check_stopped(rp, tid) < 0 || sp_without_packet(rp, tid, &sp) ||
            gcache_holds(rp, tid))
            continue;
        ids[nids++] = tgt_rsp_thread_id(rp, tid);
    }
    if ((rc = rsp_regs_read_batch(rp->s, ids, nids)) < 0) {
        rc = proc_fail_from_session(rp, rc);
        goto out;
    }
    /* A thread of IDS whose 'g' came in the batch was selected when it was
     * read (its 'Hg' answered OK, or none needed), and the stub's general
     * thread is now one of ours: the last one answered OK. */
    bool ours = false;
    for (size_t i = 0; i < nids && !ours; i++)
        ours = rsp_regs_cached(rp->s, ids[i]);
    for (size_t i = 0; i < n; i++) {
        sw_tid tid = tids[i] == SW_TID_DEFAULT ? p->default_tid : tids[i];
        sw_addr sp;
        if (tgt_rsp_check_stopped(rp, tid) == 0 && sp_without_packet(rp, tid, &sp))
            reqs[nreqs++] = (struct sw_mem_req){ .addr = sp, .len = 1, .buf = NULL };
    }
    for (size_t i = 0, off = 0; i < nstop; off += rp->warm.reads[i].len, i++)
        reqs[nreqs++] = (struct sw_mem_req){ .addr = rp->warm.reads[i].addr,
                                             .len = rp->warm.reads[i].len,
                                             .buf = stopbuf + off };
    if (shared && !ours && nreqs > 0 && (rc = select_own(rp)) < 0)
        goto out;
    if ((rc = tgt_rsp_read_mem_batch(p, reqs, nreqs)) < 0)
        sw_err_prefix(&p->err, "reading the stacks of %zu threads: ", nreqs);
out:
    sw_free(ids);
    sw_free(reqs);
    sw_free(stopbuf);
    return rc;
}

static int
rsp_prefetch_threads(struct sw_proc *p, const sw_tid *tids, size_t n)
{
    return prefetch_threads(p, tids, n, false);
}

/* Build the register map: by name from the target description, else gdb's
 * default numbering with offsets accumulated from register 0. */
static int
build_regmap(struct tgt_rsp_proc *rp)
{
    const struct arch_desc *a = rp->base.arch;
    const struct rsp_tdesc *td = rsp_session_tdesc(rp->s);
    bool any = false;

    memset(rp->map, 0, sizeof rp->map);
    if (td != NULL && td->nregs > 0) {
        for (size_t i = 0; i < a->nregs && i < TGT_MAX_ROWS; i++) {
            for (size_t k = 0; k < td->nregs; k++) {
                if (strcasecmp(td->regs[k].name, a->regs[i].name) != 0)
                    continue;
                rp->map[i] = (struct tgt_regmap){ .mapped = true,
                                                  .regnum = td->regs[k].regnum,
                                                  .offset = td->regs[k].offset,
                                                  .size = td->regs[k].bitsize / 8 };
                any = true;
                break;
            }
        }
        if (!any)
            return sw_fail(&rp->base.err, SW_ENOARCH,
                           "target description: none of the %s registers is named in it", a->name);
        return 0;
    }
    /* gdb's built-in layout: registers 0..N in order, sizes from the table. */
    size_t off = 0;
    for (int gdbno = 0;; gdbno++) {
        const struct arch_reg *r = arch_reg_by_gdb(a, gdbno);
        if (r == NULL)
            break;
        size_t i = (size_t)(r - a->regs);
        if (i < TGT_MAX_ROWS)
            rp->map[i] = (struct tgt_regmap){
                .mapped = true, .regnum = (unsigned)gdbno, .offset = off, .size = r->size
            };
        off += r->size;
    }
    return 0;
}

/* ---- threads, modules, files ------------------------------------------- */

static int
rsp_proc_threads(struct sw_proc *p, sw_tid *tids, size_t max, size_t *n)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "listing threads: the target has exited");
    int rc0 = tgt_rsp_warm_due(rp);
    if (rc0 < 0)
        return rc0;
    if (rp->threads == NULL) {
        int rc = load_threads(rp);
        if (rc < 0)
            return rc;
    }
    if (rp->nthreads == 0 && rp->only_pid == 0) {
        /* An empty list (OpenOCD without an RTOS: "<threads></threads>", 'l'): the
         * stub's one thread, as gdb keeps it. */
        if (max > 0)
            tids[0] = p->default_tid;
        *n = 1;
        return 0;
    }
    for (size_t i = 0; i < rp->nthreads && i < max; i++)
        tids[i] = (sw_tid)rp->threads[i].tid;
    *n = rp->nthreads;
    return 0;
}

static int
rsp_thread_label(struct sw_proc *p, sw_tid tid, char *buf, size_t len)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    rsp_thread_id_format(rp->s, tgt_rsp_thread_id(rp, tid), buf, len);
    return 0;
}

static int
rsp_modules(struct sw_proc *p, struct sw_modinfo **mods, size_t *n)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    char *xml;
    size_t len;
    int rc;

    if (!rsp_has_feature(rp->s, RSP_FEAT_XFER_LIBS_SVR4))
        return sw_fail(&p->err, SW_EUNSUP, "library list: the stub offers no libraries-svr4");
    if ((rc = tgt_rsp_warm_due(rp)) < 0)
        return rc;
    rc = rsp_xfer_read(rp->s, "libraries-svr4", "", &xml, &len);
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    rc = tgt_parse_svr4(xml, len, mods, n, &p->err);
    free(xml);
    return rc;
}

static int
rsp_auxv(struct sw_proc *p, uint8_t **buf, size_t *len)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    char *data;
    if (!rsp_has_feature(rp->s, RSP_FEAT_XFER_AUXV))
        return sw_fail(&p->err, SW_EUNSUP, "auxv: the stub does not offer it");
    if (rp->auxv != NULL && rp->auxv_pid == p->pid) {
        /* Read once per process: the kernel writes it at exec only. */
        *buf = malloc(rp->auxv_len ? rp->auxv_len : 1);
        if (*buf == NULL)
            return sw_fail(&p->err, SW_ENOMEM, "auxv: out of memory");
        memcpy(*buf, rp->auxv, rp->auxv_len);
        *len = rp->auxv_len;
        return 0;
    }
    int rc = rsp_xfer_read(rp->s, "auxv", "", &data, len);
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    if (!rp->no_cache && (rp->auxv == NULL || rp->auxv_pid != p->pid)) {
        uint8_t *copy = sw_malloc(*len ? *len : 1);
        if (copy != NULL) {
            memcpy(copy, data, *len);
            sw_free(rp->auxv);
            rp->auxv = copy;
            rp->auxv_len = *len;
            rp->auxv_pid = p->pid;
        }
    }
    size_t w = p->arch->word_size;
    for (size_t off = 0; w > 0 && off + 2 * w <= *len; off += 2 * w) {
        uint64_t type = arch_load(p->arch, (const uint8_t *)data + off, w);
        uint64_t val = arch_load(p->arch, (const uint8_t *)data + off + w, w);
        if (type == TGT_AT_EXECFN && val != 0 && val + TGT_PAGE > val)
            rp->stack_end = (val + TGT_PAGE) & ~(sw_addr)(TGT_PAGE - 1);
    }
    *buf = (uint8_t *)data;
    return 0;
}

static int
rsp_exec_path(struct sw_proc *p, char **path)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    char annex[32] = "";
    size_t len;
    if (!rsp_has_feature(rp->s, RSP_FEAT_XFER_EXEC_FILE))
        return sw_fail(&p->err, SW_EUNSUP, "exec-file: the stub does not offer it");
    if (p->pid > 0)
        snprintf(annex, sizeof annex, "%" PRIx64, (uint64_t)p->pid);
    int rc = rsp_xfer_read(rp->s, "exec-file", annex, path, &len);
    return rc < 0 ? proc_fail_from_session(rp, rc) : 0;
}

static void
rsp_destroy(struct sw_proc *p)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    tgt_rsp_drop_caches(rp);
    tgt_warm_fini(rp);
    sw_free(rp->auxv);
    sw_free(rp->nssig);
    sw_free(rp->gone);
    free(rp->threads);
    sw_idmap_fini(&rp->threads_idx);
    if (rp->vpath != NULL) {
        (void)rsp_vfile_close(rp->s, rp->vfd);
        sw_free(rp->vpath);
    }
    if (!rp->borrowed)
        rsp_session_close(rp->s);
}

/* The target's file PATH through Host I/O (gdb manual, "Host I/O Packets"), as this
 * process sees it (vFile:setfs:PID); the last file stays open for the
 * reads that follow (its build-id note, then all of it). */
static int
rsp_read_file(struct sw_proc *p, const char *path, uint64_t offset, void *buf, size_t len,
              size_t *got)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    int rc;
    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "reading '%s': the target has exited", path);
    if (!rsp_vfile_supported(rp->s))
        return sw_fail(&p->err, SW_EUNSUP, "reading '%s' from the target: the stub has no Host I/O",
                       path);
    if (rp->vpath == NULL || strcmp(rp->vpath, path) != 0) {
        if (rp->vpath != NULL) {
            sw_free(rp->vpath);
            rp->vpath = NULL;
            rc = rsp_vfile_close(rp->s, rp->vfd);
            if (rc == SW_ETIMEDOUT || rc == SW_ECONN)
                return proc_fail_from_session(rp, rc);
        }
        rc = rsp_vfile_setfs(rp->s, p->pid > 0 ? p->pid : 0);
        if (rc < 0 && rc != SW_EUNSUP && rc != SW_ESTUB)
            return proc_fail_from_session(rp, rc);
        char *copy = sw_strdup(path);
        if (copy == NULL)
            return sw_fail(&p->err, SW_ENOMEM, "reading '%s': out of memory", path);
        if ((rc = rsp_vfile_open(rp->s, path, RSP_VFILE_O_RDONLY, 0, &rp->vfd)) < 0) {
            sw_free(copy);
            return proc_fail_from_session(rp, rc);
        }
        rp->vpath = copy;
        rp->vsize = UINT64_MAX;
        rp->vsize_asked = false;
    }
    /* The size is asked before the first large read only: the small ones
     * (a first page, a section's bytes) end where they end, and cost no
     * round trip more; a whole file is read in large ones. */
    if (!rp->vsize_asked && len > TGT_VFILE_SMALL_READ) {
        rp->vsize_asked = true;
        if (rsp_vfile_fstat(rp->s, rp->vfd, &rp->vsize) < 0)
            rp->vsize = UINT64_MAX; /* no fstat (an older stub): the reads decide */
    }
    *got = 0;
    if (offset >= rp->vsize)
        return 0;
    if (len > rp->vsize - offset)
        len = (size_t)(rp->vsize - offset);
    rc = rsp_vfile_pread(rp->s, rp->vfd, buf, len, offset, got);
    if (rc < 0)
        return sw_fail(&p->err, rc, "reading '%s' from the target: %s", path,
                       rsp_session_errmsg(rp->s));
    return 0;
}

/* Memory of a process of its own on the link: the stop's fetch first. */
static int
own_read_mem(struct sw_proc *p, sw_addr addr, void *buf, size_t len)
{
    int rc = tgt_rsp_warm_due(to_rp(p));
    return rc < 0 ? rc : tgt_rsp_read_mem(p, addr, buf, len);
}

static int
own_read_mem_batch(struct sw_proc *p, struct sw_mem_req *reqs, size_t n)
{
    int rc = tgt_rsp_warm_due(to_rp(p));
    return rc < 0 ? rc : tgt_rsp_read_mem_batch(p, reqs, n);
}

static int
own_read_mem_batch_while(struct sw_proc *p, struct sw_mem_req *reqs, size_t n,
                         bool (*while_fn)(void *), void *arg)
{
    int rc = tgt_rsp_warm_due(to_rp(p));
    return rc < 0 ? rc : tgt_rsp_read_mem_batch_while(p, reqs, n, while_fn, arg);
}

/* A bare-metal stub's symbol look-ups (qSymbol).  Offered only to a stub that lists no
 * multiprocess ids and no Linux process's objects (its library list or auxv), as OpenOCD,
 * pyOCD and the Black Magic Probe: gdbserver would look up libthread_db's symbols in the
 * middle of later requests, and QEMU has no use for any. */
static int
rsp_serve_symbols(struct sw_proc *p, int (*lookup)(void *arg, const char *name, sw_addr *addr),
                  void *arg, size_t *asked)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    *asked = 0;
    if (rp->terminated || rsp_has_feature(rp->s, RSP_FEAT_MULTIPROCESS) ||
        rsp_has_feature(rp->s, RSP_FEAT_XFER_LIBS_SVR4) ||
        rsp_has_feature(rp->s, RSP_FEAT_XFER_AUXV) || rsp_non_stop(rp->s))
        return 0;
    int rc = rsp_qsymbol_serve(rp->s, lookup, arg, asked); /* sw_addr is uint64_t */
    if (rc < 0 && sw_is_link_error(rc))
        return proc_fail_from_session(rp, rc);
    if (rc < 0) {
        /* A stub that asks nonsense gets no more answers; its threads are as listed. */
        sw_debug(SW_DBG_PKT, "qSymbol: %s (look-ups ended)\n", rsp_session_errmsg(rp->s));
        *asked = 0;
        return 0;
    }
    if (*asked > 0) {
        /* OpenOCD lists its RTOS's tasks from now on, the running one first. */
        free(rp->threads);
        rp->threads = NULL;
        rp->nthreads = 0;
        if (!rp->stop.has_thread && load_threads(rp) == 0 && rp->nthreads > 0)
            rp->base.default_tid = (sw_tid)rp->threads[0].tid;
    }
    return 0;
}

static const struct sw_proc_ops rsp_proc_ops = {
    .read_mem = own_read_mem,
    .read_mem_batch = own_read_mem_batch,
    .read_reg = rsp_read_reg,
    .threads = rsp_proc_threads,
    .thread_label = rsp_thread_label,
    .modules = rsp_modules,
    .auxv = rsp_auxv,
    .exec_path = rsp_exec_path,
    .destroy = rsp_destroy,
    .read_file = rsp_read_file,
    .read_mem_batch_while = own_read_mem_batch_while,
    .prefetch_threads = rsp_prefetch_threads,
    .stop_reads = tgt_warm_stop_reads,
    .serve_symbols = rsp_serve_symbols,
};

/* ---- the stop's first read ---------------------------------------------------- */

int
tgt_rsp_warm_due(struct tgt_rsp_proc *rp)
{
    if (!rp->warm.due)
        return 0;
    int rc = tgt_warm_fetch(rp);
    if (rc < 0 || !rsp_has_feature(rp->s, RSP_FEAT_XFER_THREADS))
        return rc; /* no list in the fetch: the rest is read as walks ask */
    /* The list came with the fetch (no packet): what it did not cover --
     * threads new since the last stop, stacks that moved out of their
     * window -- in one more write, only when there is any. */
    if (rp->threads == NULL && (rc = load_threads(rp)) < 0)
        return rc;
    sw_tid *tids = sw_calloc(rp->nthreads ? rp->nthreads : 1, sizeof *tids);
    if (tids == NULL)
        return sw_fail(&rp->base.err, SW_ENOMEM, "fetching the stop: out of memory");
    for (size_t i = 0; i < rp->nthreads; i++)
        tids[i] = (sw_tid)rp->threads[i].tid;
    rc = prefetch_threads(&rp->base, tids, rp->nthreads, false);
    sw_free(tids);
    return rc;
}

/* ---- one process of several on a link ------------------------------------ */

/* 'm', qXfer:auxv and qXfer:libraries-svr4 answer for the process of the Hg
 * thread (gdbserver's set_desired_thread): select one of ours first (sent only when the
 * selection changes, e.g. after a walk of another process's thread). */
static int
select_own(struct tgt_rsp_proc *rp)
{
    struct rsp_thread_id id = tgt_rsp_thread_id(rp, rp->base.default_tid);
    id.pid = rp->only_pid;
    int rc = rsp_select_thread(rp->s, id);
    return rc < 0 ? proc_fail_from_session(rp, rc) : 0;
}

static int
shared_read_mem(struct sw_proc *p, sw_addr addr, void *buf, size_t len)
{
    /* The cache is this process's: a read it serves sends no 'm', and needs
     * no 'Hg' (after another thread's 'g', or the threads fetched ahead). */
    int rc = tgt_rsp_mem_cached(to_rp(p), addr, len) ? 0 : select_own(to_rp(p));
    return rc < 0 ? rc : tgt_rsp_read_mem(p, addr, buf, len);
}

static int
shared_read_mem_batch(struct sw_proc *p, struct sw_mem_req *reqs, size_t n)
{
    int rc = select_own(to_rp(p));
    return rc < 0 ? rc : tgt_rsp_read_mem_batch(p, reqs, n);
}

static int
shared_read_mem_batch_while(struct sw_proc *p, struct sw_mem_req *reqs, size_t n,
                            bool (*while_fn)(void *), void *arg)
{
    int rc = select_own(to_rp(p));
    return rc < 0 ? rc : tgt_rsp_read_mem_batch_while(p, reqs, n, while_fn, arg);
}

static int
shared_modules(struct sw_proc *p, struct sw_modinfo **mods, size_t *n)
{
    int rc = select_own(to_rp(p));
    return rc < 0 ? rc : rsp_modules(p, mods, n);
}

static int
shared_auxv(struct sw_proc *p, uint8_t **buf, size_t *len)
{
    int rc = select_own(to_rp(p));
    return rc < 0 ? rc : rsp_auxv(p, buf, len);
}

/* The windows are read through the Hg thread's process: ours after an 'Hg'
 * of the batch was answered, else after select_own's (prefetch_threads). */
static int
shared_prefetch_threads(struct sw_proc *p, const sw_tid *tids, size_t n)
{
    return prefetch_threads(p, tids, n, true);
}

static const struct sw_proc_ops rsp_proc_shared_ops = {
    .read_mem = shared_read_mem,
    .read_mem_batch = shared_read_mem_batch,
    .read_mem_batch_while = shared_read_mem_batch_while,
    .read_reg = rsp_read_reg,
    .threads = rsp_proc_threads,
    .thread_label = rsp_thread_label,
    .modules = shared_modules,
    .auxv = shared_auxv,
    .exec_path = rsp_exec_path,
    .destroy = rsp_destroy,
    .read_file = rsp_read_file,
    .prefetch_threads = shared_prefetch_threads,
};

/* ---- construction ------------------------------------------------------- */

/* P's RSP backend: P itself, or the state it wraps (sw_proc_ops.inner), or NULL. */
static struct tgt_rsp_proc *
rsp_of(struct sw_proc *p)
{
    /* Bounded: a wrapper of a wrapper is the deepest anything builds. */
    for (int depth = 0; p != NULL && depth < 8; depth++) {
        if (p->ops == &rsp_proc_ops || p->ops == &rsp_proc_shared_ops)
            return to_rp(p);
        p = p->ops->inner != NULL ? p->ops->inner(p) : NULL;
    }
    return NULL;
}

struct rsp_session *
sw_proc_rsp_session(struct sw_proc *p)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    return rp != NULL ? rp->s : NULL;
}

void
sw_proc_rsp_retake_stop(struct sw_proc *p)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    if (rp == NULL)
        return;
    const struct rsp_stop *st = rsp_last_stop(rp->s);
    if (st != NULL) {
        /* What the last stop read goes out again with this stop's first
         * read, as after a resume of P's own (take_event). */
        if (tgt_rsp_take_stop(rp, st))
            rp->warm.due = tgt_warm_wanted(rp);
    } else {
        tgt_rsp_drop_caches(rp);
        rp->base.stop_gen++;
    }
}

void
sw_proc_rsp_prepare_resume(struct sw_proc *p)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    if (rp == NULL)
        return;
    tgt_warm_record(rp);
    rp->warm.all_regs = true; /* the front end reads the stopped thread's 'g' too */
    tgt_rsp_drop_caches(rp);
}

void
sw_proc_rsp_forget_reads(struct sw_proc *p)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    if (rp != NULL)
        tgt_rsp_drop_caches(rp);
}

void
sw_proc_rsp_forget_regs(struct sw_proc *p, sw_tid tid)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    if (rp == NULL)
        return;
    size_t k = 0;
    for (size_t i = 0; i < rp->ngcache; i++) {
        if (rp->gcache[i].tid == tid)
            sw_free(rp->gcache[i].data);
        else
            rp->gcache[k++] = rp->gcache[i];
    }
    rp->ngcache = k;
    /* What the stop carried of its thread is no longer that thread's. */
    if (rp->stop.has_thread && (sw_tid)rp->stop.thread.tid == tid)
        rp->stop.nexpedited = 0;
}

bool
sw_proc_rsp_thread_stopped(struct sw_proc *p, sw_tid tid)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    if (rp == NULL || rp->terminated)
        return false;
    if (!rsp_non_stop(rp->s))
        return !rp->running;
    if (tid == SW_TID_DEFAULT)
        tid = rp->base.default_tid;
    return rsp_thread_stopped(rp->s, tgt_rsp_thread_id(rp, tid));
}

bool
sw_proc_rsp_thread_gone(struct sw_proc *p, sw_tid tid)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    if (rp == NULL)
        return false;
    for (size_t i = 0; i < rp->ngone; i++)
        if (rp->gone[i] == tid)
            return true;
    return false;
}

int
sw_proc_rsp_thread_signal(struct sw_proc *p, sw_tid tid)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    if (rp == NULL || rp->terminated)
        return 0;
    if (!rsp_non_stop(rp->s))
        return sw_proc_rsp_stop_signal(p);
    if (tid == SW_TID_DEFAULT)
        tid = rp->base.default_tid;
    for (size_t i = 0; i < rp->nnssig; i++)
        if (rp->nssig[i].tid == tid)
            return rsp_thread_stopped(rp->s, tgt_rsp_thread_id(rp, tid)) ? rp->nssig[i].sig : 0;
    return 0;
}

int
sw_proc_rsp_stop_signal(struct sw_proc *p)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    if (rp == NULL || rp->terminated || rp->running || rp->stop.kind != RSP_STOP_SIGNAL)
        return 0;
    return rp->stop.signal;
}

bool
sw_proc_rsp_non_stop(struct sw_proc *p)
{
    struct tgt_rsp_proc *rp = rsp_of(p);
    return rp != NULL && rsp_non_stop(rp->s);
}

/* sw_proc_rsp_new, and with ONLY_PID nonzero sw_proc_rsp_new_shared's
 * process of that pid, which borrows S. */
static int
rsp_proc_new(struct rsp_session *s, const struct sw_rsp_config *cfg, int64_t only_pid,
             struct sw_proc **out, struct sw_errbuf *err)
{
    const struct rsp_tdesc *td = rsp_session_tdesc(s);
    const struct arch_desc *a = NULL;
    const char *exe = cfg ? cfg->exe : NULL;
    bool own = only_pid == 0;
    int rc;

    if (td != NULL && td->arch != NULL)
        a = arch_by_tdesc(td->arch);
    bool settled = false;
    if (a != NULL && exe != NULL) {
        /* target.xml names no byte order ("powerpc:common64" is both ppc64
         * and ppc64le): the executable's ELF header settles it. */
        const struct arch_desc *e = NULL;
        struct sw_errbuf ignored;
        if (tgt_arch_from_elf(exe, &e, &ignored) == 0 &&
            strcasecmp(e->tdesc_arch, a->tdesc_arch) == 0) {
            a = e;
            settled = true;
        }
    }
    if (a != NULL && !settled) {
        /* No executable settled it: ask the stopped target. */
        rc = tgt_rsp_byte_order(s, a, &a, err);
        if (rc < 0) {
            if (own)
                rsp_session_close(s);
            return rc;
        }
    }
    if (a == NULL && exe != NULL) {
        rc = tgt_arch_from_elf(exe, &a, err);
        if (rc < 0) {
            if (own)
                rsp_session_close(s);
            return rc;
        }
    }
    if (a == NULL) {
        rc = sw_fail(err, SW_ENOARCH,
                     "target architecture: the stub says %s%s%s and no --exe was given",
                     td && td->arch ? "\"" : "", td && td->arch ? td->arch : "nothing",
                     td && td->arch ? "\", which is not supported," : "");
        if (own)
            rsp_session_close(s);
        return rc;
    }

    struct tgt_rsp_proc *rp = calloc(1, sizeof *rp);
    if (rp == NULL) {
        if (own)
            rsp_session_close(s);
        return sw_fail(err, SW_ENOMEM, "creating the process: out of memory");
    }
    rp->borrowed = !own;
    rp->only_pid = only_pid;
    rp->strict_threads = cfg && cfg->strict_threads;
    rp->vfd = -1;
    sw_proc_init(&rp->base, &rsp_proc_ops, &tgt_rsp_debug_ops, a);
    rp->s = s;
    rp->no_cache = cfg ? cfg->no_cache : sw_env_get()->no_cache;
    if (exe != NULL && (rp->base.exe_path = sw_strdup(exe)) == NULL) {
        sw_proc_free(&rp->base);
        return sw_fail(err, SW_ENOMEM, "creating the process: out of memory");
    }
    rc = build_regmap(rp);
    if (rc < 0) {
        sw_err_copy(err, &rp->base.err);
        sw_proc_free(&rp->base);
        return rc;
    }
    const struct rsp_stop *st = rsp_last_stop(s);
    if (st != NULL)
        tgt_rsp_take_stop(rp, st);
    if (rp->base.default_tid == SW_TID_DEFAULT && !rp->terminated) {
        /* No thread in the stop reply: the first listed thread. */
        rc = load_threads(rp);
        if (rc == 0 && rp->nthreads > 0) {
            rp->base.default_tid = (sw_tid)rp->threads[0].tid;
            if (rp->threads[0].pid > 0)
                rp->base.pid = rp->threads[0].pid;
        }
    }
    *out = &rp->base;
    return 0;
}

void
sw_rsp_config_init(struct sw_rsp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->no_cache = sw_env_get()->no_cache;
}

int
sw_proc_rsp_new(struct rsp_session *s, const struct sw_rsp_config *cfg, struct sw_proc **out,
                struct sw_errbuf *err)
{
    return rsp_proc_new(s, cfg, 0, out, err);
}

int
tgt_rsp_thread_check(struct sw_proc *p, sw_tid tid)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    if (rp->threads == NULL) {
        int rc = load_threads(rp);
        if (rc < 0)
            return rc;
    }
    return thread_known(rp, tid) ? 0 : SW_ENOENT;
}

int
sw_proc_rsp_new_shared(struct rsp_session *s, int64_t pid, const struct sw_rsp_config *cfg,
                       struct sw_proc **out, struct sw_errbuf *err)
{
    *out = NULL;
    if (pid <= 0)
        return sw_fail(err, SW_EINVAL, "creating process %lld: bad pid", (long long)pid);
    int rc = rsp_proc_new(s, cfg, pid, out, err);
    if (rc < 0)
        return rc;
    struct tgt_rsp_proc *rp = to_rp(*out);
    rp->base.ops = &rsp_proc_shared_ops;
    rp->base.pid = pid;
    if (rp->base.default_tid == SW_TID_DEFAULT) {
        rc = SW_ENOENT;
        sw_fail(err, rc, "process %lld: no thread of it on the link (not attached?)",
                (long long)pid);
        sw_proc_free(*out);
        *out = NULL;
        return rc;
    }
    return 0;
}

static struct tgt_rsp_proc *
qemu_rp(struct sw_proc *p)
{
    return rsp_of(p);
}

/* ---- the public face (rspwalk/target.h) --------------------------------------------- */

bool
sw_proc_rsp_qemu_user(struct sw_proc *p, const char **why)
{
    struct tgt_rsp_proc *rp = qemu_rp(p);
    if (rp == NULL) {
        if (why != NULL)
            *why = "not an RSP process";
        return false;
    }
    bool yes = tgt_qemu_user(rp);
    if (why != NULL)
        *why = yes ? "" : rp->qemu.msg;
    return yes;
}

int
sw_proc_rsp_signal_stop(struct sw_proc *p, sw_tid tid)
{
    struct tgt_rsp_proc *rp = qemu_rp(p);
    if (rp == NULL || !tgt_qemu_user(rp))
        return sw_fail(&p->err, SW_EUNSUP, "stopping by a signal: %s",
                       rp ? rp->qemu.msg : "not an RSP process");
    return tgt_qemu_stop(rp, tid);
}

int
sw_proc_rsp_resync(struct sw_proc *p, const char *why)
{
    struct tgt_rsp_proc *rp = qemu_rp(p);
    if (rp == NULL || !tgt_qemu_user(rp))
        return 0;
    return tgt_qemu_resync(rp, why);
}

uint64_t
sw_proc_rsp_resyncs(struct sw_proc *p)
{
    struct tgt_rsp_proc *rp = qemu_rp(p);
    return rp != NULL ? rp->qemu.resyncs : 0;
}
