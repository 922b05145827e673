/* walker/steppers/wanderer.c -- StepperWanderer: find the caller by scanning the stack.
 *
 * The last resort (priority 0x10060): read a window of stack words above the
 * frame's SP in one read and take the first word that points just after a
 * call instruction which could have called the current function (the seed's
 * WandererHelper::isPrevInstrACall with requireExactMatch).  Frames found so
 * are heuristics: trust "scan".  Not a disassembler (disasm/disasm.c is) and
 * not an unwinder of anything with CFI or a frame chain: those run first.
 * What the code around a word is: walker/steppers/wanderer_code.c and the
 * family's encodings (wanderer_x86.c, wanderer_aarch64.c, wanderer_ppc.c),
 * picked by the arch table's family.
 */
#include "rspwalk/stepper.h"

#include <inttypes.h>
#include <string.h>

#include "libstate/lib.h"
#include "walker/steppers/analysis.h"
#include "walker/steppers/wanderer_internal.h"
#include "walker/walker_internal.h"

/* Dyninst's MAX_WANDERER_DEPTH (x86-wanderer.C): 256 words, 2 KiB on 64-bit
 * targets.  Read as one block (the RSP backend caches blocks), where Dyninst
 * reads one word per call. */
#define WAND_WINDOW_WORDS 256

/* What the scan knows about the current function. */
struct wand_cur {
    bool known; /* a symbol covers the frame's lookup PC */
    struct sw_symbol sym;
    bool split;              /* SYM is the cold part of PARENT (NAME.cold of NAME): one */
    struct sw_symbol parent; /* function, entered by a call to PARENT and a jump */
};

/* How well a candidate return address fits the current function. */
enum wand_fit {
    WAND_NO = 0, /* not a return address, or one inside the current function */
    WAND_MAYBE,  /* a call to some other known function (a tail call may sit between),
                  * or to unnamed code of another module */
    WAND_LIKELY, /* an indirect call, a call to a linker stub (PLT) or to unnamed code
                  * of the current function's module, or the current function is
                  * unknown */
    WAND_EXACT,  /* a direct call to the current function */
};

/* The encodings of A's instruction-set family; NULL if the wanderer knows
 * none. */
static const struct sw_wand_family *
wand_family(const struct arch_desc *a)
{
    switch (a->family) {
    case ARCH_FAMILY_X86:
        return &sw_wand_x86;
    case ARCH_FAMILY_AARCH64:
        return &sw_wand_aarch64;
    case ARCH_FAMILY_PPC:
        return &sw_wand_ppc;
    case ARCH_FAMILY_THUMB:
        return &sw_wand_thumb;
    default:
        return NULL;
    }
}

/* How well a direct call to TARGET, which no symbol names, fits a current
 * function CUR_START (known): a linker stub -- a PLT entry, or code no symbol
 * covers in a module that has a symbol table (PowerPC's call stubs) -- can
 * lead to any function: likely.  Code of a stripped module is some function
 * of that module: it calls into another module only through a stub, so a
 * call to it fits only a current function of the same module. */
static enum wand_fit
wand_unnamed_target(struct sw_walker *w, sw_addr cur_start, sw_addr target)
{
    struct sw_libstate *ls = sw_walker_libstate(w);
    const struct sw_lib *tlib, *clib;
    const uint8_t *data;
    size_t len;
    sw_addr addr;

    if (sw_libstate_lib_at(ls, target, &tlib) != 0 || sw_lib_elf(tlib) == NULL)
        return WAND_LIKELY;
    if (sw_wand_in_plt(tlib, target) ||
        sw_elf_section(sw_lib_elf(tlib), ".symtab", false, &data, &len, &addr) == 0 ||
        sw_elf_section(sw_lib_elf(tlib), ".symtab", true, &data, &len, &addr) == 0)
        return WAND_LIKELY;
    if (sw_libstate_lib_at(ls, cur_start, &clib) != 0 || clib == tlib)
        return WAND_LIKELY;
    return WAND_MAYBE;
}

/* How well a call through a PLT stub to function NAME fits CUR (known):
 * NAME itself, or an alias at its address in its module: exact; a function
 * of that module that jumps to it (a tail call): exact; anything else can
 * have led here only through a tail call we cannot see: maybe.  (An IFUNC's
 * PLT name is its resolver, not the implementation the frame is in: maybe,
 * where it is in fact exact.) */
