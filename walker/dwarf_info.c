/* walker/dwarf_info.c -- the debug information of one file through libdwarf.
 *
 * Debian 12's 20210528 API, which reads SHF_COMPRESSED sections itself.  The
 * handle (open, close), attribute and range helpers every walker/dwarf_*.c
 * file uses, and a table from address to compilation unit (.debug_aranges,
 * else the units' own ranges).  What a unit holds is dwarf_scopes.c's; no
 * CFI (walker/dwarf_adapter.c), no line table.
 */
#include "walker/dwarf_info.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "walker/dwarf_info_internal.h"
#include "walker/elf.h"

/* ---- libdwarf helpers ------------------------------------------------------------------ */

int
sw_di_fail(struct sw_dinfo *d, int code, Dwarf_Error de, const char *what)
{
    const char *m = de ? dwarf_errmsg(de) : NULL;
    sw_fail(&d->err, code, "reading debug info of %s: %s%s%s", d->source ? d->source : d->path,
            what, m ? ": " : "", m ? m : "");
    sw_di_drop_error(d->dbg, de);
    return code;
}

/* Fetch attribute AT of DIE into *A; false (no error kept) when it is absent
 * or unreadable.  Pair with attr_close. */
static bool
attr_open(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Attribute *a)
{
    Dwarf_Error de = NULL;
    if (dwarf_attr(die, at, a, &de) == DW_DLV_OK)
        return true;
    sw_di_drop_error(d->dbg, de);
    return false;
}

/* Release A and the error DE of reading its form. */
static void
attr_close(struct sw_dinfo *d, Dwarf_Attribute a, Dwarf_Error de)
{
    sw_di_drop_error(d->dbg, de);
    dwarf_dealloc_attribute(a);
}

bool
sw_di_attr_string(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, const char **out)
{
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    char *s = NULL;
    if (!attr_open(d, die, at, &a))
        return false;
    int rc = dwarf_formstring(a, &s, &de);
    attr_close(d, a, de);
    if (rc != DW_DLV_OK || s == NULL || s[0] == 0)
        return false;
    *out = s; /* in the string section: valid until dwarf_finish */
    return true;
}

bool
sw_di_attr_ref(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *off)
{
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    if (!attr_open(d, die, at, &a))
        return false;
    int rc = dwarf_global_formref(a, off, &de);
    attr_close(d, a, de);
    return rc == DW_DLV_OK;
}

bool
sw_di_attr_flag(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at)
{
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    Dwarf_Bool v = 0;
    if (!attr_open(d, die, at, &a))
        return false;
    int rc = dwarf_formflag(a, &v, &de);
    attr_close(d, a, de);
    return rc == DW_DLV_OK && v;
}

bool
sw_di_attr_addr(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, sw_addr *out)
{
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    Dwarf_Addr v = 0;
    if (!attr_open(d, die, at, &a))
        return false;
    int rc = dwarf_formaddr(a, &v, &de);
    attr_close(d, a, de);
    if (rc != DW_DLV_OK)
        return false;
    *out = v;
    return true;
}

bool
sw_di_attr_udata(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *out)
{
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    if (!attr_open(d, die, at, &a))
        return false;
    int rc = dwarf_formudata(a, out, &de);
    attr_close(d, a, de);
    return rc == DW_DLV_OK;
}

bool
sw_di_has_attr(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at)
{
    Dwarf_Bool v = 0;
    Dwarf_Error de = NULL;
    int rc = dwarf_hasattr(die, at, &v, &de);
    sw_di_drop_error(d->dbg, de);
    return rc == DW_DLV_OK && v;
}

Dwarf_Die
sw_di_die_at(struct sw_dinfo *d, Dwarf_Off off)
{
    Dwarf_Die die = NULL;
    Dwarf_Error de = NULL;
    if (dwarf_offdie_b(d->dbg, off, true, &die, &de) != DW_DLV_OK) {
        sw_di_drop_error(d->dbg, de);
        return NULL;
    }
    return die;
}

/* ---- ranges ---------------------------------------------------------------------------- */

static int
rbuf_add(struct di_rbuf *rb, sw_addr lo, sw_addr hi)
{
    /* A range at 0 is a discarded function's tombstone (gdb drops them too:
     * no section is at address 0 in a shared object or PIE). */
    if (lo == 0 || lo >= hi)
        return 0;
    struct di_range *v = sw_grow(rb->v, &rb->cap, rb->n + 1, sizeof *v, 64);
    if (v == NULL)
        return SW_ENOMEM;
    rb->v = v;
    rb->v[rb->n++] = (struct di_range){ lo, hi };
    return 0;
}

