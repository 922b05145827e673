/* walker/virtual.c -- the frames gdb shows that are not on the machine stack.
 *
 * The one place that makes them: after a physical walk, inline frames
 * before each physical frame and tail-call frames between a frame and its
 * caller.  Which subroutines are inlined at an address and which tail calls
 * lie between two frames are DWARF questions that dwarf/chains.c answers
 * (names and addresses, no frames), with each module's sw_dinfo.  Tail-call
 * chains cross modules as gdb's do: the modules are one world (names
 * resolved over all of them, each address read with its own module's
 * DWARF).  No unwinding here: SPs and FPs are copied.
 */
#include "walker/walker_internal.h"

#include <inttypes.h>
#include <string.h>

#include "dwarf/dwarf.h"
#include "libstate/lib.h"
#include "libstate/module.h"

/* More inline levels or tail calls than this between two physical frames are
 * garbage (glibc has at most 3 inline levels and 1 tail call at a stop). */
#define VIRT_MAX_INLINE 32
#define VIRT_MAX_TAIL   32

/* A name a call site declares, as the modules resolved it. */
struct virt_name {
    char *name;   /* owned */
    sw_addr addr; /* runtime; valid when rc is 0 */
    int rc;       /* 0 or SW_ENOSYM */
};

struct sw_virtual {
    struct virt_name *names; /* valid for the module list NAMES_KEY summarizes */
    size_t nnames, capnames;
    uint64_t names_key;
};

static void
names_clear(struct sw_virtual *v)
{
    for (size_t i = 0; i < v->nnames; i++)
        sw_free(v->names[i].name);
    v->nnames = 0;
}

void
sw_virtual_free(struct sw_virtual *v)
{
    if (v == NULL)
        return;
    names_clear(v);
    sw_free(v->names);
    sw_free(v);
}

/* The DWARF of LIB: its module's (sw_module_dinfo: opened on first use,
 * shared with every walker of the file); *D NULL when it has none or cannot
 * be read (that is no error for a walk).  Returns 0 or SW_ENOMEM. */
static int
module_dinfo(struct sw_virtual *v, const struct sw_lib *lib, struct sw_dinfo **d,
             struct sw_errbuf *err)
{
    (void)v;
    *d = NULL;
    if (lib->path == NULL || sw_lib_module(lib) == NULL)
        return 0; /* the vDSO read from memory: no debug info */
    return sw_module_dinfo(sw_lib_module(lib), d, err);
}

/* The module covering PC and its DWARF; *D NULL if none. */
static int
dinfo_at(struct sw_virtual *v, struct sw_libstate *ls, sw_addr pc, const struct sw_lib **lib,
         struct sw_dinfo **d, struct sw_errbuf *err)
{
    *d = NULL;
    if (sw_libstate_lib_at(ls, pc, lib) < 0)
        return 0;
    return module_dinfo(v, *lib, d, err);
}

/* ---- the modules as one world for tail-call searches ------------------------------------ */

struct virt_world {
    struct sw_virtual *v;
    struct sw_libstate *ls;
    struct sw_errbuf *err;
};

static int
world_file_at(void *arg, sw_addr addr, struct sw_dinfo **d, sw_addr *bias)
{
    struct virt_world *w = arg;
    const struct sw_lib *lib = NULL;
    int rc = dinfo_at(w->v, w->ls, addr, &lib, d, w->err);
    *bias = *d != NULL ? lib->bias : 0;
    return rc;
}

/* gdb's lookup_minimal_symbol over every module, in the order gdb loads them
 * (the executable, then the link map's, then the vDSO, which gdb reads from
 * memory once the others are in): the first GLOBAL or WEAK symbol named NAME
 * ends the search; failing one, the LOCAL one of the last module that has
 * one.  0, SW_ENOSYM or SW_ENOMEM. */
static int
resolve_name(struct sw_libstate *ls, const char *name, sw_addr *addr)
{
    size_t n = sw_libstate_count(ls);
    int found = SW_ENOSYM;

    for (int from_memory = 0; from_memory < 2; from_memory++)
        for (size_t i = 0; i < n; i++) {
            const struct sw_lib *lib = sw_libstate_lib(ls, i);
            struct sw_elfsym sym;
            bool local = false;
            if (sw_lib_elf(lib) == NULL || (lib->path == NULL) != from_memory)
                continue;
            int rc = sw_elf_symbol_by_name_bind(sw_lib_elf(lib), name, &sym, &local);
            if (rc == SW_ENOMEM)
                return rc;
            if (rc != 0)
                continue;
            *addr = sym.value + lib->bias;
            found = 0;
            if (!local)
                return 0;
        }
    return found;
}

