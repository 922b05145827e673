/* walker/elfsyms.c -- the ELF cache's symbol tables: from an address to a name.
 *
 * Function symbols merged from .symtab, .dynsym and the separate debug file,
 * read on first use.  Not the files themselves (elfcache.c).
 */
#include "walker/elf_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* ---- symbols ------------------------------------------------------------ */

/* NAME without its "@VERSION" / "@@VERSION" suffix ("__libc_start_main@@GLIBC_2.34"
 * in a debug file's .symtab); a copy only when a suffix is there. */
static const char *
plain_name(struct sw_elf *e, const char *name)
{
    const char *at = strchr(name, '@');
    if (at == NULL || at == name)
        return name;
    size_t n = (size_t)(at - name) + 1;
    struct name_block *b = e->names;
    if (b == NULL || b->cap - b->used < n) {
        size_t cap = n > NAME_BLOCK_SIZE ? n : NAME_BLOCK_SIZE;
        b = sw_malloc(sizeof *b + cap);
        if (b == NULL)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = e->names;
        e->names = b;
    }
    char *s = b->data + b->used;
    memcpy(s, name, n - 1);
    s[n - 1] = '\0';
    b->used += n;
    return s;
}

/* The entry point of a PowerPC64 ELFv1 function whose symbol points at its
 * descriptor in .opd (the first word of the descriptor is the code address). */
static sw_addr
opd_entry(struct sw_elf *e, const GElf_Shdr *opd, sw_addr value)
{
    uint8_t w[8];
    uint64_t v = 0;
    if (opd == NULL || value < opd->sh_addr || value - opd->sh_addr >= opd->sh_size ||
        sw_elf_read(e, value, w, 8) != 0)
        return value;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)w[e->big_endian ? i : 7 - i] << (8 * (7 - i));
    return v;
}

/* Whether section SHNDX of ELF holds code (allocated and executable). */
static bool
is_code_section(Elf *elf, size_t shndx)
{
    GElf_Shdr sh;
    Elf_Scn *scn = shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
    return scn != NULL && gelf_getshdr(scn, &sh) != NULL &&
           (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR);
}

/* Function symbols, and labels: STT_NOTYPE symbols in code, which assembly
 * entry points are (ld.so's _start, in its debug file's .symtab).  gdb names
 * such code from its minimal symbols, which include them.  Linker-made
 * markers ($x/$d mapping symbols on Arm, .L locals) are not labels. */
static int
add_symbols(struct sw_elf *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, enum sym_src src,
            const GElf_Shdr *opd)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (d == NULL || sh->sh_entsize == 0)
        return 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    size_t fsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    if (fsize == 0 || n > d->d_size / fsize)
        n = fsize ? d->d_size / fsize : 0;
    for (size_t i = 1; i < n; i++) {
        GElf_Sym s;
        if (gelf_getsym(d, (int)i, &s) == NULL)
            continue;
        int type = GELF_ST_TYPE(s.st_info);
        bool label = type == STT_NOTYPE;
        if ((type != STT_FUNC && type != STT_GNU_IFUNC && !label) || s.st_shndx == SHN_UNDEF)
            continue;
        if (label && !is_code_section(elf, s.st_shndx))
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
        if (name == NULL || name[0] == '\0' || (label && (name[0] == '$' || name[0] == '.')))
            continue;
        name = plain_name(e, name);
        if (name == NULL)
            return SW_ENOMEM;
        if (e->nsyms == e->capsyms) {
            size_t cap = e->capsyms ? e->capsyms * 2 : 256;
            struct elf_sym *ns = sw_realloc(e->syms, cap * sizeof *ns);
            if (ns == NULL)
                return SW_ENOMEM;
            e->syms = ns;
            e->capsyms = cap;
        }
        struct elf_sym *o = &e->syms[e->nsyms];
        o->name = name;
        o->value = opd ? opd_entry(e, opd, s.st_value) : s.st_value;
        o->size = s.st_size;
        o->bind = GELF_ST_BIND(s.st_info) == STB_LOCAL  ? 2
                  : GELF_ST_BIND(s.st_info) == STB_WEAK ? 1
                                                        : 0;
        o->label = label;
        o->src = (uint8_t)src;
        o->order = (uint32_t)e->nsyms++;
    }
    return 0;
}

/* At one address: GLOBAL before WEAK before LOCAL (glibc's `raise` over its
 * weak alias `gsignal`, as gdb names it), then .symtab and the debug file's
 * .symtab (the full table) before .dynsym (the exported subset). */
static int
sym_rank(const struct elf_sym *s)
{
    return s->bind * 2 + (s->src == SRC_DYNSYM);
}

static int
sym_cmp(const void *a, const void *b)
{
    const struct elf_sym *x = a, *y = b;
    if (x->label != y->label)
        return x->label - y->label;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if (sym_rank(x) != sym_rank(y))
        return sym_rank(x) - sym_rank(y);
    return x->order < y->order ? -1 : x->order > y->order;
}

