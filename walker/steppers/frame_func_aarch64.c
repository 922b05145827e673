/* walker/steppers/frame_func_aarch64.c -- FrameFuncStepper and FrameFuncHelper for AArch64.
 *
 * Walks AAPCS64 frame records: in a function that has set up its frame, x29
 * points at {caller's x29, return address}.  Until the record is in place
 * (frame 0 in a prologue or an epilogue, and leaf functions that never build
 * one) the return address is still in the live link register x30.  The
 * helper reads the function's first instructions from the local ELF file (no
 * round trip) to find the record, the stack allocation and how x29 is set,
 * so the caller's SP is exact: what gdb shows, and what the signal stepper
 * needs to find the kernel's frame.  Functions that save x30 without
 * pointing x29 at it (-fomit-frame-pointer) are walked from SP with the
 * same prologue facts.  Not for leaves mid-stack, code that moves SP after
 * its prologue (alloca) without a record, or PAC beyond stripping it.
 * Without a symbol a frame is taken as a complete record at x29 (the x86
 * rule), except at an epilogue's `ret`, which is read at the PC.
 */
#include "walker/steppers/frame_func.h"

#include <string.h>

#include "arch/aarch64_regs.h"
#include "walker/walker_internal.h"

/* A64 encodings (Arm ARM, "A64 Base Instruction Descriptions"); Dyninst's
 * aarch64-swk.C matches the first two (notes/anchors.md section 1.3). */
#define A64_STP_FP_LR_PRE  0xa9807bfdu /* stp x29, x30, [sp, #imm]!    mask A64_STP_MASK */
#define A64_STP_FP_LR_OFF  0xa9007bfdu /* stp x29, x30, [sp, #imm]     mask A64_STP_MASK */
#define A64_LDP_FP_LR_POST 0xa8c07bfdu /* ldp x29, x30, [sp], #imm     mask A64_STP_MASK */
#define A64_LDP_FP_LR_OFF  0xa9407bfdu /* ldp x29, x30, [sp, #imm]     mask A64_STP_MASK */
#define A64_STP_MASK       0xffc07fffu /* everything but imm7 */
#define A64_ADD_X29_SP     0x910003fdu /* add x29, sp, #imm12 (mov x29, sp when 0) */
#define A64_SUB_SP_SP      0xd10003ffu /* sub sp, sp, #imm12{, lsl #12} */
#define A64_ADD_SP_SP      0x910003ffu /* add sp, sp, #imm12{, lsl #12} */
#define A64_ADDSUB_MASK    0xff8003ffu /* everything but sh and imm12 */
#define A64_HINT           0xd503201fu /* nop, paciasp, autiasp, bti c, ... (mask A64_HINT_MASK) */
#define A64_HINT_MASK      0xfffff01fu
#define A64_PACIASP        0xd503233fu
#define A64_PACIBSP        0xd503237fu
#define A64_RET            0xd65f03c0u /* ret (x30) */

/* How far the analysis looks: gcc's prologues put the record and x29 within
 * the first few instructions, interleaved with argument spills at -O2. */
#define A64_PROLOGUE_WORDS 16
#define A64_EPILOGUE_WORDS 6
#define A64_MAX_ALLOCS     4

/* The smallest distance from x29 to the caller's SP: the record itself. */
#define A64_RECORD_BYTES 16

/* What the first instructions of a function say. */
struct a64_prologue {
    bool record;   /* stores x29 and x30 as a pair (the frame record) */
    bool fp_set;   /* then points x29 at it */
    bool lr_saved; /* stores x30 without a record (-fomit-frame-pointer) */
    bool pac;      /* signs x30 (paciasp/pacibsp): strip saved return addresses */
    uint32_t record_off, fp_off, lr_saved_off;
    uint64_t record_below_cfa; /* caller's SP minus the record's address */
    uint64_t lr_below_cfa;     /* caller's SP minus x30's slot; 0 if not on SP */
    uint64_t cfa_from_fp;      /* caller's SP minus x29 once x29 is set */
    size_t nallocs;
    uint32_t alloc_off[A64_MAX_ALLOCS];
    uint64_t alloc_bytes[A64_MAX_ALLOCS];
};

/* The frame at one PC: type and state, plus how to get the caller's SP. */
struct a64_frame {
    struct sw_frame_alloc fa;
    uint64_t sp_adj;           /* caller's SP minus SP, from the prologue (or epilogue) */
    uint64_t record_below_cfa; /* halfset: caller's SP minus the record's address */
    uint64_t lr_below_cfa;     /* x30 saved alone: caller's SP minus its slot */
    uint64_t cfa_from_fp;      /* set: caller's SP minus x29 */
    bool pac;
};