static int
world_symbol(void *arg, const char *name, sw_addr *addr)
{
    struct virt_world *w = arg;
    struct sw_virtual *v = w->v;
    struct virt_name *e;

    for (size_t i = 0; i < v->nnames; i++)
        if (strcmp(v->names[i].name, name) == 0) {
            *addr = v->names[i].addr;
            return v->names[i].rc;
        }
    if (v->nnames == v->capnames) {
        size_t cap = v->capnames ? v->capnames * 2 : 16;
        e = sw_realloc(v->names, cap * sizeof *e);
        if (e == NULL)
            return SW_ENOMEM;
        v->names = e;
        v->capnames = cap;
    }
    e = &v->names[v->nnames];
    *e = (struct virt_name){ .name = sw_strdup(name) };
    if (e->name == NULL)
        return SW_ENOMEM;
    e->rc = resolve_name(w->ls, name, &e->addr);
    if (e->rc == SW_ENOMEM) {
        sw_free(e->name);
        return SW_ENOMEM;
    }
    v->nnames++;
    *addr = e->addr;
    return e->rc;
}

/* A summary of the module list (paths and biases): names resolved for
 * another list are forgotten. */
static uint64_t
libs_key(struct sw_libstate *ls)
{
    size_t n = sw_libstate_count(ls);
    uint64_t h = 14695981039346656037ull;

    for (size_t i = 0; i < n; i++) {
        const struct sw_lib *lib = sw_libstate_lib(ls, i);
        for (const char *c = lib->path ? lib->path : lib->name; c && *c; c++)
            h = (h ^ (uint8_t)*c) * 1099511628211ull;
        h = (h ^ lib->bias) * 1099511628211ull;
    }
    return (h ^ n) * 1099511628211ull;
}

struct virt_out {
    struct sw_frame *frames;
    size_t n, cap;
};

static int
out_push(struct virt_out *o, const struct sw_frame *f)
{
    struct sw_frame *nf = sw_grow(o->frames, &o->cap, o->n + 1, sizeof *nf, 32);
    if (nf == NULL)
        return SW_ENOMEM;
    o->frames = nf;
    o->frames[o->n++] = *f;
    return 0;
}

/* A query failure other than ENOMEM only means no virtual frames here. */
static int
query_rc(struct sw_dinfo *d, int rc, struct sw_errbuf *err)
{
    if (rc == SW_ENOMEM)
        return sw_fail(err, rc, "%s", sw_dinfo_errmsg(d));
    if (rc < 0)
        sw_debug(SW_DBG_STEP, "virtual frames: %s", sw_dinfo_errmsg(d));
    return 0;
}

/* Push the inline frames of physical frame PHYS, then PHYS. */
static int
push_with_inlines(struct sw_virtual *v, struct sw_libstate *ls, const struct sw_frame *phys,
                  struct virt_out *o, struct sw_errbuf *err)
{
    struct sw_dinfo_name names[VIRT_MAX_INLINE];
    const struct sw_lib *lib = NULL;
    struct sw_dinfo *d = NULL; /* stays NULL for signal frames: no DWARF lookup */
    size_t n = 0;
    int rc;