/* What sym_cmp orders by, as one key: LABEL, VALUE, then TIE (rank, order). */
struct sym_key {
    uint64_t value;
    uint32_t tie; /* sym_rank << 28 | order */
    uint32_t idx; /* in e->syms */
    uint8_t label;
};

/* Byte D (0: least significant) of what K sorts by, lowest first: TIE's
 * four bytes, VALUE's eight, LABEL. */
static unsigned
key_byte(const struct sym_key *k, unsigned d)
{
    if (d < 4)
        return (k->tie >> (8 * d)) & 0xff;
    if (d < 12)
        return (unsigned)(k->value >> (8 * (d - 4))) & 0xff;
    return k->label;
}

/* E->syms in sym_cmp's order, by a least-significant-digit radix sort: for
 * libc's ten thousand symbols, qsort's n log n calls through a function
 * pointer cost two milliseconds a run, this a fraction of one.  Falls back
 * on qsort without the memory for the keys, or past 2^28 symbols. */
static void
sort_symbols(struct sw_elf *e)
{
    size_t n = e->nsyms;
    struct sym_key *a = n < (1u << 28) ? sw_malloc(2 * n * sizeof *a) : NULL;
    struct elf_sym *out = a ? sw_malloc(n * sizeof *out) : NULL;
    if (out == NULL) {
        sw_free(a);
        qsort(e->syms, n, sizeof *e->syms, sym_cmp);
        return;
    }
    struct sym_key *b = a + n;
    for (size_t i = 0; i < n; i++) {
        const struct elf_sym *s = &e->syms[i];
        a[i] = (struct sym_key){ s->value, (uint32_t)sym_rank(s) << 28 | s->order, (uint32_t)i,
                                 s->label };
    }
    for (unsigned d = 0; d < 13; d++) {
        size_t count[257] = { 0 };
        for (size_t i = 0; i < n; i++)
            count[key_byte(&a[i], d) + 1]++;
        if (count[key_byte(&a[0], d) + 1] == n)
            continue; /* every key has this byte: the pass would change nothing */
        for (unsigned v = 0; v < 256; v++)
            count[v + 1] += count[v];
        for (size_t i = 0; i < n; i++)
            b[count[key_byte(&a[i], d)]++] = a[i];
        struct sym_key *t = a;
        a = b;
        b = t;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = e->syms[a[i].idx];
    memcpy(e->syms, out, n * sizeof *out);
    sw_free(a < b ? a : b);
    sw_free(out);
}

static int
load_table(struct sw_elf *e, Elf *elf, GElf_Word type, enum sym_src src, const GElf_Shdr *opd)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != type)
            continue;
        int rc = add_symbols(e, elf, scn, &sh, src, opd);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static bool
has_section_type(Elf *elf, GElf_Word type)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == type)
            return true;
    return false;
}

/* Read the symbol tables on first use.  The debug file's .symtab is read
 * only when the file itself has none: a file that kept its .symtab has the
 * same symbols as its debug file. */
static int
load_symbols(struct sw_elf *e)
{
    GElf_Shdr opd_sh;
    const GElf_Shdr *opd = NULL;

    if (e->syms_state != 0)
        return e->syms_state < 0 ? e->syms_state : 0;
    /* PowerPC64 ELFv1 (e_flags ABI 0 or 1): function symbols name descriptors. */
    if (e->machine == EM_PPC64 && (e->flags & 3) != 2 &&
        sw_elf_find_section(e->main.elf, ".opd", &opd_sh) != NULL)
        opd = &opd_sh;
    int rc = load_table(e, e->main.elf, SHT_SYMTAB, SRC_SYMTAB, opd);
    if (rc == 0)
        rc = load_table(e, e->main.elf, SHT_DYNSYM, SRC_DYNSYM, opd);
    if (rc == 0 && e->dbg.elf && !has_section_type(e->main.elf, SHT_SYMTAB))
        rc = load_table(e, e->dbg.elf, SHT_SYMTAB, SRC_DEBUG, opd);
    if (rc == 0 && e->nsyms > 0) {
        sort_symbols(e);
        e->maxend = sw_malloc(e->nsyms * sizeof *e->maxend);
        if (e->maxend == NULL)
            rc = SW_ENOMEM;
    }
    if (rc != 0) {
        /* Not sticky: a later call may find the memory. */
        sw_free(e->syms);
        e->syms = NULL;
        e->nsyms = e->capsyms = 0;
        return rc;
    }
    e->nfuncs = 0;
    while (e->nfuncs < e->nsyms && !e->syms[e->nfuncs].label)
        e->nfuncs++;
    for (size_t i = 0; i < e->nfuncs; i++) {
        sw_addr end = e->syms[i].value + e->syms[i].size;
        if (end < e->syms[i].value)
            end = UINT64_MAX;
        e->maxend[i] = i > 0 && e->maxend[i - 1] > end ? e->maxend[i - 1] : end;
    }
    sw_debug(SW_DBG_CACHE, "elf: %s: %zu function symbols, %zu labels", e->path, e->nfuncs,
             e->nsyms - e->nfuncs);
    e->syms_state = 1;
    return 0;
}

