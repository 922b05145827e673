/* elf/symbols.c -- the ELF cache's symbol tables: from an address to a name.
 *
 * The name of an address is the one gdb's minimal symbols give it: the same
 * tables (gdb/elfread.c), the same order (gdb/minsyms.c sorts one address's
 * names with strcmp) and the same choice (lookup_minimal_symbol_by_pc_section),
 * so that a frame gdb names from its symbol table has the same name here.
 * Read on first use.  Not the files themselves (elf/elf.c), not DWARF.
 */
#include "elf/elf_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define NO_INDEX UINT32_MAX

/* ---- which symbols ------------------------------------------------------- */

/* Whether section SHNDX of ELF holds code (allocated and executable: BFD's
 * SEC_CODE, and only allocated sections can hold a pc). */
static bool
is_code_section(Elf *elf, size_t shndx)
{
    GElf_Shdr sh;
    Elf_Scn *scn = shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
    return scn != NULL && gelf_getshdr(scn, &sh) != NULL &&
           (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR);
}

/* Arm and AArch64 mapping symbols ($x, $d, $a, $t, optionally ".suffix"):
 * BFD's target-special symbols, which gdb never records. */
static bool
is_mapping_symbol(uint16_t machine, const char *name)
{
    if (name[0] != '$' || name[1] == '\0' || (name[2] != '\0' && name[2] != '.'))
        return false;
    if (machine == EM_AARCH64)
        return name[1] == 'x' || name[1] == 'd';
    if (machine == EM_ARM)
        return name[1] == 'a' || name[1] == 't' || name[1] == 'd';
    return false;
}

static struct elf_sym *
tab_push(struct elf_symtab *t)
{
    struct elf_sym *v = sw_grow(t->syms, &t->cap, t->n + 1, sizeof *v, 256);
    if (v == NULL)
        return NULL;
    t->syms = v;
    struct elf_sym *s = &t->syms[t->n];
    memset(s, 0, sizeof *s);
    s->order = (uint32_t)t->n++;
    return s;
}

/* The symbols of table SCN that gdb makes code minimal symbols of
 * (elf_symtab_read): every type but FILE and SECTION, defined in an
 * executable section, bound GLOBAL, WEAK, GNU_UNIQUE or LOCAL; not local
 * ".L" labels nor "$L" ones, nor mapping symbols.  A versioned name
 * ("memcpy@@GLIBC_2.14") is kept whole: gdb also records the bare name, but
 * sizeless and sorted before it, so it never names an address (name lookups
 * match the bare name, sw_elf_symbol_by_name). */
static int
add_symbols(struct sw_elf *e, struct elf_symtab *t, Elf_Scn *scn, const GElf_Shdr *sh)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (d == NULL || sh->sh_entsize == 0)
        return 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    size_t fsize = gelf_fsize(t->elf, ELF_T_SYM, 1, EV_CURRENT);
    if (fsize == 0 || n > d->d_size / fsize)
        n = fsize ? d->d_size / fsize : 0;
    for (size_t i = 1; i < n; i++) {
        GElf_Sym s;
        if (gelf_getsym(d, (int)i, &s) == NULL)
            continue;
        int type = GELF_ST_TYPE(s.st_info), bind = GELF_ST_BIND(s.st_info);
        if (type == STT_FILE || type == STT_SECTION || !is_code_section(t->elf, s.st_shndx))
            continue;
        if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE && bind != STB_LOCAL)
            continue;
        const char *name = elf_strptr(t->elf, sh->sh_link, s.st_name);
        if (name == NULL || name[0] == '\0' || is_mapping_symbol(e->machine, name))
            continue;
        if (bind == STB_LOCAL &&
            ((name[0] == '.' && name[1] == 'L') || (name[0] == '$' && name[1] == 'L')))
            continue;
        struct elf_sym *o = tab_push(t);
        if (o == NULL)
            return SW_ENOMEM;
        o->name = name;
        /* A Thumb function's symbol has bit 0 set (AAELF32 5.5.3); its code
         * starts at the even address, as gdb's arm_elf_make_msymbol_special
         * records it. */
        o->value =
            e->machine == EM_ARM && type == STT_FUNC ? s.st_value & ~(GElf_Addr)1 : s.st_value;
        o->size = s.st_size;
        o->shndx = s.st_shndx;
        o->local = bind == STB_LOCAL;
        o->ifunc = type == STT_GNU_IFUNC;
    }
    return 0;
}

