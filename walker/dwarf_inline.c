/* walker/dwarf_inline.c -- the frames gdb shows that the machine stack lacks.
 *
 * The inlined subroutines covering an address, and gdb's tail-call chains
 * (call_site_find_chain) over the DW_TAG_call_site entries of the parsed
 * units (dwarf_scopes.c).  Reads nothing from the target.
 */
#include "walker/dwarf_info.h"

#include <string.h>

#include "walker/dwarf_info_internal.h"
#include "walker/elf.h"

int
sw_dinfo_inline_chain(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_name *out, size_t max,
                      size_t *n)
{
    struct di_cu *cu;
    int rc;

    *n = 0;
    rc = sw_di_parsed_cu_at(d, vaddr, &cu);
    if (rc < 0 || cu == NULL)
        return rc;
    for (uint32_t i = sw_di_innermost_scope(cu, vaddr); i != DI_NONE; i = cu->scopes[i].parent) {
        const struct di_scope *s = &cu->scopes[i];
        if (s->kind == DI_FUNC)
            break;
        if (s->kind == DI_INLINED && *n < max)
            out[(*n)++] = (struct sw_dinfo_name){ .name = s->name,
                                                  .entry = cu->ranges.v[s->first].lo,
                                                  .die = s->die };
    }
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
    rc = sw_di_parsed_cu_at(d, target, &cu);
    if (rc < 0 || cu == NULL)
        return search_give_up(s, rc == SW_ENOMEM ? rc : SW_ENOENT);
    uint32_t f = sw_di_func_of(cu, sw_di_innermost_scope(cu, target));
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
    if (sw_di_parsed_cu_at(d, vaddr, &cu) < 0 || cu == NULL)
        return NULL;
    for (uint32_t i = sw_di_innermost_scope(cu, vaddr); i != DI_NONE; i = cu->scopes[i].parent)
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
    rc = sw_di_parsed_cu_at(d, caller_ra - 1, &cu);
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
