/* walker/steppers/analysis_starts.c -- function extents in code no symbol covers.
 *
 * A stripped module (no .symtab) shows where its functions start: direct calls' targets, code
 * addresses in its data, GOT, TOC or (x86-64 PIE) relative relocations, address-taking pairs,
 * its entry, veneers' targets; a function runs to the next start.  x86 is swept linearly from
 * .text's first byte and only instruction boundaries count; jumps between extents are kept.
 */
#include "walker/steppers/analysis_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "libstate/lib.h"
#include "walker/walker_internal.h"

/* Modules whose starts are kept; the oldest is dropped. */
#define AN_STARTS_MODS 4
/* The longest x86 instruction. */
#define AN_X86_MAX_INSN 15

struct an_mod_starts {
    const struct sw_elf *elf; /* borrowed, the key; NULL: a free slot */
    sw_addr text, text_end;   /* link-time extent of .text */
    sw_addr *starts;          /* owned: n sorted link-time addresses */
    size_t n;
    struct sw_an_jumpin *ins; /* owned: nins jumps between extents, by target, link-time */
    size_t nins;
    uint64_t used;
};

struct sw_an_starts {
    struct an_mod_starts mods[AN_STARTS_MODS];
    uint64_t clock;
};

struct sw_an_starts *
sw_an_starts_new(void)
{
    return sw_calloc(1, sizeof(struct sw_an_starts));
}

void
sw_an_starts_clear(struct sw_an_starts *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < AN_STARTS_MODS; i++) {
        sw_free(s->mods[i].starts);
        sw_free(s->mods[i].ins);
    }
    memset(s, 0, sizeof *s);
}

void
sw_an_starts_free(struct sw_an_starts *s)
{
    sw_an_starts_clear(s);
    sw_free(s);
}

struct an_vec {
    sw_addr *v;
    size_t n, cap;
};

static int
vec_add(struct an_vec *v, sw_addr a)
{
    sw_addr *n = sw_grow(v->v, &v->cap, v->n + 1, sizeof *n, 1024);
    if (n == NULL)
        return SW_ENOMEM;
    v->v = n;
    v->v[v->n++] = a;
    return 0;
}

static int
addr_cmp(const void *a, const void *b)
{
    sw_addr x = *(const sw_addr *)a, y = *(const sw_addr *)b;
    return x < y ? -1 : x > y;
}

struct an_jvec {
    struct sw_an_jumpin *v;
    size_t n, cap;
};

static int
jvec_add(struct an_jvec *v, sw_addr site, sw_addr target)
{
    struct sw_an_jumpin *n = sw_grow(v->v, &v->cap, v->n + 1, sizeof *n, 1024);
    if (n == NULL)
        return SW_ENOMEM;
    v->v = n;
    v->v[v->n++] = (struct sw_an_jumpin){ .site = site, .target = target };
    return 0;
}

static int
jumpin_cmp(const void *a, const void *b)
{
    const struct sw_an_jumpin *x = a, *y = b;
    if (x->target != y->target)
        return x->target < y->target ? -1 : 1;
    return x->site < y->site ? -1 : x->site > y->site;
}

/* The index of the last of the N sorted STARTS at or below ADDR (0 when none is). */
static size_t
start_index(const sw_addr *starts, size_t n, sw_addr addr)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= addr)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The target of the direct call INSN at PC (AArch64 bl, PowerPC bl), or 0. */
static sw_addr
call_target(const struct arch_desc *a, uint32_t insn, sw_addr pc)
{
    int64_t off;
    if (a->family == ARCH_FAMILY_AARCH64 && (insn & 0xfc000000u) == 0x94000000u)
        off = ((int64_t)((insn & 0x03ffffffu) ^ 0x02000000u) - 0x02000000) * 4;
    else if (a->family == ARCH_FAMILY_PPC && (insn & 0xfc000003u) == 0x48000001u)
        off = (int64_t)((insn & 0x03fffffcu) ^ 0x02000000u) - 0x02000000;
    else
        return 0;
    sw_addr t = pc + (sw_addr)off;
    return a->word_size == 4 ? t & 0xffffffffu : t;
}

/* The code address an AArch64 `adrp xN, PAGE` at CODE[0] (PC) and an
 * `add xN, xN, #OFF` among the next two instructions compute (how a
 * function's address is taken: main for __libc_start_main, callbacks), or
 * 0.  gcc's jump tables take their base with a single adr: not counted. */