/* The first section of type TYPE with at least one symbol, or NULL. */
static Elf_Scn *
table_section(Elf *elf, GElf_Word type, GElf_Shdr *sh)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL)
        if (gelf_getshdr(scn, sh) != NULL && sh->sh_type == type && sh->sh_entsize != 0 &&
            sh->sh_size / sh->sh_entsize > 1)
            return scn;
    return NULL;
}

/* ---- PowerPC64 ELFv1: entries named after descriptors -------------------- */

/* An ELFv1 function symbol names its descriptor in .opd; gdb names the code
 * with BFD's synthetic ".name" symbols (ppc64_elf_get_synthetic_symtab): one
 * per descriptor address, the name of the first of its symbols in BFD's
 * order (GLOBAL, then FUNC, then not WEAK, then .dynsym, then table order),
 * at the entry the descriptor's first word holds, only where no code symbol
 * starts already; gdb gives it the size of the symbol it came from
 * (ppc64_elf_make_msymbol_special).  Here the name has no dot. */
struct opd_cand {
    const char *name;
    sw_addr value, size; /* descriptor address, symbol size */
    uint32_t order;
    uint8_t rank; /* BFD's preference, lowest first */
    uint8_t local, ifunc;
};

static int
opd_cmp(const void *a, const void *b)
{
    const struct opd_cand *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Descriptor symbols of table SCN of ELF into *V (N, CAP), ORDER counting on. */
static int
opd_collect(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const GElf_Shdr *opd, bool dynamic,
            struct opd_cand **v, size_t *n, size_t *cap, uint32_t *order)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    size_t fsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    size_t cnt = d && fsize ? d->d_size / fsize : 0;
    for (size_t i = 1; i < cnt; i++) {
        GElf_Sym s;
        if (gelf_getsym(d, (int)i, &s) == NULL)
            continue;
        int type = GELF_ST_TYPE(s.st_info), bind = GELF_ST_BIND(s.st_info);
        (*order)++;
        if (type != STT_FUNC && type != STT_NOTYPE && type != STT_GNU_IFUNC)
            continue;
        if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || s.st_value < opd->sh_addr ||
            s.st_value - opd->sh_addr + 8 > opd->sh_size)
            continue;
        Elf_Scn *in = elf_getscn(elf, s.st_shndx);
        GElf_Shdr ish;
        if (in == NULL || gelf_getshdr(in, &ish) == NULL || ish.sh_addr != opd->sh_addr)
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
        if (name == NULL || name[0] == '\0')
            continue;
        if (*n == *cap) {
            size_t c = *cap ? *cap * 2 : 256;
            struct opd_cand *nv = sw_realloc(*v, c * sizeof *nv);
            if (nv == NULL)
                return SW_ENOMEM;
            *v = nv;
            *cap = c;
        }
        (*v)[(*n)++] = (struct opd_cand){
            .name = name,
            .value = s.st_value,
            .size = s.st_size,
            .order = *order,
            .rank = (uint8_t)((bind != STB_GLOBAL) << 3 | (type == STT_NOTYPE) << 2 |
                              (bind == STB_WEAK) << 1 | !dynamic),
            .local = bind == STB_LOCAL,
            .ifunc = type == STT_GNU_IFUNC,
        };
    }
    return 0;
}

