/* dwarf/dwarf.c -- the debug information of one file through elfutils' libdw.
 *
 * libdw, not libdwarf (which reads frames, cfi/cfi.c): reaching
 * a unit far into a file costs libdw the headers of the units before it,
 * libdwarf 20210528 a context per unit, each built from the unit's DIE and
 * its abbreviation table (a walk of four threads into libc: 52 M
 * instructions and 14 M more to free them, where libdw reads the same units
 * and their DIEs in 8 M).  The handle (open, close, its lock), a unit's
 * memory, and a table from address to compilation unit (.debug_aranges,
 * else the units' own ranges).  Attribute and range helpers are
 * dwarf/die.c's, what a unit holds dwarf/scopes.c's; no CFI, no line table.
 */
#include "dwarf/dwarf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "dwarf/dwarf_internal.h"
#include "elf/elf.h"

/* ---- a unit's memory ------------------------------------------------------------------ */

static int
pcidx_cmp(const void *a, const void *b)
{
    const struct di_pcidx *x = a, *y = b;
    if (x->pc != y->pc)
        return x->pc < y->pc ? -1 : 1;
    return x->idx < y->idx ? -1 : 1;
}

int
sw_di_cu_index(struct di_cu *cu)
{
    if (cu->nsites == 0)
        return 0;
    cu->by_pc = sw_malloc(cu->nsites * sizeof cu->by_pc[0]);
    if (cu->by_pc == NULL)
        return SW_ENOMEM;
    for (size_t i = 0; i < cu->nsites; i++)
        cu->by_pc[i] = (struct di_pcidx){ cu->sites[i].pc, (uint32_t)i };
    qsort(cu->by_pc, cu->nsites, sizeof cu->by_pc[0], pcidx_cmp);
    return 0;
}

void
sw_di_cu_reset(struct di_cu *cu)
{
    sw_free(cu->scopes);
    sw_free(cu->ranges.v);
    sw_free(cu->sites);
    sw_free(cu->by_pc);
    sw_free(cu->strings);
    Dwarf_Off off = cu->off;
    int state = cu->state;
    memset(cu, 0, sizeof *cu);
    cu->off = off;
    cu->state = state;
}

/* ---- the address -> unit table --------------------------------------------------------- */

static int
find_cu_obj(struct sw_dinfo *d, Dwarf_Off off, struct di_cu **out)
{
    size_t lo = 0, hi = d->ncus;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->cus[mid]->off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < d->ncus && d->cus[lo]->off == off) {
        *out = d->cus[lo];
        return 0;
    }
    if (d->ncus == d->capcus) {
        size_t cap = d->capcus ? d->capcus * 2 : 64;
        struct di_cu **v = sw_realloc(d->cus, cap * sizeof *v);
        if (v == NULL)
            return SW_ENOMEM;
        d->cus = v;
        d->capcus = cap;
    }
    struct di_cu *cu = sw_calloc(1, sizeof *cu);
    if (cu == NULL)
        return SW_ENOMEM;
    cu->off = off;
    memmove(&d->cus[lo + 1], &d->cus[lo], (d->ncus - lo) * sizeof d->cus[0]);
    d->cus[lo] = cu;
    d->ncus++;
    *out = cu;
    return 0;
}

static int
add_span(struct sw_dinfo *d, sw_addr lo, sw_addr hi, Dwarf_Off cu_off)
{
    if (lo == 0 || lo >= hi)
        return 0;
    struct di_span *v = sw_grow(d->spans, &d->capspans, d->nspans + 1, sizeof *v, 256);
    if (v == NULL)
        return SW_ENOMEM;
    d->spans = v;
    d->spans[d->nspans++] = (struct di_span){ lo, hi, cu_off };
    return 0;
}

