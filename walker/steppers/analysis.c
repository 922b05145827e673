/* walker/steppers/analysis.c -- AnalysisStepper: callers of frameless code without CFI.
 *
 * Per function (ELF symbol with a size, code from the local file), the
 * dataflow of analysis_flow.c gives, for every reachable instruction, the
 * stack height (CFA - SP: the seed's Δ), whether FP is CFA-relative, and
 * where the return address and the caller's FP are; a PC the analysis does
 * not reach or whose CFA is unknown is NOT_ME.  This file caches the results
 * per function in the walker (walker_internal.h's per-walker caches),
 * answers the queries of analysis.h (also for the FrameFuncHelper), and is
 * the stepper.  Priority 0x10058: after the CFI
 * and frame-pointer steppers.
 */
#include "walker/steppers/analysis.h"

#include <inttypes.h>
#include <string.h>

#include "libstate/lib.h"
#include "walker/steppers/analysis_internal.h"
#include "walker/walker_internal.h"

/* Functions larger than this are not analysed: the per-byte state array
 * costs 48 bytes per code byte.  glibc's largest are ~40 KiB. */
#define AN_MAX_FUNC (256u * 1024u)
/* Analysed functions kept; the oldest is dropped (a walk touches few). */
#define AN_CACHE_FUNCS 32
/* Instructions the exit scan follows to a return: gcc's epilogues restore
 * at most a few register pairs and free the frame in one or two steps. */
#define AN_EXIT_INSNS 8
/* The longest instruction of any architecture (x86: 15 bytes). */
#define AN_MAX_INSN 16
/* Jumps out of a function kept with its analysis (tail calls, jumps to its
 * NAME.cold part): gcc's functions have a few. */
#define AN_MAX_EXITS 16

struct an_func {
    struct sw_an_func sum;  /* start, size, and what the code does */
    struct sw_an_state *st; /* owned: sum.size entries, by offset */
    uint64_t used;          /* last use, for replacement */
    size_t nexits;          /* jumps out; more than AN_MAX_EXITS: some not kept */
    struct sw_an_edge exits[AN_MAX_EXITS];
};

struct sw_an_cache {
    struct sw_disasm *dis;       /* owned: opened on first use */
    struct sw_an_starts *starts; /* owned: function starts of stripped modules, on first use */
    const struct arch_desc *dis_arch;
    struct an_func funcs[AN_CACHE_FUNCS];
    uint64_t clock;
    unsigned analyses; /* functions analysed into this cache */
};

/* ---- the cache -------------------------------------------------------- */

struct sw_an_cache *
sw_an_cache_new(void)
{
    return sw_calloc(1, sizeof(struct sw_an_cache));
}

void
sw_an_cache_clear(struct sw_an_cache *c)
{
    for (size_t i = 0; i < AN_CACHE_FUNCS; i++) {
        sw_free(c->funcs[i].st);
        memset(&c->funcs[i], 0, sizeof c->funcs[i]);
    }
    sw_an_starts_clear(c->starts);
}

static void
an_cache_fini(struct sw_an_cache *c)
{
    sw_an_cache_clear(c);
    sw_disasm_free(c->dis);
    sw_an_starts_free(c->starts);
}

void
sw_an_cache_free(struct sw_an_cache *c)
{
    if (c == NULL)
        return;
    an_cache_fini(c);
    sw_free(c);
}

static void
an_cache_clear_any(void *c)
{
    sw_an_cache_clear(c);
}

static void
an_cache_free_any(void *c)
{
    sw_an_cache_free(c);
}

/* The walker's analysis cache, one per walker whatever steppers ask. */
static const struct sw_walker_cache_ops an_cache_ops = {
    .clear = an_cache_clear_any,
    .free = an_cache_free_any,
};

int
sw_an_cache_attach(struct sw_walker *w)
{
    if (sw_walker_cache(w, &an_cache_ops) != NULL)
        return 0;
    struct sw_an_cache *c = sw_an_cache_new();
    if (c == NULL)
        return sw_walker_fail(w, SW_ENOMEM, "making the analysis cache: out of memory");
    return sw_walker_cache_add(w, &an_cache_ops, c);
}

/* W's cache, NULL if none of its steppers attached one. */
static struct sw_an_cache *
an_cache_of(struct sw_walker *w)
{
    return sw_walker_cache(w, &an_cache_ops);
}

unsigned
sw_analysis_count(struct sw_walker *w)
{
    struct sw_an_cache *c = an_cache_of(w);
    return c ? c->analyses : 0;
}

