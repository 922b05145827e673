/* walker/walker.c -- Walker: the walk loop and what it owns.
 *
 * Each step asks the stepper group for the steppers covering the frame's
 * lookup PC, in priority order, until one succeeds or says the stack ends.
 * Walks always end: a frame limit, stack pointers that move outward (signal
 * frames excepted), no repeated frame, a timeout on every protocol read.
 * The walk context steppers use is walker/context.c, the steppers
 * themselves live in walker/steppers/ and are made by name in
 * walker/steppers/registry.c; this file is above all of them.
 */
#include "rspwalk/walker.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "elf/elf.h"
#include "libstate/lib.h"
#include "rspwalk/stepper.h"
#include "walker/context.h"

#define SW_DEFAULT_MAX_FRAMES 4096

/* The numbers of SW_VERSION, the Makefile's VERSION: the one definition. */
void
sw_version(int *major, int *minor, int *maintenance)
{
    *major = *minor = *maintenance = 0;
    (void)sscanf(SW_VERSION, "%d.%d.%d", major, minor, maintenance);
}

const char *
sw_walk_end_name(enum sw_walk_end end)
{
    switch (end) {
    case SW_END_NONE:
        return "none";
    case SW_END_BOTTOM:
        return "bottom";
    case SW_END_NO_STEPPER:
        return "no-stepper";
    case SW_END_MEMORY:
        return "memory";
    case SW_END_DEPTH:
        return "depth";
    case SW_END_CORRUPT:
        return "corrupt";
    case SW_END_LINK:
        return "link";
    }
    return "unknown";
}

void
sw_stack_init(struct sw_stack *st)
{
    memset(st, 0, sizeof *st);
}

void
sw_stack_fini(struct sw_stack *st)
{
    sw_free(st->frames);
    sw_stack_init(st);
}

static int
stack_push(struct sw_stack *st, const struct sw_frame *f)
{
    struct sw_frame *nf = sw_grow(st->frames, &st->cap, st->n + 1, sizeof *nf, 32);
    if (nf == NULL)
        return SW_ENOMEM;
    st->frames = nf;
    st->frames[st->n++] = *f;
    return 0;
}

/* Library changes reach every stepper (newLibraryNotification). */
static void
walker_lib_changed(void *arg, const struct sw_lib *lib, enum sw_lib_change change)
{
    struct sw_walker *w = arg;
    if (change == SW_LIB_UNLOAD)
        for (size_t i = 0; i < SW_WALKER_MAX_CACHES; i++)
            if (w->caches[i].ops != NULL)
                w->caches[i].ops->clear(w->caches[i].cache);
    for (size_t i = 0; i < w->nsteppers; i++) {
        struct sw_stepper *s = w->steppers[i];
        if (s->ops->library_changed)
            s->ops->library_changed(s, lib, change);
    }
}

void
sw_stepper_free(struct sw_stepper *s)
{
    if (s == NULL)
        return;
    if (s->ops != NULL && s->ops->destroy)
        s->ops->destroy(s);
    else
        sw_free(s);
}

int
sw_add_stepper(struct sw_walker *w, struct sw_stepper *s)
{
    int rc;

    if (s == NULL || s->ops == NULL || s->ops->caller_frame == NULL || s->ops->name == NULL) {
        if (s != NULL && s->ops != NULL)
            sw_stepper_free(s);
        return sw_walker_fail(w, SW_EINVAL, "adding a stepper: it lacks a name or caller_frame");
    }
    if (w->nsteppers == w->capsteppers) {
        size_t cap = w->capsteppers ? w->capsteppers * 2 : 8;
        struct sw_stepper **n = sw_realloc(w->steppers, cap * sizeof *n);
        if (n == NULL) {
            const char *name = s->ops->name; /* static: outlives the stepper */
            sw_stepper_free(s);
            return sw_walker_fail(w, SW_ENOMEM, "adding stepper %s: out of memory", name);
        }
        w->steppers = n;
        w->capsteppers = cap;
    }
    w->steppers[w->nsteppers++] = s;
    s->walker = w;
    if (s->ops->group_registered)
        rc = s->ops->group_registered(s, &w->group);
    else
        rc = sw_stepper_group_add(&w->group, s, 0, UINT64_MAX);
    if (rc < 0)
        return sw_walker_fail(w, rc, "registering stepper %s: %s", s->ops->name, sw_strerror(rc));
    return 0;
}