static int64_t
imm7_scaled(uint32_t insn)
{
    int64_t v = (insn >> 15) & 0x7f;
    if (v & 0x40)
        v -= 0x80;
    return v * 8;
}

static uint64_t
addsub_imm(uint32_t insn)
{
    uint64_t v = (insn >> 10) & 0xfff;
    return insn >> 22 & 1 ? v << 12 : v;
}

static bool
is_branch(uint32_t insn)
{
    return (insn & 0x7c000000u) == 0x14000000u     /* b, bl */
           || (insn & 0xff000010u) == 0x54000000u  /* b.cond */
           || (insn & 0x7e000000u) == 0x34000000u  /* cbz, cbnz */
           || (insn & 0x7e000000u) == 0x36000000u  /* tbz, tbnz */
           || (insn & 0xfe000000u) == 0xd6000000u; /* br, blr, ret, eret */
}

/* Whether INSN stores x30 other than in a {x29, x30} pair (stp Xn, x30 or str x30, any
 * addressing mode).  If so, *BYTES is what it allocates (pre-index) and *BELOW where x30
 * goes, as the caller's SP minus its address given ALLOC bytes allocated before it (0 if
 * not relative to SP). */
static bool
lr_store(uint32_t insn, uint64_t alloc, uint64_t *bytes, uint64_t *below)
{
    unsigned rn = insn >> 5 & 31, idx;
    int64_t imm, slot;
    *bytes = 0;
    *below = 0;
    if ((insn & 0xfc400000u) == 0xa8000000u && (idx = insn >> 23 & 3) != 0) {
        /* stp: idx 1 post-index, 2 signed offset, 3 pre-index */
        if ((insn >> 10 & 31) == 30 && (insn & 31) != 29)
            slot = 8;
        else if ((insn & 31) == 30)
            slot = 0;
        else
            return false;
        imm = imm7_scaled(insn);
    } else if ((insn & 0xffe00400u) == 0xf8000400u && (insn & 31) == 30) {
        /* str (immediate), pre- or post-index, imm9 */
        idx = insn >> 11 & 1 ? 3 : 1;
        imm = (insn >> 12) & 0x1ff;
        if (imm & 0x100)
            imm -= 0x200;
        slot = 0;
    } else if ((insn & 0xffc00000u) == 0xf9000000u && (insn & 31) == 30) {
        /* str (immediate), unsigned offset, imm12 * 8 */
        idx = 2;
        imm = (int64_t)((insn >> 10) & 0xfff) * 8;
        slot = 0;
    } else {
        return false;
    }
    if (rn != 31)
        return true;
    if (idx == 3 && imm < 0) {
        *bytes = (uint64_t)-imm;
        alloc += *bytes;
        imm = 0;
    } else if (idx == 1) {
        imm = 0;
    }
    if (imm + slot >= 0 && (uint64_t)(imm + slot) < alloc)
        *below = alloc - (uint64_t)(imm + slot);
    return true;
}

/* Bytes a pre-index store to SP allocates (stp of any register pair, str of an x, d or q
 * register, with writeback); 0 for anything else. */
static uint64_t
pre_index_alloc(uint32_t insn)
{
    int64_t imm;
    if ((insn >> 5 & 31) != 31)
        return 0;
    if ((insn & 0x3bc00000u) == 0x29800000u) {
        unsigned opc = insn >> 30, v = insn >> 26 & 1;
        imm = imm7_scaled(insn) / 8 * (v ? 4 << opc : opc == 2 ? 8 : 4);
    } else if ((insn & 0xffe00c00u) == 0xf8000c00u || (insn & 0xffe00c00u) == 0xfc000c00u ||
               (insn & 0xffe00c00u) == 0x3c800c00u) {
        imm = (insn >> 12) & 0x1ff;
        if (imm & 0x100)
            imm -= 0x200;
    } else {
        return 0;
    }
    return imm < 0 ? (uint64_t)-imm : 0;
}