static enum wand_fit
wand_plt_fit(struct sw_walker *w, const struct sw_wand_family *fam, const struct wand_cur *cur,
             const char *name)
{
    const struct sw_lib *clib;
    struct sw_elfsym es;

    if ((cur->sym.name != NULL && strcmp(name, cur->sym.name) == 0) ||
        (cur->split && cur->parent.name != NULL && strcmp(name, cur->parent.name) == 0))
        return WAND_EXACT;
    if (sw_libstate_lib_at(sw_walker_libstate(w), cur->sym.start, &clib) != 0 ||
        sw_lib_elf(clib) == NULL || sw_elf_symbol_by_name(sw_lib_elf(clib), name, &es) != 0)
        return WAND_MAYBE;
    struct sw_symbol fn = { .name = es.name, .start = es.value + clib->bias, .size = es.size };
    if (fn.start == cur->sym.start || sw_wand_tail_calls(w, fam, &fn, cur->sym.start))
        return WAND_EXACT;
    return WAND_MAYBE;
}

/* Whether TARGET is FN's entry, or its local entry (the arch's
 * local_entry_max: ppc64, up to 8 bytes past the symbol). */
static bool
wand_is_entry(const struct arch_desc *a, const struct sw_symbol *fn, sw_addr target)
{
    return target == fn->start || (target > fn->start && target <= fn->start + a->local_entry_max);
}

/* Whether ADDR is in FN (a sizeless symbol: at or past its start). */
static bool
wand_inside(const struct sw_symbol *fn, sw_addr addr)
{
    return addr >= fn->start && (fn->size == 0 || addr - fn->start < fn->size);
}

static enum wand_fit
wand_fit(struct sw_walker *w, const struct sw_wand_family *fam, const struct wand_cur *cur,
         sw_addr ra)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_symbol tsym;
    sw_addr target = 0;
    enum wand_call call = fam->call_before(w, ra, &target);

    if (call == WAND_NOT_CALL) {
        /* A signal handler's return address is the sigreturn trampoline,
         * which the kernel put there: no call before it.  Checking reads the
         * target: not for words that cannot be code addresses (the first 64
         * KiB are never mapped, Linux's mmap_min_addr; no instruction starts
         * off the family's insn_align), each such read a round trip. */
        if (ra < 0x10000 || (ra % fam->insn_align) != 0)
            return WAND_NO;
        return sw_walker_sigframe_at(w, ra) != NULL ? WAND_LIKELY : WAND_NO;
    }
    /* A call to a thunk (i386's get_pc_thunk), an empty function or the next
     * instruction itself (call 1f; 1: pop %ebx; bl .+4) returned before
     * anything else ran: its return address is stale, unless the current
     * frame is that code. */
    if (call == WAND_CALL_DIRECT && !(cur->known && target == cur->sym.start) &&
        (target == ra || fam->returns_at_once(w, target)))
        return WAND_NO;
    if (!cur->known)
        return WAND_LIKELY;
    /* ppc64 ELFv2 calls local entry points, up to 8 bytes past the symbol.
     * A cold part is entered by a call to its parent. */
    bool to_cur =
        call == WAND_CALL_DIRECT && (wand_is_entry(a, &cur->sym, target) ||
                                     (cur->split && wand_is_entry(a, &cur->parent, target)));
    /* A return address into the current function itself (or the function
     * it is the cold part of) is a leftover of a call it made earlier,
     * unless it is a recursive call to its own start. */
    if ((wand_inside(&cur->sym, ra - 1) || (cur->split && wand_inside(&cur->parent, ra - 1))) &&
        !to_cur)
        return WAND_NO;
    if (call == WAND_CALL_INDIRECT)
        return WAND_LIKELY;
    if (to_cur)
        return WAND_EXACT;
    struct sw_symlookup *sl = sw_walker_symlookup(w);
    /* PLT stubs have no symbol of their own; a sizeless one below them (_init
     * before x86's and aarch64's .plt) reaches them only by extending to the
     * next symbol: that names nothing. */
    if (sl->ops->lookup(sl, target, &tsym) < 0 || (tsym.size == 0 && target != tsym.start)) {
        const struct sw_lib *tlib;
        const char *name = NULL;
        if (sw_libstate_lib_at(sw_walker_libstate(w), target, &tlib) == 0 &&
            sw_lib_elf(tlib) != NULL)
            name = sw_wand_plt_name(a, fam, tlib, target);
        if (name == NULL)
            return wand_unnamed_target(w, cur->sym.start, target);
        return wand_plt_fit(w, fam, cur, name);
    }
    if (tsym.name && cur->sym.name && strcmp(tsym.name, cur->sym.name) == 0)
        return WAND_EXACT; /* the same function in another module's PLT or an alias */
    /* The called function may have jumped here (a tail call, or a
     * conditional branch to its cold part), or to the cold part's parent. */
    if (sw_wand_tail_calls(w, fam, &tsym, cur->sym.start) ||
        (cur->split && sw_wand_tail_calls(w, fam, &tsym, cur->parent.start)))
        return WAND_EXACT;
    return WAND_MAYBE;
}