/* The code section of E's file holding VADDR: its index, 0 if none. */
static uint32_t
code_section_at(Elf *elf, sw_addr vaddr)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) != NULL &&
            (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) &&
            vaddr >= sh.sh_addr && vaddr - sh.sh_addr < sh.sh_size)
            return (uint32_t)elf_ndxscn(scn);
    return 0;
}

static bool
tab_has_value(const struct elf_symtab *t, size_t n, sw_addr value)
{
    for (size_t i = 0; i < n; i++) /* the file's own code symbols: few on ELFv1 */
        if (t->syms[i].value == value)
            return true;
    return false;
}

static int
add_opd_entries(struct sw_elf *e, struct elf_symtab *t, const GElf_Shdr *opd)
{
    struct opd_cand *v = NULL;
    size_t n = 0, cap = 0, ncode = t->n;
    uint32_t order = 0;
    GElf_Shdr sh;
    Elf_Scn *scn;
    int rc = 0;

    if ((scn = table_section(e->main.elf, SHT_SYMTAB, &sh)) != NULL)
        rc = opd_collect(e->main.elf, scn, &sh, opd, false, &v, &n, &cap, &order);
    if (rc == 0 && (scn = table_section(e->main.elf, SHT_DYNSYM, &sh)) != NULL)
        rc = opd_collect(e->main.elf, scn, &sh, opd, true, &v, &n, &cap, &order);
    if (rc == 0 && n > 0)
        qsort(v, n, sizeof *v, opd_cmp);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint8_t w[8];
        uint64_t ent = 0;
        if (sw_elf_read(e, v[i].value, w, 8) != 0)
            continue;
        for (int k = 0; k < 8; k++)
            ent |= (uint64_t)w[e->big_endian ? k : 7 - k] << (8 * (7 - k));
        struct elf_sym *a = tab_push(&e->aliases);
        if (a == NULL) {
            rc = SW_ENOMEM;
            break;
        }
        *a = (struct elf_sym){ .name = v[i].name,
                               .value = ent,
                               .size = v[i].size,
                               .order = a->order,
                               .local = v[i].local };
        if (i > 0 && v[i].value == v[i - 1].value)
            continue; /* BFD keeps the first of one descriptor's names */
        uint32_t shndx = code_section_at(e->main.elf, ent);
        if (shndx == 0 || tab_has_value(t, ncode, ent))
            continue;
        struct elf_sym *o = tab_push(t);
        if (o == NULL) {
            rc = SW_ENOMEM;
            break;
        }
        o->name = v[i].name;
        o->value = ent;
        o->size = v[i].size;
        o->shndx = shndx;
        o->local = v[i].local;
        o->ifunc = v[i].ifunc;
    }
    sw_free(v);
    return rc;
}

/* ---- sorting ------------------------------------------------------------- */