static void
scan_prologue(const uint8_t *code, size_t nwords, struct a64_prologue *pr)
{
    uint64_t alloc = 0;
    memset(pr, 0, sizeof *pr);
    for (size_t i = 0; i < nwords; i++) {
        /* Instructions are little-endian words whatever the data order. */
        uint32_t insn = (uint32_t)code[4 * i] | (uint32_t)code[4 * i + 1] << 8 |
                        (uint32_t)code[4 * i + 2] << 16 | (uint32_t)code[4 * i + 3] << 24;
        uint32_t off = (uint32_t)(4 * i);
        uint64_t bytes = 0, below;

        if (is_branch(insn))
            break;
        if ((insn & A64_HINT_MASK) == A64_HINT) {
            if (insn == A64_PACIASP || insn == A64_PACIBSP)
                pr->pac = true;
            continue;
        }
        if ((insn & A64_ADDSUB_MASK) == A64_SUB_SP_SP) {
            bytes = addsub_imm(insn);
        } else if ((insn & A64_STP_MASK) == A64_STP_FP_LR_PRE && !pr->record) {
            int64_t d = imm7_scaled(insn);
            bytes = d < 0 ? (uint64_t)-d : 0;
            pr->record = true;
            pr->record_off = off;
            pr->record_below_cfa = alloc + bytes; /* at the new SP */
        } else if ((insn & A64_STP_MASK) == A64_STP_FP_LR_OFF && !pr->record) {
            int64_t m = imm7_scaled(insn);
            pr->record = true;
            pr->record_off = off;
            pr->record_below_cfa = m >= 0 && (uint64_t)m < alloc ? alloc - (uint64_t)m : 0;
        } else if ((insn & A64_ADDSUB_MASK) == A64_ADD_X29_SP && pr->record) {
            uint64_t m = addsub_imm(insn);
            pr->fp_set = true;
            pr->fp_off = off;
            pr->cfa_from_fp = alloc >= m + A64_RECORD_BYTES ? alloc - m : A64_RECORD_BYTES;
            break; /* the frame is complete; later allocation is relative to x29 */
        } else if (!pr->record && !pr->lr_saved && lr_store(insn, alloc, &bytes, &below)) {
            pr->lr_saved = true;
            pr->lr_saved_off = off;
            pr->lr_below_cfa = below;
        } else {
            bytes = pre_index_alloc(insn); /* stp x19, x20, [sp, #-80]! and the like */
        }
        if (bytes && pr->nallocs < A64_MAX_ALLOCS) {
            pr->alloc_off[pr->nallocs] = off;
            pr->alloc_bytes[pr->nallocs++] = bytes;
            alloc += bytes;
        }
    }
}

/* Bytes allocated by the prologue instructions before offset OFF. */
static uint64_t
alloc_before(const struct a64_prologue *pr, uint64_t off)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < pr->nallocs; i++)
        if (pr->alloc_off[i] < off)
            sum += pr->alloc_bytes[i];
    return sum;
}

/* If PC is in an epilogue (only restores, deallocations and hints up to a
 * `ret`), say whether the frame record is still ahead to be restored and
 * how much stack is still to be freed.  gcc's shapes: `ldp x29, x30, [sp],
 * #N; ret` and `ldp x29, x30, [sp]; add sp, sp, #N; [autiasp;] ret`. */
