/* walker/context.c -- the walk context: what steppers and virtual frames need of a walker.
 *
 * Frame registers (lazy ones read from the ProcessState on demand), the
 * process, the library state, code reads, signal-frame layouts, failure
 * messages and the per-walker caches of the steppers' helpers.  Calls no
 * stepper: the walk loop and the steppers' creation are walker/walker.c's.
 */
#include "walker/context.h"

#include <stdarg.h>
#include <string.h>

#include "libstate/lib.h"

int
sw_walker_fail(struct sw_walker *w, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sw_vfail(&w->err, code, fmt, ap);
    va_end(ap);
    return code;
}

int
sw_walker_fail_from_proc(struct sw_walker *w, int code)
{
    if (w->proc->err.code == code && w->proc->err.msg[0])
        return sw_fail(&w->err, code, "%s", w->proc->err.msg);
    return sw_fail(&w->err, code, "%s", sw_strerror(code));
}

const char *
sw_walker_errmsg(const struct sw_walker *w)
{
    return w->err.msg;
}

struct sw_proc *
sw_walker_proc(struct sw_walker *w)
{
    return w->proc;
}

struct sw_stepper_group *
sw_walker_group(struct sw_walker *w)
{
    return &w->group;
}

struct sw_libstate *
sw_walker_libstate(struct sw_walker *w)
{
    return w->libs;
}

struct sw_symlookup *
sw_walker_symlookup(struct sw_walker *w)
{
    return w->sym;
}

struct sw_virtual **
sw_walker_virtual_slot(struct sw_walker *w)
{
    return &w->virt;
}

struct sw_elfcache *
sw_walker_elfcache(struct sw_walker *w)
{
    return sw_libstate_elfcache(w->libs);
}

int
sw_walker_read_word(struct sw_walker *w, sw_addr addr, sw_word *val)
{
    return sw_proc_read_word(w->proc, addr, val);
}

enum sw_gcf
sw_step_read_word(struct sw_walker *w, sw_addr addr, sw_word *val)
{
    int rc = sw_walker_read_word(w, addr, val);
    if (rc == 0)
        return SW_GCF_SUCCESS;
    if (sw_is_link_error(rc)) {
        sw_walker_fail_from_proc(w, rc);
        return SW_GCF_ERROR;
    }
    return SW_GCF_NOT_ME;
}

int
sw_walker_read_code(struct sw_walker *w, sw_addr addr, void *buf, size_t len)
{
    const struct sw_lib *lib;

    /* Code comes from the local file when there is one: no round trip
     * (docs/design.md, Decisions). */
    if (sw_libstate_lib_at(w->libs, addr, &lib) == 0 && sw_lib_elf(lib) != NULL &&
        sw_elf_read(sw_lib_elf(lib), addr - lib->bias, buf, len) == 0)
        return 0;
    return w->proc->ops->read_mem(w->proc, addr, buf, len);
}

int
sw_walker_read_insn(struct sw_walker *w, sw_addr addr, uint8_t *buf, size_t max, size_t *n)
{
    const size_t tries[] = { max, 4, 1 };
    int rc = SW_EMEM;
    for (size_t k = 0; k < sizeof tries / sizeof tries[0]; k++) {
        if (tries[k] > max)
            continue;
        rc = sw_walker_read_code(w, addr, buf, tries[k]);
        if (rc == 0) {
            *n = tries[k];
            return 0;
        }
        if (sw_is_link_error(rc))
            return rc;
    }
    return rc;
}

bool
sw_walker_code_from_target(const struct sw_walker *w)
{
    return w->code_from_target;
}

/* A frame whose RA is the first instruction of the arch's sigreturn
 * trampoline is the frame the kernel built for a signal handler (gdb's
 * "<signal handler called>"); it and the frame it interrupted hold exact
 * PCs.  The check reads the trampoline's bytes, so it finds glibc's
 * __restore_rt whatever the symbol tables say. */