static int
span_cmp(const void *a, const void *b)
{
    const struct di_span *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int
read_aranges(struct sw_dinfo *d)
{
    Dwarf_Aranges *ar = NULL;
    size_t n = 0;
    int rc = 0;

    if (dwarf_getaranges(d->dbg, &ar, &n) != 0)
        return 0; /* no .debug_aranges, or a bad one: scan the units */
    for (size_t i = 0; i < n && rc == 0; i++) {
        Dwarf_Addr start = 0;
        Dwarf_Word len = 0;
        Dwarf_Off cu_off = 0; /* the unit's DIE */
        Dwarf_Arange *a = dwarf_onearange(ar, i);
        if (a != NULL && dwarf_getarangeinfo(a, &start, &len, &cu_off) == 0)
            rc = add_span(d, start, start + len, cu_off);
    }
    return rc; /* the table is libdw's, freed with the handle */
}

/* One pass over every unit's own ranges, for files without .debug_aranges or
 * units it leaves out. */
static int
scan_units(struct sw_dinfo *d)
{
    struct di_rbuf rb = { 0 };
    Dwarf_Off off = 0, next = 0;
    size_t hsize = 0;
    int rc = 0;

    while (rc == 0 && dwarf_nextcu(d->dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(d->dbg, off + hsize, &cu) != NULL) {
            rb.n = 0;
            rc = sw_di_die_ranges(d, &cu, &rb);
            for (size_t i = 0; i < rb.n && rc == 0; i++)
                rc = add_span(d, rb.v[i].lo, rb.v[i].hi, off + hsize);
        }
        off = next;
    }
    sw_free(rb.v);
    return rc;
}

static const struct di_span *
span_lookup(struct sw_dinfo *d, sw_addr vaddr)
{
    size_t lo = 0, hi = d->nspans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->spans[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* LO is the first span above VADDR; look back over a few that start at or
     * below it (units rarely overlap, so the first hit is the answer). */
    for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++)
        if (vaddr < d->spans[i].hi)
            return &d->spans[i];
    return NULL;
}

/* ---- the unit table kept beside the uncompressed copy --------------------------------- *
 *
 * libc's .debug_aranges through dwarf_get_aranges costs 14 M instructions a
 * run (an object per range).  When the file read is the uncompressed copy
 * in the cache directory (CACHE/<build-id>/debuginfo, elf/debug_plain.c),
 * the sorted table goes into CACHE/<build-id>/aranges: a header (magic, the
 * copy's size and mtime, the count), then lo, hi and unit offset per span,
 * 64-bit host order; written through a temporary file renamed into place.
 * A table whose header does not match the copy is read again. */

#define ARANGES_NAME  "aranges"
#define ARANGES_MAGIC "SWARNG1"

struct aranges_head {
    char magic[8];
    uint64_t src_size, src_mtime_ns, n;
};

char *
sw_di_cache_file(struct sw_dinfo *d, const char *name)
{
    if (d->cache_state == 0) {
        const char *dbg = d->elf ? sw_elf_debug_path(d->elf) : NULL;
        const char *slash = d->source ? strrchr(d->source, '/') : NULL;
        struct stat st;
        d->cache_state = -1;
        if (dbg != NULL && slash != NULL && strcmp(d->source, dbg) != 0 &&
            strcmp(d->source, d->path) != 0 && strcmp(slash + 1, "debuginfo") == 0 &&
            stat(d->source, &st) == 0) {
            size_t n = (size_t)(slash - d->source) + 1;
            d->cache_dir = sw_malloc(n + 1);
            if (d->cache_dir == NULL) {
                d->cache_state = 0; /* no memory: asked again next time */
                return NULL;
            }
            memcpy(d->cache_dir, d->source, n);
            d->cache_dir[n] = '\0';
            d->src_size = (uint64_t)st.st_size;
            d->src_mtime_ns =
                (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
            d->cache_state = 1;
        }
    }
    if (d->cache_state != 1)
        return NULL;
    size_t dl = strlen(d->cache_dir), nl = strlen(name);
    char *p = sw_malloc(dl + nl + 1);
    if (p != NULL) {
        memcpy(p, d->cache_dir, dl);
        memcpy(p + dl, name, nl + 1);
    }
    return p;
}

/* CACHE/<build-id>/aranges when D reads the uncompressed copy (owned by the
 * caller: sw_free), with the copy's size and mtime in *HEAD; else NULL. */
static char *
aranges_cache_path(struct sw_dinfo *d, struct aranges_head *head)
{
    char *p = sw_di_cache_file(d, ARANGES_NAME);
    if (p == NULL)
        return NULL;
    memset(head, 0, sizeof *head);
    memcpy(head->magic, ARANGES_MAGIC, sizeof ARANGES_MAGIC);
    head->src_size = d->src_size;
    head->src_mtime_ns = d->src_mtime_ns;
    return p;
}

/* Take the table at PATH into D->spans if it matches HEAD.  Returns 1 when
 * taken, 0 when absent or stale, SW_ENOMEM. */
static int
aranges_load(struct sw_dinfo *d, const char *path, const struct aranges_head *want)
{
    struct aranges_head head;
    struct stat st;
    int rc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) != 0 || read(fd, &head, sizeof head) != (ssize_t)sizeof head ||
        memcmp(&head, want, offsetof(struct aranges_head, n)) != 0 || head.n > SIZE_MAX / 32 ||
        (uint64_t)st.st_size != sizeof head + head.n * 3 * sizeof(uint64_t))
        goto out;
    size_t n = (size_t)head.n, bytes = n * 3 * sizeof(uint64_t);
    uint64_t *v = n ? sw_malloc(bytes) : NULL;
    struct di_span *sp = n ? sw_malloc(n * sizeof *sp) : NULL;
    if (n && (v == NULL || sp == NULL)) {
        sw_free(v);
        sw_free(sp);
        rc = SW_ENOMEM;
        goto out;
    }
    if (n && read(fd, v, bytes) != (ssize_t)bytes) {
        sw_free(v);
        sw_free(sp);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        sp[i] = (struct di_span){ v[3 * i], v[3 * i + 1], (Dwarf_Off)v[3 * i + 2] };
    sw_free(v);
    sw_free(d->spans);
    d->spans = sp;
    d->nspans = d->capspans = n;
    rc = 1;
out:
    close(fd);
    return rc;
}

/* Write D's sorted table to PATH; a failure only costs the next run. */
static void
aranges_store(struct sw_dinfo *d, const char *path, struct aranges_head head)
{
    size_t pl = strlen(path);
    char *tmp = sw_malloc(pl + sizeof ".XXXXXX");
    if (tmp == NULL)
        return;
    memcpy(tmp, path, pl);
    memcpy(tmp + pl, ".XXXXXX", sizeof ".XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        sw_free(tmp);
        return;
    }
    head.n = d->nspans;
    bool ok = write(fd, &head, sizeof head) == (ssize_t)sizeof head;
    for (size_t i = 0; ok && i < d->nspans; i++) {
        uint64_t e[3] = { d->spans[i].lo, d->spans[i].hi, (uint64_t)d->spans[i].cu_off };
        ok = write(fd, e, sizeof e) == (ssize_t)sizeof e;
    }
    ok = fchmod(fd, 0644) == 0 && ok;
    if (close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, path) == 0)
        sw_debug(SW_DBG_CACHE, "dwarf: %s: unit table of %zu spans written to %s\n", d->source,
                 d->nspans, path);
    else
        unlink(tmp);
    sw_free(tmp);
}