/* A decoder for A: C's, opened on first use, or without C a new one left
 * in *TMP for the caller to free.  NULL when out of memory. */
static struct sw_disasm *
an_dis(struct sw_an_cache *c, const struct arch_desc *a, struct sw_disasm **tmp)
{
    *tmp = NULL;
    if (c == NULL)
        return *tmp = sw_disasm_new(a);
    if (c->dis == NULL || c->dis_arch != a) {
        sw_disasm_free(c->dis);
        c->dis = sw_disasm_new(a);
        c->dis_arch = c->dis ? a : NULL;
    }
    return c->dis;
}

/* Why there is no decoder: SW_EUNSUP when capstone cannot be loaded (no
 * analysis at all: the frame is not this stepper's), else SW_ENOMEM. */
static int
an_no_dis(void)
{
    return sw_disasm_available(NULL) ? SW_ENOMEM : SW_EUNSUP;
}

/* Whether NAME is the split-off part of a function (gcc's
 * -freorder-blocks-and-partition: "NAME.cold", older gcc "NAME.cold.N"):
 * then the parent's name goes to BUF. */
static bool
an_cold_parent(const char *name, char *buf, size_t len)
{
    const char *dot = NULL;
    for (const char *p = strstr(name, ".cold"); p; p = strstr(p + 1, ".cold"))
        dot = p;
    if (dot == NULL || dot == name || (size_t)(dot - name) >= len)
        return false;
    const char *rest = dot + 5;
    if (*rest == '.') {
        if (rest[1] == '\0')
            return false;
        for (rest++; *rest; rest++)
            if (*rest < '0' || *rest > '9')
                return false;
    } else if (*rest != '\0') {
        return false;
    }
    memcpy(buf, name, (size_t)(dot - name));
    buf[dot - name] = '\0';
    return true;
}

/* Out-of-line register save routines one function calls: few (one). */
#define AN_MAX_SAVERS 4

/* Whether the code at TARGET is a 64-bit PowerPC _savegpr0_N: std rS,d(r1)
 * for the callee-saved registers, std r0,16(r1), blr. */
static bool
an_is_lr_saver(struct sw_walker *w, const struct arch_desc *a, sw_addr target)
{
    uint8_t b[4 * 20];
    size_t n = sizeof b;
    int rc;
    /* The routines lie at the end of .text: read what there is. */
    while (n >= 8 && (rc = sw_walker_read_code(w, target, b, n)) < 0) {
        if (sw_is_link_error(rc))
            return false;
        n -= 4;
    }
    for (size_t k = 0; k + 8 <= n; k += 4) {
        uint32_t insn = (uint32_t)arch_load(a, b + k, 4);
        if (insn == 0xf8010010u)                                        /* std r0,16(r1) */
            return (uint32_t)arch_load(a, b + k + 4, 4) == 0x4e800020u; /* blr */
        if ((insn & 0xfc1f0003u) != 0xf8010000u)                        /* std rS,d(r1) */
            return false;
    }
    return false;
}

/* The LR savers (an_is_lr_saver) the direct calls of CODE (SIZE bytes at
 * START) reach, into OUT (at most AN_MAX_SAVERS, their number in *N).
 * 64-bit PowerPC only.  Returns 0 or a link error of a code read. */
static int
an_lr_savers(struct sw_walker *w, const struct arch_desc *a, const uint8_t *code, sw_addr start,
             sw_addr size, sw_addr *out, size_t *n)
{
    *n = 0;
    if (a->family != ARCH_FAMILY_PPC || a->word_size != 8)
        return 0;
    for (sw_addr off = 0; off + 4 <= size && *n < AN_MAX_SAVERS; off += 4) {
        uint32_t insn = (uint32_t)arch_load(a, code + off, 4);
        if ((insn & 0xfc000003u) != 0x48000001u)
            continue;
        sw_addr t =
            start + off + (sw_addr)((int64_t)((insn & 0x03fffffcu) ^ 0x02000000u) - 0x02000000);
        bool seen = t >= start && t - start < size;
        for (size_t k = 0; k < *n && !seen; k++)
            seen = out[k] == t;
        if (!seen && an_is_lr_saver(w, a, t))
            out[(*n)++] = t;
    }
    return 0;
}

static int an_func_for(struct sw_walker *w, struct sw_an_cache *c, sw_addr pc, bool parent_ok,
                       struct an_func *out, struct sw_an_state **owned);
