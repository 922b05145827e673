/* walker/steppers/analysis_starts.c -- function extents in code no symbol covers.
 *
 * A stripped module (no .symtab: Debian's busybox-static) still shows where its functions
 * start: its direct calls' targets, the code addresses its data, GOT and TOC hold (non-PIE),
 * AArch64 adrp/add pairs, its entry point, and where a veneer (nop; b) leads.  A function
 * runs from the start at or below a PC to the next one.  AArch64 and PowerPC only: their
 * fixed 4-byte calls decode without false positives.  analysis.c analyses the extents.
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

struct an_mod_starts {
    const struct sw_elf *elf; /* borrowed, the key; NULL: a free slot */
    sw_addr text, text_end;   /* link-time extent of .text */
    sw_addr *starts;          /* owned: n sorted link-time addresses */
    size_t n;
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
    for (size_t i = 0; i < AN_STARTS_MODS; i++)
        sw_free(s->mods[i].starts);
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

/* Collect the starts of E's functions into M (M->elf set by the caller). */
static int
starts_scan(const struct arch_desc *a, struct sw_elf *e, struct an_mod_starts *m)
{
    static const char *const data_secs[] = { ".data.rel.ro", ".data", ".init_array", ".fini_array",
                                             ".got",         ".toc",  ".opd" };
    const uint8_t *code;
    size_t len;
    sw_addr text;
    struct an_vec v = { 0 };
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
    for (size_t off = 0; off + 4 <= len && rc == 0; off += 4) {
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
            if (t >= m->text && t < m->text_end && (t & 3) == 0)
                rc = vec_add(&v, t);
        }
    }
    /* A start that only jumps (a veneer: main's `nop; b main_body`, a
     * PowerPC local-entry thunk) leads to a start. */
    size_t ncalls = v.n;
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
        return rc;
    }
    qsort(v.v, v.n, sizeof *v.v, addr_cmp);
    size_t k = 0;
    for (size_t i = 0; i < v.n; i++)
        if (k == 0 || v.v[k - 1] != v.v[i])
            v.v[k++] = v.v[i];
    m->starts = v.v;
    m->n = k;
    return 0;
}

int
sw_an_starts_func(struct sw_walker *w, struct sw_an_starts *s, sw_addr pc, struct sw_symbol *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    const struct sw_lib *lib;
    struct sw_elf *e;

    if (a->family != ARCH_FAMILY_AARCH64 && a->family != ARCH_FAMILY_PPC)
        return SW_ENOSYM;
    if (sw_libstate_lib_at(sw_walker_libstate(w), pc, &lib) != 0 || (e = sw_lib_elf(lib)) == NULL)
        return SW_ENOSYM;

    struct an_mod_starts *m = NULL, tmp = { 0 };
    for (size_t i = 0; s && i < AN_STARTS_MODS && m == NULL; i++)
        if (s->mods[i].elf == e)
            m = &s->mods[i];
    if (m == NULL) {
        tmp.elf = e;
        int rc = starts_scan(a, e, &tmp);
        if (rc < 0)
            return rc;
        if (s != NULL) {
            size_t victim = 0;
            for (size_t i = 1; i < AN_STARTS_MODS; i++)
                if (s->mods[i].used < s->mods[victim].used)
                    victim = i;
            sw_free(s->mods[victim].starts);
            s->mods[victim] = tmp;
            m = &s->mods[victim];
        } else {
            m = &tmp;
        }
    }
    if (s != NULL)
        m->used = ++s->clock;

    sw_addr link = pc - lib->bias;
    int rc = SW_ENOSYM;
    if (link >= m->text && link < m->text_end && m->n > 0) {
        size_t lo = 0, hi = m->n; /* the last start <= link */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (m->starts[mid] <= link)
                lo = mid;
            else
                hi = mid;
        }
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
    if (m == &tmp)
        sw_free(tmp.starts);
    return rc;
}