static int
ranges_v5(struct sw_dinfo *d, Dwarf_Attribute a, Dwarf_Half form, Dwarf_Unsigned val,
          struct di_rbuf *rb)
{
    Dwarf_Rnglists_Head head = NULL;
    Dwarf_Unsigned count = 0, goff = 0;
    Dwarf_Error de = NULL;
    int rc = dwarf_rnglists_get_rle_head(a, form, val, &head, &count, &goff, &de);
    if (rc != DW_DLV_OK) {
        sw_di_drop_error(d->dbg, de);
        return 0; /* a bad list: no ranges, as gdb's complaint */
    }
    rc = 0;
    for (Dwarf_Unsigned i = 0; i < count && i < DI_MAX_RANGES && rc == 0; i++) {
        unsigned len = 0, code = 0;
        Dwarf_Unsigned raw1, raw2, lo = 0, hi = 0;
        Dwarf_Bool no_addr = 0;
        if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2, &no_addr, &lo,
                                              &hi, &de) != DW_DLV_OK) {
            sw_di_drop_error(d->dbg, de);
            break;
        }
        /* The cooked values are addresses: base and .debug_addr applied. */
        if (no_addr)
            continue;
        switch (code) {
        case DW_RLE_startx_endx:
        case DW_RLE_startx_length:
        case DW_RLE_offset_pair:
        case DW_RLE_start_end:
        case DW_RLE_start_length:
            rc = rbuf_add(rb, lo, hi);
            break;
        default:
            break;
        }
    }
    dwarf_dealloc_rnglists_head(head);
    return rc;
}