/* The sorted table from .debug_aranges, or from the cache beside the copy. */
static int
load_aranges(struct sw_dinfo *d)
{
    struct aranges_head head;
    char *path = aranges_cache_path(d, &head);
    int rc = path ? aranges_load(d, path, &head) : 0;
    if (rc == 0) {
        rc = read_aranges(d);
        if (rc == 0 && d->nspans > 1) /* SPANS is NULL when there are none */
            qsort(d->spans, d->nspans, sizeof d->spans[0], span_cmp);
        if (rc == 0 && path)
            aranges_store(d, path, head);
    }
    sw_free(path);
    return rc < 0 ? rc : 0;
}

/* The sorted table from .debug_aranges (or the cache), read once. */
static int
ensure_aranges(struct sw_dinfo *d)
{
    if (!d->aranges_read) {
        int rc = load_aranges(d);
        if (rc < 0) {
            d->nspans = 0;
            return rc;
        }
        d->aranges_read = true;
    }
    return 0;
}

int
sw_dinfo_warm(struct sw_dinfo *d)
{
    if (d == NULL || d->dbg == NULL)
        return 0;
    /* The table only: reaching a unit reads the headers of every unit before
     * it (libdw), which only a query's own address says how far to go. */
    sw_di_lock(d);
    int rc = ensure_aranges(d);
    sw_di_unlock(d);
    return rc;
}