static int an_analyse(struct sw_walker *w, struct sw_an_cache *c, const struct sw_symbol *sym,
                      struct sw_an_seeds *seeds, struct an_func *out, struct sw_an_state **owned);

/* The analysis of the code at START of SIZE bytes in C (may be NULL), into *OUT: true
 * when C has it. */
static bool
an_cache_find(struct sw_an_cache *c, sw_addr start, sw_addr size, struct an_func *out)
{
    for (size_t i = 0; c && i < AN_CACHE_FUNCS; i++) {
        if (c->funcs[i].st && c->funcs[i].sum.start == start && c->funcs[i].sum.size == size) {
            c->funcs[i].used = ++c->clock;
            *out = c->funcs[i];
            return true;
        }
    }
    return false;
}

/* The linker stub covering PC as a function (analysis_stub.c), NEAR the
 * symbol below PC if any: 0 with *OUT set, SW_ENOSYM, SW_ENOMEM or a link
 * error. */
static int
an_stub(struct sw_walker *w, struct sw_an_cache *c, sw_addr pc, const struct sw_symbol *near,
        struct sw_symbol *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    if (a->family != ARCH_FAMILY_AARCH64 && a->family != ARCH_FAMILY_PPC)
        return SW_ENOSYM; /* no decoder opened for what cannot be a stub */
    struct sw_disasm *tmp;
    struct sw_disasm *dis = an_dis(c, a, &tmp);
    if (dis == NULL)
        return an_no_dis() == SW_EUNSUP ? SW_ENOSYM : SW_ENOMEM;
    struct sw_symbol near_copy;
    if (near != NULL)
        near_copy = *near; /* NEAR may be OUT */
    int rc = sw_an_stub_at(w, dis, pc, near ? &near_copy : NULL, out);
    sw_disasm_free(tmp);
    return rc;
}

int
sw_analysis_cold_parent(struct sw_walker *w, const struct sw_symbol *sym, struct sw_symbol *parent)
{
    const struct sw_lib *lib;
    struct sw_elfsym es;
    char name[256];

    if (sym->name == NULL || !an_cold_parent(sym->name, name, sizeof name) ||
        sw_libstate_lib_at(sw_walker_libstate(w), sym->start, &lib) < 0 ||
        sw_lib_elf(lib) == NULL || sw_elf_symbol_by_name(sw_lib_elf(lib), name, &es) < 0 ||
        es.size == 0)
        return SW_ENOSYM;
    *parent = (struct sw_symbol){ .name = es.name, .start = es.value + lib->bias, .size = es.size };
    return 0;
}

/* The entries of COLD, a split-off part: the jumps of its parent's analysis
 * that land in COLD, with their states, into EDGES (at most AN_MAX_EXITS,
 * their number in *N).  None when the parent is not found, does not jump
 * there, or has more exits than were kept. */
static int
an_cold_entries(struct sw_walker *w, struct sw_an_cache *c, const struct sw_symbol *cold,
                struct sw_an_edge *edges, size_t *n)
{
    struct sw_symbol parent;
    struct an_func pf;
    struct sw_an_state *owned;

    *n = 0;
    if (sw_analysis_cold_parent(w, cold, &parent) < 0)
        return 0;
    int rc = an_func_for(w, c, parent.start, false, &pf, &owned);
    if (rc == SW_ENOSYM || rc == SW_EINVAL)
        return 0;
    if (rc < 0)
        return rc;
    if (pf.nexits <= AN_MAX_EXITS)
        for (size_t k = 0; k < pf.nexits; k++)
            if (pf.exits[k].target >= cold->start && pf.exits[k].target - cold->start < cold->size)
                edges[(*n)++] = pf.exits[k];
    sw_free(owned);
    return 0;
}

/* The offset from LO - 1 of the first jump-in target (sw_an_starts_jumpins) in [LO, HI)
 * of stripped x86 code, into *END; 0 when there is none.  Returns 0 or SW_ENOMEM. */
static int
an_jumpin_end(struct sw_walker *w, struct sw_an_cache *c, sw_addr lo, sw_addr hi, sw_addr *end)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_an_jumpin ji;
    size_t n = 0;
    *end = 0;
    if (c != NULL && c->starts == NULL && (c->starts = sw_an_starts_new()) == NULL)
        return SW_ENOMEM;
    struct sw_disasm *tmp;
    struct sw_disasm *dis = an_dis(c, a, &tmp);
    int rc = dis ? sw_an_starts_jumpins(w, c ? c->starts : NULL, dis, lo, hi, &ji, 1, &n) : 0;
    sw_disasm_free(tmp);
    if (rc == SW_ENOMEM)
        return rc;
    if (rc == 0 && n == 1)
        *end = ji.target - (lo - 1);
    return 0;
}