/* gdb's minimal_symbol_is_less_than: address, then name. */
static int
sym_cmp(const struct elf_sym *x, const struct elf_sym *y)
{
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* T's symbols by address with a stable least-significant-digit radix sort
 * (libc's ten thousand symbols: qsort's calls through a function pointer
 * cost milliseconds a run), then each address's few names by strcmp.
 * SW_ENOMEM without the scratch memory. */
static int
sort_table(struct elf_symtab *t)
{
    size_t n = t->n;
    struct elf_sym *a = t->syms, *b = sw_malloc(n * sizeof *b);
    if (b == NULL)
        return SW_ENOMEM;
    for (unsigned d = 0; d < 8; d++) {
        size_t count[257] = { 0 };
        for (size_t i = 0; i < n; i++)
            count[((a[i].value >> (8 * d)) & 0xff) + 1]++;
        if (count[((a[0].value >> (8 * d)) & 0xff) + 1] == n)
            continue; /* every value has this byte: the pass would change nothing */
        for (unsigned v = 0; v < 256; v++)
            count[v + 1] += count[v];
        for (size_t i = 0; i < n; i++)
            b[count[(a[i].value >> (8 * d)) & 0xff]++] = a[i];
        struct elf_sym *tmp = a;
        a = b;
        b = tmp;
    }
    if (a != t->syms) {
        memcpy(t->syms, a, n * sizeof *a);
        b = a;
    }
    sw_free(b);
    for (size_t i = 1; i < n; i++) { /* insertion sort: runs of one address are short */
        struct elf_sym s = t->syms[i];
        size_t j = i;
        while (j > 0 && sym_cmp(&s, &t->syms[j - 1]) < 0) {
            t->syms[j] = t->syms[j - 1];
            j--;
        }
        t->syms[j] = s;
    }
    return 0;
}

/* gdb's compact_minimal_symbols: one of several entries with the same
 * address, section and name (a sized one where there is one). */
static void
compact_table(struct elf_symtab *t)
{
    size_t out = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct elf_sym *s = &t->syms[i];
        if (out > 0) {
            struct elf_sym *p = &t->syms[out - 1];
            if (p->value == s->value && p->shndx == s->shndx && strcmp(p->name, s->name) == 0) {
                if (p->size == 0 && s->size != 0)
                    *p = *s;
                continue;
            }
        }
        t->syms[out++] = *s;
    }
    t->n = out;
}

static int
finish_table(struct elf_symtab *t)
{
    if (t->n == 0)
        return 0;
    int rc = sort_table(t);
    if (rc != 0)
        return rc;
    compact_table(t);
    t->prev_sized = sw_malloc(t->n * sizeof *t->prev_sized);
    if (t->prev_sized == NULL)
        return SW_ENOMEM;
    for (size_t i = 0; i < t->n; i++)
        t->prev_sized[i] = t->syms[i].size ? (uint32_t)i : i > 0 ? t->prev_sized[i - 1] : NO_INDEX;
    return 0;
}

static void
tab_free(struct elf_symtab *t)
{
    sw_free(t->syms);
    sw_free(t->prev_sized);
    memset(t, 0, sizeof *t);
}

void
sw_elf_syms_free(struct sw_elf *e)
{
    tab_free(&e->tabs[0]);
    tab_free(&e->tabs[1]);
    tab_free(&e->aliases);
}

/* Read the tables on first use, as gdb's elf_read_minimal_symbols does for
 * the file and for its separate debug file: a file's .symtab, or its
 * .dynsym when it has no .symtab (a subset: "if it is a nonstripped
 * executable, do not enter dynamic symbols"). */
static int
load_symbols(struct sw_elf *e)
{
    GElf_Shdr sh, opd_sh;
    Elf_Scn *scn;
    int rc = 0;

    if (e->syms_state != 0)
        return e->syms_state < 0 ? e->syms_state : 0;
    e->tabs[0].elf = e->main.elf;
    if ((scn = table_section(e->main.elf, SHT_SYMTAB, &sh)) != NULL ||
        (scn = table_section(e->main.elf, SHT_DYNSYM, &sh)) != NULL)
        rc = add_symbols(e, &e->tabs[0], scn, &sh);
    /* PowerPC64 ELFv1 (e_flags ABI 0 or 1): function symbols name descriptors. */
    if (rc == 0 && e->machine == EM_PPC64 && (e->flags & 3) != 2 &&
        sw_elf_find_section(e->main.elf, ".opd", &opd_sh) != NULL)
        rc = add_opd_entries(e, &e->tabs[0], &opd_sh);
    if (rc == 0 && e->dbg.elf != NULL) {
        e->tabs[1].elf = e->dbg.elf;
        if ((scn = table_section(e->dbg.elf, SHT_SYMTAB, &sh)) != NULL)
            rc = add_symbols(e, &e->tabs[1], scn, &sh);
    }
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = finish_table(&e->tabs[i]);
    if (rc != 0) {
        sw_elf_syms_free(e); /* not sticky: a later call may find the memory */
        return rc;
    }
    sw_debug(SW_DBG_CACHE, "elf: %s: %zu code symbols, %zu in the debug file", e->path,
             e->tabs[0].n, e->tabs[1].n);
    e->syms_state = 1;
    return 0;
}