bool
sw_dinfo_load(const char **why)
{
    return sw_libdw_load(why);
}

/* The unit covering VADDR: from .debug_aranges first, then, once, from every
 * unit's own ranges.  Returns 0 with *OUT, SW_ENOENT, SW_ENOMEM. */
int
sw_di_find_cu(struct sw_dinfo *d, sw_addr vaddr, struct di_cu **out)
{
    const struct di_span *sp;
    int rc;

    if ((rc = ensure_aranges(d)) < 0)
        return rc;
    sp = span_lookup(d, vaddr);
    if (sp == NULL && !d->units_scanned) {
        size_t before = d->nspans;
        rc = scan_units(d);
        if (rc < 0) {
            d->nspans = before;
            return rc;
        }
        d->units_scanned = true;
        if (d->nspans > 1) /* SPANS is NULL when there are none */
            qsort(d->spans, d->nspans, sizeof d->spans[0], span_cmp);
        sp = span_lookup(d, vaddr);
    }
    if (sp == NULL)
        return SW_ENOENT;
    return find_cu_obj(d, sp->cu_off, out);
}

/* ---- public ---------------------------------------------------------------------------- */

static int
check_elf_magic(const char *path, struct sw_errbuf *err)
{
    unsigned char m[4];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sw_fail(err, errno == ENOENT ? SW_ENOENT : SW_EIO,
                       "opening %s for its debug info: %s", path, strerror(errno));
    ssize_t n = read(fd, m, sizeof m);
    close(fd);
    if (n != (ssize_t)sizeof m || memcmp(m, "\177ELF", 4) != 0)
        return sw_fail(err, SW_EBADELF, "opening %s for its debug info: not an ELF file", path);
    return 0;
}

/* Close what open_info opened: the libdw handle, then the mapping under it. */
static void
close_info(Dwarf **dbg, Elf **elf, int *fd)
{
    if (*dbg != NULL)
        dwarf_end(*dbg);
    *dbg = NULL;
    if (*elf != NULL)
        elf_end(*elf);
    *elf = NULL;
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Whether ELF has a .debug_info section with something in it. */
static bool
has_debug_info(Elf *elf)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return false;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        const char *name;
        if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type != SHT_NOBITS && sh.sh_size > 0 &&
            (name = elf_strptr(elf, shstrndx, sh.sh_name)) != NULL &&
            strcmp(name, ".debug_info") == 0)
            return true;
    }
    return false;
}

/* Open PATH with libdw if it has a non-empty .debug_info: *DBG NULL if not.
 * Through libelf's read-only mapping: the sections point into the mapped
 * file, read only where a query looks (a compressed section is inflated
 * whole by libdw; the cache directory keeps an uncompressed copy of such a
 * debug file, elf/debug_plain.h). */