/* The analysed function covering PC, from C when C is not NULL (else
 * *OWNED is set and the caller frees it with sw_free).  A split-off part
 * (NAME.cold) is analysed from the states NAME's jumps carry into it
 * (PARENT_OK), never from its first byte: nothing calls it. */
static int
an_func_for(struct sw_walker *w, struct sw_an_cache *c, sw_addr pc, bool parent_ok,
            struct an_func *out, struct sw_an_state **owned)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_symlookup *sl = sw_walker_symlookup(w);
    struct sw_symbol sym;

    *owned = NULL;
    bool found = sl != NULL && sl->ops->lookup(sl, pc, &sym) == 0, from_code = false;
    int rc;
    if (!found || sym.size == 0 || pc < sym.start || pc - sym.start >= sym.size) {
        /* No function covers PC: a linker stub is analysed as one, else
         * the extent the code of a stripped module shows (a sizeless
         * symbol below PC, an assembler label, says nothing of it). */
        rc = an_stub(w, c, pc, found ? &sym : NULL, &sym);
        if (rc == SW_ENOSYM && (!found || sym.size == 0)) {
            if (c != NULL && c->starts == NULL && (c->starts = sw_an_starts_new()) == NULL)
                return SW_ENOMEM;
            struct sw_disasm *tmp = NULL;
            struct sw_disasm *dis = a->family == ARCH_FAMILY_X86 ? an_dis(c, a, &tmp) : NULL;
            rc = sw_an_starts_func(w, c ? c->starts : NULL, dis, pc, &sym);
            sw_disasm_free(tmp);
            from_code = rc == 0;
        }
        if (rc < 0)
            return rc;
    }
    if (sym.size > AN_MAX_FUNC)
        return SW_ENOSYM;
    if (an_cache_find(c, sym.start, sym.size, out))
        return 0;

    struct sw_an_edge entries[AN_MAX_EXITS];
    struct sw_an_seeds seeds = { .seed_ind = from_code || a->family == ARCH_FAMILY_X86 };
    if (from_code && a->family == ARCH_FAMILY_X86 &&
        (rc = an_jumpin_end(w, c, sym.start + 1, sym.start + sym.size, &seeds.ind_end)) < 0)
        return rc;
    char parent[256];
    if (sym.name && an_cold_parent(sym.name, parent, sizeof parent)) {
        if (!parent_ok)
            return SW_ENOSYM;
        seeds.edges = entries;
        if ((rc = an_cold_entries(w, c, &sym, entries, &seeds.n)) < 0)
            return rc;
    }
    return an_analyse(w, c, &sym, &seeds, out, owned);
}

/* Analyse SYM's code from SEEDS (its lr_savers are found here) into *OUT, kept in C when
 * C is not NULL (else *OWNED is set and the caller frees it with sw_free). */
static int
an_analyse(struct sw_walker *w, struct sw_an_cache *c, const struct sw_symbol *symp,
           struct sw_an_seeds *seedsp, struct an_func *out, struct sw_an_state **owned)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_symbol sym = *symp;
    struct sw_an_seeds seeds = *seedsp;
    int rc;

    *owned = NULL;
    struct sw_disasm *tmp;
    struct sw_disasm *dis = an_dis(c, a, &tmp);
    uint8_t *code = sw_malloc((size_t)sym.size);
    struct sw_an_state *st = sw_calloc((size_t)sym.size, sizeof *st);
    struct sw_an_func sum;
    struct an_func f = { 0 };
    struct sw_an_exits exits = { .edges = f.exits, .max = AN_MAX_EXITS };
    rc = dis == NULL ? an_no_dis() : code && st ? 0 : SW_ENOMEM;
    if (rc == 0)
        rc = sw_walker_read_code(w, sym.start, code, (size_t)sym.size);
    sw_addr savers[AN_MAX_SAVERS];
    seeds.lr_savers = savers;
    if (rc == 0)
        rc = an_lr_savers(w, a, code, sym.start, sym.size, savers, &seeds.nlr_savers);
    if (rc == 0)
        rc = sw_an_flow(dis, a, code, sym.start, sym.size, &seeds, &exits, st, &sum);
    sw_free(code);
    sw_disasm_free(tmp);
    if (rc < 0) {
        sw_free(st);
        return rc;
    }
    f.sum = sum;
    f.st = st;
    f.nexits = exits.n;
    *out = f;
    if (c == NULL) {
        *owned = st;
        return 0;
    }
    size_t victim = 0;
    for (size_t i = 1; i < AN_CACHE_FUNCS; i++)
        if (c->funcs[i].used < c->funcs[victim].used)
            victim = i;
    sw_free(c->funcs[victim].st);
    out->used = ++c->clock;
    c->funcs[victim] = *out;
    c->analyses++;
    return 0;
}

