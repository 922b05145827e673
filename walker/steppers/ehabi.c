/* walker/steppers/ehabi.c -- EhabiStepper: callers from the ARM exception-handling tables.
 *
 * ARM code built without .debug_frame (firmware's release builds) still carries
 * .ARM.exidx/.ARM.extab when compiled with -funwind-tables or for C++: the index entry of
 * the frame's function gives unwind opcodes (ehabi_table.c) that restore the caller's
 * registers.  Priority 0x10048: after the DWARF CFI, before frame-pointer rules and analysis.
 */
#include "walker/steppers/ehabi_table.h"

#include <inttypes.h>
#include <string.h>

#include "libstate/lib.h"
#include "libstate/module.h"
#include "walker/walker_internal.h"

struct ehabi_read_ctx {
    struct sw_walker *w;
    int link_rc; /* a link error seen by a read: the walk ends */
};

static int
ehabi_file_read(void *arg, sw_addr vaddr, void *buf, size_t len)
{
    return sw_elf_read(arg, vaddr, buf, len);
}

static int
ehabi_stack_read(void *arg, sw_addr addr, uint32_t *val)
{
    struct ehabi_read_ctx *c = arg;
    sw_word v;
    int rc = sw_walker_read_word(c->w, addr, &v);
    if (rc < 0) {
        if (sw_is_link_error(rc))
            c->link_rc = rc;
        return rc;
    }
    *val = (uint32_t)v;
    return 0;
}

/* The virtual register set of frame IN: its registers r0-r12 and lr, its SP and PC. */
static void
vrs_of(const struct sw_frame *in, struct sw_ehabi_vrs *v)
{
    memset(v, 0, sizeof *v);
    for (unsigned dw = 0; dw < 15; dw++) {
        sw_word x;
        if (sw_frame_reg(in, dw, &x)) {
            v->r[dw] = (uint32_t)x;
            v->known |= (uint16_t)(1u << dw);
        }
    }
    v->r[13] = (uint32_t)in->sp;
    v->r[15] = (uint32_t)in->ra;
    v->known |= 1u << 13 | 1u << 15;
}