    if (phys->kind != SW_FRAME_SIGNAL) {
        sw_addr pc = sw_frame_lookup_pc(phys);
        rc = dinfo_at(v, ls, pc, &lib, &d, err);
        if (rc < 0)
            return rc;
        if (d != NULL) {
            rc = query_rc(d, sw_dinfo_inline_chain(d, pc - lib->bias, names, VIRT_MAX_INLINE, &n),
                          err);
            if (rc < 0)
                return rc;
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct sw_frame f = *phys;
        f.kind = SW_FRAME_INLINE;
        f.stepper = NULL;
        f.bottom = false;
        f.vname = names[i].name;
        rc = out_push(o, &f);
        if (rc < 0)
            return sw_fail(err, rc, "adding inline frames: out of memory");
    }
    /* The physical frame takes the DWARF name of its function, as gdb's
     * backtrace does (the ELF symbol of a cold part is "fib.cold"). */
    struct sw_frame named = *phys;
    struct sw_dinfo_name fn;
    if (d != NULL && named.vname == NULL && phys->kind == SW_FRAME_NORMAL) {
        rc = sw_dinfo_function(d, sw_frame_lookup_pc(phys) - lib->bias, &fn);
        if (rc == SW_ENOMEM)
            return sw_fail(err, rc, "naming frames: out of memory");
        if (rc == 0 && fn.name != NULL)
            named.vname = fn.name;
    }
    if (out_push(o, &named) < 0)
        return sw_fail(err, SW_ENOMEM, "adding inline frames: out of memory");
    return 0;
}

/* Push the tail-call frames between CALLEE and its caller CALLER, which may
 * be in different modules (a call through the PLT): the search enters every
 * module's DWARF (sw_dinfo_tailcall_chain_world). */
static int
push_tailcalls(struct sw_virtual *v, struct sw_libstate *ls, const struct sw_frame *callee,
               const struct sw_frame *caller, struct virt_out *o, struct sw_errbuf *err)
{
    struct sw_dinfo_tail tails[VIRT_MAX_TAIL];
    struct virt_world world = { .v = v, .ls = ls, .err = err };
    const struct sw_dinfo_world w = { .arg = &world,
                                      .file_at = world_file_at,
                                      .symbol = world_symbol };
    const struct sw_lib *lib = NULL;
    struct sw_dinfo *d;
    struct sw_elfsym sym;
    sw_addr pc, entry;
    size_t n = 0;
    int rc;

    /* gdb looks for tail calls only below frames it unwound with CFI: never
     * across a signal trampoline or into code a signal interrupted. */
    if (callee->kind == SW_FRAME_SIGNAL || caller->kind == SW_FRAME_SIGNAL || caller->non_call ||
        caller->ra == 0)
        return 0;
    pc = sw_frame_lookup_pc(callee);
    rc = dinfo_at(v, ls, pc, &lib, &d, err);
    if (rc < 0 || lib == NULL || sw_lib_elf(lib) == NULL)
        return rc;
    /* gdb's get_pc_function_start: the DWARF function's entry, else the
     * symbol's. */
    rc = d != NULL ? sw_dinfo_function_entry(d, pc - lib->bias, &entry) : SW_ENOENT;
    if (rc == SW_ENOMEM)
        return query_rc(d, rc, err);
    if (rc < 0) {
        if (sw_elf_symbol_at(sw_lib_elf(lib), pc - lib->bias, &sym) != 0)
            return 0;
        entry = sym.value;
    }
    rc = sw_dinfo_tailcall_chain_world(&w, caller->ra, entry + lib->bias, tails, VIRT_MAX_TAIL, &n,
                                       err);
    if (rc == SW_ENOMEM)
        return rc;
    if (rc < 0) {
        sw_debug(SW_DBG_STEP, "virtual frames: %s", err->msg);
        sw_err_clear(err);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        struct sw_frame f;
        sw_frame_init(&f);
        f.ra = tails[i].pc;
        f.sp = caller->sp;
        f.fp = caller->fp;
        f.sp_loc = caller->sp_loc;
        f.fp_loc = caller->fp_loc;
        f.thread = caller->thread;
        f.trust = caller->trust;
        f.kind = SW_FRAME_TAILCALL;
        f.vname = tails[i].name;
        if (out_push(o, &f) < 0)
            return sw_fail(err, SW_ENOMEM, "adding tail-call frames: out of memory");
    }
    return 0;
}

static bool
is_virtual(const struct sw_frame *f)
{
    return f->kind == SW_FRAME_INLINE || f->kind == SW_FRAME_TAILCALL;
}

int
sw_virtual_frames_add(struct sw_virtual **cache, struct sw_libstate *ls, struct sw_stack *st,
                      struct sw_errbuf *err)
{
    struct virt_out o = { 0 };
    const struct sw_frame *prev = NULL;
    int rc = 0;

    if (st->n == 0)
        return 0;
    if (*cache == NULL) {
        *cache = sw_calloc(1, sizeof **cache);
        if (*cache == NULL)
            return sw_fail(err, SW_ENOMEM, "adding inline frames: out of memory");
    }
    uint64_t key = libs_key(ls);
    if (key != (*cache)->names_key) {
        names_clear(*cache);
        (*cache)->names_key = key;
    }
    for (size_t i = 0; i < st->n && rc == 0; i++) {
        const struct sw_frame *f = &st->frames[i];
        if (is_virtual(f))
            continue;
        if (prev != NULL)
            rc = push_tailcalls(*cache, ls, prev, f, &o, err);
        if (rc == 0)
            rc = push_with_inlines(*cache, ls, f, &o, err);
        prev = f;
    }
    if (rc < 0) {
        sw_free(o.frames);
        return rc;
    }
    for (size_t i = 0; i < o.n; i++)
        o.frames[i].level = (unsigned)i;
    sw_free(st->frames);
    st->frames = o.frames;
    st->n = o.n;
    st->cap = o.cap;
    return 0;
}

int
sw_walker_add_virtual_frames(struct sw_walker *w, struct sw_stack *st)
{
    struct sw_errbuf err = { 0 };
    int rc = sw_virtual_frames_add(sw_walker_virtual_slot(w), sw_walker_libstate(w), st, &err);
    if (rc < 0)
        return sw_walker_fail(w, rc, "%s", err.msg);
    return 0;
}

int
sw_walker_dinfo_at(struct sw_walker *w, sw_addr pc, const struct sw_lib **lib, struct sw_dinfo **d)
{
    struct sw_virtual **slot = sw_walker_virtual_slot(w);
    struct sw_errbuf err = { 0 };
    int rc;

    *d = NULL;
    if (*slot == NULL) {
        *slot = sw_calloc(1, sizeof **slot);
        if (*slot == NULL)
            return sw_walker_fail(w, SW_ENOMEM, "reading debug info: out of memory");
    }
    rc = dinfo_at(*slot, sw_walker_libstate(w), pc, lib, d, &err);
    if (rc < 0)
        return sw_walker_fail(w, rc, "%s", err.msg);
    return 0;
}