/* ---- queries ---------------------------------------------------------- */

int
sw_analysis_jumps_to(struct sw_walker *w, sw_addr start, sw_addr to, sw_addr slack)
{
    struct an_func f;
    struct sw_an_state *owned;
    int rc = an_func_for(w, an_cache_of(w), start, true, &f, &owned);
    if (rc < 0)
        return rc;
    sw_free(owned);
    for (size_t k = 0; k < f.nexits && k < AN_MAX_EXITS; k++)
        if (f.exits[k].target >= to && f.exits[k].target - to <= slack)
            return 1;
    return f.nexits > AN_MAX_EXITS ? SW_EINVAL : 0;
}

/* The facts at LOOK (PC, or PC - 1 for a return address: !EXACT) in F's analysis:
 * 0, SW_EINVAL (not reached) or SW_ENOMEM. */
static int
an_facts(struct sw_walker *w, struct sw_an_cache *c, const struct an_func *f, sw_addr look,
         bool exact, struct sw_an_pc *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    sw_addr off = look - f->sum.start;
    const unsigned reached = SW_AN_ST_SEEN | SW_AN_ST_INSN;
    int rc = SW_EINVAL;
    if (exact) {
        if ((f->st[off].flags & reached) == reached) {
            sw_an_state_facts(&f->st[off], out);
            rc = 0;
        }
        return rc;
    }
    for (sw_addr back = 0; back < AN_MAX_INSN - 1 && back <= off; back++) {
        const struct sw_an_state *s = &f->st[off - back];
        if ((s->flags & reached) != reached || off - back + s->len != off + 1)
            continue;
        struct sw_disasm *tmp;
        struct sw_disasm *dis = an_dis(c, a, &tmp);
        uint8_t code[AN_MAX_INSN];
        struct sw_insn i;
        size_t n = s->len;
        sw_addr at = f->sum.start + off - back;
        if (dis && sw_walker_read_code(w, at, code, n) == 0 &&
            sw_disasm_one(dis, code, n, at, &i) == 0 && i.flow == SW_FLOW_CALL) {
            struct sw_an_state after = *s;
            sw_an_transfer(a, &i, at, &after);
            sw_an_state_facts(&after, out);
            rc = 0;
        }
        sw_disasm_free(tmp);
        break;
    }
    return rc;
}

/* Jump-ins read per extent, and targets tried per PC. */
#define AN_MAX_JUMPINS  64
#define AN_JUMPIN_TRIES 4

/* The states the jumps of JI (N of them) into [LO, HI) carry, from the exits of the
 * analyses of the code they jump from, into EDGES (at most AN_MAX_EXITS, their number in
 * *NE).  Returns 0 or an error of an_func_for other than "no function there". */
static int
an_jumpin_edges(struct sw_walker *w, struct sw_an_cache *c, const struct sw_an_jumpin *ji, size_t n,
                sw_addr lo, sw_addr hi, struct sw_an_edge *edges, size_t *ne)
{
    *ne = 0;
    for (size_t k = 0; k < n && *ne < AN_MAX_EXITS; k++) {
        if (ji[k].target < lo || ji[k].target >= hi)
            continue;
        struct an_func sf;
        struct sw_an_state *owned;
        int rc = an_func_for(w, c, ji[k].site, false, &sf, &owned);
        if (rc == SW_ENOSYM || rc == SW_EINVAL)
            continue;
        if (rc < 0)
            return rc;
        for (size_t e = 0; e < sf.nexits && e < AN_MAX_EXITS && *ne < AN_MAX_EXITS; e++)
            if (sf.exits[e].target >= lo && sf.exits[e].target < hi)
                edges[(*ne)++] = sf.exits[e];
        sw_free(owned);
    }
    return 0;
}

/* The facts at LOOK in stripped x86 code the flow from the start of its extent EXT does
 * not reach: code only jumps enter (a function nothing calls but tail calls, a split-off
 * part).  The rest of the extent from the last jump-in target at or below LOOK is analysed
 * from the states those jumps carry; the next lower target when that does not reach LOOK
 * either.  Returns what an_facts does, or an error of the analyses. */
