/* walker/steppers/frame_func_x86.c -- FrameFuncStepper and FrameFuncHelper for x86 and x86-64.
 *
 * Walks the frame-pointer chain: in a function that has set up its frame,
 * [FP] is the caller's FP and [FP + word] the return address.  For frames
 * stopped inside a prologue or at the final `ret`, the helper reads the
 * function's first bytes from the local ELF file (no round trip) and says
 * how far the frame is set up (the seed's frame_type and frame_state), so
 * frame 0 is right at function entry, after `push %rbp` and at `ret`.
 * Not for frameless code (the analysis stepper's job).
 */
#include "walker/steppers/frame_func.h"

#include <inttypes.h>
#include <string.h>

#include "walker/walker_internal.h"

/* x86 prologue bytes (Intel SDM vol. 2): endbr64 f3 0f 1e fa, endbr32
 * f3 0f 1e fb, push %rbp/%ebp 55, mov %rsp,%rbp 48 89 e5 or 48 8b ec (the
 * REX.W prefix only on 64-bit), ret c3, pop %rbp 5d. */
#define X86_PUSH_BP 0x55
#define X86_POP_BP  0x5d
#define X86_RET     0xc3

static size_t
skip_endbr(const uint8_t *c, size_t n)
{
    if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && (c[3] == 0xfa || c[3] == 0xfb))
        return 4;
    return 0;
}

static size_t
match_mov_sp_bp(const uint8_t *c, size_t n, unsigned word)
{
    size_t rex = word == 8 ? 1 : 0;
    if (n < rex + 2 || (rex && c[0] != 0x48))
        return 0;
    if ((c[rex] == 0x89 && c[rex + 1] == 0xe5) || (c[rex] == 0x8b && c[rex + 1] == 0xec))
        return rex + 2;
    return 0;
}

static int
x86_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out)
{
    struct sw_symbol sym;
    uint8_t code[16];
    struct sw_frame_alloc r = { SW_FRAME_UNKNOWN_T, SW_FRAME_UNKNOWN_S };
    unsigned word = sw_walker_proc(w)->arch->word_size;

    if (sw_walker_symlookup(w)->ops->lookup(sw_walker_symlookup(w), pc, &sym) < 0) {
        *out = r;
        return SW_ENOSYM;
    }
    /* Read no further than the function: the last one in a file may end
     * right where the file's contents do. */
    size_t n = sym.size && sym.size < sizeof code ? (size_t)sym.size : sizeof code;
    memset(code, 0, sizeof code);
    int rc = sw_walker_read_code(w, sym.start, code, n);
    if (rc < 0) {
        *out = r;
        return rc;
    }

    size_t push_at = skip_endbr(code, n);
    size_t mov_len = 0, set_at;
    if (push_at < n && code[push_at] == X86_PUSH_BP) {
        mov_len = match_mov_sp_bp(code + push_at + 1, n - push_at - 1, word);
        r.type = mov_len ? SW_FRAME_STANDARD : SW_FRAME_SAVEFP_ONLY;
    } else {
        r.type = SW_FRAME_NO_FRAME;
    }
    set_at = push_at + 1 + mov_len;

    sw_addr off = pc - sym.start;
    if (r.type == SW_FRAME_NO_FRAME)
        r.state = off == 0 ? SW_FRAME_UNSET : SW_FRAME_SET;
    else if (off <= push_at)
        r.state = SW_FRAME_UNSET;
    else if (off < set_at || r.type == SW_FRAME_SAVEFP_ONLY)
        r.state = SW_FRAME_HALFSET; /* the old FP saved; no new one (yet, or ever) */
    else
        r.state = SW_FRAME_SET;

    /* Epilogues, only meaningful at an exact PC: at `ret` the frame is gone
     * (RA at [SP]); at a `pop %rbp` that precedes `ret`, the saved FP is at
     * [SP] and the RA above it. */
    if (exact && r.type != SW_FRAME_NO_FRAME && r.state == SW_FRAME_SET) {
        uint8_t at[2];
        if (sw_walker_read_code(w, pc, at, 2) == 0) {
            if (at[0] == X86_RET)
                r.state = SW_FRAME_UNSET;
            else if (at[0] == X86_POP_BP && at[1] == X86_RET)
                r.state = SW_FRAME_HALFSET;
        }
    }
    *out = r;
    return 0;
}

static enum sw_gcf
x86_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    const unsigned word = a->word_size;
    bool exact = in->top || in->non_call;
    struct sw_frame_alloc fa;
    sw_word ra, fp = in->fp;
    sw_addr sp, ra_at, fp_at = 0;
    enum sw_gcf r;

    if (x86_alloc(w, sw_frame_lookup_pc(in), exact, &fa) < 0) {
        /* No symbol: assume a standard frame that is set up. */
        fa.type = SW_FRAME_UNKNOWN_T;
        fa.state = SW_FRAME_SET;
    }
    if (!exact && fa.type != SW_FRAME_STANDARD && fa.type != SW_FRAME_UNKNOWN_T)
        return SW_GCF_NOT_ME; /* the Dyninst rule: only standard frames mid-stack */
    if (!exact)
        fa.state = SW_FRAME_SET;

    switch (fa.state) {
    case SW_FRAME_UNSET:
        ra_at = in->sp;
        sp = in->sp + word;
        break;
    case SW_FRAME_HALFSET:
        fp_at = in->sp;
        ra_at = in->sp + word;
        sp = in->sp + 2 * word;
        break;
    case SW_FRAME_SET:
    default:
        if (fa.type == SW_FRAME_NO_FRAME)
            return SW_GCF_NOT_ME; /* frameless and mid-function: not ours */
        if (in->fp == 0)
            return SW_GCF_STACKBOTTOM; /* _start and thread entries clear the FP */
        if (in->fp < in->sp)
            return SW_GCF_NOT_ME; /* not a frame record of this stack */
        fp_at = in->fp;
        ra_at = in->fp + word;
        sp = in->fp + 2 * word;
        break;
    }
    if ((r = sw_ff_read_word(w, ra_at, &ra)) != SW_GCF_SUCCESS)
        return r;
    if (fp_at && (r = sw_ff_read_word(w, fp_at, &fp)) != SW_GCF_SUCCESS)
        return r;

    struct sw_frame f = *in; /* registers not saved are unchanged (gdb's rule) */
    f.ra = ra;
    f.sp = sp;
    f.fp = fp;
    f.ra_loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = ra_at };
    f.sp_loc = (struct sw_location){ .kind = SW_LOC_UNKNOWN };
    f.fp_loc = fp_at ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = fp_at }
                     : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_fp };
    f.kind = SW_FRAME_NORMAL;
    f.non_call = false;
    f.bottom = false;
    f.trust = SW_TRUST_FP;
    f.stepper = s;
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, ra);
    sw_frame_set_reg(&f, (unsigned)a->dw_sp, sp);
    sw_frame_set_reg(&f, (unsigned)a->dw_fp, fp);
    *out = f;
    return SW_GCF_SUCCESS;
}

const struct sw_ff_arch sw_ff_x86 = {
    .alloc = x86_alloc,
    .caller_frame = x86_caller_frame,
};