/* The caller's SP when the word at SLOT is its return address (ABI rules):
 *   x86: the call pushed it, so the caller's SP is just above: SLOT + word;
 *   PowerPC: the callee saved LR in the caller's frame header, at SP + 4
 *     (32-bit SysV) or SP + 16 (64-bit ELFv1/v2), the arch's
 *     backchain_ra_offset: SLOT - 4 or SLOT - 16;
 *   aarch64 (the family's sp_align): the callee saved x30 in its own frame
 *     (usually as the second word of its frame record at the bottom); the
 *     caller's frame starts somewhere above: SLOT + word rounded up to 16
 *     (the AAPCS64 keeps SP 16-byte aligned) is the least SP it can have,
 *     so the next scan from there cannot miss the caller's own return
 *     address, and skips the padding word of a 16-byte slot that holds only
 *     x30 (wand_search_caller_sp then finds the exact SP from the caller's
 *     analysis where it can).
 * Returns 0 when the rule gives no SP above IN_SP. */
static sw_addr
wand_caller_sp(const struct arch_desc *a, const struct sw_wand_family *fam, sw_addr slot,
               sw_addr in_sp)
{
    sw_addr sp;

    if (a->backchain_ra_offset != 0)
        sp = slot - a->backchain_ra_offset;
    else if (fam->sp_align != 0)
        sp = (slot + a->word_size + fam->sp_align - 1) & ~(sw_addr)(fam->sp_align - 1);
    else
        sp = slot + a->word_size;
    return sp > in_sp ? sp : 0;
}

/* How far above the least SP wand_search_caller_sp looks for the caller's
 * own saved return address (the callee's frame lies between: up to 128 KiB). */
#define WAND_SP_REACH (128u * 1024u)
#define WAND_SP_CHUNK 4096u

/* Where the callee saves its return address in its own frame (the family's
 * sp_align; aarch64's x30, in a frame record or a lone slot): RA, the
 * return address into the caller F, lies below F's SP at a distance the
 * slot does not tell: the ABI rule gives only EST, the least SP F can have,
 * and any step from a frame whose SP is too low goes wrong (F's analysis or
 * frame record read from the wrong place).  F's analysis at RA knows where F
 * keeps its own return address: CFA_F = SP_F + height and the slot at
 * CFA_F + ra_off.  So F's SP is the first sp_align-aligned SP from EST up
 * (within WAND_SP_REACH) whose word at SP + height + ra_off is a return
 * address that fits F -- exact or likely first, else the first that fits at
 * all.  Returns that SP; EST when F's analysis says nothing at RA (no
 * symbol, no known height, the return address not in a slot: frames stepped
 * from it are scanned, not analysed, so a low SP only widens the next scan);
 * 0 when it does and no such SP is found (the word at SLOT is no live return
 * address) -- in *SP.  Returns 0, or a link error (the walker's error is
 * set). */