static bool
scan_epilogue(struct sw_walker *w, sw_addr pc, bool *record_ahead, uint64_t *dealloc)
{
    *record_ahead = false;
    *dealloc = 0;
    for (unsigned i = 0; i < A64_EPILOGUE_WORDS; i++) {
        uint8_t b[4];
        if (sw_walker_read_code(w, pc + 4 * i, b, 4) < 0)
            return false;
        uint32_t insn =
            (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        unsigned rn = insn >> 5 & 31;
        if (insn == A64_RET)
            return true;
        if ((insn & A64_HINT_MASK) == A64_HINT)
            continue;
        if ((insn & A64_ADDSUB_MASK) == A64_ADD_SP_SP) {
            *dealloc += addsub_imm(insn);
        } else if ((insn & A64_STP_MASK) == A64_LDP_FP_LR_POST) {
            *record_ahead = true;
            *dealloc += (uint64_t)imm7_scaled(insn);
        } else if ((insn & A64_STP_MASK) == A64_LDP_FP_LR_OFF) {
            *record_ahead = true;
        } else if ((insn & 0xfc400000u) == 0xa8400000u && rn == 31 && (insn >> 23 & 3) != 0) {
            /* ldp of other callee-saved registers; post-index frees stack.
             * One that reloads x30 means the live x30 is stale. */
            if ((insn & 31) == 30 || (insn >> 10 & 31) == 30)
                return false;
            if ((insn >> 23 & 3) == 1)
                *dealloc += (uint64_t)imm7_scaled(insn);
        } else if ((insn & 0xffc003e0u) == 0xf94003e0u) {
            /* ldr Xt, [sp, #imm] */
            if ((insn & 31) == 30)
                return false;
        } else if ((insn & 0xffe00fe0u) == 0xf84007e0u) {
            /* ldr Xt, [sp], #imm9 */
            if ((insn & 31) == 30)
                return false;
            int64_t d = (insn >> 12) & 0x1ff;
            if (d & 0x100)
                d -= 0x200;
            *dealloc += (uint64_t)d;
        } else {
            return false;
        }
    }
    return false;
}

static int
a64_analyze(struct sw_walker *w, sw_addr pc, bool exact, struct a64_frame *out)
{
    struct sw_symbol sym;
    uint8_t code[4 * A64_PROLOGUE_WORDS];
    struct a64_prologue pr;
    struct a64_frame r = { .fa = { SW_FRAME_UNKNOWN_T, SW_FRAME_UNKNOWN_S },
                           .cfa_from_fp = A64_RECORD_BYTES };
    int rc = 0;

    if (sw_walker_symlookup(w)->ops->lookup(sw_walker_symlookup(w), pc, &sym) < 0) {
        rc = SW_ENOSYM;
    } else {
        /* Read no further than the function (the last one in a file may
         * end where the file does). */
        size_t n = sizeof code;
        if (sym.size && sym.size < n)
            n = (size_t)sym.size & ~(size_t)3;
        rc = n ? sw_walker_read_code(w, sym.start, code, n) : SW_ENOSYM;
        if (rc == 0) {
            scan_prologue(code, n / 4, &pr);
            uint64_t off = pc - sym.start;
            r.pac = pr.pac;
            r.sp_adj = alloc_before(&pr, off);
            r.record_below_cfa = pr.record_below_cfa;
            r.lr_below_cfa = pr.lr_saved && off > pr.lr_saved_off ? pr.lr_below_cfa : 0;
            if (pr.record && pr.fp_set) {
                r.fa.type = SW_FRAME_STANDARD;
                r.cfa_from_fp = pr.cfa_from_fp;
            } else if (pr.record) {
                r.fa.type = SW_FRAME_SAVEFP_ONLY;
            } else {
                r.fa.type = SW_FRAME_NO_FRAME;
            }
            if (pr.fp_set && off > pr.fp_off) {
                r.fa.state = SW_FRAME_SET;
            } else if (pr.lr_saved && off > pr.lr_saved_off) {
                r.fa.state = SW_FRAME_SET; /* x30 is in its slot, or somewhere unknown */
            } else {
                bool stored = pr.record && off > pr.record_off && pr.record_below_cfa;
                r.fa.state = stored ? SW_FRAME_HALFSET : SW_FRAME_UNSET;
            }
        }
    }
    if (rc < 0) {
        /* No function or no code: a frame that is set (the x86 rule), but
         * an exact PC in an epilogue is still recognised below. */
        r.fa.state = SW_FRAME_SET;
    }

    /* Epilogues, only meaningful at an exact PC: once x29 and x30 are
     * reloaded, the caller's registers are live and SP is what is left. */
    bool record_ahead;
    uint64_t dealloc;
    if (exact && scan_epilogue(w, pc, &record_ahead, &dealloc) && !record_ahead) {
        r.fa.state = SW_FRAME_UNSET;
        r.sp_adj = dealloc;
        if (r.fa.type == SW_FRAME_UNKNOWN_T)
            r.fa.type = SW_FRAME_NO_FRAME;
        rc = 0;
    }
    *out = r;
    return rc;
}

static int
aarch64_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out)
{
    struct a64_frame fr;
    int rc = a64_analyze(w, pc, exact, &fr);
    *out = rc < 0 ? (struct sw_frame_alloc){ SW_FRAME_UNKNOWN_T, SW_FRAME_UNKNOWN_S } : fr.fa;
    return rc;
}

/* A return address signed by paciasp carries its PAC above the virtual
 * address bits; user addresses have bit 55 clear, so clearing 63:48 gives
 * the address back for 48-bit user space (gdb uses the pauth mask
 * registers, which QEMU 7.2 does not describe). */
static sw_word
strip_pac(sw_word ra)
{
    if ((ra >> 55 & 1) == 0)
        ra &= 0x0000ffffffffffffull;
    return ra;
}