static sw_addr
adrp_add_target(const struct arch_desc *a, const uint8_t *code, size_t n, sw_addr pc)
{
    uint32_t adrp = (uint32_t)arch_load(a, code, 4);
    if ((adrp & 0x9f000000u) != 0x90000000u)
        return 0;
    uint32_t rd = adrp & 0x1fu;
    int64_t imm = (int64_t)((((adrp >> 5) & 0x7ffffu) << 2) | ((adrp >> 29) & 3u));
    imm = (imm ^ 0x100000) - 0x100000;
    sw_addr page = (pc & ~(sw_addr)0xfff) + (sw_addr)(imm * 4096);
    for (size_t k = 1; k <= 2 && (k + 1) * 4 <= n; k++) {
        uint32_t add = (uint32_t)arch_load(a, code + 4 * k, 4);
        if ((add & 0xffc00000u) == 0x91000000u && (add & 0x1fu) == rd && ((add >> 5) & 0x1fu) == rd)
            return page + ((add >> 10) & 0xfffu);
    }
    return 0;
}

/* The code address an x86-64 `lea disp(%rip),%reg` of LEN bytes at PC computes, or 0:
 * how a function's address is taken (main for __libc_start_main, callbacks). */
static sw_addr
x86_lea_rip(const uint8_t *code, size_t len, sw_addr pc)
{
    size_t k = (code[0] & 0xf0u) == 0x40u ? 1 : 0; /* REX */
    if (len != k + 6 || code[k] != 0x8d || (code[k + 1] & 0xc7u) != 0x05u)
        return 0;
    uint32_t d = (uint32_t)code[k + 2] | (uint32_t)code[k + 3] << 8 | (uint32_t)code[k + 4] << 16 |
                 (uint32_t)code[k + 5] << 24;
    return pc + len + (sw_addr)(int64_t)(int32_t)d;
}

/* x86: decode CODE (LEN bytes at TEXT) from its first byte on, one instruction after the
 * other (a byte that does not decode is skipped), marking where instructions start in
 * BOUNDS (a bit per byte), adding to V the targets in .text of the direct calls, the
 * lea-rip and (ABSOLUTE: not position-independent) the constants moved into registers, and
 * to JUMPS the direct jumps within .text.  gcc's x86 code holds no data in .text and
 * pads with real nops, so the sweep stays in step with the instructions. */
static int
x86_sweep(struct sw_disasm *dis, const uint8_t *code, size_t len, sw_addr text, bool absolute,
          uint8_t *bounds, struct an_vec *v, struct an_jvec *jumps)
{
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0;) {
        struct sw_insn i;
        size_t n = len - off < AN_X86_MAX_INSN ? len - off : AN_X86_MAX_INSN;
        if (sw_disasm_one(dis, code + off, n, text + off, &i) < 0 || i.len == 0) {
            off++;
            continue;
        }
        bounds[off / 8] |= (uint8_t)(1u << (off % 8));
        sw_addr t = i.flow == SW_FLOW_CALL && i.has_target
                        ? i.target
                        : x86_lea_rip(code + off, i.len, text + off);
        if (t == 0 && absolute && i.k_op == SW_K_SET)
            t = (sw_addr)i.k_imm; /* mov $main,%rdi */
        if (t >= text && t - text < len)
            rc = vec_add(v, t);
        if (rc == 0 && (i.flow == SW_FLOW_JUMP || i.flow == SW_FLOW_CJUMP) && i.has_target &&
            i.target >= text && i.target - text < len)
            rc = jvec_add(jumps, text + off, i.target);
        off += i.len;
    }
    return rc;
}

/* x86-64 PIE: the code addresses of the R_X86_64_RELATIVE relocations of E's .rela.dyn
 * (function pointers in tables) within .text [TEXT, END), into V. */
static int
x86_rela_starts(struct sw_elf *e, sw_addr text, sw_addr end, struct an_vec *v)
{
    const uint8_t *d;
    size_t dlen;
    sw_addr daddr;
    int rc = 0;
    if (sw_elf_section(e, ".rela.dyn", false, &d, &dlen, &daddr) < 0)
        return 0;
    for (size_t off = 0; off + 24 <= dlen && rc == 0; off += 24) {
        uint64_t info = 0, addend = 0;
        for (size_t b = 0; b < 8; b++) {
            info |= (uint64_t)d[off + 8 + b] << (8 * b);
            addend |= (uint64_t)d[off + 16 + b] << (8 * b);
        }
        if ((info & 0xffffffffu) == 8 /* R_X86_64_RELATIVE */ && addend >= text && addend < end)
            rc = vec_add(v, addend);
    }
    return rc;
}

/* Collect the starts of E's functions into M (M->elf set by the caller). */
static int
starts_scan(const struct arch_desc *a, struct sw_disasm *dis, struct sw_elf *e,
            struct an_mod_starts *m)
{
    static const char *const data_secs[] = { ".data.rel.ro", ".data", ".init_array", ".fini_array",
                                             ".got",         ".toc",  ".opd" };
    const uint8_t *code;
    size_t len;
    sw_addr text;
    struct an_vec v = { 0 };
    uint8_t *bounds = NULL; /* x86: a bit per byte of .text, set where an instruction starts */
    struct an_jvec jumps = { 0 };
    const bool x86 = a->family == ARCH_FAMILY_X86;
    const sw_addr align = x86 ? 1 : 4;
    int rc = 0;