static int
wand_search_caller_sp(struct sw_walker *w, const struct sw_wand_family *fam, sw_addr ra,
                      sw_addr est, sw_addr *out)
{
    struct sw_proc *p = sw_walker_proc(w);
    struct sw_symlookup *sl = sw_walker_symlookup(w);
    const size_t word = p->arch->word_size;
    struct wand_cur f = { 0 };
    struct sw_an_pc at;
    uint8_t buf[WAND_SP_CHUNK];
    sw_addr base = 0, maybe = 0;
    size_t have = 0;

    *out = est;
    if (sw_analysis_at(w, ra, false, &at) != 0 || !at.sp_known || at.sp_alt ||
        at.ra != SW_AN_RA_SLOT || at.height + at.ra_off < 0 || sl == NULL ||
        sl->ops->lookup(sl, ra - 1, &f.sym) < 0)
        return 0;
    f.known = true;
    f.split = sw_analysis_cold_parent(w, &f.sym, &f.parent) == 0;
    const sw_addr d = (sw_addr)(at.height + at.ra_off);
    for (sw_addr sp = est; sp - est < WAND_SP_REACH; sp += fam->sp_align) {
        sw_addr slot = sp + d;
        if (slot < base || slot + word > base + have) {
            base = slot;
            have = sizeof buf;
            int rc = p->ops->read_mem(p, base, buf, have);
            if (rc != 0 && !sw_is_link_error(rc)) {
                have = word; /* near the end of the stack mapping: word by word */
                rc = p->ops->read_mem(p, base, buf, have);
            }
            if (sw_is_link_error(rc))
                return sw_walker_fail_from_proc(w, rc);
            if (rc != 0) {
                sw_err_clear(&p->err); /* the stack's end, not the caller's frame */
                break;
            }
        }
        sw_addr word_at = arch_load(p->arch, buf + (slot - base), word);
        if (word_at == 0)
            continue;
        enum wand_fit fit = wand_fit(w, fam, &f, word_at);
        if (fit >= WAND_LIKELY) {
            *out = sp;
            return 0;
        }
        if (fit == WAND_MAYBE && maybe == 0)
            maybe = sp;
    }
    *out = maybe;
    return 0;
}

static void
wand_fill(struct sw_stepper *s, const struct sw_frame *in, sw_addr ra, sw_addr sp,
          struct sw_location ra_loc, struct sw_frame *out)
{
    const struct arch_desc *a = sw_walker_proc(s->walker)->arch;
    const struct sw_wand_family *fam = wand_family(a);
    struct sw_frame f = *in; /* registers not known to be saved are unchanged (gdb's rule) */

    if (fam->sigframe_sp != NULL && sw_walker_sigframe_at(s->walker, ra) != NULL)
        sp = fam->sigframe_sp(s->walker, sp);
    f.ra = ra;
    f.sp = sp;
    f.ra_loc = ra_loc;
    f.sp_loc = (struct sw_location){ .kind = SW_LOC_UNKNOWN };
    f.kind = SW_FRAME_NORMAL;
    f.non_call = false;
    f.bottom = false;
    f.vname = NULL;
    f.trust = SW_TRUST_SCAN;
    f.stepper = s;
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, ra);
    sw_frame_set_reg(&f, (unsigned)a->dw_sp, sp);
    *out = f;
}

