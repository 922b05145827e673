/* tests/tools/fake_proc.c -- a ProcessState over tables of registers and memory.
 *
 * Test-only.  Unknown memory is SW_EMEM naming the address; unknown
 * registers are SW_ENOREG, as the real backend reports them.
 */
#include "tests/tools/fake_proc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define FAKE_MAX_REGS    160
#define FAKE_MAX_THREADS 16
#define FAKE_MAX_REGIONS 32
#define FAKE_MAX_MODS    16
#define FAKE_MAX_FILES   8

struct fake_region {
    sw_addr addr;
    size_t len;
    uint8_t *data;
};

struct fake_thread {
    sw_tid tid;
    bool known[FAKE_MAX_REGS];
    sw_word val[FAKE_MAX_REGS];
};

struct fake_proc {
    struct sw_proc base;
    struct fake_thread threads[FAKE_MAX_THREADS];
    size_t nthreads;
    struct fake_region regions[FAKE_MAX_REGIONS];
    size_t nregions;
    char *mod_names[FAKE_MAX_MODS];
    sw_addr mod_addr[FAKE_MAX_MODS];
    size_t nmods;
    char *exec_path;
    uint8_t *auxv;
    size_t auxv_len;
    int auxv_fail_code;
    int fail_code;
    unsigned reads;
    unsigned batches;                 /* read_mem_batch calls (fake_proc_enable_batch) */
    sw_addr warmed[FAKE_MAX_REGIONS]; /* their ranges without a buffer, in order */
    size_t nwarmed;
    unsigned prefetches;    /* prefetch_threads calls (fake_proc_enable_prefetch) */
    int prefetch_fail_code; /* fake_proc_fail_prefetch */
    sw_tid prefetched[FAKE_MAX_THREADS * 4]; /* the threads they were given, in order */
    size_t nprefetched;
    char *file_target[FAKE_MAX_FILES]; /* the target's path */
    char *file_host[FAKE_MAX_FILES];   /* the host file served for it */
    size_t nfiles;
    size_t file_bytes;
};

static struct fake_proc *
to_fake(struct sw_proc *p)
{
    return (struct fake_proc *)p;
}