static int
an_jumpin_facts(struct sw_walker *w, struct sw_an_cache *c, const struct sw_an_func *ext,
                sw_addr look, bool exact, struct sw_an_pc *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_an_jumpin ji[AN_MAX_JUMPINS];
    size_t n = 0;
    sw_addr end = ext->start + ext->size;
    if (a->family != ARCH_FAMILY_X86)
        return SW_EINVAL;
    if (c != NULL && c->starts == NULL && (c->starts = sw_an_starts_new()) == NULL)
        return SW_ENOMEM;
    struct sw_disasm *tmp;
    struct sw_disasm *dis = an_dis(c, a, &tmp);
    int rc = dis == NULL ? an_no_dis() : 0;
    if (rc == 0)
        rc = sw_an_starts_jumpins(w, c ? c->starts : NULL, dis, ext->start + 1, end, ji,
                                  AN_MAX_JUMPINS, &n);
    sw_disasm_free(tmp);
    if (rc == SW_ENOSYM || rc == SW_EUNSUP)
        return SW_EINVAL;
    if (rc < 0)
        return rc;
    rc = SW_EINVAL;
    unsigned tries = 0;
    for (size_t k = n; k-- > 0 && tries < AN_JUMPIN_TRIES && rc == SW_EINVAL;) {
        sw_addr t = ji[k].target;
        if (t > look || (k + 1 < n && ji[k + 1].target == t && ji[k + 1].target <= look))
            continue; /* beyond LOOK, or a target already tried */
        tries++;
        struct sw_symbol sub = { .name = NULL, .start = t, .size = end - t };
        struct an_func f;
        struct sw_an_state *owned = NULL;
        if (!an_cache_find(c, sub.start, sub.size, &f)) {
            struct sw_an_edge edges[AN_MAX_EXITS];
            struct sw_an_seeds seeds = { .edges = edges, .seed_ind = true };
            for (size_t m = k + 1; m < n && seeds.ind_end == 0; m++)
                if (ji[m].target > t)
                    seeds.ind_end = ji[m].target - t;
            if ((rc = an_jumpin_edges(w, c, ji, n, t, end, edges, &seeds.n)) < 0)
                return rc;
            rc = SW_EINVAL;
            if (seeds.n == 0)
                continue;
            int arc = an_analyse(w, c, &sub, &seeds, &f, &owned);
            if (arc < 0)
                return arc;
        }
        rc = an_facts(w, c, &f, look, exact, out);
        sw_debug(SW_DBG_STEP, "analysis: %#" PRIx64 " from the jumps into %#" PRIx64 ": %s",
                 (uint64_t)look, (uint64_t)t, rc == 0 ? "reached" : "not reached");
        sw_free(owned);
    }
    return rc;
}

static int
an_query(struct sw_walker *w, struct sw_an_cache *c, sw_addr pc, bool exact, struct sw_an_func *fn,
         struct sw_an_pc *out)
{
    struct an_func f;
    struct sw_an_state *owned;
    /* A return address: the call is the instruction that ends at PC. */
    sw_addr look = exact ? pc : pc - 1;
    int rc = an_func_for(w, c, look, true, &f, &owned);
    if (rc < 0)
        return rc;
    if (fn)
        *fn = f.sum;
    rc = an_facts(w, c, &f, look, exact, out);
    sw_free(owned);
    if (rc == SW_EINVAL) {
        struct sw_an_func ext = f.sum; /* F's states may be gone from the cache below */
        rc = an_jumpin_facts(w, c, &ext, look, exact, out);
    }
    return rc;
}

int
sw_analysis_func(struct sw_walker *w, sw_addr pc, bool exact, struct sw_an_func *fn,
                 struct sw_an_pc *at)
{
    return an_query(w, an_cache_of(w), pc, exact, fn, at);
}

int
sw_analysis_at(struct sw_walker *w, sw_addr pc, bool exact, struct sw_an_pc *out)
{
    return an_query(w, an_cache_of(w), pc, exact, NULL, out);
}