/* The runtime address of symbol NAME in the first loaded file that has it: 1, or 0 when
 * none has. */
static int
walker_symbol_lookup(void *arg, const char *name, sw_addr *addr)
{
    struct sw_walker *w = arg;
    for (size_t i = 0; i < sw_libstate_count(w->libs); i++) {
        const struct sw_lib *lib = sw_libstate_lib(w->libs, i);
        sw_addr value;
        if (sw_lib_module(lib) != NULL &&
            sw_elf_any_symbol(sw_module_elf(sw_lib_module(lib)), name, &value) == 0) {
            *addr = value + lib->bias;
            return 1;
        }
    }
    return 0;
}

void
sw_walker_config_init(struct sw_walker_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->modcache = NULL; /* a module cache of the walker's own */
}

int
sw_walker_new(struct sw_proc *proc, const struct sw_walker_config *cfg, struct sw_walker **out,
              struct sw_errbuf *err)
{
    struct sw_walker_config def = { 0 };
    struct sw_walker *w;
    int rc;

    if (cfg == NULL)
        cfg = &def;
    if (proc == NULL)
        return sw_fail(err, SW_EINVAL, "creating a walker: no process");
    w = sw_calloc(1, sizeof *w);
    if (w == NULL) {
        sw_proc_free(proc);
        return sw_fail(err, SW_ENOMEM, "creating a walker: out of memory");
    }
    w->proc = proc;
    w->max_frames = cfg->max_frames ? cfg->max_frames : SW_DEFAULT_MAX_FRAMES;
    w->virtual_frames = !cfg->no_virtual_frames;
    sw_stepper_group_init(&w->group);

    struct sw_libstate_config lcfg = { .sysroot = cfg->sysroot,
                                       .exe = cfg->exe,
                                       .debug_dir = cfg->debug_dir,
                                       .lib_path = cfg->lib_path,
                                       .cache_dir = cfg->cache_dir,
                                       .cache_max_bytes = cfg->cache_max_bytes,
                                       .no_jit = cfg->no_jit,
                                       .no_maps = cfg->no_maps,
                                       .modcache = cfg->modcache };
    rc = sw_libstate_new(proc, &lcfg, &w->libs);
    if (rc < 0) {
        sw_fail(err, rc, "creating the library state: %s", sw_strerror(rc));
        goto fail;
    }
    sw_libstate_set_change_cb(w->libs, walker_lib_changed, w);
    w->sym = sw_symlookup_elf_new(w->libs);
    if (w->sym == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "creating the symbol lookup: out of memory");
        goto fail;
    }
    if (!cfg->no_default_steppers) {
        /* In priority order: SW_PRIO_STACKBOTTOM first, SW_PRIO_WANDERER last. */
        const char *name;
        for (size_t i = 0; (name = sw_stepper_default_name(i)) != NULL; i++) {
            struct sw_stepper *s;
            rc = sw_stepper_new_named(name, &s);
            if (rc < 0) {
                sw_fail(err, rc, "creating the default steppers: out of memory");
                goto fail;
            }
            rc = sw_add_stepper(w, s);
            if (rc < 0) {
                sw_err_copy(err, &w->err);
                goto fail;
            }
        }
    }
    rc = sw_libstate_refresh(w->libs);
    if (rc < 0) {
        sw_fail(err, rc, "%s", sw_libstate_errmsg(w->libs));
        goto fail;
    }
    /* A bare-metal stub's symbol look-ups (OpenOCD's RTOS awareness), from the files. */
    size_t asked = 0;
    if (proc->ops->serve_symbols != NULL &&
        (rc = proc->ops->serve_symbols(proc, walker_symbol_lookup, w, &asked)) < 0) {
        sw_fail(err, rc, "answering the target's symbol look-ups: %s", proc->err.msg);
        goto fail;
    }
    w->libs_gen = proc->stop_gen;
    *out = w;
    return 0;

fail:
    sw_walker_free(w);
    return rc;
}