int
sw_elf_load_symbols(struct sw_elf *e)
{
    pthread_mutex_lock(&e->lock);
    int rc = load_symbols(e);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

/* ---- by address ----------------------------------------------------------- */

/* gdb's lookup_minimal_symbol_by_pc_section over one table, for a pc in
 * code section SEC: the last symbol at or below VADDR (the greatest name at
 * its address), walking back past symbols of other sections, past one that
 * is not a global function where the one before it is, at the same address
 * and size (prefer mst_text), past sizeless ones while a sized one may come
 * (the first sizeless one is kept in case none does), past a sized one that
 * ends below VADDR when the one before it reaches further.  A sized symbol
 * that does not reach VADDR gives the kept sizeless one, or nothing. */
static const struct elf_sym *
table_lookup(const struct elf_symtab *t, uint32_t sec, sw_addr vaddr)
{
    const struct elf_sym *s = t->syms;
    if (t->n == 0 || sec == 0 || vaddr < s[0].value)
        return NULL;
    size_t lo = 0, hi = t->n;
    while (lo < hi) { /* the first symbol above VADDR */
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].value <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t h = (int64_t)lo - 1, best_zero = -1;
    while (h >= 0) {
        const struct elf_sym *c = &s[h], *p = h > 0 ? &s[h - 1] : NULL;
        if (c->shndx != sec) {
            h--;
            continue;
        }
        if (p != NULL && (c->local || c->ifunc) && !p->local && !p->ifunc && c->size == p->size &&
            c->value == p->value && c->shndx == p->shndx) {
            h--;
            continue;
        }
        if (c->size == 0) {
            if (best_zero == -1)
                best_zero = h;
            /* Only sizeless symbols until the previous sized one: skipping
             * them all at once changes nothing but the time. */
            uint32_t ps = h > 0 ? t->prev_sized[h - 1] : NO_INDEX;
            h = ps == NO_INDEX ? -1 : (int64_t)ps;
            continue;
        }
        if (p != NULL && vaddr - c->value >= c->size && p->value + p->size > vaddr) {
            h--;
            continue;
        }
        break;
    }
    if (best_zero != -1 && (h < 0 || s[h].size == 0))
        h = best_zero;
    if (h >= 0 && s[h].size != 0 && vaddr - s[h].value >= s[h].size)
        h = best_zero;
    return h >= 0 ? &s[h] : NULL;
}

/* The file's table, then the debug file's: the one whose symbol starts
 * higher wins, the file's on a tie (gdb searches both objfiles the same
 * way).  gdb names a frame from DWARF when it can, and the walker too
 * (walker/virtual.c): this is the name of code without debug information. */
static int
symbol_at(struct sw_elf *e, sw_addr vaddr, struct sw_elfsym *out)
{
    int rc = load_symbols(e);
    if (rc != 0)
        return rc;
    const struct elf_sym *best = NULL;
    for (int i = 0; i < 2; i++) {
        const struct elf_symtab *t = &e->tabs[i];
        if (t->n == 0)
            continue;
        const struct elf_sym *s = table_lookup(t, code_section_at(t->elf, vaddr), vaddr);
        if (s != NULL && (best == NULL || s->value > best->value))
            best = s;
    }
    if (best == NULL)
        return SW_ENOSYM;
    out->name = best->name;
    out->value = best->value;
    out->size = best->size;
    return 0;
}

/* Under E's lock: the tables are read on first use, and the lookup asks
 * libelf for the section headers. */
int
sw_elf_symbol_at(struct sw_elf *e, sw_addr vaddr, struct sw_elfsym *out)
{
    pthread_mutex_lock(&e->lock);
    int rc = symbol_at(e, vaddr, out);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

/* ---- by name -------------------------------------------------------------- */

/* NAME, or NAME with a version ("NAME@@GLIBC_2.34"), as gdb also records it. */
static bool
name_matches(const char *sym, const char *name, size_t len)
{
    return strncmp(sym, name, len) == 0 &&
           (sym[len] == '\0' || (sym[len] == '@' && strcmp(sym + len, "@plt") != 0));
}

/* The symbol named NAME: the file's table, then the debug file's, then
 * ELFv1 descriptor names; the first in table order; an exact name before a
 * versioned one.  With BIND, a global (or weak) symbol before a local one
 * first, as gdb's lookup_minimal_symbol prefers external symbols. */
static int
symbol_by_name(struct sw_elf *e, const char *name, bool bind, struct sw_elfsym *out, bool *local)
{
    int rc = load_symbols(e);
    if (rc != 0)
        return rc;
    const struct elf_symtab *tabs[3] = { &e->tabs[0], &e->tabs[1], &e->aliases };
    const struct elf_sym *best = NULL;
    int best_rank = 0;
    size_t len = strlen(name);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < tabs[k]->n; i++) {
            const struct elf_sym *s = &tabs[k]->syms[i];
            if (!name_matches(s->name, name, len))
                continue;
            int rank = (bind && s->local) * 8 + k * 2 + (s->name[len] != '\0');
            if (best == NULL || rank < best_rank || (rank == best_rank && s->order < best->order)) {
                best = s;
                best_rank = rank;
            }
        }
    }
    if (best == NULL)
        return SW_ENOSYM;
    out->name = best->name;
    out->value = best->value;
    out->size = best->size;
    if (local != NULL)
        *local = best->local;
    return 0;
}