static enum sw_gcf
ehabi_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    struct sw_proc *p = sw_walker_proc(w);
    const struct arch_desc *a = p->arch;
    const struct sw_lib *lib;
    struct sw_ehabi_table t;
    struct sw_ehabi_entry *e;
    struct sw_ehabi_vrs v;
    struct sw_errbuf err;
    sw_addr pc = sw_frame_lookup_pc(in), lo, hi;

    /* The index is exact only at call sites (IHI0038 leaves prologues and epilogues
     * undescribed): frame 0 and a frame an exception interrupted may be anywhere in
     * their function, and are the analysis stepper's (gdb's arm_exidx_unwind_sniffer
     * decides the same way). */
    if (a->family != ARCH_FAMILY_THUMB || in->top || in->non_call || in->kind != SW_FRAME_NORMAL)
        return SW_GCF_NOT_ME;
    if (sw_libstate_lib_at(sw_walker_libstate(w), pc, &lib) < 0 || sw_lib_module(lib) == NULL)
        return SW_GCF_NOT_ME;
    struct sw_elf *elf = sw_module_elf(sw_lib_module(lib));
    memset(&t, 0, sizeof t);
    if (sw_elf_section(elf, ".ARM.exidx", false, &t.exidx, &t.exidx_len, &t.exidx_addr) < 0)
        return SW_GCF_NOT_ME;
    sw_elf_load_range(elf, &lo, &hi);
    sw_addr link_pc = (pc - lib->bias) & 0xffffffffu;
    if (link_pc < lo || link_pc >= hi)
        return SW_GCF_NOT_ME;
    t.big_endian = a->big_endian;
    t.read = ehabi_file_read;
    t.arg = elf;

    e = sw_malloc(sizeof *e);
    if (e == NULL) {
        sw_walker_fail(w, SW_ENOMEM, "EHABI entry for 0x%" PRIx64 ": out of memory", pc);
        return SW_GCF_ERROR;
    }
    enum sw_gcf r = SW_GCF_NOT_ME;
    sw_err_clear(&err);
    if (sw_ehabi_lookup(&t, link_pc, e, &err) < 0 || e->cantunwind) {
        if (e->cantunwind)
            sw_debug(SW_DBG_STEP, "ehabi: 0x%" PRIx64 " is EXIDX_CANTUNWIND (%s)\n", pc,
                     lib->path ? lib->path : lib->name);
        else
            sw_debug(SW_DBG_STEP, "ehabi: %s (%s)\n", err.msg, lib->path ? lib->path : lib->name);
        goto out;
    }

    struct ehabi_read_ctx rc_ctx = { .w = w };
    struct sw_frame full = *in;
    vrs_of(in, &v);
    int rc = sw_ehabi_execute(e->ops, e->nops, &v, ehabi_stack_read, &rc_ctx, &err);
    if (rc == SW_ENOCFI && sw_walker_frame_lazy(w, in)) {
        /* The opcodes named a register frame 0 did not read (vsp = r7): again with
         * every lazy register filled in. */
        int frc = sw_walker_fill_lazy(w, &full);
        if (frc < 0) {
            r = SW_GCF_ERROR;
            goto out;
        }
        vrs_of(&full, &v);
        sw_err_clear(&err);
        rc = sw_ehabi_execute(e->ops, e->nops, &v, ehabi_stack_read, &rc_ctx, &err);
    }
    if (rc < 0) {
        if (rc_ctx.link_rc != 0) {
            sw_walker_fail_from_proc(w, rc_ctx.link_rc);
            r = SW_GCF_ERROR;
        } else {
            sw_debug(SW_DBG_STEP, "ehabi at 0x%" PRIx64 ": %s\n", pc, err.msg);
        }
        goto out;
    }

    /* A zero RA is the walker's to judge (a bottom, or zeros read where no memory is). */
    sw_addr ra = v.r[15], sp = v.r[13];
    /* A call pushes nothing on ARM: a leaf's caller has its SP; never an inward one. */
    if (sp < in->sp) {
        sw_debug(SW_DBG_STEP,
                 "ehabi at 0x%" PRIx64 ": the caller's SP 0x%" PRIx64
                 " is not outward of 0x%" PRIx64 "\n",
                 pc, sp, in->sp);
        goto out;
    }
    struct sw_frame f;
    sw_frame_init(&f);
    for (unsigned dw = 0; dw < 16; dw++) {
        if (v.known & (1u << dw))
            sw_frame_set_reg(&f, dw, v.r[dw]);
    }
    sw_frame_set_reg(&f, (unsigned)a->dw_sp, sp);
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, ra);
    f.ra = ra;
    f.sp = sp;
    f.fp = in->fp;
    if (v.popped & (1u << 15))
        f.ra_loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = v.addr[15] };
    else
        f.ra_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_ra };
    unsigned fp = (unsigned)a->dw_fp;
    if (fp < 16 && (v.known & (1u << fp))) {
        f.fp = v.r[fp];
        if (v.popped & (1u << fp))
            f.fp_loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = v.addr[fp] };
        else
            f.fp_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = fp };
    }
    f.thread = in->thread;
    f.level = in->level + 1;
    f.kind = SW_FRAME_NORMAL;
    f.trust = SW_TRUST_CFI;
    f.stepper = s;
    *out = f;
    r = SW_GCF_SUCCESS;
out:
    sw_free(e);
    return r;
}

static void
ehabi_destroy(struct sw_stepper *s)
{
    sw_free(s);
}

static const struct sw_stepper_ops ehabi_ops = {
    .name = "ehabi",
    .priority = SW_PRIO_EHABI,
    .caller_frame = ehabi_caller_frame,
    .destroy = ehabi_destroy,
};

struct sw_stepper *
sw_stepper_ehabi_new(void)
{
    struct sw_stepper *s = sw_calloc(1, sizeof *s);
    if (s)
        s->ops = &ehabi_ops;
    return s;
}