void
sw_walker_free(struct sw_walker *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; i < w->nsteppers; i++)
        sw_stepper_free(w->steppers[i]);
    sw_free(w->steppers);
    sw_stepper_group_fini(&w->group);
    for (size_t i = 0; i < SW_WALKER_MAX_CACHES; i++)
        if (w->caches[i].ops != NULL)
            w->caches[i].ops->free(w->caches[i].cache);
    sw_virtual_free(w->virt); /* before the library state: it borrows its ELF files */
    sw_symlookup_free(w->sym);
    sw_libstate_free(w->libs);
    sw_proc_free(w->proc);
    sw_free(w);
}

int
sw_threads(struct sw_walker *w, sw_tid *tids, size_t max, size_t *n)
{
    int rc = sw_proc_threads(w->proc, tids, max, n);
    if (rc < 0)
        return sw_walker_fail_from_proc(w, rc);
    return 0;
}

int
sw_walker_prefetch(struct sw_walker *w, const sw_tid *tids, size_t n)
{
    int rc = sw_proc_prefetch_threads(w->proc, tids, n);
    if (rc < 0)
        return sw_walker_fail_from_proc(w, rc);
    return 0;
}

static void
classify_frame(struct sw_walker *w, struct sw_frame *f)
{
    const struct arch_desc *a = w->proc->arch;
    if ((a->exc_return != NULL && a->exc_return(f->ra)) ||
        sw_walker_sigframe_at(w, f->ra) != NULL) {
        f->kind = SW_FRAME_SIGNAL;
        f->non_call = true;
    }
}

int
sw_initial_frame(struct sw_walker *w, sw_tid tid, struct sw_frame *out)
{
    const struct arch_desc *a = w->proc->arch;
    struct sw_frame f;
    sw_word v;
    int rc;

    if (tid == SW_TID_DEFAULT)
        tid = w->proc->default_tid;
    sw_frame_init(&f);
    f.thread = tid;
    f.top = true;
    f.trust = SW_TRUST_REGISTERS;

    rc = w->proc->ops->read_reg(w->proc, tid, (unsigned)a->dw_pc, &v);
    if (rc < 0)
        return sw_walker_fail_from_proc(w, rc);
    f.ra = v;
    f.ra_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_pc };
    rc = w->proc->ops->read_reg(w->proc, tid, (unsigned)a->dw_sp, &v);
    if (rc < 0)
        return sw_walker_fail_from_proc(w, rc);
    f.sp = v;
    f.sp_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_sp };
    if (w->proc->ops->read_reg(w->proc, tid, (unsigned)a->dw_fp, &v) == 0) {
        f.fp = v;
        f.fp_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_fp };
    }
    /* The other registers are lazy (sw_walker_frame_reg): a stop reply that
     * expedited PC, SP and FP then costs no register packet at all. */
    w->lazy_valid = true;
    w->lazy_tid = tid;
    w->lazy_depth = 0;
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, f.ra);
    sw_frame_set_reg(&f, (unsigned)a->dw_sp, f.sp);
    classify_frame(w, &f);
    *out = f;
    return 0;
}

/* Whether OUT, just computed as the caller of IN, moves outward: its SP is
 * above IN's, or IN is a signal frame (the handler may run on another stack),
 * or OUT resumes a signal's interrupted code. */
static bool
frame_moves_outward(const struct sw_frame *in, const struct sw_frame *out)
{
    if (in->kind == SW_FRAME_SIGNAL || out->trust == SW_TRUST_SIGFRAME)
        return !(out->sp == in->sp && out->ra == in->ra);
    if (out->sp > in->sp)
        return true;
    /* A leaf frame whose caller shares its SP: only when the RA changes and
     * the frame did not push anything (aarch64/ppc leaves, x86 frame 0 at
     * function entry has SP + word already), and only where the PC is exact:
     * the top frame, or the frame a signal interrupted (a leaf spinning when
     * SIGALRM came). */
    return out->sp == in->sp && out->ra != in->ra && (in->top || in->non_call);
}

/* Whether link-time address VADDR of E lies in an executable PT_LOAD
 * segment: 1 yes, 0 no, -1 when the program headers cannot be read (then
 * nothing is said).  Read through the loaded image, as the target holds it:
 * the ELF header at the first PT_LOAD, the program headers where
 * sw_elf_phdr_vaddr says. */