static int
ranges_v4(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Off off, sw_addr base, struct di_rbuf *rb)
{
    Dwarf_Ranges *r = NULL;
    Dwarf_Signed count = 0;
    Dwarf_Unsigned bytes = 0;
    Dwarf_Off real = 0;
    Dwarf_Error de = NULL;
    int rc = dwarf_get_ranges_b(d->dbg, off, die, &real, &r, &count, &bytes, &de);
    if (rc != DW_DLV_OK) {
        sw_di_drop_error(d->dbg, de);
        return 0;
    }
    rc = 0;
    for (Dwarf_Signed i = 0; i < count && i < DI_MAX_RANGES && rc == 0; i++) {
        if (r[i].dwr_type == DW_RANGES_END)
            break;
        if (r[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
            base = r[i].dwr_addr2;
        else
            rc = rbuf_add(rb, base + r[i].dwr_addr1, base + r[i].dwr_addr2);
    }
    dwarf_ranges_dealloc(d->dbg, r, count);
    return rc;
}

/* Append DIE's address ranges to RB, as gdb's dwarf2_get_pc_bounds reads them:
 * DW_AT_low_pc with DW_AT_high_pc, else DW_AT_ranges.  CU_BASE is the unit's
 * DW_AT_low_pc, the base of DWARF 4 range lists.  Adds nothing for a DIE
 * without code; 0 or SW_ENOMEM. */
int
sw_di_die_ranges(struct sw_dinfo *d, Dwarf_Die die, sw_addr cu_base, struct di_rbuf *rb)
{
    Dwarf_Error de = NULL;
    Dwarf_Addr lo = 0, hi = 0;
    Dwarf_Half form = 0;
    enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;

    if (dwarf_lowpc(die, &lo, &de) == DW_DLV_OK) {
        if (dwarf_highpc_b(die, &hi, &form, &cls, &de) == DW_DLV_OK) {
            if (cls == DW_FORM_CLASS_CONSTANT)
                hi += lo;
            return rbuf_add(rb, lo, hi);
        }
    }
    sw_di_drop_error(d->dbg, de);
    de = NULL;

    Dwarf_Attribute a = NULL;
    if (dwarf_attr(die, DW_AT_ranges, &a, &de) != DW_DLV_OK) {
        sw_di_drop_error(d->dbg, de);
        return 0;
    }
    Dwarf_Half version = 0, offsize = 0;
    Dwarf_Unsigned val = 0;
    Dwarf_Off off = 0;
    int rc = 0;
    dwarf_get_version_of_die(die, &version, &offsize);
    if (dwarf_whatform(a, &form, &de) != DW_DLV_OK) {
        sw_di_drop_error(d->dbg, de);
    } else if (form == DW_FORM_rnglistx) {
        if (dwarf_formudata(a, &val, &de) == DW_DLV_OK)
            rc = ranges_v5(d, a, form, val, rb);
        sw_di_drop_error(d->dbg, de);
    } else {
        /* DW_FORM_sec_offset (DWARF 4 and 5), or data4/data8 in DWARF 2-3. */
        bool ok = dwarf_global_formref(a, &off, &de) == DW_DLV_OK;
        if (!ok) {
            sw_di_drop_error(d->dbg, de);
            de = NULL;
            ok = dwarf_formudata(a, &val, &de) == DW_DLV_OK;
            off = val;
        }
        if (ok)
            rc =
                version >= 5 ? ranges_v5(d, a, form, off, rb) : ranges_v4(d, die, off, cu_base, rb);
        else
            sw_di_drop_error(d->dbg, de);
    }
    dwarf_dealloc_attribute(a);
    return rc;
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
    Dwarf_Arange *ar = NULL;
    Dwarf_Signed n = 0;
    Dwarf_Error de = NULL;
    int rc = 0;

    if (dwarf_get_aranges(d->dbg, &ar, &n, &de) != DW_DLV_OK) {
        sw_di_drop_error(d->dbg, de); /* no .debug_aranges, or a bad one: scan the units */
        return 0;
    }
    for (Dwarf_Signed i = 0; i < n; i++) {
        Dwarf_Unsigned seg = 0, segsize = 0, len = 0;
        Dwarf_Addr start = 0;
        Dwarf_Off cu_off = 0;
        if (rc == 0) {
            if (dwarf_get_arange_info_b(ar[i], &seg, &segsize, &start, &len, &cu_off, &de) ==
                DW_DLV_OK)
                rc = add_span(d, start, start + len, cu_off);
            else
                sw_di_drop_error(d->dbg, de);
            de = NULL;
        }
        dwarf_dealloc(d->dbg, ar[i], DW_DLA_ARANGE);
    }
    dwarf_dealloc(d->dbg, ar, DW_DLA_LIST);
    return rc;
}

/* One pass over every unit's own ranges, for files without .debug_aranges or
 * units it leaves out. */
static int
scan_units(struct sw_dinfo *d)
{
    struct di_rbuf rb = { 0 };
    int rc = 0;

    for (;;) {
        Dwarf_Unsigned hlen = 0, typeoff = 0, next = 0;
        Dwarf_Half version = 0, asize = 0, lsize = 0, xsize = 0, type = 0;
        Dwarf_Off abbrev = 0, off = 0;
        Dwarf_Sig8 sig;
        Dwarf_Error de = NULL;
        Dwarf_Die cu = NULL;
        Dwarf_Addr base = 0;

        int r = dwarf_next_cu_header_d(d->dbg, true, &hlen, &version, &abbrev, &asize, &lsize,
                                       &xsize, &sig, &typeoff, &next, &type, &de);
        if (r == DW_DLV_NO_ENTRY)
            break;
        if (r != DW_DLV_OK) {
            rc = sw_di_fail(d, SW_EBADELF, de, "unit headers");
            break;
        }
        /* libdwarf's unit iterator keeps its place: after SW_ENOMEM it is run to
         * its end, so that a retry starts again at the first unit. */
        if (rc < 0)
            continue;
        if (dwarf_siblingof_b(d->dbg, NULL, true, &cu, &de) != DW_DLV_OK) {
            sw_di_drop_error(d->dbg, de);
            continue;
        }
        if (dwarf_dieoffset(cu, &off, &de) == DW_DLV_OK) {
            if (dwarf_lowpc(cu, &base, &de) != DW_DLV_OK) {
                sw_di_drop_error(d->dbg, de);
                base = 0;
            }
            rb.n = 0;
            rc = sw_di_die_ranges(d, cu, base, &rb);
            for (size_t i = 0; i < rb.n && rc == 0; i++)
                rc = add_span(d, rb.v[i].lo, rb.v[i].hi, off);
        } else {
            sw_di_drop_error(d->dbg, de);
        }
        dwarf_dealloc_die(cu);
    }
    sw_free(rb.v);
    return rc == SW_EBADELF ? 0 : rc; /* the spans found so far stand */
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
 * in the cache directory (CACHE/<build-id>/debuginfo, walker/debug_plain.c),
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

/* CACHE/<build-id>/aranges when D reads the uncompressed copy (owned by the
 * caller: sw_free), with the copy's size and mtime in *HEAD; else NULL. */
static char *
aranges_cache_path(struct sw_dinfo *d, struct aranges_head *head)
{
    const char *dbg = d->elf ? sw_elf_debug_path(d->elf) : NULL;
    if (dbg == NULL || d->source == NULL || strcmp(d->source, dbg) == 0 ||
        strcmp(d->source, d->path) == 0)
        return NULL;
    const char *slash = strrchr(d->source, '/');
    struct stat st;
    if (slash == NULL || strcmp(slash + 1, "debuginfo") != 0 || stat(d->source, &st) != 0)
        return NULL;
    memset(head, 0, sizeof *head);
    memcpy(head->magic, ARANGES_MAGIC, sizeof ARANGES_MAGIC);
    head->src_size = (uint64_t)st.st_size;
    head->src_mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    size_t n = (size_t)(slash - d->source) + 1;
    char *p = sw_malloc(n + sizeof ARANGES_NAME);
    if (p == NULL)
        return NULL;
    memcpy(p, d->source, n);
    memcpy(p + n, ARANGES_NAME, sizeof ARANGES_NAME);
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
    int rc = ensure_aranges(d);
    if (rc < 0 || d->nspans == 0)
        return rc;
    /* Any unit's DIE: the sections load with the first one. */
    Dwarf_Die die = sw_di_die_at(d, d->spans[0].cu_off);
    if (die != NULL)
        dwarf_dealloc_die(die);
    return 0;
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

/* Close what open_info opened: the libdwarf handle, then the mapping under it. */
static void
close_info(Dwarf_Debug *dbg, Elf **elf, int *fd)
{
    if (*dbg != NULL) {
        Dwarf_Error de = NULL;
        if (dwarf_finish(*dbg, &de) == DW_DLV_ERROR)
            sw_di_drop_error(NULL, de);
        *dbg = NULL;
    }
    if (*elf != NULL)
        elf_end(*elf);
    *elf = NULL;
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Open PATH with libdwarf if it has a non-empty .debug_info: *DBG NULL if not.
 * Through libelf's read-only mapping (dwarf_elf_init_b): libdwarf's sections
 * then point into the mapped file, where its own reader (dwarf_init_path)
 * would read() each whole section into memory of its own (libc's debug
 * information: 8.5 MB copied and faulted in on every run, for the few units
 * a walk looks at).  A compressed section is still inflated by libdwarf. */
static int
open_info(const char *path, Dwarf_Debug *dbg, Elf **elfp, int *fdp, struct sw_errbuf *err)
{
    Dwarf_Error de = NULL;
    Dwarf_Addr addr = 0;
    Dwarf_Unsigned size = 0;

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
    int rc = dwarf_elf_init_b(*elfp, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, dbg, &de);
    if (rc == DW_DLV_NO_ENTRY) {
        *dbg = NULL;
        close_info(dbg, elfp, fdp);
        return 0;
    }
    if (rc != DW_DLV_OK) {
        const char *m = de ? dwarf_errmsg(de) : NULL;
        sw_fail(err, SW_EBADELF, "opening %s for its debug info: %s", path,
                m ? m : "libdwarf refused it");
        sw_di_drop_error(NULL, de);
        *dbg = NULL;
        close_info(dbg, elfp, fdp);
        return SW_EBADELF;
    }
    if (dwarf_get_section_info_by_name(*dbg, ".debug_info", &addr, &size, &de) != DW_DLV_OK ||
        size == 0) {
        sw_di_drop_error(*dbg, de);
        close_info(dbg, elfp, fdp);
    }
    return 0;
}

int
sw_dinfo_open(const char *path, const char *debug_path, struct sw_elf *elf, struct sw_dinfo **out,
              struct sw_errbuf *err)
{
    struct sw_dinfo *d;
    int rc;

    if (path == NULL)
        return sw_fail(err, SW_EINVAL, "opening debug info: no file");
    rc = check_elf_magic(path, err);
    if (rc < 0)
        return rc;
    d = sw_calloc(1, sizeof *d);
    if (d == NULL || (d->path = sw_strdup(path)) == NULL) {
        sw_free(d);
        return sw_fail(err, SW_ENOMEM, "opening the debug info of %s: out of memory", path);
    }
    d->elf = elf;
    d->dbg_fd = -1;
    /* The separate debug file is only a better source: a broken one falls
     * back to PATH rather than failing the module. */
    if (debug_path != NULL && check_elf_magic(debug_path, err) == 0 &&
        open_info(debug_path, &d->dbg, &d->dbg_elf, &d->dbg_fd, err) == 0 && d->dbg != NULL) {
        d->source = sw_strdup(debug_path);
    } else {
        rc = open_info(path, &d->dbg, &d->dbg_elf, &d->dbg_fd, err);
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
    sw_free(d->source);
    sw_free(d->path);
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
