/* dwarf/chains.c -- DWARF's answers behind the inline and tail-call frames.
 *
 * The inlined subroutines covering an address, and gdb's tail-call chains
 * (call_site_find_chain) over the DW_TAG_call_site entries of the parsed
 * units (dwarf/scopes.c), in one file or across the files of a world the
 * caller describes (sw_dinfo_world): names and addresses only.  The frames
 * are made in one place, walker/virtual.c.  Reads nothing from the target.
 */
#include "dwarf/dwarf.h"

#include <string.h>

#include "dwarf/dwarf_internal.h"
#include "elf/elf.h"

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

/* A call site on a tail-call path, with the file it is in. */
struct di_hop {
    const struct di_site *site;
    struct sw_dinfo *d;
    sw_addr bias; /* of D's module: the site's runtime pc is site->pc + bias */
};

/* gdb's call_site_find_chain: a depth-first search over tail-call sites, in
 * runtime addresses, entering whichever file holds each target. */
struct di_search {
    const struct sw_dinfo_world *w;
    sw_addr callee;
    struct di_hop path[DI_MAX_CHAIN];
    size_t depth;
    struct di_hop res[DI_MAX_CHAIN];
    size_t rlen, callers, callees;
    bool have; /* RES holds the chains' common part */
    bool stop; /* gdb gave up: ambiguous, or a target it cannot resolve */
    unsigned visits;
    int rc;                  /* SW_ENOMEM */
    struct sw_dinfo *failed; /* the file whose message goes with RC, if any */
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
        if (s->res[i].site != s->path[i].site) {
            callers = i;
            break;
        }
    size_t callees = s->callees < len ? s->callees : len;
    for (size_t i = 0; i < callees; i++)
        if (s->res[s->rlen - 1 - i].site != s->path[len - 1 - i].site) {
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

/* End the search without an answer; RC SW_ENOMEM (message on FAILED, else
 * none yet) is kept, anything else is one of gdb's NO_ENTRY_VALUE_ERRORs. */
static void
search_give_up(struct di_search *s, int rc, struct sw_dinfo *failed)
{
    s->have = false;
    s->stop = true;
    if (rc == SW_ENOMEM) {
        s->rc = rc;
        s->failed = failed;
    }
}

/* The runtime address a call site's target starts at, as gdb's
 * call_site_target::iterate_over_addresses gives it without a frame:
 * 0 or an error for search_give_up. */
static int
site_target_addr(struct di_search *s, const struct di_hop *h, sw_addr *target)
{
    switch (h->site->tkind) {
    case DI_TGT_ADDR:
        *target = h->site->taddr + h->bias;
        return 0;
    case DI_TGT_NAME: {
        /* gdb's lookup_minimal_symbol: the name among every file's symbols. */
        int rc = s->w->symbol(s->w->arg, h->site->tname, target);
        return rc == SW_ENOMEM ? rc : rc < 0 ? SW_ENOENT : 0;
    }
    default:
        return SW_ENOENT; /* a DW_AT_call_target expression needs the caller's registers */
    }
}

static void
search_site(struct di_search *s, const struct di_hop *h)
{
    struct sw_dinfo *td;
    struct di_cu *cu;
    sw_addr target, tbias;
    int rc;

    if (++s->visits > DI_MAX_VISITS)
        return search_give_up(s, SW_ENOENT, NULL);
    rc = site_target_addr(s, h, &target);
    if (rc < 0)
        return search_give_up(s, rc, NULL);
    if (target == s->callee) {
        search_candidate(s);
        return;
    }
    /* gdb 13 tries each range's start of a DW_AT_ranges target: the others
     * than the first start no function and end the search. */
    if (h->site->tkind == DI_TGT_ADDR && h->site->tmulti)
        return search_give_up(s, SW_ENOENT, NULL);
    /* gdb's func_addr_to_tail_call_list: the target must start a function
     * of the file that holds it. */
    rc = s->w->file_at(s->w->arg, target, &td, &tbias);
    if (rc < 0 || td == NULL)
        return search_give_up(s, rc, NULL);
    rc = sw_di_parsed_cu_at(td, target - tbias, &cu);
    if (rc < 0 || cu == NULL)
        return search_give_up(s, rc, td);
    uint32_t f = sw_di_func_of(cu, sw_di_innermost_scope(cu, target - tbias));
    if (f == DI_NONE || cu->ranges.v[cu->scopes[f].first].lo != target - tbias)
        return search_give_up(s, SW_ENOENT, NULL);
    /* gdb keeps a function's tail-call sites in reverse DIE order, and
     * enters a site at most once per path (by its runtime pc). */
    for (size_t i = cu->nsites; i-- > 0;) {
        const struct di_site *t = &cu->sites[i];
        bool seen = false;
        if (t->func != f || !t->tail)
            continue;
        for (size_t k = 0; k < s->depth && !seen; k++)
            seen = s->path[k].site->pc + s->path[k].bias == t->pc + tbias;
        if (seen)
            continue;
        if (s->depth == DI_MAX_CHAIN)
            return search_give_up(s, SW_ENOENT, NULL);
        s->path[s->depth++] = (struct di_hop){ .site = t, .d = td, .bias = tbias };
        search_site(s, &s->path[s->depth - 1]);
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

/* gdb's call_site_for_pc: in the unit of RA - 1, the site whose pc is RA
 * (link-time addresses of D); NULL if none. */
static const struct di_site *
site_for_pc(struct di_cu *cu, sw_addr ra)
{
    size_t lo = 0, hi = cu->nsites;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cu->by_pc[mid].pc < ra)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < cu->nsites && cu->by_pc[lo].pc == ra)
        return &cu->sites[cu->by_pc[lo].idx];
    return NULL;
}

/* Copy a failure of D into ERR (D's own buffer needs no copy). */
static int
chain_fail(struct sw_errbuf *err, struct sw_dinfo *d, int rc)
{
    if (d != NULL && err == &d->err)
        return rc;
    if (d != NULL && d->err.code == rc)
        return sw_fail(err, rc, "%s", d->err.msg);
    return sw_fail(err, rc, "tail calls: out of memory");
}

int
sw_dinfo_tailcall_chain_world(const struct sw_dinfo_world *w, sw_addr caller_ra,
                              sw_addr callee_entry, struct sw_dinfo_tail *out, size_t max,
                              size_t *n, struct sw_errbuf *err)
{
    struct di_search *s;
    struct sw_dinfo *d;
    struct di_cu *cu;
    sw_addr bias;
    int rc;

    *n = 0;
    if (caller_ra == 0)
        return 0;
    rc = w->file_at(w->arg, caller_ra - 1, &d, &bias);
    if (rc < 0)
        return chain_fail(err, NULL, rc);
    if (d == NULL)
        return 0;
    rc = sw_di_parsed_cu_at(d, caller_ra - 1 - bias, &cu);
    if (rc < 0)
        return chain_fail(err, d, rc);
    const struct di_site *site = cu ? site_for_pc(cu, caller_ra - bias) : NULL;
    if (site == NULL)
        return 0;

    s = sw_calloc(1, sizeof *s);
    if (s == NULL)
        return chain_fail(err, NULL, SW_ENOMEM);
    s->w = w;
    s->callee = callee_entry;
    struct di_hop first = { .site = site, .d = d, .bias = bias };
    search_site(s, &first);
    rc = s->rc;
    if (rc < 0) {
        rc = chain_fail(err, s->failed, rc);
    } else if (s->have && s->rlen > 0) {
        /* gdb's pretend_pc: the callees' side innermost first, then the
         * callers' side; all of one chain when every chain is that chain. */
        const struct di_hop *order[2 * DI_MAX_CHAIN];
        size_t k = 0;
        if (s->callers + s->callees >= s->rlen) {
            for (size_t i = s->rlen; i-- > 0;)
                order[k++] = &s->res[i];
        } else {
            for (size_t i = 0; i < s->callees; i++)
                order[k++] = &s->res[s->rlen - 1 - i];
            for (size_t i = s->callers; i-- > 0;)
                order[k++] = &s->res[i];
        }
        for (size_t i = 0; i < k && *n < max; i++) {
            out[*n].pc = order[i]->site->pc + order[i]->bias;
            out[*n].name = name_at(order[i]->d, order[i]->site->pc - 1);
            (*n)++;
        }
    }
    sw_free(s);
    return rc;
}

/* One file, at its link-time addresses: names are its own ELF symbols. */
static int
one_file_at(void *arg, sw_addr addr, struct sw_dinfo **d, sw_addr *bias)
{
    (void)addr;
    *d = arg;
    *bias = 0;
    return 0;
}

static int
one_file_symbol(void *arg, const char *name, sw_addr *addr)
{
    struct sw_dinfo *d = arg;
    struct sw_elfsym sym;
    if (d->elf == NULL)
        return SW_ENOSYM;
    int rc = sw_elf_symbol_by_name(d->elf, name, &sym);
    if (rc == 0)
        *addr = sym.value;
    return rc;
}

int
sw_dinfo_tailcall_chain(struct sw_dinfo *d, sw_addr caller_ra, sw_addr callee_entry,
                        struct sw_dinfo_tail *out, size_t max, size_t *n)
{
    const struct sw_dinfo_world w = { .arg = d, .file_at = one_file_at, .symbol = one_file_symbol };
    return sw_dinfo_tailcall_chain_world(&w, caller_ra, callee_entry, out, max, n, &d->err);
}