/* End of the PT_LOAD segment holding VADDR (a sizeless symbol ends there at
 * the latest); VADDR itself if none holds it. */
static sw_addr
segment_end(const struct sw_elf *e, sw_addr vaddr)
{
    for (size_t i = 0; i < e->nsegs; i++)
        if (vaddr >= e->segs[i].vaddr && vaddr - e->segs[i].vaddr < e->segs[i].memsz)
            return e->segs[i].vaddr + e->segs[i].memsz;
    return vaddr;
}

/* First index in [LO, HI) whose symbol starts above VADDR (HI if none). */
static size_t
first_above(const struct sw_elf *e, size_t lo, size_t hi, sw_addr vaddr)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->syms[mid].value <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The function covering VADDR, or NULL. */
static const struct elf_sym *
function_at(const struct sw_elf *e, sw_addr vaddr)
{
    size_t lo = first_above(e, 0, e->nfuncs, vaddr);
    if (lo == 0)
        return NULL;
    sw_addr top = e->syms[lo - 1].value;
    sw_addr next = lo < e->nfuncs ? e->syms[lo].value : segment_end(e, top);
    const struct elf_sym *best = NULL;
    for (size_t j = lo; j-- > 0;) {
        const struct elf_sym *s = &e->syms[j];
        if (best != NULL && s->value != best->value)
            break;
        if (best == NULL && s->value != top && e->maxend[j] <= vaddr)
            break; /* nothing at or below j reaches VADDR */
        bool covers = s->size ? vaddr - s->value < s->size : (s->value == top && vaddr < next);
        if (covers)
            best = s; /* lower index at the same address ranks higher */
    }
    return best;
}

/* The label covering VADDR where no function does: the nearest label at or
 * below it, which reaches up to the next label, the next function or the
 * end of its segment, whichever comes first.  NULL if none. */
static const struct elf_sym *
label_at(const struct sw_elf *e, sw_addr vaddr)
{
    size_t lo = first_above(e, e->nfuncs, e->nsyms, vaddr);
    if (lo == e->nfuncs)
        return NULL;
    size_t k = lo - 1;
    while (k > e->nfuncs && e->syms[k - 1].value == e->syms[k].value)
        k--; /* the first at that address ranks highest */
    const struct elf_sym *s = &e->syms[k];
    sw_addr next = lo < e->nsyms ? e->syms[lo].value : segment_end(e, s->value);
    size_t f = first_above(e, 0, e->nfuncs, s->value);
    if (f < e->nfuncs && e->syms[f].value < next)
        next = e->syms[f].value;
    if (s->size ? vaddr - s->value < s->size : vaddr < next)
        return s;
    return NULL;
}

/* The nearest start wins; at one address, GLOBAL/WEAK before LOCAL, then
 * .symtab or the debug file before .dynsym (the order sym_cmp sorted in).
 * Labels only where no function covers VADDR, so a label inside a function
 * never hides it.
 * gdb names the function from DWARF when it can, so for aliases its name may
 * differ from ours: `raise` here, `__GI_raise` there; `__libc_start_main`
 * here, `__libc_start_main_impl` there.  Two names of one entry address are
 * the same function (the integration tests compare them that way). */
int
sw_elf_symbol_at(struct sw_elf *e, sw_addr vaddr, struct sw_elfsym *out)
{
    int rc = load_symbols(e);
    if (rc != 0)
        return rc;
    const struct elf_sym *best = function_at(e, vaddr);
    if (best == NULL)
        best = label_at(e, vaddr);
    if (best == NULL)
        return SW_ENOSYM;
    out->name = best->name;
    out->value = best->value;
    out->size = best->size;
    return 0;
}

/* The symbol named NAME: a function before a label, then by table and
 * order; with BIND, a GLOBAL or WEAK one before a LOCAL one first. */
static int
symbol_by_name(struct sw_elf *e, const char *name, bool bind, struct sw_elfsym *out, bool *local)
{
    int rc = load_symbols(e);
    if (rc != 0)
        return rc;
    const struct elf_sym *best = NULL;
    for (size_t i = 0; i < e->nsyms; i++) {
        const struct elf_sym *s = &e->syms[i];
        if (strcmp(s->name, name) != 0)
            continue;
        bool sl = s->bind == 2, bl = best != NULL && best->bind == 2;
        if (best == NULL || (bind && sl != bl && !sl) ||
            ((!bind || sl == bl) &&
             (s->label < best->label ||
              (s->label == best->label &&
               (s->src < best->src || (s->src == best->src && s->order < best->order))))))
            best = s;
    }
    if (best == NULL)
        return SW_ENOSYM;
    out->name = best->name;
    out->value = best->value;
    out->size = best->size;
    if (local != NULL)
        *local = best->bind == 2;
    return 0;
}

int
sw_elf_symbol_by_name(struct sw_elf *e, const char *name, struct sw_elfsym *out)
{
    return symbol_by_name(e, name, false, out, NULL);
}

int
sw_elf_symbol_by_name_bind(struct sw_elf *e, const char *name, struct sw_elfsym *out, bool *local)
{
    return symbol_by_name(e, name, true, out, local);
}