static int
open_info(const char *path, const struct sw_inflate_limits *lim, Dwarf **dbg, Elf **elfp, int *fdp,
          struct sw_errbuf *err)
{
    char why[160];
    *dbg = NULL;
    *elfp = NULL;
    *fdp = open(path, O_RDONLY | O_CLOEXEC);
    if (*fdp < 0)
        return sw_fail(err, errno == ENOENT ? SW_ENOENT : SW_EIO,
                       "opening %s for its debug info: %s", path, strerror(errno));
    (void)elf_version(EV_CURRENT);
    *elfp = elf_begin(*fdp, ELF_C_READ_MMAP, NULL);
    if (*elfp == NULL || elf_kind(*elfp) != ELF_K_ELF) {
        sw_fail(err, SW_EBADELF, "opening %s for its debug info: %s", path,
                *elfp == NULL ? elf_errmsg(-1) : "not an ELF file");
        close_info(dbg, elfp, fdp);
        return SW_EBADELF;
    }
    /* No .debug_info (a file with only CFI, or none): nothing to read. */
    if (!has_debug_info(*elfp)) {
        close_info(dbg, elfp, fdp);
        return 0;
    }
    /* libdw inflates every compressed .debug_* section it reads, as large
     * as the section's header says: over the limits, no DWARF from this
     * file (the walk goes on with symbols and CFI; libstate warns). */
    if (!sw_elf_inflate_ok(*elfp, lim, why, sizeof why)) {
        sw_debug(SW_DBG_CACHE, "dwarf: %s: %s: not read", path, why);
        close_info(dbg, elfp, fdp);
        return 0;
    }
    *dbg = dwarf_begin_elf(*elfp, DWARF_C_READ, NULL);
    if (*dbg == NULL) {
        sw_fail(err, SW_EBADELF, "opening %s for its debug info: %s", path, dwarf_errmsg(-1));
        close_info(dbg, elfp, fdp);
        return SW_EBADELF;
    }
    return 0;
}

int
sw_dinfo_open(const char *path, const char *debug_path, struct sw_elf *elf, struct sw_dinfo **out,
              struct sw_errbuf *err)
{
    struct sw_dinfo *d;
    int rc;

    const char *why;
    if (path == NULL)
        return sw_fail(err, SW_EINVAL, "opening debug info: no file");
    if (!sw_libdw_load(&why))
        return sw_fail(err, SW_EUNSUP, "opening the debug info of %s: %s", path, why);
    rc = check_elf_magic(path, err);
    if (rc < 0)
        return rc;
    d = sw_calloc(1, sizeof *d);
    if (d == NULL)
        return sw_fail(err, SW_ENOMEM, "opening the debug info of %s: out of memory", path);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&d->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    d->dbg_fd = -1;
    const struct sw_inflate_limits *lim = elf != NULL ? sw_elf_inflate_limits(elf) : NULL;
    if ((d->path = sw_strdup(path)) == NULL) {
        sw_dinfo_close(d);
        return sw_fail(err, SW_ENOMEM, "opening the debug info of %s: out of memory", path);
    }
    d->elf = elf;
    /* The separate debug file is only a better source: a broken one falls
     * back to PATH rather than failing the module. */
    if (debug_path != NULL && check_elf_magic(debug_path, err) == 0 &&
        open_info(debug_path, lim, &d->dbg, &d->dbg_elf, &d->dbg_fd, err) == 0 && d->dbg != NULL) {
        d->source = sw_strdup(debug_path);
    } else {
        rc = open_info(path, lim, &d->dbg, &d->dbg_elf, &d->dbg_fd, err);
        if (rc < 0) {
            sw_dinfo_close(d);
            return rc;
        }
        if (d->dbg != NULL)
            d->source = sw_strdup(path);
    }
    if (d->dbg != NULL && d->source == NULL) {
        sw_dinfo_close(d);
        return sw_fail(err, SW_ENOMEM, "opening the debug info of %s: out of memory", path);
    }
    sw_err_clear(err);
    *out = d;
    return 0;
}

void
sw_dinfo_close(struct sw_dinfo *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->ncus; i++) {
        sw_di_cu_reset(d->cus[i]);
        sw_free(d->cus[i]);
    }
    sw_free(d->cus);
    sw_free(d->spans);
    sw_di_names_free(d);
    close_info(&d->dbg, &d->dbg_elf, &d->dbg_fd);
    sw_free(d->cache_dir);
    sw_free(d->source);
    sw_free(d->path);
    pthread_mutex_destroy(&d->lock);
    sw_free(d);
}

bool
sw_dinfo_has_info(const struct sw_dinfo *d)
{
    return d != NULL && d->dbg != NULL;
}

const char *
sw_dinfo_source(const struct sw_dinfo *d)
{
    return d->source;
}

const char *
sw_dinfo_errmsg(const struct sw_dinfo *d)
{
    return d->err.msg;
}