int
sw_analysis_exit(struct sw_walker *w, sw_addr pc, struct sw_an_pc *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_disasm *tmp;
    struct sw_disasm *dis = an_dis(an_cache_of(w), a, &tmp);
    if (dis == NULL)
        return an_no_dis();
    /* Offsets from the SP at PC: where SP is now, where FP, the return
     * address and (PowerPC) r0 were reloaded from. */
    int64_t delta = 0, fp_at = 0, ra_at = 0, r0_at = 0;
    bool fp_slot = false, ra_slot = false, r0_slot = false;
    sw_addr at = pc;
    int rc = SW_EINVAL;
    for (unsigned k = 0; k < AN_EXIT_INSNS; k++) {
        uint8_t code[AN_MAX_INSN];
        size_t n = 0;
        struct sw_insn i;
        if ((rc = sw_walker_read_insn(w, at, code, AN_MAX_INSN, &n)) < 0)
            break;
        rc = SW_EINVAL;
        if (sw_disasm_one(dis, code, n, at, &i) < 0)
            break;
        if (i.flow == SW_FLOW_RET) {
            int64_t cfa = delta + (a->call_ra_on_stack ? a->word_size : 0);
            memset(out, 0, sizeof *out);
            out->sp_known = true;
            out->height = cfa;
            out->ra = a->call_ra_on_stack || ra_slot ? SW_AN_RA_SLOT : SW_AN_RA_LIVE;
            out->ra_off = a->call_ra_on_stack ? -(int64_t)a->word_size : ra_at - cfa;
            out->caller_fp = fp_slot ? SW_AN_FP_SAVED : SW_AN_FP_CALLER;
            out->fp_pushed = fp_slot;
            out->fp_save_off = fp_slot ? fp_at - cfa : 0;
            rc = 0;
            break;
        }
        /* Anything but adjustments and reloads: the state at PC is not
         * known from what follows. */
        if (i.flow != SW_FLOW_NEXT || (i.sp != SW_SP_KEEP && i.sp != SW_SP_ADD) ||
            (i.fp != SW_FP_KEEP && i.fp != SW_FP_LOAD) || i.lr_to_r0 ||
            (i.writes[SW_IREG_LR] && !i.r0_to_lr) || i.writes[SW_IREG_FP])
            break;
        int64_t after = delta + (i.sp == SW_SP_ADD ? i.sp_delta : 0);
        bool fp_loaded = false, bad = false;
        for (uint8_t m = 0; m < i.nloads; m++) {
            const struct sw_insn_mem *l = &i.loads[m];
            int64_t slot = after + l->off;
            bad |= l->fp_base && l->reg != SW_IREG_GPR;
            if (l->reg == SW_IREG_FP && !fp_slot) {
                fp_slot = fp_loaded = true;
                fp_at = slot;
            } else if (l->reg == SW_IREG_LR && !ra_slot) {
                ra_slot = true;
                ra_at = slot;
            } else if (l->reg == SW_IREG_R0) {
                r0_slot = true;
                r0_at = slot;
            }
        }
        if (bad || (i.fp == SW_FP_LOAD && !fp_loaded))
            break;
        if (i.writes[SW_IREG_R0])
            r0_slot = false;
        if (i.r0_to_lr) {
            if (!r0_slot)
                break;
            if (!ra_slot) {
                ra_slot = true;
                ra_at = r0_at;
            }
        }
        delta = after;
        at += i.len;
    }
    sw_disasm_free(tmp);
    return rc;
}

/* ---- the stepper ----------------------------------------------------- */