static enum sw_gcf
aarch64_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    bool exact = in->top || in->non_call;
    struct a64_frame fr;
    sw_word ra, fp = in->fp;
    sw_addr sp, ra_at = 0, fp_at = 0;
    enum sw_gcf r;

    a64_analyze(w, sw_frame_lookup_pc(in), exact, &fr);
    if (!exact) {
        /* Mid-stack the prologue is complete.  Dyninst takes only standard
         * frames (or unknown functions, assumed standard) here; a record
         * without x29, or x30 saved alone (-fomit-frame-pointer), is found
         * from SP as well, which gdb's prologue analyzer also does. */
        if (fr.fa.type == SW_FRAME_SAVEFP_ONLY && fr.record_below_cfa)
            fr.fa.state = SW_FRAME_HALFSET;
        else if (fr.fa.type == SW_FRAME_NO_FRAME && fr.lr_below_cfa)
            fr.fa.state = SW_FRAME_SET;
        else if (fr.fa.type == SW_FRAME_STANDARD || fr.fa.type == SW_FRAME_UNKNOWN_T)
            fr.fa.state = SW_FRAME_SET;
        else
            return SW_GCF_NOT_ME;
    }

    if (fr.fa.state == SW_FRAME_SET && fr.fa.type == SW_FRAME_NO_FRAME) {
        /* x30 saved alone in a slot below the caller's SP; x29 untouched */
        sp = in->sp + fr.sp_adj;
        if (fr.lr_below_cfa == 0 || fr.lr_below_cfa > fr.sp_adj)
            return SW_GCF_NOT_ME;
        ra_at = sp - fr.lr_below_cfa;
        if ((r = sw_ff_read_word(w, ra_at, &ra)) != SW_GCF_SUCCESS)
            return r;
    } else if (fr.fa.state == SW_FRAME_SET) {
        if (fr.fa.type == SW_FRAME_SAVEFP_ONLY)
            return SW_GCF_NOT_ME; /* x30 saved where x29 does not say */
        if (in->fp == 0)
            return SW_GCF_STACKBOTTOM; /* _start and thread entries clear x29 */
        if (in->fp < in->sp || in->fp % 8 != 0)
            return SW_GCF_NOT_ME; /* not a frame record of this stack */
        fp_at = in->fp;
        ra_at = in->fp + 8;
        sp = in->fp + fr.cfa_from_fp;
        if ((r = sw_ff_read_word(w, ra_at, &ra)) != SW_GCF_SUCCESS)
            return r;
        if ((r = sw_ff_read_word(w, fp_at, &fp)) != SW_GCF_SUCCESS)
            return r;
    } else if (fr.fa.state == SW_FRAME_HALFSET) {
        /* The record is stored but x29 not (yet, or ever: a record without
         * x29 is -fomit-frame-pointer's): read it below the caller's SP,
         * since x30 is the caller's only until the first call. */
        sp = in->sp + fr.sp_adj;
        if (fr.record_below_cfa > fr.sp_adj)
            return SW_GCF_NOT_ME;
        fp_at = sp - fr.record_below_cfa;
        ra_at = fp_at + 8;
        if ((r = sw_ff_read_word(w, ra_at, &ra)) != SW_GCF_SUCCESS)
            return r;
        if ((r = sw_ff_read_word(w, fp_at, &fp)) != SW_GCF_SUCCESS)
            return r;
    } else {
        /* Unset: before the record, after it is reloaded, or a leaf that
         * never stores one; x29 and x30 are the caller's. */
        if (sw_walker_frame_reg(w, in, AARCH64_DW_X30, &ra) != 1)
            return SW_GCF_NOT_ME;
        sp = in->sp + fr.sp_adj;
    }
    if (fr.pac)
        ra = strip_pac(ra);

    struct sw_frame f = *in; /* registers not saved are unchanged (gdb's rule) */
    f.ra = ra;
    f.sp = sp;
    f.fp = fp;
    f.ra_loc = ra_at ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = ra_at }
                     : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = AARCH64_DW_X30 };
    f.sp_loc = (struct sw_location){ .kind = SW_LOC_UNKNOWN };
    f.fp_loc = fp_at ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = fp_at }
                     : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = AARCH64_DW_X29 };
    f.kind = SW_FRAME_NORMAL;
    f.non_call = false;
    f.bottom = false;
    /* x29's record or the live LR; a slot found from SP is the prologue
     * analysis's word */
    f.trust = ra_at && ra_at != in->fp + 8 ? SW_TRUST_ANALYSIS : SW_TRUST_FP;
    f.stepper = s;
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, ra);
    sw_frame_set_reg(&f, (unsigned)a->dw_sp, sp);
    sw_frame_set_reg(&f, (unsigned)a->dw_fp, fp);
    /* On return x30 still holds the address returned to. */
    sw_frame_set_reg(&f, AARCH64_DW_X30, ra);
    *out = f;
    return SW_GCF_SUCCESS;
}

const struct sw_ff_arch sw_ff_aarch64 = {
    .alloc = aarch64_alloc,
    .caller_frame = aarch64_caller_frame,
};