static const struct arch_sigframe *
sigframe_from(struct sw_walker *w, sw_addr ra, const struct arch_sigframe *sf)
{
    uint8_t code[32];

    if (ra == 0)
        return NULL;
    /* Each layout's own length: a shorter trampoline may end a mapping. */
    for (; sf; sf = sf->next) {
        if (sf->tramp_len == 0 || sf->tramp_len > sizeof code)
            continue;
        if (sw_walker_read_code(w, ra, code, sf->tramp_len) == 0 &&
            memcmp(code, sf->tramp, sf->tramp_len) == 0)
            return sf;
    }
    return NULL;
}

const struct arch_sigframe *
sw_walker_sigframe_at(struct sw_walker *w, sw_addr ra)
{
    return sigframe_from(w, ra, w->proc->arch->sigframe);
}

const struct arch_sigframe *
sw_walker_sigframe_next(struct sw_walker *w, sw_addr ra, const struct arch_sigframe *prev)
{
    return sigframe_from(w, ra, prev->next);
}

bool
sw_walker_frame_lazy(const struct sw_walker *w, const struct sw_frame *f)
{
    return w->lazy_valid && f->thread == w->lazy_tid && f->level <= w->lazy_depth;
}

int
sw_walker_frame_reg(struct sw_walker *w, const struct sw_frame *f, unsigned dw, sw_word *val)
{
    if (sw_frame_reg(f, dw, val))
        return 1;
    if (!sw_walker_frame_lazy(w, f) || arch_dwarf_name(w->proc->arch, (int)dw) == NULL)
        return 0;
    int rc = w->proc->ops->read_reg(w->proc, f->thread, dw, val);
    if (rc == 0)
        return 1;
    return sw_is_link_error(rc) ? sw_walker_fail_from_proc(w, rc) : 0;
}

int
sw_walker_fill_lazy(struct sw_walker *w, struct sw_frame *f)
{
    const struct arch_desc *a = w->proc->arch;
    if (!sw_walker_frame_lazy(w, f))
        return 0;
    for (size_t i = 0; i < a->nregs; i++) {
        int dw = a->regs[i].dwarf;
        sw_word v;
        if (dw < 0 || dw >= SW_FRAME_MAX_REGS)
            continue;
        int rc = sw_walker_frame_reg(w, f, (unsigned)dw, &v);
        if (rc < 0)
            return rc;
        if (rc == 1)
            sw_frame_set_reg(f, (unsigned)dw, v);
    }
    return 1;
}

int
sw_frame_symbol(struct sw_walker *w, const struct sw_frame *f, struct sw_symbol *out)
{
    return w->sym->ops->lookup(w->sym, sw_frame_lookup_pc(f), out);
}

int
sw_frame_lib_offset(struct sw_walker *w, const struct sw_frame *f, const char **lib,
                    sw_addr *offset)
{
    return sw_libstate_lib_offset(w->libs, f->ra, lib, offset);
}

void *
sw_walker_cache(struct sw_walker *w, const struct sw_walker_cache_ops *ops)
{
    for (size_t i = 0; i < SW_WALKER_MAX_CACHES; i++)
        if (w->caches[i].ops == ops)
            return w->caches[i].cache;
    return NULL;
}

int
sw_walker_cache_add(struct sw_walker *w, const struct sw_walker_cache_ops *ops, void *cache)
{
    size_t i;

    if (sw_walker_cache(w, ops) != NULL) {
        ops->free(cache);
        return 0;
    }
    for (i = 0; i < SW_WALKER_MAX_CACHES && w->caches[i].ops != NULL; i++)
        ;
    if (i == SW_WALKER_MAX_CACHES) {
        ops->free(cache);
        return sw_walker_fail(w, SW_ENOMEM, "adding a cache to the walker: no room");
    }
    w->caches[i] = (struct sw_walker_cache){ .ops = ops, .cache = cache };
    return 0;
}