static enum sw_gcf
analysis_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    bool exact = in->top || in->non_call;
    struct sw_an_pc p;
    enum sw_gcf r;

    int rc = an_query(w, an_cache_of(w), in->ra, exact, NULL, &p);
    if (rc == SW_ENOMEM || sw_is_link_error(rc)) {
        sw_walker_fail(w, rc, "analysing the function at %#" PRIx64 ": %s", (uint64_t)in->ra,
                       sw_strerror(rc));
        return SW_GCF_ERROR;
    }
    if (rc < 0) {
        sw_debug(SW_DBG_STEP, "analysis: %#" PRIx64 ": %s", (uint64_t)in->ra,
                 rc == SW_EINVAL ? "not reached" : sw_strerror(rc));
        return SW_GCF_NOT_ME;
    }
    sw_debug(SW_DBG_STEP,
             "analysis: %#" PRIx64 ": CFA %s SP + %" PRId64 ", FP %s, return address %s %" PRId64,
             (uint64_t)in->ra, p.sp_known ? "=" : "unknown,", p.height,
             p.fp_cfa ? "CFA-relative" : "not",
             p.ra == SW_AN_RA_SLOT ? "at CFA +" : "live or unknown", p.ra_off);

    sw_addr cfa = 0, l = 0;
    bool have_l = false;
    if (p.sp_known && p.sp_alt) {
        l = in->sp + (sw_addr)p.height;
        have_l = true;
    } else if (p.fp_alt && in->fp != 0) {
        l = in->fp - (sw_addr)p.fp_alt_off;
        have_l = true;
    }
    if (p.sp_known && !p.sp_alt) {
        cfa = in->sp + (sw_addr)p.height;
    } else if (p.fp_cfa && in->fp != 0) {
        cfa = in->fp - (sw_addr)p.fp_off;
    } else if (have_l && p.cfa_saved) {
        sw_word v;
        if ((r = sw_step_read_word(w, l + (sw_addr)p.cfa_slot, &v)) != SW_GCF_SUCCESS)
            return r;
        cfa = v;
    } else {
        return SW_GCF_NOT_ME;
    }
    if (cfa < in->sp)
        return SW_GCF_NOT_ME;

    sw_word ra, fp = in->fp;
    struct sw_location ra_loc, fp_loc;
    switch (p.ra) {
    case SW_AN_RA_SLOT:
        ra_loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = cfa + (sw_addr)p.ra_off };
        if ((r = sw_step_read_word(w, ra_loc.addr, &ra)) != SW_GCF_SUCCESS)
            return r;
        break;
    case SW_AN_RA_LIVE:
    case SW_AN_RA_IN_R0: {
        unsigned reg = p.ra == SW_AN_RA_LIVE ? (unsigned)a->dw_ra : 0u;
        if (!sw_frame_reg(in, reg, &ra)) {
            /* Frame 0's registers are the thread's: ask the process for
             * one the initial frame did not carry. */
            struct sw_proc *proc = sw_walker_proc(w);
            rc = in->top ? proc->ops->read_reg(proc, in->thread, reg, &ra) : SW_ENOENT;
            if (rc < 0 && sw_is_link_error(rc)) {
                sw_walker_fail_from_proc(w, rc);
                return SW_GCF_ERROR;
            }
            if (rc < 0)
                return SW_GCF_NOT_ME;
        }
        ra_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = reg };
        break;
    }
    default:
        return SW_GCF_NOT_ME;
    }
    if (ra == 0 || (ra == in->ra && cfa == in->sp))
        return SW_GCF_NOT_ME;

    if (p.caller_fp != SW_AN_FP_CALLER && p.fp_pushed && (have_l || !p.fp_save_alt)) {
        sw_addr base = p.fp_save_alt ? l : cfa;
        fp_loc =
            (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = base + (sw_addr)p.fp_save_off };
        if ((r = sw_step_read_word(w, fp_loc.addr, &fp)) != SW_GCF_SUCCESS)
            return r;
    } else {
        fp_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_fp };
    }

    struct sw_frame f = *in; /* registers not saved are unchanged (gdb's rule) */
    f.ra = ra;
    f.sp = cfa;
    f.fp = fp;
    f.ra_loc = ra_loc;
    f.sp_loc = (struct sw_location){ .kind = SW_LOC_UNKNOWN };
    f.fp_loc = fp_loc;
    f.kind = SW_FRAME_NORMAL;
    f.non_call = false;
    f.bottom = false;
    f.trust = SW_TRUST_ANALYSIS;
    f.stepper = s;
    if (a->dw_ra != a->dw_pc)
        sw_frame_clear_reg(&f, (unsigned)a->dw_ra); /* the caller's LR is not known */
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, ra);
    sw_frame_set_reg(&f, (unsigned)a->dw_sp, cfa);
    sw_frame_set_reg(&f, (unsigned)a->dw_fp, fp);
    *out = f;
    return SW_GCF_SUCCESS;
}

/* Joining a walker: the walker keeps the analysis cache from now on. */
static int
analysis_group_registered(struct sw_stepper *s, struct sw_stepper_group *g)
{
    int rc = sw_an_cache_attach(s->walker);
    return rc < 0 ? rc : sw_stepper_group_add(g, s, 0, UINT64_MAX);
}

static const struct sw_stepper_ops analysis_ops = {
    .name = "analysis",
    .priority = SW_PRIO_ANALYSIS,
    .caller_frame = analysis_caller_frame,
    .group_registered = analysis_group_registered,
};

struct sw_stepper *
sw_stepper_analysis_new(void)
{
    struct sw_stepper *s = sw_calloc(1, sizeof *s);
    if (s)
        s->ops = &analysis_ops;
    return s;
}