static enum sw_gcf
wanderer_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    struct sw_proc *p = sw_walker_proc(w);
    const struct arch_desc *a = p->arch;
    const struct sw_wand_family *fam = wand_family(a);
    const unsigned word = a->word_size;
    uint8_t buf[WAND_WINDOW_WORDS * 8];
    struct wand_cur cur = { 0 };
    size_t nwords = WAND_WINDOW_WORDS;
    sw_addr maybe_ra = 0, maybe_slot = 0;
    sw_word lr;
    int rc;

    if (fam == NULL || in->sp == 0 || (in->sp % word) != 0)
        return SW_GCF_NOT_ME;
    /* The hardware's exception frame has one layout (sighandler's): where it
     * cannot be read (the process stack, and no psp from the stub), the stack
     * above the handler's is another stack, not the interrupted code's. */
    if (in->kind == SW_FRAME_SIGNAL && a->exc_return != NULL && a->exc_return(in->ra))
        return SW_GCF_NOT_ME;
    cur.known = sw_frame_symbol(w, in, &cur.sym) == 0;
    cur.split = cur.known && sw_analysis_cold_parent(w, &cur.sym, &cur.parent) == 0;

    /* Where the PC is exact on a link-register arch, the link register is a
     * candidate: a leaf has not saved its return address (the caller keeps
     * the SP; the walker accepts that only for such frames). */
    bool have_lr = false;
    const struct sw_location lr_loc = { .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_ra };
    if (!a->call_ra_on_stack && (in->top || in->non_call)) {
        /* Frame 0's link register is lazy: read from the thread when needed. */
        rc = sw_walker_frame_reg(w, in, (unsigned)a->dw_ra, &lr);
        if (rc < 0)
            return SW_GCF_ERROR;
        have_lr = rc == 1 && wand_fit(w, fam, &cur, lr) >= WAND_LIKELY;
    }

    /* One read; near the top of the stack mapping a smaller one. */
    for (;;) {
        rc = p->ops->read_mem(p, in->sp, buf, nwords * word);
        if (rc == 0)
            break;
        if (sw_is_link_error(rc)) {
            sw_walker_fail_from_proc(w, rc);
            return SW_GCF_ERROR;
        }
        if (nwords <= 4) {
            if (!have_lr)
                return SW_GCF_NOT_ME;
            wand_fill(s, in, lr, in->sp, lr_loc, out);
            return SW_GCF_SUCCESS;
        }
        nwords /= 2;
    }

    /* PowerPC: the back chain at SP points at the caller's frame, whose
     * header holds the return address this frame saved (ELF ABI): that slot
     * first, then the others in order. */
    size_t pref = SIZE_MAX;
    if (a->backchain_ra_offset != 0) {
        sw_addr chain = arch_load(a, buf, word);
        sw_addr at = chain + a->backchain_ra_offset;
        if (chain > in->sp && at + word <= in->sp + nwords * word)
            pref = (size_t)(at - in->sp) / word;
    }

    for (size_t n = 0; n <= nwords; n++) {
        if ((n == 0 && pref == SIZE_MAX) || (n > 0 && n - 1 == pref))
            continue;
        size_t i = n == 0 ? pref : n - 1;
        sw_addr slot = in->sp + i * word;
        sw_addr ra = arch_load(a, buf + i * word, word);
        sw_addr sp = wand_caller_sp(a, fam, slot, in->sp);
        enum wand_fit fit;

        if (ra == 0 || sp == 0)
            continue;
        fit = wand_fit(w, fam, &cur, ra);
        if (fit == WAND_NO)
            continue;
        if (fit == WAND_MAYBE) {
            if (maybe_ra == 0) {
                maybe_ra = ra;
                maybe_slot = slot;
            }
            continue;
        }
        /* The link register's value saved on the stack: the frame is no
         * leaf, and the slot tells where its caller's frame starts (taking
         * the register would keep the SP, and the next scan would find the
         * same value again: one frame twice).  Another value first: the
         * frame has not saved the register. */
        if (have_lr && ra != lr)
            break;
        if (fam->sp_align != 0) {
            if (wand_search_caller_sp(w, fam, ra, sp, &sp) < 0)
                return SW_GCF_ERROR;
            if (sp == 0)
                continue; /* the caller's own return address is not where it keeps it */
        }
        sw_debug(SW_DBG_STEP, "wanderer: ra 0x%" PRIx64 " at 0x%" PRIx64 " (%s)", ra, slot,
                 fit == WAND_EXACT ? "exact" : "likely");
        wand_fill(s, in, ra, sp, (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = slot }, out);
        return SW_GCF_SUCCESS;
    }
    if (have_lr) {
        sw_debug(SW_DBG_STEP, "wanderer: ra 0x%" PRIx64 " in the link register", lr);
        wand_fill(s, in, lr, in->sp, lr_loc, out);
        return SW_GCF_SUCCESS;
    }
    /* No call to this function: a tail call may sit between (the caller
     * called another function that jumped here); take the first call. */
    if (maybe_ra != 0) {
        sw_addr sp = wand_caller_sp(a, fam, maybe_slot, in->sp);
        if (fam->sp_align != 0 && wand_search_caller_sp(w, fam, maybe_ra, sp, &sp) < 0)
            return SW_GCF_ERROR;
        if (sp == 0)
            return SW_GCF_NOT_ME;
        sw_debug(SW_DBG_STEP, "wanderer: ra 0x%" PRIx64 " at 0x%" PRIx64 " (inexact)", maybe_ra,
                 maybe_slot);
        wand_fill(s, in, maybe_ra, sp,
                  (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = maybe_slot }, out);
        return SW_GCF_SUCCESS;
    }
    return SW_GCF_NOT_ME;
}

static const struct sw_stepper_ops wanderer_ops = {
    .name = "wanderer",
    .priority = SW_PRIO_WANDERER,
    .caller_frame = wanderer_caller_frame,
};

struct sw_stepper *
sw_stepper_wanderer_new(void)
{
    struct sw_stepper *s = sw_calloc(1, sizeof *s);
    if (s)
        s->ops = &wanderer_ops;
    return s;
}

int
sw_walker_follows_call(struct sw_walker *w, sw_addr ra)
{
    const struct sw_wand_family *fam = wand_family(sw_walker_proc(w)->arch);
    sw_addr target = 0;
    uint8_t b[1];

    /* Only code of a module with a local file can be checked (sw_wand_code):
     * elsewhere the walk loop does not know either way. */
    if (fam == NULL || ra < 1 || !sw_wand_code(w, ra - 1, b, 1))
        return -1;
    return fam->call_before(w, ra, &target) != WAND_NOT_CALL;
}
