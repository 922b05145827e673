/* walker/dwarf_info.c -- inline and tail-call information through libdwarf.
 *
 * The second file that includes <libdwarf.h> (Debian 12's 20210528 API, which
 * reads SHF_COMPRESSED sections itself).  Per file: a table from address to
 * compilation unit (.debug_aranges, else the units' own ranges), and per unit,
 * parsed on first use, its scopes (functions, inlined subroutines, lexical
 * blocks, with their ranges) and call sites.  No CFI (walker/dwarf_adapter.c),
 * no line table.  Local variables (sw_dinfo_frame_vars) are read on demand
 * from the function's DIE: names, types and location lists.
 */
#include "walker/dwarf_info.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <libdwarf.h>

#include "util/util.h"
#include "walker/elf.h"

/* Bounds on the work garbage DWARF can cause.  Real units nest scopes a few
 * levels deep (glibc: under 12) and gdb's tail-call chains are short (glibc:
 * 1-2), so these never cut a real answer. */
#define DI_MAX_DEPTH  64         /* DIE nesting followed inside a unit */
#define DI_MAX_DIES   (1u << 22) /* DIEs visited in one unit */
#define DI_MAX_HOPS   8          /* abstract_origin / specification links followed */
#define DI_MAX_RANGES 4096       /* entries read from one range list */
#define DI_MAX_CHAIN  32         /* tail calls in one chain */
#define DI_MAX_VISITS 8192       /* call sites entered by one tail-call search */
#define DI_NONE       UINT32_MAX

enum di_scope_kind { DI_FUNC, DI_INLINED, DI_BLOCK };

struct di_range {
    sw_addr lo, hi;
};

/* A DIE with code: a concrete function, an inlined subroutine or a lexical
 * block, in DIE pre-order (children follow their parent). */
struct di_scope {
    uint32_t parent;         /* DI_NONE at the top of the unit */
    uint32_t first, nranges; /* in cu->ranges, in DWARF order */
    uint8_t kind;            /* enum di_scope_kind */
    const char *name;        /* DI_FUNC, DI_INLINED: gdb's name; borrowed from libdwarf */
    Dwarf_Off die;           /* the DIE's global offset (local variables) */
};

enum di_target_kind { DI_TGT_NONE, DI_TGT_ADDR, DI_TGT_NAME };

struct di_site {
    sw_addr pc;    /* DW_AT_call_return_pc (DW_AT_low_pc for the GNU tag) */
    uint32_t func; /* the enclosing DI_FUNC scope */
    bool tail;
    uint8_t tkind; /* enum di_target_kind */
    sw_addr taddr;
    const char *tname;
};

struct di_pcidx {
    sw_addr pc;
    uint32_t idx; /* in cu->sites */
};

struct di_rbuf {
    struct di_range *v;
    size_t n, cap;
};

struct di_cu {
    Dwarf_Off off; /* global offset of the unit DIE */
    int state;     /* 0: not parsed, 1: parsed, -1: malformed (stays empty) */
    struct di_scope *scopes;
    size_t nscopes, capscopes;
    struct di_rbuf ranges;
    struct di_site *sites;
    size_t nsites, capsites;
    struct di_pcidx *by_pc; /* every site, sorted by pc */
};

struct di_span {
    sw_addr lo, hi;
    Dwarf_Off cu_off; /* the unit object is made on first use: libc has 1700 units */
};

struct sw_dinfo {
    Dwarf_Debug dbg; /* NULL: no .debug_info */
    struct sw_elf *elf;
    char *path;
    char *source; /* the file DBG reads */
    struct di_cu **cus;
    size_t ncus, capcus; /* sorted by off */
    struct di_span *spans;
    size_t nspans, capspans; /* sorted by lo */
    bool aranges_read, units_scanned;
    struct sw_errbuf err;
};

/* ---- libdwarf helpers ------------------------------------------------------------------ */

static void
drop_error(Dwarf_Debug dbg, Dwarf_Error de)
{
    if (de)
        dwarf_dealloc_error(dbg, de);
}

/* Record a libdwarf failure on D, naming the source file. */
static int
di_fail(struct sw_dinfo *d, int code, Dwarf_Error de, const char *what)
{
    const char *m = de ? dwarf_errmsg(de) : NULL;
    sw_fail(&d->err, code, "reading debug info of %s: %s%s%s", d->source ? d->source : d->path,
            what, m ? ": " : "", m ? m : "");
    drop_error(d->dbg, de);
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
    drop_error(d->dbg, de);
    return false;
}

/* Release A and the error DE of reading its form. */
static void
attr_close(struct sw_dinfo *d, Dwarf_Attribute a, Dwarf_Error de)
{
    drop_error(d->dbg, de);
    dwarf_dealloc_attribute(a);
}

static bool
attr_string(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, const char **out)
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

static bool
attr_ref(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *off)
{
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    if (!attr_open(d, die, at, &a))
        return false;
    int rc = dwarf_global_formref(a, off, &de);
    attr_close(d, a, de);
    return rc == DW_DLV_OK;
}

static bool
attr_flag(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at)
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

static bool
attr_addr(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, sw_addr *out)
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

static bool
has_attr(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at)
{
    Dwarf_Bool v = 0;
    Dwarf_Error de = NULL;
    int rc = dwarf_hasattr(die, at, &v, &de);
    drop_error(d->dbg, de);
    return rc == DW_DLV_OK && v;
}