static int
elf_addr_in_code(const struct arch_desc *a, struct sw_elf *e, sw_addr vaddr)
{
    uint8_t eh[64], ph[56];
    sw_addr lo, hi, phdr = sw_elf_phdr_vaddr(e);

    sw_elf_load_range(e, &lo, &hi);
    if (phdr == 0 || sw_elf_read(e, lo, eh, sizeof eh) < 0 || memcmp(eh, "\177ELF", 4) != 0)
        return -1;
    const bool is64 = eh[4] == 2;
    const size_t phentsize = (size_t)arch_load(a, eh + (is64 ? 54 : 42), 2);
    const size_t phnum = (size_t)arch_load(a, eh + (is64 ? 56 : 44), 2);
    if (phentsize < (is64 ? 56u : 32u) || phnum == 0 || phnum > 256)
        return -1;
    for (size_t i = 0; i < phnum; i++) {
        if (sw_elf_read(e, phdr + i * phentsize, ph, is64 ? 56 : 32) < 0)
            return -1;
        uint32_t type = (uint32_t)arch_load(a, ph, 4);
        uint32_t flags = (uint32_t)arch_load(a, ph + (is64 ? 4 : 24), 4);
        sw_addr pv = arch_load(a, ph + (is64 ? 16 : 8), is64 ? 8 : 4);
        sw_addr memsz = arch_load(a, ph + (is64 ? 40 : 20), is64 ? 8 : 4);
        if (type == 1 /* PT_LOAD */ && (flags & 1) /* PF_X */ && vaddr >= pv && vaddr - pv < memsz)
            return 1;
    }
    return 0;
}

/* Whether every module of LS has a known extent: one without a local file
 * or an image read from memory (its file not found: no --sysroot or
 * --lib-path for it) covers addresses no one can tell, so an address in no
 * module may be in it.  The vDSO's image gives its extent. */
static bool
libstate_extents_known(const struct sw_libstate *ls)
{
    for (size_t i = 0; i < sw_libstate_count(ls); i++) {
        const struct sw_lib *lib = sw_libstate_lib(ls, i);
        if (sw_lib_elf(lib) == NULL || lib->end <= lib->start)
            return false;
    }
    return true;
}

/* Whether OUT, just computed as the caller of IN, may be believed: its
 * return address lies in code the walker knows of (an executable segment
 * of a module of the library state, the vDSO and JIT objects among them;
 * executable memory of the process's memory map; a signal trampoline; an
 * M-profile EXC_RETURN), and, for a frame not found by CFI
 * or a saved signal context, the instruction before it is a call.  A frame
 * that fails is garbage read as a frame: another stepper may do better, and
 * if none does the walk ends "corrupt", not "bottom".  Not checked: a
 * target whose modules are not known (a bare-metal stub), nor an address in
 * no module while some module's extent is unknown (its file not found). */
static bool
frame_believable(struct sw_walker *w, const struct sw_frame *out)
{
    const struct sw_lib *lib;

    if (out->trust == SW_TRUST_SIGFRAME || sw_libstate_count(w->libs) == 0)
        return true; /* the interrupted PC: any code at all */
    const struct arch_desc *a = w->proc->arch;
    if ((a->exc_return != NULL && a->exc_return(out->ra)) ||
        sw_walker_sigframe_at(w, out->ra) != NULL)
        return true; /* a handler's return address: the trampoline or EXC_RETURN, no call */
    if (sw_libstate_lib_at(w->libs, out->ra - 1, &lib) != 0) {
        if (!libstate_extents_known(w->libs))
            return true;
        /* Executable memory of the process's memory map (V8's compiled
         * code, a JIT's buffer): code, but its frames are believed only as
         * a module's are where no CFI vouches for them, after a call. */
        if (sw_libstate_exec_at(w->libs, out->ra - 1) != 0)
            return false;
        if (out->trust == SW_TRUST_CFI)
            return true;
        w->code_from_target = true; /* no file: the bytes come from the target */
        int call = sw_walker_follows_call(w, out->ra);
        w->code_from_target = false;
        return call != 0; /* unreadable bytes: not known either way */
    }
    if (sw_lib_elf(lib) != NULL &&
        elf_addr_in_code(w->proc->arch, sw_lib_elf(lib), out->ra - 1 - lib->bias) == 0)
        return false; /* the module's data */
    if (out->trust == SW_TRUST_CFI)
        return true;
    return sw_walker_follows_call(w, out->ra) != 0;
}