static struct fake_thread *
find_thread(struct fake_proc *f, sw_tid tid, bool create)
{
    if (tid == SW_TID_DEFAULT)
        tid = f->base.default_tid;
    for (size_t i = 0; i < f->nthreads; i++)
        if (f->threads[i].tid == tid)
            return &f->threads[i];
    if (!create || f->nthreads == FAKE_MAX_THREADS)
        return NULL;
    struct fake_thread *t = &f->threads[f->nthreads++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    return t;
}

static int
fake_read_mem(struct sw_proc *p, sw_addr addr, void *buf, size_t len)
{
    struct fake_proc *f = to_fake(p);
    f->reads++;
    if (f->fail_code)
        return sw_fail(&p->err, f->fail_code, "reading 0x%" PRIx64 ": injected failure", addr);
    for (size_t i = 0; i < f->nregions; i++) {
        struct fake_region *r = &f->regions[i];
        if (addr >= r->addr && addr - r->addr <= r->len && len <= r->len - (addr - r->addr)) {
            memcpy(buf, r->data + (addr - r->addr), len);
            return 0;
        }
    }
    return sw_fail(&p->err, SW_EMEM, "reading %zu bytes at 0x%" PRIx64 ": not mapped", len, addr);
}

static int
fake_read_reg(struct sw_proc *p, sw_tid tid, unsigned regno, sw_word *val)
{
    struct fake_thread *t = find_thread(to_fake(p), tid, false);
    if (t == NULL)
        return sw_fail(&p->err, SW_ENOENT, "thread %" PRIu64 ": no such thread", tid);
    if (regno >= FAKE_MAX_REGS || !t->known[regno])
        return sw_fail(&p->err, SW_ENOREG, "register %u of thread %" PRIu64 ": not available",
                       regno, tid);
    *val = t->val[regno];
    return 0;
}

static int
fake_threads(struct sw_proc *p, sw_tid *tids, size_t max, size_t *n)
{
    struct fake_proc *f = to_fake(p);
    for (size_t i = 0; i < f->nthreads && i < max; i++)
        tids[i] = f->threads[i].tid;
    *n = f->nthreads;
    return 0;
}

static int
fake_modules(struct sw_proc *p, struct sw_modinfo **mods, size_t *n)
{
    struct fake_proc *f = to_fake(p);
    struct sw_modinfo *m = calloc(f->nmods ? f->nmods : 1, sizeof *m);
    if (m == NULL)
        return SW_ENOMEM;
    for (size_t i = 0; i < f->nmods; i++) {
        m[i].name = strdup(f->mod_names[i]);
        m[i].l_addr = f->mod_addr[i];
    }
    *mods = m;
    *n = f->nmods;
    return 0;
}

static int
fake_exec_path(struct sw_proc *p, char **path)
{
    struct fake_proc *f = to_fake(p);
    if (f->exec_path == NULL)
        return sw_fail(&p->err, SW_EUNSUP, "exec-file: not offered");
    *path = strdup(f->exec_path);
    return *path ? 0 : SW_ENOMEM;
}

static int
fake_auxv(struct sw_proc *p, uint8_t **buf, size_t *len)
{
    struct fake_proc *f = to_fake(p);
    if (f->auxv_fail_code)
        return sw_fail(&p->err, f->auxv_fail_code, "auxv: injected failure");
    if (f->auxv == NULL)
        return sw_fail(&p->err, SW_EUNSUP, "auxv: not offered");
    *buf = malloc(f->auxv_len);
    if (*buf == NULL)
        return SW_ENOMEM;
    memcpy(*buf, f->auxv, f->auxv_len);
    *len = f->auxv_len;
    return 0;
}

/* Serve the host file added for PATH; no files at all is a stub without
 * Host I/O (SW_EUNSUP), as the RSP backend reports it. */
static int
fake_read_file(struct sw_proc *p, const char *path, uint64_t offset, void *buf, size_t len,
               size_t *got)
{
    struct fake_proc *f = to_fake(p);
    if (f->nfiles == 0)
        return sw_fail(&p->err, SW_EUNSUP, "reading '%s' from the target: no Host I/O", path);
    for (size_t i = 0; i < f->nfiles; i++) {
        if (strcmp(f->file_target[i], path) != 0)
            continue;
        FILE *fp = fopen(f->file_host[i], "rb");
        if (fp == NULL)
            return sw_fail(&p->err, SW_ENOENT, "open '%s': no such file", path);
        if (fseek(fp, (long)offset, SEEK_SET) != 0) {
            fclose(fp);
            return sw_fail(&p->err, SW_EIO, "pread '%s': seek failed", path);
        }
        *got = fread(buf, 1, len, fp);
        fclose(fp);
        f->file_bytes += *got;
        return 0;
    }
    return sw_fail(&p->err, SW_ENOENT, "open '%s': no such file", path);
}

static void
fake_destroy(struct sw_proc *p)
{
    struct fake_proc *f = to_fake(p);
    for (size_t i = 0; i < f->nfiles; i++) {
        free(f->file_target[i]);
        free(f->file_host[i]);
    }
    for (size_t i = 0; i < f->nregions; i++)
        free(f->regions[i].data);
    for (size_t i = 0; i < f->nmods; i++)
        free(f->mod_names[i]);
    free(f->exec_path);
    free(f->auxv);
}

/* A batch as a backend with a cache sees one: exact ranges read, ranges
 * without a buffer only noted (there is no cache to warm). */
static int
fake_read_mem_batch(struct sw_proc *p, struct sw_mem_req *reqs, size_t n)
{
    struct fake_proc *f = to_fake(p);
    f->batches++;
    for (size_t i = 0; i < n; i++) {
        reqs[i].rc = 0;
        if (reqs[i].buf == NULL) {
            if (f->nwarmed < FAKE_MAX_REGIONS)
                f->warmed[f->nwarmed++] = reqs[i].addr;
            continue;
        }
        if (reqs[i].len > 0)
            reqs[i].rc = fake_read_mem(p, reqs[i].addr, reqs[i].buf, reqs[i].len);
        if (reqs[i].rc != 0 && reqs[i].rc != SW_EMEM)
            return reqs[i].rc;
    }
    return 0;
}

static const struct sw_proc_ops fake_ops = {
    .read_mem = fake_read_mem,
    .read_reg = fake_read_reg,
    .threads = fake_threads,
    .modules = fake_modules,
    .exec_path = fake_exec_path,
    .auxv = fake_auxv,
    .destroy = fake_destroy,
    .read_file = fake_read_file,
};

static const struct sw_proc_ops fake_batch_ops = {
    .read_mem = fake_read_mem,
    .read_reg = fake_read_reg,
    .threads = fake_threads,
    .modules = fake_modules,
    .exec_path = fake_exec_path,
    .auxv = fake_auxv,
    .destroy = fake_destroy,
    .read_file = fake_read_file,
    .read_mem_batch = fake_read_mem_batch,
};

/* A hint noted, as the walker gives it. */
static int
fake_prefetch_threads(struct sw_proc *p, const sw_tid *tids, size_t n)
{
    struct fake_proc *f = to_fake(p);
    f->prefetches++;
    if (f->prefetch_fail_code != 0)
        return sw_fail(&p->err, f->prefetch_fail_code, "prefetch: injected failure");
    for (size_t i = 0; i < n && f->nprefetched < FAKE_MAX_THREADS * 4; i++)
        f->prefetched[f->nprefetched++] = tids[i];
    return 0;
}

static const struct sw_proc_ops fake_prefetch_ops = {
    .read_mem = fake_read_mem,
    .read_reg = fake_read_reg,
    .threads = fake_threads,
    .modules = fake_modules,
    .exec_path = fake_exec_path,
    .auxv = fake_auxv,
    .destroy = fake_destroy,
    .read_file = fake_read_file,
    .prefetch_threads = fake_prefetch_threads,
};

void
fake_proc_enable_prefetch(struct sw_proc *p)
{
    p->ops = &fake_prefetch_ops;
}

void
fake_proc_fail_prefetch(struct sw_proc *p, int code)
{
    to_fake(p)->prefetch_fail_code = code;
}

unsigned
fake_proc_prefetches(const struct sw_proc *p)
{
    return ((const struct fake_proc *)p)->prefetches;
}

size_t
fake_proc_prefetched(const struct sw_proc *p, const sw_tid **tids)
{
    const struct fake_proc *f = (const struct fake_proc *)p;
    *tids = f->prefetched;
    return f->nprefetched;
}

void
fake_proc_enable_batch(struct sw_proc *p)
{
    p->ops = &fake_batch_ops;
}

unsigned
fake_proc_batches(const struct sw_proc *p)
{
    return ((const struct fake_proc *)p)->batches;
}

size_t
fake_proc_warmed(const struct sw_proc *p, const sw_addr **addrs)
{
    const struct fake_proc *f = (const struct fake_proc *)p;
    *addrs = f->warmed;
    return f->nwarmed;
}

struct sw_proc *
fake_proc_new(const struct arch_desc *a)
{
    struct fake_proc *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    sw_proc_init(&f->base, &fake_ops, NULL, a);
    f->base.default_tid = 1;
    f->base.pid = 42;
    find_thread(f, 1, true);
    return &f->base;
}

void
fake_proc_set_reg(struct sw_proc *p, sw_tid tid, unsigned dw, sw_word val)
{
    struct fake_thread *t = find_thread(to_fake(p), tid, true);
    if (t && dw < FAKE_MAX_REGS) {
        t->known[dw] = true;
        t->val[dw] = val;
    }
}

void
fake_proc_add_mem(struct sw_proc *p, sw_addr addr, const void *data, size_t len)
{
    struct fake_proc *f = to_fake(p);
    if (f->nregions == FAKE_MAX_REGIONS)
        abort();
    struct fake_region *r = &f->regions[f->nregions++];
    r->addr = addr;
    r->len = len;
    r->data = calloc(1, len ? len : 1);
    if (data)
        memcpy(r->data, data, len);
}

void
fake_proc_put(struct sw_proc *p, sw_addr addr, const void *data, size_t len)
{
    struct fake_proc *f = to_fake(p);
    for (size_t i = 0; i < f->nregions; i++) {
        struct fake_region *r = &f->regions[i];
        if (addr >= r->addr && addr + len <= r->addr + r->len) {
            memcpy(r->data + (addr - r->addr), data, len);
            return;
        }
    }
    abort(); /* a test bug: write outside every region */
}

void
fake_proc_put_word(struct sw_proc *p, sw_addr addr, sw_word val)
{
    uint8_t b[8];
    arch_store(p->arch, b, p->arch->word_size, val);
    fake_proc_put(p, addr, b, p->arch->word_size);
}

void
fake_proc_set_threads(struct sw_proc *p, const sw_tid *tids, size_t n)
{
    struct fake_proc *f = to_fake(p);
    f->nthreads = 0;
    for (size_t i = 0; i < n; i++)
        find_thread(f, tids[i], true);
    if (n)
        p->default_tid = tids[0];
}

void
fake_proc_add_module(struct sw_proc *p, const char *name, sw_addr l_addr)
{
    struct fake_proc *f = to_fake(p);
    if (f->nmods == FAKE_MAX_MODS)
        abort();
    f->mod_names[f->nmods] = strdup(name);
    f->mod_addr[f->nmods++] = l_addr;
}

void
fake_proc_remove_module(struct sw_proc *p, const char *name)
{
    struct fake_proc *f = to_fake(p);
    size_t k = 0;
    for (size_t i = 0; i < f->nmods; i++) {
        if (strcmp(f->mod_names[i], name) == 0) {
            free(f->mod_names[i]);
            continue;
        }
        f->mod_names[k] = f->mod_names[i];
        f->mod_addr[k++] = f->mod_addr[i];
    }
    f->nmods = k;
}

void
fake_proc_set_auxv(struct sw_proc *p, const void *data, size_t len)
{
    struct fake_proc *f = to_fake(p);
    free(f->auxv);
    f->auxv = NULL;
    f->auxv_len = 0;
    if (data == NULL)
        return;
    f->auxv = malloc(len ? len : 1);
    if (f->auxv == NULL)
        abort();
    memcpy(f->auxv, data, len);
    f->auxv_len = len;
}

void
fake_proc_fail_auxv(struct sw_proc *p, int code)
{
    to_fake(p)->auxv_fail_code = code;
}

void
fake_proc_set_exec_path(struct sw_proc *p, const char *path)
{
    struct fake_proc *f = to_fake(p);
    free(f->exec_path);
    f->exec_path = path ? strdup(path) : NULL;
}

void
fake_proc_fail_reads(struct sw_proc *p, int code)
{
    to_fake(p)->fail_code = code;
}

unsigned
fake_proc_reads(const struct sw_proc *p)
{
    return ((const struct fake_proc *)p)->reads;
}

void
fake_proc_add_file(struct sw_proc *p, const char *target_path, const char *host_path)
{
    struct fake_proc *f = to_fake(p);
    if (f->nfiles == FAKE_MAX_FILES)
        abort();
    f->file_target[f->nfiles] = strdup(target_path);
    f->file_host[f->nfiles] = strdup(host_path);
    if (f->file_target[f->nfiles] == NULL || f->file_host[f->nfiles] == NULL)
        abort();
    f->nfiles++;
}

size_t
fake_proc_file_bytes(const struct sw_proc *p)
{
    return ((const struct fake_proc *)p)->file_bytes;
}