    /* A module with a symbol table says where its functions are; what its
     * symbols do not cover is no function (padding, data in .text). */
    const uint8_t *symtab;
    size_t symlen;
    sw_addr symaddr;
    if (sw_elf_section(e, ".symtab", false, &symtab, &symlen, &symaddr) == 0)
        return SW_ENOSYM;
    if (sw_elf_section(e, ".text", false, &code, &len, &text) < 0 || len < 4)
        return SW_ENOSYM;
    m->text = text;
    m->text_end = text + len;
    if (x86) {
        if ((bounds = sw_calloc(len / 8 + 1, 1)) == NULL)
            return SW_ENOMEM;
        rc = x86_sweep(dis, code, len, text, !sw_elf_is_dyn(e), bounds, &v, &jumps);
        if (rc == 0 && a->word_size == 8)
            rc = x86_rela_starts(e, m->text, m->text_end, &v);
    }
    for (size_t off = 0; !x86 && off + 4 <= len && rc == 0; off += 4) {
        sw_addr t = call_target(a, (uint32_t)arch_load(a, code + off, 4), text + off);
        if (t == 0 && a->family == ARCH_FAMILY_AARCH64)
            t = adrp_add_target(a, code + off, len - off, text + off);
        if (t >= m->text && t < m->text_end && (t & 3) == 0)
            rc = vec_add(&v, t);
    }
    /* Function pointers: in a non-PIE executable they are absolute words
     * (a PIE's are relocations' addends, not read here). */
    for (size_t k = 0; k < sizeof data_secs / sizeof data_secs[0] && rc == 0; k++) {
        const uint8_t *d;
        size_t dlen;
        sw_addr daddr;
        if (sw_elf_is_dyn(e) || sw_elf_section(e, data_secs[k], false, &d, &dlen, &daddr) < 0)
            continue;
        for (size_t off = 0; off + a->word_size <= dlen && rc == 0; off += a->word_size) {
            sw_addr t = arch_load(a, d + off, a->word_size);
            if (t >= m->text && t < m->text_end && (t & (align - 1)) == 0)
                rc = vec_add(&v, t);
        }
    }
    /* A start that only jumps (a veneer: main's `nop; b main_body`, a
     * PowerPC local-entry thunk) leads to a start. */
    size_t ncalls = x86 ? 0 : v.n;
    for (size_t i = 0; i < ncalls && rc == 0; i++) {
        sw_addr at = v.v[i] - text;
        for (size_t k = 0; k < 2 && at + 4 * k + 4 <= len; k++) {
            uint32_t insn = (uint32_t)arch_load(a, code + at + 4 * k, 4);
            bool aa64 = a->family == ARCH_FAMILY_AARCH64;
            if ((aa64 && (insn == 0xd503201fu || insn == 0xd503245fu)) ||
                (!aa64 && insn == 0x60000000u))
                continue; /* nop, bti c */
            sw_addr t = 0;
            if (aa64 && (insn & 0xfc000000u) == 0x14000000u)
                t = v.v[i] + 4 * k +
                    (sw_addr)(((int64_t)((insn & 0x03ffffffu) ^ 0x02000000u) - 0x02000000) * 4);
            else if (!aa64 && (insn & 0xfc000003u) == 0x48000000u)
                t = v.v[i] + 4 * k +
                    (sw_addr)((int64_t)((insn & 0x03fffffcu) ^ 0x02000000u) - 0x02000000);
            if (t >= m->text && t < m->text_end && (t & 3) == 0)
                rc = vec_add(&v, t);
            break;
        }
    }
    sw_addr entry = sw_elf_entry(e);
    if (rc == 0 && entry >= m->text && entry < m->text_end)
        rc = vec_add(&v, entry);
    if (rc == 0)
        rc = vec_add(&v, m->text);
    if (rc < 0) {
        sw_free(v.v);
        sw_free(bounds);
        sw_free(jumps.v);
        return rc;
    }
    qsort(v.v, v.n, sizeof *v.v, addr_cmp);
    /* x86: a start where no instruction starts is a word of data, or a call's bytes read
     * out of step: dropped. */
    size_t k = 0;
    for (size_t i = 0; i < v.n; i++) {
        sw_addr off = v.v[i] - text;
        if (bounds && !(bounds[off / 8] & (1u << (off % 8))))
            continue;
        if (k == 0 || v.v[k - 1] != v.v[i])
            v.v[k++] = v.v[i];
    }
    sw_free(bounds);
    m->starts = v.v;
    m->n = k;
    /* The jumps from one extent into another that are no start: tail calls to functions
     * nothing calls, jumps to a function's split-off part (NAME.cold). */
    size_t nj = 0;
    for (size_t i = 0; i < jumps.n; i++) {
        size_t ts = start_index(m->starts, k, jumps.v[i].target);
        if (m->starts[ts] != jumps.v[i].target && ts != start_index(m->starts, k, jumps.v[i].site))
            jumps.v[nj++] = jumps.v[i];
    }
    if (nj > 1) /* with none, jumps.v may be NULL, which qsort may not be given */
        qsort(jumps.v, nj, sizeof *jumps.v, jumpin_cmp);
    m->ins = jumps.v;
    m->nins = nj;
    return 0;
}