/* Whether PC, a frame's own, lies in no module while every module's
 * extent is known (JIT code not registered through the GDB JIT interface,
 * or read with --no-jit; a jump into data).  Executable memory of the
 * memory map counts as unknown here: without CFI a scan's first hit in its
 * frame is as likely a stale word.  0 is not: a
 * call through a null pointer, whose caller the return address on the
 * stack or in the link register gives. */
static bool
pc_in_unknown_code(struct sw_walker *w, sw_addr pc)
{
    const struct sw_lib *lib;

    if (pc == 0 || sw_libstate_count(w->libs) == 0 || sw_walker_sigframe_at(w, pc) != NULL)
        return false;
    return sw_libstate_lib_at(w->libs, pc, &lib) != 0 && libstate_extents_known(w->libs);
}

/* Whether OUT, found by scanning from frame 0 IN, is the word at IN's SP on
 * a machine whose calls push the return address: where a call through a
 * wild pointer left it, the callee not having run (gdb's frame for a PC
 * without a function reads it there too). */
static bool
scan_at_sp(const struct sw_walker *w, const struct sw_frame *in, const struct sw_frame *out)
{
    const struct arch_desc *a = w->proc->arch;
    return in->level == 0 && a->call_ra_on_stack && out->sp == in->sp + a->word_size;
}

int
sw_walk_single(struct sw_walker *w, const struct sw_frame *in, struct sw_frame *out,
               enum sw_walk_end *end)
{
    enum sw_walk_end why = SW_END_NO_STEPPER;
    const struct sw_stepper *last = NULL;
    sw_addr pc = sw_frame_lookup_pc(in);
    bool saw_invalid = false;
    /* CFI put the caller in code no module covers (a JIT's not registered,
     * or read with --no-jit): a scan past it finds only stale words. */
    bool cfi_unknown = false;

    sw_err_clear(&w->proc->err);
    for (;;) {
        struct sw_stepper *s = sw_stepper_group_find(&w->group, pc, last);
        struct sw_frame f;
        enum sw_gcf r;

        if (s == NULL)
            break;
        last = s;
        sw_frame_init(&f);
        r = s->ops->caller_frame(s, in, &f);
        sw_debug(SW_DBG_STEP, "step: frame %u ra 0x%" PRIx64 " sp 0x%" PRIx64 ": %s -> %d",
                 in->level, in->ra, in->sp, s->ops->name, (int)r);
        switch (r) {
        case SW_GCF_SUCCESS:
            if (f.ra == 0 && (in->trust == SW_TRUST_SCAN || f.trust != SW_TRUST_CFI)) {
                /* Read in a frame found by scanning, whose SP may be wrong,
                 * or read where no CFI says the return address is (a slot
                 * not yet written: frame 0 in a prologue's out-of-line save
                 * routine): a zero there says nothing of the stack's
                 * bottom, which stackbottom's rules and CFI tell. */
                saw_invalid = true;
                continue;
            }
            if (f.ra == 0 && w->proc->arch->exc_return != NULL && f.ra_loc.kind == SW_LOC_ADDRESS) {
                /* M-profile: the outermost frame's LR is 0xFFFFFFFF out of
                 * reset, or an RTOS's task-exit function; a zero read from
                 * the stack is rather what OpenOCD answers for memory it
                 * cannot read.  Not a bottom. */
                saw_invalid = true;
                continue;
            }
            if (f.ra == 0) {
                /* A zero return address where CFI says it is, is how the
                 * outermost frame's caller looks (gdb's "zero PC" stop): IN
                 * is the bottom. */
                if (end)
                    *end = SW_END_BOTTOM;
                return SW_ENOENT;
            }
            bool outward = frame_moves_outward(in, &f);
            /* From code no module covers only a scan finds a caller, and
             * its first hit is as likely a stale word (a JIT's frame holds
             * old return addresses of the C code that ran before it). */
            bool believed =
                outward && frame_believable(w, &f) &&
                !(f.trust == SW_TRUST_SCAN &&
                  (cfi_unknown || (pc_in_unknown_code(w, pc) && !scan_at_sp(w, in, &f))));
            if (!believed && f.trust == SW_TRUST_CFI && in->trust != SW_TRUST_SCAN &&
                pc_in_unknown_code(w, f.ra - 1))
                cfi_unknown = true;
            sw_debug(SW_DBG_STEP, "step: caller ra 0x%" PRIx64 " sp 0x%" PRIx64 "%s", f.ra, f.sp,
                     !outward    ? ": does not move outward"
                     : !believed ? ": not believed"
                                 : "");
            if (!believed) {
                saw_invalid = true;
                continue;
            }
            f.thread = in->thread;
            f.level = in->level + 1;
            f.top = false;
            if (f.stepper == NULL)
                f.stepper = s;
            if (w->proc->arch->ra_code != NULL) {
                f.ra = w->proc->arch->ra_code(f.ra);
                sw_frame_set_reg(&f, (unsigned)w->proc->arch->dw_pc, f.ra);
            }
            classify_frame(w, &f);
            /* A CFI caller of a lazy frame carries frame 0's registers by
             * its same-value rules: it may take lazy registers too. */
            if (f.trust == SW_TRUST_CFI && f.level == w->lazy_depth + 1 &&
                sw_walker_frame_lazy(w, in))
                w->lazy_depth = f.level;
            *out = f;
            if (end)
                *end = SW_END_NONE;
            return 0;
        case SW_GCF_STACKBOTTOM:
            if (end)
                *end = SW_END_BOTTOM;
            return SW_ENOENT;
        case SW_GCF_ERROR:
            if (end)
                *end = SW_END_LINK;
            if (w->err.code == 0)
                sw_walker_fail(w, SW_EIO, "stepper %s failed at 0x%" PRIx64, s->ops->name, pc);
            return w->err.code;
        case SW_GCF_NOT_ME:
            break;
        }
    }
    if (saw_invalid)
        why = SW_END_CORRUPT;
    else if (w->proc->err.code == SW_EMEM)
        why = SW_END_MEMORY;
    if (end)
        *end = why;
    return SW_ENOENT;
}