int
sw_elf_symbol_by_name(struct sw_elf *e, const char *name, struct sw_elfsym *out)
{
    pthread_mutex_lock(&e->lock);
    int rc = symbol_by_name(e, name, false, out, NULL);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

int
sw_elf_symbol_by_name_bind(struct sw_elf *e, const char *name, struct sw_elfsym *out, bool *local)
{
    pthread_mutex_lock(&e->lock);
    int rc = symbol_by_name(e, name, true, out, local);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

/* Defined symbol NAME of the first table of type KIND in ELF, any type but FILE and SECTION, in any
 * section: 1 with *VALUE, 0 none. */
static int
any_symbol_in(Elf *elf, GElf_Word kind, const char *name, sw_addr *value)
{
    GElf_Shdr sh;
    Elf_Scn *scn = elf != NULL ? table_section(elf, kind, &sh) : NULL;
    Elf_Data *d = scn != NULL ? elf_getdata(scn, NULL) : NULL;
    size_t fsize = elf != NULL ? gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT) : 0;
    size_t n = d != NULL && fsize != 0 ? d->d_size / fsize : 0;
    for (size_t i = 1; i < n; i++) {
        GElf_Sym s;
        if (gelf_getsym(d, (int)i, &s) == NULL || s.st_shndx == SHN_UNDEF)
            continue;
        int type = GELF_ST_TYPE(s.st_info);
        if (type == STT_FILE || type == STT_SECTION)
            continue;
        const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
        if (nm != NULL && strcmp(nm, name) == 0) {
            *value = s.st_value; /* as the symbol says: a Thumb function's keeps bit 0 */
            return 1;
        }
    }
    return 0;
}

int
sw_elf_any_symbol(struct sw_elf *e, const char *name, sw_addr *value)
{
    pthread_mutex_lock(&e->lock);
    int found = any_symbol_in(e->main.elf, SHT_SYMTAB, name, value) ||
                any_symbol_in(e->main.elf, SHT_DYNSYM, name, value) ||
                any_symbol_in(e->dbg.elf, SHT_SYMTAB, name, value);
    pthread_mutex_unlock(&e->lock);
    return found ? 0 : SW_ENOSYM;
}