static Dwarf_Die
die_at(struct sw_dinfo *d, Dwarf_Off off)
{
    Dwarf_Die die = NULL;
    Dwarf_Error de = NULL;
    if (dwarf_offdie_b(d->dbg, off, true, &die, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        return NULL;
    }
    return die;
}

/* The name gdb prints for DIE: the first DW_AT_linkage_name along its
 * abstract_origin / specification links, else the first DW_AT_name. */
static const char *
die_gdb_name(struct sw_dinfo *d, Dwarf_Die die)
{
    const char *linkage = NULL, *name = NULL, *s;
    Dwarf_Die cur = die, owned = NULL;

    for (int hop = 0; hop < DI_MAX_HOPS && cur != NULL; hop++) {
        Dwarf_Off off;
        if (attr_string(d, cur, DW_AT_linkage_name, &s) ||
            attr_string(d, cur, DW_AT_MIPS_linkage_name, &s)) {
            linkage = s;
            break;
        }
        if (name == NULL && attr_string(d, cur, DW_AT_name, &s))
            name = s;
        if (!attr_ref(d, cur, DW_AT_abstract_origin, &off) &&
            !attr_ref(d, cur, DW_AT_specification, &off))
            break;
        Dwarf_Die next = die_at(d, off);
        if (owned)
            dwarf_dealloc_die(owned);
        owned = cur = next;
    }
    if (owned)
        dwarf_dealloc_die(owned);
    return linkage ? linkage : name;
}

/* ---- ranges ---------------------------------------------------------------------------- */

static int
rbuf_add(struct di_rbuf *rb, sw_addr lo, sw_addr hi)
{
    /* A range at 0 is a discarded function's tombstone (gdb drops them too:
     * no section is at address 0 in a shared object or PIE). */
    if (lo == 0 || lo >= hi)
        return 0;
    if (rb->n == rb->cap) {
        size_t cap = rb->cap ? rb->cap * 2 : 64;
        struct di_range *v = sw_realloc(rb->v, cap * sizeof *v);
        if (v == NULL)
            return SW_ENOMEM;
        rb->v = v;
        rb->cap = cap;
    }
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
        drop_error(d->dbg, de);
        return 0; /* a bad list: no ranges, as gdb's complaint */
    }
    rc = 0;
    for (Dwarf_Unsigned i = 0; i < count && i < DI_MAX_RANGES && rc == 0; i++) {
        unsigned len = 0, code = 0;
        Dwarf_Unsigned raw1, raw2, lo = 0, hi = 0;
        Dwarf_Bool no_addr = 0;
        if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2, &no_addr, &lo,
                                              &hi, &de) != DW_DLV_OK) {
            drop_error(d->dbg, de);
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
        drop_error(d->dbg, de);
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
static int
die_ranges(struct sw_dinfo *d, Dwarf_Die die, sw_addr cu_base, struct di_rbuf *rb)
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
    drop_error(d->dbg, de);
    de = NULL;

    Dwarf_Attribute a = NULL;
    if (dwarf_attr(die, DW_AT_ranges, &a, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        return 0;
    }
    Dwarf_Half version = 0, offsize = 0;
    Dwarf_Unsigned val = 0;
    Dwarf_Off off = 0;
    int rc = 0;
    dwarf_get_version_of_die(die, &version, &offsize);
    if (dwarf_whatform(a, &form, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
    } else if (form == DW_FORM_rnglistx) {
        if (dwarf_formudata(a, &val, &de) == DW_DLV_OK)
            rc = ranges_v5(d, a, form, val, rb);
        drop_error(d->dbg, de);
    } else {
        /* DW_FORM_sec_offset (DWARF 4 and 5), or data4/data8 in DWARF 2-3. */
        bool ok = dwarf_global_formref(a, &off, &de) == DW_DLV_OK;
        if (!ok) {
            drop_error(d->dbg, de);
            de = NULL;
            ok = dwarf_formudata(a, &val, &de) == DW_DLV_OK;
            off = val;
        }
        if (ok)
            rc =
                version >= 5 ? ranges_v5(d, a, form, off, rb) : ranges_v4(d, die, off, cu_base, rb);
        else
            drop_error(d->dbg, de);
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
    if (d->nspans == d->capspans) {
        size_t cap = d->capspans ? d->capspans * 2 : 256;
        struct di_span *v = sw_realloc(d->spans, cap * sizeof *v);
        if (v == NULL)
            return SW_ENOMEM;
        d->spans = v;
        d->capspans = cap;
    }
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
        drop_error(d->dbg, de); /* no .debug_aranges, or a bad one: scan the units */
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
                drop_error(d->dbg, de);
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
            rc = di_fail(d, SW_EBADELF, de, "unit headers");
            break;
        }
        if (dwarf_siblingof_b(d->dbg, NULL, true, &cu, &de) != DW_DLV_OK) {
            drop_error(d->dbg, de);
            continue;
        }
        if (dwarf_dieoffset(cu, &off, &de) == DW_DLV_OK) {
            if (dwarf_lowpc(cu, &base, &de) != DW_DLV_OK) {
                drop_error(d->dbg, de);
                base = 0;
            }
            rb.n = 0;
            rc = die_ranges(d, cu, base, &rb);
            for (size_t i = 0; i < rb.n && rc == 0; i++)
                rc = add_span(d, rb.v[i].lo, rb.v[i].hi, off);
        } else {
            drop_error(d->dbg, de);
        }
        dwarf_dealloc_die(cu);
        if (rc < 0)
            break;
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

/* The unit covering VADDR: from .debug_aranges first, then, once, from every
 * unit's own ranges.  Returns 0 with *OUT, SW_ENOENT, SW_ENOMEM. */
static int
find_cu(struct sw_dinfo *d, sw_addr vaddr, struct di_cu **out)
{
    const struct di_span *sp;
    int rc;

    if (!d->aranges_read) {
        rc = read_aranges(d);
        if (rc < 0) {
            d->nspans = 0;
            return rc;
        }
        d->aranges_read = true;
        qsort(d->spans, d->nspans, sizeof d->spans[0], span_cmp);
    }
    sp = span_lookup(d, vaddr);
    if (sp == NULL && !d->units_scanned) {
        size_t before = d->nspans;
        rc = scan_units(d);
        if (rc < 0) {
            d->nspans = before;
            return rc;
        }
        d->units_scanned = true;
        qsort(d->spans, d->nspans, sizeof d->spans[0], span_cmp);
        sp = span_lookup(d, vaddr);
    }
    if (sp == NULL)
        return SW_ENOENT;
    return find_cu_obj(d, sp->cu_off, out);
}

/* ---- one unit -------------------------------------------------------------------------- */

struct di_parse {
    struct sw_dinfo *d;
    struct di_cu *cu;
    sw_addr base;
    unsigned ndies;
};

static int
add_scope(struct di_cu *cu, const struct di_scope *s)
{
    if (cu->nscopes == cu->capscopes) {
        size_t cap = cu->capscopes ? cu->capscopes * 2 : 32;
        struct di_scope *v = sw_realloc(cu->scopes, cap * sizeof *v);
        if (v == NULL)
            return SW_ENOMEM;
        cu->scopes = v;
        cu->capscopes = cap;
    }
    cu->scopes[cu->nscopes++] = *s;
    return 0;
}

/* Where a call site's target is, as gdb's read_call_site_scope records it:
 * a DW_AT_call_target expression needs the caller's registers, which a
 * tail-call search does not have, so it stays unresolved; a declaration is
 * resolved later by name; a definition by its lowest address.  0 or SW_ENOMEM. */
static int
site_target(struct di_parse *p, Dwarf_Die die, struct di_site *s)
{
    struct sw_dinfo *d = p->d;
    Dwarf_Off off;
    int rc = 0;

    s->tkind = DI_TGT_NONE;
    if (has_attr(d, die, DW_AT_call_target) || has_attr(d, die, DW_AT_GNU_call_site_target))
        return 0;
    if (!attr_ref(d, die, DW_AT_call_origin, &off) &&
        !attr_ref(d, die, DW_AT_abstract_origin, &off))
        return 0;
    Dwarf_Die t = die_at(d, off);
    if (t == NULL)
        return 0;
    if (attr_flag(d, t, DW_AT_declaration) && !has_attr(d, t, DW_AT_specification)) {
        const char *name = NULL;
        if (attr_string(d, t, DW_AT_linkage_name, &name) ||
            attr_string(d, t, DW_AT_MIPS_linkage_name, &name) ||
            attr_string(d, t, DW_AT_name, &name)) {
            s->tkind = DI_TGT_NAME;
            s->tname = name;
        }
    } else {
        struct di_rbuf rb = { 0 };
        sw_addr base = p->base;
        Dwarf_Off cu_off = 0;
        Dwarf_Error de = NULL;
        /* A DWARF 4 range list counts from the target's own unit. */
        if (dwarf_CU_dieoffset_given_die(t, &cu_off, &de) == DW_DLV_OK && cu_off != p->cu->off) {
            Dwarf_Die cu = die_at(d, cu_off);
            Dwarf_Addr b = 0;
            base = 0;
            if (cu != NULL && dwarf_lowpc(cu, &b, &de) == DW_DLV_OK)
                base = b;
            if (cu != NULL)
                dwarf_dealloc_die(cu);
        }
        drop_error(d->dbg, de);
        rc = die_ranges(d, t, base, &rb);
        if (rc == 0 && rb.n > 0) {
            sw_addr lowest = rb.v[0].lo;
            for (size_t i = 1; i < rb.n; i++)
                if (rb.v[i].lo < lowest)
                    lowest = rb.v[i].lo;
            s->tkind = DI_TGT_ADDR;
            s->taddr = lowest;
        }
        sw_free(rb.v);
    }
    dwarf_dealloc_die(t);
    return rc;
}

static int
read_site(struct di_parse *p, Dwarf_Die die, uint32_t func)
{
    struct di_cu *cu = p->cu;
    struct di_site s = { .func = func };

    if (!attr_addr(p->d, die, DW_AT_call_return_pc, &s.pc) &&
        !attr_addr(p->d, die, DW_AT_low_pc, &s.pc))
        return 0;
    s.tail =
        attr_flag(p->d, die, DW_AT_call_tail_call) || attr_flag(p->d, die, DW_AT_GNU_tail_call);
    int rc = site_target(p, die, &s);
    if (rc < 0)
        return rc;
    if (cu->nsites == cu->capsites) {
        size_t cap = cu->capsites ? cu->capsites * 2 : 32;
        struct di_site *v = sw_realloc(cu->sites, cap * sizeof *v);
        if (v == NULL)
            return SW_ENOMEM;
        cu->sites = v;
        cu->capsites = cap;
    }
    cu->sites[cu->nsites++] = s;
    return 0;
}

static int parse_die(struct di_parse *p, Dwarf_Die die, uint32_t scope, uint32_t func,
                     unsigned depth);

static int
parse_children(struct di_parse *p, Dwarf_Die parent, uint32_t scope, uint32_t func, unsigned depth)
{
    Dwarf_Debug dbg = p->d->dbg;
    Dwarf_Error de = NULL;
    Dwarf_Die child = NULL;
    int rc;

    if (depth >= DI_MAX_DEPTH)
        return 0; /* deeper scopes of garbage are ignored, not an error */
    rc = dwarf_child(parent, &child, &de);
    if (rc == DW_DLV_NO_ENTRY)
        return 0;
    if (rc != DW_DLV_OK)
        return di_fail(p->d, SW_EBADELF, de, "children of a DIE");
    while (child != NULL) {
        Dwarf_Die sib = NULL;
        rc = parse_die(p, child, scope, func, depth);
        if (rc == 0) {
            int r = dwarf_siblingof_b(dbg, child, true, &sib, &de);
            if (r == DW_DLV_ERROR)
                rc = di_fail(p->d, SW_EBADELF, de, "siblings of a DIE");
        }
        dwarf_dealloc_die(child);
        if (rc < 0) {
            if (sib)
                dwarf_dealloc_die(sib);
            return rc;
        }
        child = sib;
    }
    return 0;
}

static int
parse_die(struct di_parse *p, Dwarf_Die die, uint32_t scope, uint32_t func, unsigned depth)
{
    struct di_cu *cu = p->cu;
    Dwarf_Error de = NULL;
    Dwarf_Half tag = 0;
    int rc;

    if (++p->ndies > DI_MAX_DIES)
        return sw_fail(&p->d->err, SW_EBADELF,
                       "reading debug info of %s: the unit at 0x%llx has over %u DIEs",
                       p->d->source, (unsigned long long)cu->off, DI_MAX_DIES);
    if (dwarf_tag(die, &tag, &de) != DW_DLV_OK)
        return di_fail(p->d, SW_EBADELF, de, "a DIE's tag");

    switch (tag) {
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block: {
        size_t first = cu->ranges.n;
        rc = die_ranges(p->d, die, p->base, &cu->ranges);
        if (rc < 0)
            return rc;
        if (cu->ranges.n == first) {
            /* No code: a declaration or an abstract instance is skipped with
             * its children; a lexical block without ranges is transparent
             * (gdb reads its children as its parent's). */
            if (tag == DW_TAG_lexical_block)
                return parse_children(p, die, scope, func, depth + 1);
            return 0;
        }
        struct di_scope s = {
            .parent = scope,
            .first = (uint32_t)first,
            .nranges = (uint32_t)(cu->ranges.n - first),
            .kind = tag == DW_TAG_subprogram           ? DI_FUNC
                    : tag == DW_TAG_inlined_subroutine ? DI_INLINED
                                                       : DI_BLOCK,
        };
        if (s.kind != DI_BLOCK)
            s.name = die_gdb_name(p->d, die);
        if (dwarf_dieoffset(die, &s.die, &de) != DW_DLV_OK)
            drop_error(p->d->dbg, de);
        rc = add_scope(cu, &s);
        if (rc < 0)
            return rc;
        uint32_t idx = (uint32_t)(cu->nscopes - 1);
        return parse_children(p, die, idx, s.kind == DI_FUNC ? idx : func, depth + 1);
    }
    case DW_TAG_call_site:
    case DW_TAG_GNU_call_site:
        return func == DI_NONE ? 0 : read_site(p, die, func);
    case DW_TAG_namespace:
    case DW_TAG_module:
        return parse_children(p, die, scope, func, depth + 1);
    default:
        return 0;
    }
}

static int
pcidx_cmp(const void *a, const void *b)
{
    const struct di_pcidx *x = a, *y = b;
    if (x->pc != y->pc)
        return x->pc < y->pc ? -1 : 1;
    return x->idx < y->idx ? -1 : 1;
}

static void
cu_reset(struct di_cu *cu)
{
    sw_free(cu->scopes);
    sw_free(cu->ranges.v);
    sw_free(cu->sites);
    sw_free(cu->by_pc);
    Dwarf_Off off = cu->off;
    int state = cu->state;
    memset(cu, 0, sizeof *cu);
    cu->off = off;
    cu->state = state;
}

/* Parse CU once.  Returns 0 (also for a unit found malformed earlier, which
 * stays empty), SW_ENOMEM (the unit stays unparsed: a later call retries),
 * SW_EBADELF (the unit is malformed; message on D). */
static int
cu_parse(struct sw_dinfo *d, struct di_cu *cu)
{
    struct di_parse p = { .d = d, .cu = cu };
    Dwarf_Error de = NULL;
    Dwarf_Addr base = 0;
    int rc;

    if (cu->state != 0)
        return 0;
    Dwarf_Die die = die_at(d, cu->off);
    if (die == NULL) {
        cu->state = -1;
        return sw_fail(&d->err, SW_EBADELF, "reading debug info of %s: no unit DIE at 0x%llx",
                       d->source, (unsigned long long)cu->off);
    }
    if (dwarf_lowpc(die, &base, &de) == DW_DLV_OK)
        p.base = base;
    drop_error(d->dbg, de);
    rc = parse_children(&p, die, DI_NONE, DI_NONE, 0);
    dwarf_dealloc_die(die);
    if (rc == 0 && cu->nsites > 0) {
        cu->by_pc = sw_malloc(cu->nsites * sizeof cu->by_pc[0]);
        if (cu->by_pc == NULL) {
            rc = SW_ENOMEM;
        } else {
            for (size_t i = 0; i < cu->nsites; i++)
                cu->by_pc[i] = (struct di_pcidx){ cu->sites[i].pc, (uint32_t)i };
            qsort(cu->by_pc, cu->nsites, sizeof cu->by_pc[0], pcidx_cmp);
        }
    }
    if (rc < 0) {
        cu->state = rc == SW_ENOMEM ? 0 : -1;
        cu_reset(cu);
        return rc;
    }
    cu->state = 1;
    return 0;
}

static bool
scope_covers(const struct di_cu *cu, uint32_t i, sw_addr vaddr)
{
    const struct di_scope *s = &cu->scopes[i];
    for (uint32_t k = 0; k < s->nranges; k++) {
        const struct di_range *r = &cu->ranges.v[s->first + k];
        if (vaddr >= r->lo && vaddr < r->hi)
            return true;
    }
    return false;
}

/* The innermost scope covering VADDR: one pass in pre-order, descending into
 * a scope only once it covers VADDR.  DI_NONE if none. */
static uint32_t
innermost_scope(const struct di_cu *cu, sw_addr vaddr)
{
    uint32_t cur = DI_NONE;
    for (size_t i = 0; i < cu->nscopes; i++)
        if (cu->scopes[i].parent == cur && scope_covers(cu, (uint32_t)i, vaddr))
            cur = (uint32_t)i;
    return cur;
}

/* The parsed unit covering VADDR; *CU NULL (and 0) when there is none. */
static int
parsed_cu_at(struct sw_dinfo *d, sw_addr vaddr, struct di_cu **cu)
{
    *cu = NULL;
    if (d->dbg == NULL)
        return 0;
    int rc = find_cu(d, vaddr, cu);
    if (rc == SW_ENOENT) {
        *cu = NULL;
        return 0;
    }
    if (rc < 0)
        return sw_fail(&d->err, rc, "reading debug info of %s: out of memory", d->source);
    rc = cu_parse(d, *cu);
    if (rc == SW_ENOMEM)
        sw_fail(&d->err, rc, "reading debug info of %s: out of memory", d->source);
    if (rc < 0 || (*cu)->state != 1)
        *cu = NULL;
    return rc;
}

/* The concrete function scope at or above scope I. */
static uint32_t
func_of(const struct di_cu *cu, uint32_t i)
{
    while (i != DI_NONE && cu->scopes[i].kind != DI_FUNC)
        i = cu->scopes[i].parent;
    return i;
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

/* Open PATH with libdwarf if it has a non-empty .debug_info: *DBG NULL if not. */
static int
open_info(const char *path, Dwarf_Debug *dbg, struct sw_errbuf *err)
{
    Dwarf_Error de = NULL;
    Dwarf_Addr addr = 0;
    Dwarf_Unsigned size = 0;

    *dbg = NULL;
    int rc = dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, dbg, NULL,
                             0, NULL, &de);
    if (rc == DW_DLV_NO_ENTRY) {
        *dbg = NULL;
        return 0;
    }
    if (rc != DW_DLV_OK) {
        const char *m = de ? dwarf_errmsg(de) : NULL;
        sw_fail(err, SW_EBADELF, "opening %s for its debug info: %s", path,
                m ? m : "libdwarf refused it");
        drop_error(NULL, de);
        *dbg = NULL;
        return SW_EBADELF;
    }
    if (dwarf_get_section_info_by_name(*dbg, ".debug_info", &addr, &size, &de) != DW_DLV_OK ||
        size == 0) {
        drop_error(*dbg, de);
        de = NULL;
        if (dwarf_finish(*dbg, &de) == DW_DLV_ERROR)
            drop_error(NULL, de);
        *dbg = NULL;
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
    /* The separate debug file is only a better source: a broken one falls
     * back to PATH rather than failing the module. */
    if (debug_path != NULL && check_elf_magic(debug_path, err) == 0 &&
        open_info(debug_path, &d->dbg, err) == 0 && d->dbg != NULL) {
        d->source = sw_strdup(debug_path);
    } else {
        rc = open_info(path, &d->dbg, err);
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
        cu_reset(d->cus[i]);
        sw_free(d->cus[i]);
    }
    sw_free(d->cus);
    sw_free(d->spans);
    if (d->dbg != NULL) {
        Dwarf_Error de = NULL;
        if (dwarf_finish(d->dbg, &de) == DW_DLV_ERROR)
            drop_error(NULL, de);
    }
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

int
sw_dinfo_inline_chain(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_name *out, size_t max,
                      size_t *n)
{
    struct di_cu *cu;
    int rc;

    *n = 0;
    rc = parsed_cu_at(d, vaddr, &cu);
    if (rc < 0 || cu == NULL)
        return rc;
    for (uint32_t i = innermost_scope(cu, vaddr); i != DI_NONE; i = cu->scopes[i].parent) {
        const struct di_scope *s = &cu->scopes[i];
        if (s->kind == DI_FUNC)
            break;
        if (s->kind == DI_INLINED && *n < max)
            out[(*n)++] =
                (struct sw_dinfo_name){ .name = s->name, .entry = cu->ranges.v[s->first].lo };
    }
    return 0;
}

int
sw_dinfo_function_entry(struct sw_dinfo *d, sw_addr vaddr, sw_addr *entry)
{
    struct di_cu *cu;
    int rc = parsed_cu_at(d, vaddr, &cu);
    if (rc < 0)
        return rc;
    if (cu == NULL)
        return SW_ENOENT;
    uint32_t f = func_of(cu, innermost_scope(cu, vaddr));
    if (f == DI_NONE)
        return SW_ENOENT;
    /* gdb's block entry: the start of a contiguous function, else of the
     * first range as listed. */
    *entry = cu->ranges.v[cu->scopes[f].first].lo;
    return 0;
}

int
sw_dinfo_function(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_name *out)
{
    struct di_cu *cu;
    int rc = parsed_cu_at(d, vaddr, &cu);
    if (rc < 0)
        return rc;
    if (cu == NULL)
        return SW_ENOENT;
    uint32_t f = func_of(cu, innermost_scope(cu, vaddr));
    if (f == DI_NONE)
        return SW_ENOENT;
    out->name = cu->scopes[f].name;
    out->entry = cu->ranges.v[cu->scopes[f].first].lo;
    return 0;
}

/* gdb's call_site_find_chain: a depth-first search over tail-call sites. */
struct di_search {
    struct sw_dinfo *d;
    sw_addr callee;
    const struct di_site *path[DI_MAX_CHAIN];
    size_t depth;
    const struct di_site *res[DI_MAX_CHAIN];
    size_t rlen, callers, callees;
    bool have; /* RES holds the chains' common part */
    bool stop; /* gdb gave up: ambiguous, or a target it cannot resolve */
    unsigned visits;
    int rc; /* SW_ENOMEM, SW_EBADELF */
};

/* gdb's chain_candidate: keep the callers and callees every chain shares. */
static void
search_candidate(struct di_search *s)
{
    size_t len = s->depth;
    if (!s->have) {
        memcpy(s->res, s->path, len * sizeof s->path[0]);
        s->rlen = s->callers = s->callees = len;
        s->have = true;
        return;
    }
    size_t callers = s->callers < len ? s->callers : len;
    for (size_t i = 0; i < callers; i++)
        if (s->res[i] != s->path[i]) {
            callers = i;
            break;
        }
    size_t callees = s->callees < len ? s->callees : len;
    for (size_t i = 0; i < callees; i++)
        if (s->res[s->rlen - 1 - i] != s->path[len - 1 - i]) {
            callees = i;
            break;
        }
    s->callers = callers;
    s->callees = callees;
    if (callers == 0 && callees == 0) {
        /* Nothing in common (or a direct call next to a tail-call path). */
        s->have = false;
        s->stop = true;
    }
}

static void
search_give_up(struct di_search *s, int rc)
{
    s->have = false;
    s->stop = true;
    if (rc != SW_ENOENT)
        s->rc = rc;
}

static void
search_site(struct di_search *s, const struct di_site *site)
{
    struct sw_dinfo *d = s->d;
    struct sw_elfsym sym;
    struct di_cu *cu;
    sw_addr target;
    int rc;

    if (++s->visits > DI_MAX_VISITS)
        return search_give_up(s, SW_ENOENT);
    switch (site->tkind) {
    case DI_TGT_ADDR:
        target = site->taddr;
        break;
    case DI_TGT_NAME:
        /* gdb looks the name up among minimal symbols; here: this file's. */
        if (d->elf == NULL)
            return search_give_up(s, SW_ENOENT);
        rc = sw_elf_symbol_by_name(d->elf, site->tname, &sym);
        if (rc < 0)
            return search_give_up(s, rc == SW_ENOMEM ? rc : SW_ENOENT);
        target = sym.value;
        break;
    default:
        return search_give_up(s, SW_ENOENT);
    }
    if (target == s->callee) {
        search_candidate(s);
        return;
    }
    /* gdb's func_addr_to_tail_call_list: the target must start a function. */
    rc = parsed_cu_at(d, target, &cu);
    if (rc < 0 || cu == NULL)
        return search_give_up(s, rc == SW_ENOMEM ? rc : SW_ENOENT);
    uint32_t f = func_of(cu, innermost_scope(cu, target));
    if (f == DI_NONE || cu->ranges.v[cu->scopes[f].first].lo != target)
        return search_give_up(s, SW_ENOENT);
    /* gdb keeps a function's tail-call sites in reverse DIE order. */
    for (size_t i = cu->nsites; i-- > 0;) {
        const struct di_site *t = &cu->sites[i];
        bool seen = false;
        if (t->func != f || !t->tail)
            continue;
        for (size_t k = 0; k < s->depth && !seen; k++)
            seen = s->path[k]->pc == t->pc;
        if (seen)
            continue;
        if (s->depth == DI_MAX_CHAIN)
            return search_give_up(s, SW_ENOENT);
        s->path[s->depth++] = t;
        search_site(s, t);
        s->depth--;
        if (s->stop)
            return;
    }
}

/* The name of the innermost function (inlined or not) covering VADDR. */
static const char *
name_at(struct sw_dinfo *d, sw_addr vaddr)
{
    struct di_cu *cu;
    if (parsed_cu_at(d, vaddr, &cu) < 0 || cu == NULL)
        return NULL;
    for (uint32_t i = innermost_scope(cu, vaddr); i != DI_NONE; i = cu->scopes[i].parent)
        if (cu->scopes[i].kind != DI_BLOCK)
            return cu->scopes[i].name;
    return NULL;
}

int
sw_dinfo_tailcall_chain(struct sw_dinfo *d, sw_addr caller_ra, sw_addr callee_entry,
                        struct sw_dinfo_tail *out, size_t max, size_t *n)
{
    struct di_search *s;
    struct di_cu *cu;
    const struct di_site *site = NULL;
    int rc;

    *n = 0;
    if (caller_ra == 0)
        return 0;
    /* gdb's call_site_for_pc: the unit of RA - 1, the site whose pc is RA. */
    rc = parsed_cu_at(d, caller_ra - 1, &cu);
    if (rc < 0 || cu == NULL)
        return rc;
    size_t lo = 0, hi = cu->nsites;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cu->by_pc[mid].pc < caller_ra)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < cu->nsites && cu->by_pc[lo].pc == caller_ra)
        site = &cu->sites[cu->by_pc[lo].idx];
    if (site == NULL)
        return 0;

    s = sw_calloc(1, sizeof *s);
    if (s == NULL)
        return sw_fail(&d->err, SW_ENOMEM, "tail calls in %s: out of memory", d->source);
    s->d = d;
    s->callee = callee_entry;
    search_site(s, site);
    rc = s->rc;
    if (rc == 0 && s->have && s->rlen > 0) {
        /* gdb's pretend_pc: the callees' side innermost first, then the
         * callers' side; all of one chain when every chain is that chain. */
        const struct di_site *order[2 * DI_MAX_CHAIN];
        size_t k = 0;
        if (s->callers + s->callees >= s->rlen) {
            for (size_t i = s->rlen; i-- > 0;)
                order[k++] = s->res[i];
        } else {
            for (size_t i = 0; i < s->callees; i++)
                order[k++] = s->res[s->rlen - 1 - i];
            for (size_t i = s->callers; i-- > 0;)
                order[k++] = s->res[i];
        }
        for (size_t i = 0; i < k && *n < max; i++) {
            out[*n].pc = order[i]->pc;
            out[*n].name = name_at(d, order[i]->pc - 1);
            (*n)++;
        }
    }
    sw_free(s);
    return rc;
}

/* ---- local variables ------------------------------------------------------------------- */

/* Bounds for garbage: types nest a few levels in real programs, and gdb's
 * info locals shows members one level deep here anyway. */
#define DI_MAX_TYPE_DEPTH 8
#define DI_MAX_MEMBERS    256
#define DI_MAX_LOCS       1024
#define DI_MAX_OPS        256

/* Every allocation of one sw_dinfo_func, freed together. */
struct di_blk {
    struct di_blk *next;
    max_align_t data[];
};

struct di_tcache {
    Dwarf_Off off;
    struct sw_dinfo_type *t;
};

struct di_vars {
    struct sw_dinfo *d;
    struct sw_dinfo_func *fn;
    struct di_blk *arena;
    sw_addr vaddr, base; /* the pc, the unit's base address */
    unsigned addr_size;
    struct di_tcache *tc;
    size_t ntc, captc;
    struct sw_dinfo_var *vars;
    unsigned *depth; /* of each var's block: innermost printed first */
    size_t nvars, capvars;
    bool oom;
};

static void *
ar_alloc(struct di_vars *c, size_t n)
{
    struct di_blk *b = sw_calloc(1, sizeof *b + n);
    if (b == NULL) {
        c->oom = true;
        return NULL;
    }
    b->next = c->arena;
    c->arena = b;
    return b->data;
}

static const char *
ar_cat(struct di_vars *c, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = ar_alloc(c, la + lb + 1);
    if (s == NULL)
        return "?";
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return s;
}

static bool
attr_udata(struct sw_dinfo *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *out)
{
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    if (!attr_open(d, die, at, &a))
        return false;
    int rc = dwarf_formudata(a, out, &de);
    attr_close(d, a, de);
    return rc == DW_DLV_OK;
}

static const struct sw_dinfo_type *type_at(struct di_vars *c, Dwarf_Off off, unsigned depth);

static const struct sw_dinfo_type di_type_void = { .kind = SW_DT_OTHER, .name = "void" };
static const struct sw_dinfo_type di_type_unknown = { .kind = SW_DT_OTHER, .name = "?" };

/* The type DIE refers to by DW_AT_type; void when it has none. */
static const struct sw_dinfo_type *
die_type(struct di_vars *c, Dwarf_Die die, unsigned depth)
{
    Dwarf_Off off;
    if (!attr_ref(c->d, die, DW_AT_type, &off))
        return &di_type_void;
    return type_at(c, off, depth + 1);
}

static enum sw_dinfo_tkind
base_kind(Dwarf_Unsigned enc)
{
    switch (enc) {
    case DW_ATE_signed:
        return SW_DT_SIGNED;
    case DW_ATE_unsigned:
        return SW_DT_UNSIGNED;
    case DW_ATE_signed_char:
        return SW_DT_SCHAR;
    case DW_ATE_unsigned_char:
    case DW_ATE_UTF:
        return SW_DT_UCHAR;
    case DW_ATE_boolean:
        return SW_DT_BOOL;
    case DW_ATE_float:
        return SW_DT_FLOAT;
    default:
        return SW_DT_OTHER;
    }
}

/* Members (or enumerators: name and value in OFFSET) of the DIE's children. */
static void
read_members(struct di_vars *c, Dwarf_Die die, struct sw_dinfo_type *t, Dwarf_Half want,
             unsigned depth)
{
    struct sw_dinfo *d = c->d;
    struct sw_dinfo_member tmp[DI_MAX_MEMBERS];
    size_t n = 0;
    Dwarf_Error de = NULL;
    Dwarf_Die child = NULL;

    if (dwarf_child(die, &child, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        return;
    }
    while (child != NULL && n < DI_MAX_MEMBERS) {
        Dwarf_Half tag = 0;
        Dwarf_Die sib = NULL;
        if (dwarf_tag(child, &tag, &de) == DW_DLV_OK && tag == want) {
            struct sw_dinfo_member m = { 0 };
            Dwarf_Unsigned u = 0;
            Dwarf_Signed sv = 0;
            attr_string(d, child, DW_AT_name, &m.name);
            if (want == DW_TAG_enumerator) {
                Dwarf_Attribute a = NULL;
                if (dwarf_attr(child, DW_AT_const_value, &a, &de) == DW_DLV_OK) {
                    if (dwarf_formsdata(a, &sv, &de) == DW_DLV_OK)
                        m.offset = (uint64_t)sv;
                    else if (drop_error(d->dbg, de), de = NULL,
                             dwarf_formudata(a, &u, &de) == DW_DLV_OK)
                        m.offset = u;
                    dwarf_dealloc_attribute(a);
                }
                drop_error(d->dbg, de);
                de = NULL;
                m.type = &di_type_void;
                tmp[n++] = m;
            } else if (!has_attr(d, child, DW_AT_bit_size)) {
                /* Bit fields are left out: one level of whole members. */
                if (attr_udata(d, child, DW_AT_data_member_location, &u))
                    m.offset = u;
                m.type = die_type(c, child, depth);
                tmp[n++] = m;
            }
        } else {
            drop_error(d->dbg, de);
            de = NULL;
        }
        if (dwarf_siblingof_b(d->dbg, child, true, &sib, &de) == DW_DLV_ERROR)
            drop_error(d->dbg, de);
        de = NULL;
        dwarf_dealloc_die(child);
        child = sib;
    }
    if (child != NULL)
        dwarf_dealloc_die(child);
    if (n > 0) {
        struct sw_dinfo_member *v = ar_alloc(c, n * sizeof *v);
        if (v != NULL) {
            memcpy(v, tmp, n * sizeof *v);
            t->members = v;
            t->nmembers = n;
        }
    }
}

/* The element count of an array DIE's first dimension; false when it has
 * more than one, or none is given. */
static bool
array_count(struct di_vars *c, Dwarf_Die die, uint64_t *count)
{
    struct sw_dinfo *d = c->d;
    Dwarf_Error de = NULL;
    Dwarf_Die child = NULL, sib = NULL;
    Dwarf_Unsigned u = 0;
    bool ok = false;

    if (dwarf_child(die, &child, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        return false;
    }
    if (attr_udata(d, child, DW_AT_count, &u)) {
        *count = u;
        ok = true;
    } else if (attr_udata(d, child, DW_AT_upper_bound, &u)) {
        *count = u + 1;
        ok = true;
    }
    if (dwarf_siblingof_b(d->dbg, child, true, &sib, &de) == DW_DLV_ERROR)
        drop_error(d->dbg, de);
    if (sib != NULL) {
        ok = false;
        dwarf_dealloc_die(sib);
    }
    dwarf_dealloc_die(child);
    return ok;
}

static const char *
tagged_name(struct di_vars *c, Dwarf_Die die, const char *prefix)
{
    const char *n = NULL;
    if (!attr_string(c->d, die, DW_AT_name, &n))
        return ar_cat(c, prefix, "{...}");
    return ar_cat(c, prefix, n);
}

static const struct sw_dinfo_type *
type_at(struct di_vars *c, Dwarf_Off off, unsigned depth)
{
    struct sw_dinfo *d = c->d;
    Dwarf_Half tag = 0;
    Dwarf_Error de = NULL;
    Dwarf_Unsigned u = 0;

    for (size_t i = 0; i < c->ntc; i++)
        if (c->tc[i].off == off)
            return c->tc[i].t;
    if (depth > DI_MAX_TYPE_DEPTH)
        return &di_type_unknown;
    Dwarf_Die die = die_at(d, off);
    if (die == NULL)
        return &di_type_unknown;
    if (dwarf_tag(die, &tag, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        dwarf_dealloc_die(die);
        return &di_type_unknown;
    }
    struct sw_dinfo_type *t = ar_alloc(c, sizeof *t);
    if (t == NULL) {
        dwarf_dealloc_die(die);
        return &di_type_unknown;
    }
    t->name = "?";
    /* Cached before its parts, so a structure that points to itself ends. */
    if (c->ntc == c->captc) {
        size_t cap = c->captc ? c->captc * 2 : 32;
        struct di_tcache *v = sw_realloc(c->tc, cap * sizeof *v);
        if (v == NULL) {
            c->oom = true;
            dwarf_dealloc_die(die);
            return &di_type_unknown;
        }
        c->tc = v;
        c->captc = cap;
    }
    c->tc[c->ntc++] = (struct di_tcache){ off, t };
    if (attr_udata(d, die, DW_AT_byte_size, &u))
        t->size = u;

    const struct sw_dinfo_type *under;
    const char *s = NULL;
    switch (tag) {
    case DW_TAG_base_type:
        attr_string(d, die, DW_AT_name, &t->name);
        t->kind = attr_udata(d, die, DW_AT_encoding, &u) ? base_kind(u) : SW_DT_OTHER;
        break;
    case DW_TAG_typedef:
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type:
        under = die_type(c, die, depth);
        *t = *under;
        if (tag == DW_TAG_typedef) {
            if (attr_string(d, die, DW_AT_name, &s))
                t->name = s;
        } else {
            const char *q = tag == DW_TAG_const_type      ? "const"
                            : tag == DW_TAG_volatile_type ? "volatile"
                            : tag == DW_TAG_restrict_type ? "restrict"
                                                          : "_Atomic";
            /* gdb: "const int", but "char * const". */
            t->name = under->kind == SW_DT_POINTER ? ar_cat(c, ar_cat(c, under->name, " "), q)
                                                   : ar_cat(c, ar_cat(c, q, " "), under->name);
        }
        break;
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: {
        const char *star = tag == DW_TAG_pointer_type ? "*" : "&";
        under = die_type(c, die, depth);
        size_t l = strlen(under->name);
        t->kind = SW_DT_POINTER;
        if (t->size == 0)
            t->size = c->addr_size;
        if (under->kind == SW_DT_OTHER && l > 0 && under->name[l - 1] == ')')
            t->name = "void (*)()"; /* a function: its signature is not kept */
        else
            t->name = ar_cat(c, under->name,
                             l > 0 && (under->name[l - 1] == '*' || under->name[l - 1] == '&')
                                 ? star
                                 : (tag == DW_TAG_pointer_type ? " *" : " &"));
        break;
    }
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_class_type:
        t->kind = SW_DT_STRUCT;
        t->name = tagged_name(c, die, tag == DW_TAG_union_type ? "union " : "struct ");
        read_members(c, die, t, DW_TAG_member, depth);
        break;
    case DW_TAG_enumeration_type:
        t->kind = SW_DT_ENUM;
        t->name = tagged_name(c, die, "enum ");
        read_members(c, die, t, DW_TAG_enumerator, depth);
        break;
    case DW_TAG_array_type: {
        char dim[32] = "[]";
        under = die_type(c, die, depth);
        t->target = under;
        if (array_count(c, die, &t->count)) {
            t->kind = SW_DT_ARRAY;
            snprintf(dim, sizeof dim, "[%llu]", (unsigned long long)t->count);
            if (t->size == 0)
                t->size = t->count * under->size;
        }
        t->name = ar_cat(c, ar_cat(c, under->name, " "), dim);
        break;
    }
    case DW_TAG_subroutine_type:
        t->name = "void ()";
        break;
    default:
        break;
    }
    dwarf_dealloc_die(die);
    return t;
}

/* ---- location expressions, encoded again from libdwarf's decoding ---- */

struct di_bytes {
    uint8_t buf[512];
    size_t n;
    bool over;
};

static void
b_put(struct di_bytes *b, uint8_t v)
{
    if (b->n < sizeof b->buf)
        b->buf[b->n++] = v;
    else
        b->over = true;
}

static void
b_uleb(struct di_bytes *b, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        b_put(b, byte | (v ? 0x80 : 0));
    } while (v);
}

static void
b_sleb(struct di_bytes *b, int64_t v)
{
    for (;;) {
        uint8_t byte = v & 0x7f;
        v >>= 7; /* arithmetic on every compiler we build with */
        bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        b_put(b, byte | (done ? 0 : 0x80));
        if (done)
            return;
    }
}

/* One operation.  Fixed-size operands become LEB128 so that the bytes do not
 * depend on the target's byte order: DW_OP_addr keeps its opcode with a ULEB128
 * operand, DW_OP_constNu/s become DW_OP_constu/consts.  Branches (whose
 * offsets would change) and typed operations become 0x00. */
static void
encode_op(struct di_bytes *b, Dwarf_Small op, Dwarf_Unsigned o1, Dwarf_Unsigned o2,
          Dwarf_Unsigned o3)
{
    (void)o3;
    if ((op >= DW_OP_lit0 && op <= DW_OP_lit31) || (op >= DW_OP_reg0 && op <= DW_OP_reg31)) {
        b_put(b, op);
        return;
    }
    if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
        b_put(b, op);
        b_sleb(b, (int64_t)o1);
        return;
    }
    switch (op) {
    case DW_OP_addr:
        b_put(b, op);
        b_uleb(b, o1);
        return;
    case DW_OP_const1u:
    case DW_OP_const2u:
    case DW_OP_const4u:
    case DW_OP_const8u:
    case DW_OP_constu:
        b_put(b, DW_OP_constu);
        b_uleb(b, o1);
        return;
    case DW_OP_const1s:
    case DW_OP_const2s:
    case DW_OP_const4s:
    case DW_OP_const8s:
    case DW_OP_consts:
        b_put(b, DW_OP_consts);
        b_sleb(b, (int64_t)o1);
        return;
    case DW_OP_fbreg:
        b_put(b, op);
        b_sleb(b, (int64_t)o1);
        return;
    case DW_OP_regx:
    case DW_OP_piece:
    case DW_OP_plus_uconst:
        b_put(b, op);
        b_uleb(b, o1);
        return;
    case DW_OP_bregx:
        b_put(b, op);
        b_uleb(b, o1);
        b_sleb(b, (int64_t)o2);
        return;
    case DW_OP_pick:
    case DW_OP_deref_size:
        b_put(b, op);
        b_put(b, (uint8_t)o1);
        return;
    case DW_OP_implicit_value: {
        const uint8_t *p = (const uint8_t *)(uintptr_t)o2;
        b_put(b, op);
        b_uleb(b, o1);
        for (Dwarf_Unsigned i = 0; i < o1 && p != NULL && !b->over; i++)
            b_put(b, p[i]);
        return;
    }
    case DW_OP_entry_value:
    case DW_OP_GNU_entry_value:
        /* The value at entry: only call sites in the caller know it. */
        b_put(b, DW_OP_entry_value);
        b_uleb(b, 0);
        return;
    case DW_OP_deref:
    case DW_OP_dup:
    case DW_OP_drop:
    case DW_OP_over:
    case DW_OP_swap:
    case DW_OP_rot:
    case DW_OP_abs:
    case DW_OP_and:
    case DW_OP_div:
    case DW_OP_minus:
    case DW_OP_mod:
    case DW_OP_mul:
    case DW_OP_neg:
    case DW_OP_not:
    case DW_OP_or:
    case DW_OP_plus:
    case DW_OP_shl:
    case DW_OP_shr:
    case DW_OP_shra:
    case DW_OP_xor:
    case DW_OP_eq:
    case DW_OP_ge:
    case DW_OP_gt:
    case DW_OP_le:
    case DW_OP_lt:
    case DW_OP_ne:
    case DW_OP_nop:
    case DW_OP_call_frame_cfa:
    case DW_OP_stack_value:
        b_put(b, op);
        return;
    default:
        b_put(b, 0x00);
        return;
    }
}

/* The location list (or single expression) of attribute AT of DIE. */
static void
read_locs(struct di_vars *c, Dwarf_Die die, Dwarf_Half at, const struct sw_dinfo_loc **out,
          size_t *nout)
{
    struct sw_dinfo *d = c->d;
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    Dwarf_Loc_Head_c head = NULL;
    Dwarf_Unsigned count = 0;
    struct sw_dinfo_loc *v;
    size_t n = 0;

    *out = NULL;
    *nout = 0;
    if (dwarf_attr(die, at, &a, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        return;
    }
    if (dwarf_get_loclist_c(a, &head, &count, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        dwarf_dealloc_attribute(a);
        return;
    }
    if (count > DI_MAX_LOCS)
        count = DI_MAX_LOCS;
    v = count ? ar_alloc(c, count * sizeof *v) : NULL;
    for (Dwarf_Unsigned i = 0; i < count && v != NULL; i++) {
        Dwarf_Small lle = 0, source = 0;
        Dwarf_Unsigned rawlo = 0, rawhi = 0, nops = 0, eoff = 0, doff = 0;
        Dwarf_Bool unavail = 0;
        Dwarf_Addr lo = 0, hi = 0;
        Dwarf_Locdesc_c desc = NULL;
        struct di_bytes b = { .n = 0 };
        if (dwarf_get_locdesc_entry_d(head, i, &lle, &rawlo, &rawhi, &unavail, &lo, &hi, &nops,
                                      &desc, &source, &eoff, &doff, &de) != DW_DLV_OK) {
            drop_error(d->dbg, de);
            break;
        }
        if (source == 0) {
            lo = 0;
            hi = UINT64_MAX;
        } else if (unavail || lo >= hi || nops == 0) {
            continue; /* base address selections, end markers, empty ranges */
        }
        for (Dwarf_Unsigned k = 0; k < nops && k < DI_MAX_OPS; k++) {
            Dwarf_Small op = 0;
            Dwarf_Unsigned o1 = 0, o2 = 0, o3 = 0, br = 0;
            if (dwarf_get_location_op_value_c(desc, k, &op, &o1, &o2, &o3, &br, &de) != DW_DLV_OK) {
                drop_error(d->dbg, de);
                de = NULL;
                b_put(&b, 0x00);
                break;
            }
            encode_op(&b, op, o1, o2, o3);
        }
        if (b.over)
            b.n = 1, b.buf[0] = 0x00;
        uint8_t *e = b.n ? ar_alloc(c, b.n) : NULL;
        if (b.n && e == NULL)
            break;
        if (e != NULL)
            memcpy(e, b.buf, b.n);
        v[n++] = (struct sw_dinfo_loc){ .lo = lo, .hi = hi, .expr = e, .len = b.n };
    }
    dwarf_loc_head_c_dealloc(head);
    dwarf_dealloc_attribute(a);
    *out = v;
    *nout = n;
}

/* DW_AT_const_value as a DW_OP_implicit_value of the type's size. */
static void
read_const_value(struct di_vars *c, Dwarf_Die die, struct sw_dinfo_var *var)
{
    struct sw_dinfo *d = c->d;
    Dwarf_Attribute a = NULL;
    Dwarf_Error de = NULL;
    Dwarf_Signed sv = 0;
    Dwarf_Block *blk = NULL;
    struct di_bytes b = { .n = 0 };

    if (dwarf_attr(die, DW_AT_const_value, &a, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        return;
    }
    b_put(&b, DW_OP_implicit_value);
    if (dwarf_formblock(a, &blk, &de) == DW_DLV_OK) {
        b_uleb(&b, blk->bl_len);
        for (Dwarf_Unsigned i = 0; i < blk->bl_len && !b.over; i++)
            b_put(&b, ((const uint8_t *)blk->bl_data)[i]);
        dwarf_dealloc(d->dbg, blk, DW_DLA_BLOCK);
    } else if (drop_error(d->dbg, de), de = NULL,
               dwarf_formsdata(a, &sv, &de) == DW_DLV_OK && var->type->size <= 8) {
        /* A constant: the value in host order, marked by a zero length
         * followed by the SLEB128 value (walker/locals.c stores it in the
         * target's order). */
        b_uleb(&b, 0);
        b_sleb(&b, sv);
    } else {
        drop_error(d->dbg, de);
        b.n = 0;
    }
    dwarf_dealloc_attribute(a);
    if (b.n == 0 || b.over)
        return;
    struct sw_dinfo_loc *l = ar_alloc(c, sizeof *l);
    uint8_t *e = ar_alloc(c, b.n);
    if (l == NULL || e == NULL)
        return;
    memcpy(e, b.buf, b.n);
    *l = (struct sw_dinfo_loc){ .lo = 0, .hi = UINT64_MAX, .expr = e, .len = b.n };
    var->locs = l;
    var->nlocs = 1;
}

static void
add_var(struct di_vars *c, Dwarf_Die die, bool param, unsigned depth)
{
    struct sw_dinfo *d = c->d;
    struct sw_dinfo_var v = { .param = param };
    Dwarf_Die cur = die, owned = NULL;
    const char *s;

    if (attr_flag(d, die, DW_AT_declaration))
        return; /* an extern declared inside the function: not a local */
    /* Name and type may be on the abstract instance. */
    for (int hop = 0; hop < DI_MAX_HOPS && cur != NULL; hop++) {
        Dwarf_Off off;
        if (v.name == NULL && attr_string(d, cur, DW_AT_name, &s))
            v.name = s;
        if (v.type == NULL && has_attr(d, cur, DW_AT_type))
            v.type = die_type(c, cur, 0);
        if ((v.name && v.type) || !attr_ref(d, cur, DW_AT_abstract_origin, &off))
            break;
        Dwarf_Die next = die_at(d, off);
        if (owned)
            dwarf_dealloc_die(owned);
        owned = cur = next;
    }
    if (owned)
        dwarf_dealloc_die(owned);
    if (v.name == NULL)
        return; /* gdb does not list unnamed parameters */
    if (v.type == NULL)
        v.type = &di_type_unknown;
    if (has_attr(d, die, DW_AT_location))
        read_locs(c, die, DW_AT_location, &v.locs, &v.nlocs);
    else
        read_const_value(c, die, &v);
    if (c->nvars == c->capvars) {
        size_t cap = c->capvars ? c->capvars * 2 : 16;
        struct sw_dinfo_var *nv = sw_realloc(c->vars, cap * sizeof *nv);
        unsigned *nd = nv ? sw_realloc(c->depth, cap * sizeof *nd) : NULL;
        if (nv)
            c->vars = nv;
        if (nd == NULL) {
            c->oom = true;
            return;
        }
        c->depth = nd;
        c->capvars = cap;
    }
    c->vars[c->nvars] = v;
    c->depth[c->nvars++] = param ? 0 : depth + 1;
}

static void
walk_scope(struct di_vars *c, Dwarf_Die parent, unsigned depth)
{
    struct sw_dinfo *d = c->d;
    Dwarf_Error de = NULL;
    Dwarf_Die child = NULL;

    if (depth >= DI_MAX_DEPTH || dwarf_child(parent, &child, &de) != DW_DLV_OK) {
        drop_error(d->dbg, de);
        return;
    }
    while (child != NULL && !c->oom) {
        Dwarf_Half tag = 0;
        Dwarf_Die sib = NULL;
        if (dwarf_tag(child, &tag, &de) != DW_DLV_OK) {
            drop_error(d->dbg, de);
            de = NULL;
        } else if (tag == DW_TAG_formal_parameter && depth == 0) {
            add_var(c, child, true, depth);
        } else if (tag == DW_TAG_variable) {
            add_var(c, child, false, depth);
        } else if (tag == DW_TAG_lexical_block) {
            struct di_rbuf rb = { 0 };
            bool in = false;
            if (die_ranges(d, child, c->base, &rb) < 0)
                c->oom = true;
            for (size_t i = 0; i < rb.n; i++)
                in = in || (c->vaddr >= rb.v[i].lo && c->vaddr < rb.v[i].hi);
            /* A block without ranges is transparent, as for scopes. */
            if (in || rb.n == 0)
                walk_scope(c, child, rb.n == 0 ? depth : depth + 1);
            sw_free(rb.v);
        }
        if (dwarf_siblingof_b(d->dbg, child, true, &sib, &de) == DW_DLV_ERROR)
            drop_error(d->dbg, de);
        de = NULL;
        dwarf_dealloc_die(child);
        child = sib;
    }
    if (child != NULL)
        dwarf_dealloc_die(child);
}

void
sw_dinfo_func_free(struct sw_dinfo_func *fn)
{
    if (fn == NULL)
        return;
    for (struct di_blk *b = fn->arena, *next; b != NULL; b = next) {
        next = b->next;
        sw_free(b);
    }
    sw_free(fn);
}

int
sw_dinfo_frame_vars(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_func **out)
{
    struct di_vars c = { .d = d, .vaddr = vaddr };
    struct di_cu *cu;
    Dwarf_Half asize = 8;
    Dwarf_Error de = NULL;
    int rc = parsed_cu_at(d, vaddr, &cu);

    if (rc < 0)
        return rc;
    if (cu == NULL)
        return SW_ENOENT;
    uint32_t f = func_of(cu, innermost_scope(cu, vaddr));
    if (f == DI_NONE)
        return SW_ENOENT;
    Dwarf_Die die = die_at(d, cu->scopes[f].die);
    if (die == NULL)
        return sw_fail(&d->err, SW_EBADELF, "reading debug info of %s: no DIE at 0x%llx", d->source,
                       (unsigned long long)cu->scopes[f].die);
    Dwarf_Die cudie = die_at(d, cu->off);
    Dwarf_Addr base = 0;
    if (cudie != NULL) {
        if (dwarf_lowpc(cudie, &base, &de) == DW_DLV_OK)
            c.base = base;
        drop_error(d->dbg, de);
        de = NULL;
        dwarf_dealloc_die(cudie);
    }
    if (dwarf_get_die_address_size(die, &asize, &de) != DW_DLV_OK)
        drop_error(d->dbg, de);
    c.addr_size = asize;

    struct sw_dinfo_func *fn = sw_calloc(1, sizeof *fn);
    if (fn == NULL) {
        dwarf_dealloc_die(die);
        return sw_fail(&d->err, SW_ENOMEM, "local variables in %s: out of memory", d->source);
    }
    fn->name = cu->scopes[f].name;
    fn->entry = cu->ranges.v[cu->scopes[f].first].lo;
    read_locs(&c, die, DW_AT_frame_base, &fn->base, &fn->nbase);
    walk_scope(&c, die, 0);
    dwarf_dealloc_die(die);

    struct sw_dinfo_var *vars = c.nvars ? ar_alloc(&c, c.nvars * sizeof *vars) : NULL;
    if (vars != NULL) {
        /* Parameters, then locals from the innermost block out (gdb's order). */
        size_t k = 0;
        unsigned maxd = 0;
        for (size_t i = 0; i < c.nvars; i++)
            if (c.depth[i] == 0)
                vars[k++] = c.vars[i];
            else if (c.depth[i] > maxd)
                maxd = c.depth[i];
        for (unsigned dep = maxd; dep > 0; dep--)
            for (size_t i = 0; i < c.nvars; i++)
                if (c.depth[i] == dep)
                    vars[k++] = c.vars[i];
        fn->vars = vars;
        fn->nvars = k;
    }
    fn->arena = c.arena;
    sw_free(c.vars);
    sw_free(c.depth);
    sw_free(c.tc);
    if (c.oom) {
        sw_dinfo_func_free(fn);
        return sw_fail(&d->err, SW_ENOMEM, "local variables in %s: out of memory", d->source);
    }
    *out = fn;
    return 0;
}