/* The starts of the module holding PC (scanned on first use, kept in S when S is not
 * NULL, else in *TMP for the caller to free with sw_free of its arrays), and its LIB.
 * Returns 0, SW_ENOSYM or SW_ENOMEM. */
static int
starts_of(struct sw_walker *w, struct sw_an_starts *s, struct sw_disasm *dis, sw_addr pc,
          const struct sw_lib **lib, struct an_mod_starts *tmp, struct an_mod_starts **out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_elf *e;

    if (a->family != ARCH_FAMILY_AARCH64 && a->family != ARCH_FAMILY_PPC &&
        (a->family != ARCH_FAMILY_X86 || dis == NULL))
        return SW_ENOSYM;
    if (sw_libstate_lib_at(sw_walker_libstate(w), pc, lib) != 0 || (e = sw_lib_elf(*lib)) == NULL)
        return SW_ENOSYM;

    struct an_mod_starts *m = NULL;
    memset(tmp, 0, sizeof *tmp);
    for (size_t i = 0; s && i < AN_STARTS_MODS && m == NULL; i++)
        if (s->mods[i].elf == e)
            m = &s->mods[i];
    if (m == NULL) {
        tmp->elf = e;
        int rc = starts_scan(a, dis, e, tmp);
        if (rc < 0)
            return rc;
        if (s != NULL) {
            size_t victim = 0;
            for (size_t i = 1; i < AN_STARTS_MODS; i++)
                if (s->mods[i].used < s->mods[victim].used)
                    victim = i;
            sw_free(s->mods[victim].starts);
            sw_free(s->mods[victim].ins);
            s->mods[victim] = *tmp;
            memset(tmp, 0, sizeof *tmp);
            m = &s->mods[victim];
        } else {
            m = tmp;
        }
    }
    if (s != NULL)
        m->used = ++s->clock;
    *out = m;
    return 0;
}

static void
starts_tmp_free(struct an_mod_starts *tmp)
{
    sw_free(tmp->starts);
    sw_free(tmp->ins);
}

int
sw_an_starts_func(struct sw_walker *w, struct sw_an_starts *s, struct sw_disasm *dis, sw_addr pc,
                  struct sw_symbol *out)
{
    const struct sw_lib *lib;
    struct an_mod_starts tmp, *m;
    int rc = starts_of(w, s, dis, pc, &lib, &tmp, &m);
    if (rc < 0)
        return rc;

    sw_addr link = pc - lib->bias;
    rc = SW_ENOSYM;
    if (link >= m->text && link < m->text_end && m->n > 0) {
        size_t lo = start_index(m->starts, m->n, link);
        sw_addr end = lo + 1 < m->n ? m->starts[lo + 1] : m->text_end;
        *out = (struct sw_symbol){ .name = NULL,
                                   .start = m->starts[lo] + lib->bias,
                                   .size = end - m->starts[lo],
                                   .module = lib->name };
        sw_debug(SW_DBG_STEP,
                 "analysis: %#" PRIx64 " in code from %#" PRIx64 " (%" PRIu64 " bytes)",
                 (uint64_t)pc, (uint64_t)out->start, (uint64_t)out->size);
        rc = 0;
    }
    starts_tmp_free(&tmp);
    return rc;
}

int
sw_an_starts_jumpins(struct sw_walker *w, struct sw_an_starts *s, struct sw_disasm *dis, sw_addr lo,
                     sw_addr hi, struct sw_an_jumpin *out, size_t max, size_t *n)
{
    const struct sw_lib *lib;
    struct an_mod_starts tmp, *m;
    *n = 0;
    int rc = starts_of(w, s, dis, lo, &lib, &tmp, &m);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < m->nins && *n < max; i++) {
        sw_addr t = m->ins[i].target + lib->bias;
        if (t >= lo && t < hi)
            out[(*n)++] = (struct sw_an_jumpin){ .site = m->ins[i].site + lib->bias, .target = t };
    }
    starts_tmp_free(&tmp);
    return 0;
}