static bool
frame_repeats(const struct sw_stack *st, const struct sw_frame *f)
{
    /* Only frames with the same SP can repeat; SPs grow, so look back while
     * they are not below F's (signal frames may step back once). */
    for (size_t i = st->n; i-- > 0;) {
        const struct sw_frame *g = &st->frames[i];
        if (g->sp == f->sp && g->ra == f->ra)
            return true;
        if (st->n - i > 64)
            break;
    }
    return false;
}

static int
walk_from(struct sw_walker *w, struct sw_stack *st)
{
    for (;;) {
        struct sw_frame next;
        enum sw_walk_end end;
        int rc;

        if (st->n >= w->max_frames) {
            st->end = SW_END_DEPTH;
            return 0;
        }
        rc = sw_walk_single(w, &st->frames[st->n - 1], &next, &end);
        if (rc == SW_ENOENT) {
            st->end = end;
            if (end == SW_END_BOTTOM)
                st->frames[st->n - 1].bottom = true;
            return 0;
        }
        if (rc < 0) {
            st->end = SW_END_LINK;
            return 0; /* the frames found so far stand; the reason is on W */
        }
        if (frame_repeats(st, &next)) {
            st->end = SW_END_CORRUPT;
            return 0;
        }
        rc = stack_push(st, &next);
        if (rc < 0)
            return sw_walker_fail(w, rc, "walking: out of memory after %zu frames", st->n);
    }
}

int
sw_walk_from_frame(struct sw_walker *w, const struct sw_frame *frame, struct sw_stack *st)
{
    st->n = 0;
    st->end = SW_END_NONE;
    int rc = stack_push(st, frame);
    if (rc < 0)
        return sw_walker_fail(w, rc, "walking: out of memory");
    return walk_from(w, st);
}

int
sw_walk_stack(struct sw_walker *w, sw_tid tid, struct sw_stack *st)
{
    struct sw_frame top;
    int rc;

    st->n = 0;
    st->end = SW_END_NONE;
    sw_err_clear(&w->err);
    if (w->proc->stop_gen != w->libs_gen) {
        /* The target ran since the list was read: dlopen and dlclose. */
        rc = sw_libstate_update(w->libs);
        if (rc < 0)
            return sw_walker_fail(w, rc, "%s", sw_libstate_errmsg(w->libs));
        w->libs_gen = w->proc->stop_gen;
    }
    rc = sw_initial_frame(w, tid, &top);
    if (rc < 0)
        return rc;
    rc = sw_walk_from_frame(w, &top, st);
    if (rc == 0 && w->virtual_frames)
        rc = sw_walker_add_virtual_frames(w, st);
    return rc;
}
