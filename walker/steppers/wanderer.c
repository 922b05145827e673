/* walker/steppers/wanderer.c -- StepperWanderer: find the caller by scanning the stack.
 *
 * The last resort (priority 0x10060): read a window of stack words above the
 * frame's SP in one read and take the first word that points just after a
 * call instruction which could have called the current function (the seed's
 * WandererHelper::isPrevInstrACall with requireExactMatch).  Frames found so
 * are heuristics: trust "scan".  Not a disassembler (walker/disasm.c is) and
 * not an unwinder of anything with CFI or a frame chain: those run first.
 */
#include "rspwalk/stepper.h"

#include <inttypes.h>
#include <string.h>

#include "walker/walker_internal.h"

/* Dyninst's MAX_WANDERER_DEPTH (x86-wanderer.C): 256 words, 2 KiB on 64-bit
 * targets.  Read as one block (the RSP backend caches blocks), where Dyninst
 * reads one word per call. */
#define WAND_WINDOW_WORDS 256

/* EM_* numbers from the ELF gABI / processor supplements. */
#define EM_386     3
#define EM_X86_64  62
#define EM_PPC     20
#define EM_PPC64   21
#define EM_AARCH64 183

/* What the instruction before a candidate return address is. */
enum wand_call {
    WAND_NOT_CALL = 0,
    WAND_CALL_DIRECT,   /* target known */
    WAND_CALL_INDIRECT, /* through a register or memory: target unknown */
};

/* Bytes at runtime address ADDR from the local ELF file of the module
 * covering it only: a stack word that is not in a module with a local file
 * is no return address we can check, and reading the target for every
 * candidate would cost a round trip each. */
static bool
wand_code(struct sw_walker *w, sw_addr addr, void *buf, size_t len)
{
    const struct sw_lib *lib;

    if (addr < len)
        return false;
    if (sw_libstate_lib_at(sw_walker_libstate(w), addr, &lib) < 0 || lib->elf == NULL)
        return false;
    if (addr < lib->start || addr + len > lib->end)
        return false;
    return sw_elf_read(lib->elf, addr - lib->bias, buf, len) == 0;
}

/* The length of an `ff /2` (call r/m) instruction whose ModRM byte is M,
 * without prefixes; 0 if M is not /2.  Intel SDM vol. 2, table 2-2 (32-bit
 * addressing; on x86-64 mod 00 r/m 101 is RIP-relative, also disp32). */
static size_t
x86_ff2_len(uint8_t m, uint8_t sib)
{
    unsigned mod = m >> 6, reg = (m >> 3) & 7, rm = m & 7;
    size_t n = 2;

    if (reg != 2)
        return 0;
    if (mod == 3)
        return 2;
    if (rm == 4) {
        n++;
        if (mod == 0 && (sib & 7) == 5)
            return n + 4;
    }
    if (mod == 0)
        return rm == 5 ? n + 4 : n;
    return n + (mod == 1 ? 1 : 4);
}

/* x86: `e8 rel32` (direct), or `ff /2` with 2 to 7 bytes (indirect). */
static enum wand_call
x86_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    static const size_t lens[] = { 2, 3, 4, 6, 7 };
    uint8_t c[7];

    if (!wand_code(w, ra - sizeof c, c, sizeof c))
        return WAND_NOT_CALL;
    if (c[2] == 0xe8) {
        int32_t rel = (int32_t)((uint32_t)c[3] | (uint32_t)c[4] << 8 | (uint32_t)c[5] << 16 |
                                (uint32_t)c[6] << 24);
        *target = ra + (sw_addr)(int64_t)rel;
        if (sw_walker_proc(w)->arch->word_size == 4)
            *target &= 0xffffffffu;
        return WAND_CALL_DIRECT;
    }
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t at = sizeof c - lens[i];
        uint8_t sib = at + 2 < sizeof c ? c[at + 2] : 0;
        if (c[at] == 0xff && x86_ff2_len(c[at + 1], sib) == lens[i])
            return WAND_CALL_INDIRECT;
    }
    return WAND_NOT_CALL;
}

/* aarch64 (Arm ARM C6.2): BL imm26 is 100101 imm26, BLR Xn is
 * 1101011 0001 11111 000000 n 00000. */
static enum wand_call
aarch64_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t b[4];

    if ((ra & 3) != 0 || !wand_code(w, ra - 4, b, 4))
        return WAND_NOT_CALL;
    uint32_t insn = (uint32_t)arch_load(a, b, 4);
    if ((insn & 0xfc000000u) == 0x94000000u) {
        int64_t off = (int64_t)((insn & 0x03ffffffu) ^ 0x02000000u) - 0x02000000;
        *target = ra - 4 + (sw_addr)(off * 4);
        return WAND_CALL_DIRECT;
    }
    if ((insn & 0xfffffc1fu) == 0xd63f0000u)
        return WAND_CALL_INDIRECT;
    return WAND_NOT_CALL;
}

/* PowerPC (Power ISA I-form and XL-form): bl is opcode 18 with AA=0 LK=1,
 * bctrl 4e800421, blrl 4e800021. */
static enum wand_call
ppc_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t b[4];

    if ((ra & 3) != 0 || !wand_code(w, ra - 4, b, 4))
        return WAND_NOT_CALL;
    uint32_t insn = (uint32_t)arch_load(a, b, 4);
    if ((insn & 0xfc000003u) == 0x48000001u) {
        int64_t off = (int64_t)((insn & 0x03fffffcu) ^ 0x02000000u) - 0x02000000;
        *target = ra - 4 + (sw_addr)off;
        if (a->word_size == 4)
            *target &= 0xffffffffu;
        return WAND_CALL_DIRECT;
    }
    if (insn == 0x4e800421u || insn == 0x4e800021u)
        return WAND_CALL_INDIRECT;
    return WAND_NOT_CALL;
}

/* isPrevInstrACall for the target's architecture. */
static enum wand_call
wand_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    switch (sw_walker_proc(w)->arch->elf_machine) {
    case EM_386:
    case EM_X86_64:
        return x86_call_before(w, ra, target);
    case EM_AARCH64:
        return aarch64_call_before(w, ra, target);
    case EM_PPC:
    case EM_PPC64:
        return ppc_call_before(w, ra, target);
    default:
        return WAND_NOT_CALL;
    }
}

/* Whether the code of function FN jumps to TO (a tail call): x86 `e9 rel32`
 * or `eb rel8` at any byte offset, aarch64 `b imm26`, PowerPC `b` (opcode 18,
 * AA=0, LK=0).  Functions without a size or larger than the buffer: no. */
static bool
wand_tail_calls(struct sw_walker *w, const struct sw_symbol *fn, sw_addr to)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    const sw_addr mask = a->word_size == 4 ? 0xffffffffu : ~(sw_addr)0;
    uint8_t code[4096];

    if (fn->size == 0 || fn->size > sizeof code || !wand_code(w, fn->start, code, (size_t)fn->size))
        return false;
    for (size_t i = 0; i < fn->size; i++) {
        sw_addr pc = fn->start + i;
        if (a->call_ra_on_stack) {
            if (code[i] == 0xe9 && i + 5 <= fn->size) {
                int32_t rel = (int32_t)((uint32_t)code[i + 1] | (uint32_t)code[i + 2] << 8 |
                                        (uint32_t)code[i + 3] << 16 | (uint32_t)code[i + 4] << 24);
                if (((pc + 5 + (sw_addr)(int64_t)rel) & mask) == to)
                    return true;
            } else if (code[i] == 0xeb && i + 2 <= fn->size) {
                if (((pc + 2 + (sw_addr)(int64_t)(int8_t)code[i + 1]) & mask) == to)
                    return true;
            }
            continue;
        }
        if ((i & 3) != 0 || i + 4 > fn->size)
            continue;
        uint32_t insn = (uint32_t)arch_load(a, code + i, 4);
        int64_t off;
        if (a->elf_machine == EM_AARCH64 && (insn & 0xfc000000u) == 0x14000000u)
            off = ((int64_t)((insn & 0x03ffffffu) ^ 0x02000000u) - 0x02000000) * 4;
        else if (a->elf_machine != EM_AARCH64 && (insn & 0xfc000003u) == 0x48000000u)
            off = (int64_t)((insn & 0x03fffffcu) ^ 0x02000000u) - 0x02000000;
        else
            continue;
        if (pc + (sw_addr)off == to ||
            (a->elf_machine == EM_PPC64 && pc + (sw_addr)off > to && pc + (sw_addr)off <= to + 8))
            return true;
    }
    return false;
}

/* What the scan knows about the current function. */
struct wand_cur {
    bool known; /* a symbol covers the frame's lookup PC */
    struct sw_symbol sym;
};

/* How well a candidate return address fits the current function. */
enum wand_fit {
    WAND_NO = 0, /* not a return address, or one inside the current function */
    WAND_MAYBE,  /* a call to some other known function (a tail call may sit between) */
    WAND_LIKELY, /* an indirect call, a call to code without a symbol (a PLT stub), or
                  * the current function is unknown */
    WAND_EXACT,  /* a direct call to the current function */
};

static enum wand_fit
wand_fit(struct sw_walker *w, const struct wand_cur *cur, sw_addr ra)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_symbol tsym;
    sw_addr target = 0;
    enum wand_call call = wand_call_before(w, ra, &target);

    if (call == WAND_NOT_CALL) {
        /* A signal handler's return address is the sigreturn trampoline,
         * which the kernel put there: no call before it. */
        return sw_walker_sigframe_at(w, ra) != NULL ? WAND_LIKELY : WAND_NO;
    }
    if (!cur->known)
        return WAND_LIKELY;
    /* A return address into the current function itself is a leftover of a
     * call it made earlier, unless it is a recursive call to its own start. */
    if (ra - 1 >= cur->sym.start &&
        (cur->sym.size == 0 || ra - 1 < cur->sym.start + cur->sym.size)) {
        if (call != WAND_CALL_DIRECT || target != cur->sym.start)
            return WAND_NO;
    }
    if (call == WAND_CALL_INDIRECT)
        return WAND_LIKELY;
    /* ppc64 ELFv2 calls local entry points, up to 8 bytes past the symbol. */
    if (target == cur->sym.start ||
        (a->elf_machine == EM_PPC64 && target > cur->sym.start && target <= cur->sym.start + 8))
        return WAND_EXACT;
    struct sw_symlookup *sl = sw_walker_symlookup(w);
    if (sl->ops->lookup(sl, target, &tsym) < 0)
        return WAND_LIKELY; /* a PLT stub or stripped code: cannot tell */
    if (tsym.name && cur->sym.name && strcmp(tsym.name, cur->sym.name) == 0)
        return WAND_EXACT; /* the same function in another module's PLT or an alias */
    /* The called function may have jumped here (a tail call). */
    if (wand_tail_calls(w, &tsym, cur->sym.start))
        return WAND_EXACT;
    return WAND_MAYBE;
}

/* The caller's SP when the word at SLOT is its return address (ABI rules):
 *   x86: the call pushed it, so the caller's SP is just above: SLOT + word;
 *   PowerPC: the callee saved LR in the caller's frame header, at SP + 4
 *     (32-bit SysV) or SP + 16 (64-bit ELFv1/v2): SLOT - 4 or SLOT - 16;
 *   aarch64: the callee saved x30 in its own frame (usually as the second
 *     word of its frame record at the bottom); the caller's frame starts
 *     somewhere above: SLOT + word is the least SP it can have, so the next
 *     scan from there cannot miss the caller's own return address.
 * Returns 0 when the rule gives no SP above IN_SP. */
static sw_addr
wand_caller_sp(const struct arch_desc *a, sw_addr slot, sw_addr in_sp)
{
    sw_addr sp;

    switch (a->elf_machine) {
    case EM_PPC:
        sp = slot - 4;
        break;
    case EM_PPC64:
        sp = slot - 16;
        break;
    default:
        sp = slot + a->word_size;
        break;
    }
    return sp > in_sp ? sp : 0;
}

static void
wand_fill(struct sw_stepper *s, const struct sw_frame *in, sw_addr ra, sw_addr sp,
          struct sw_location ra_loc, struct sw_frame *out)
{
    const struct arch_desc *a = sw_walker_proc(s->walker)->arch;
    struct sw_frame f = *in; /* registers not known to be saved are unchanged (gdb's rule) */

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
    const unsigned word = a->word_size;
    uint8_t buf[WAND_WINDOW_WORDS * 8];
    struct wand_cur cur = { 0 };
    size_t nwords = WAND_WINDOW_WORDS;
    sw_addr maybe_ra = 0, maybe_slot = 0;
    sw_word lr;
    int rc;

    if (in->sp == 0 || (in->sp % word) != 0)
        return SW_GCF_NOT_ME;
    cur.known = sw_frame_symbol(w, in, &cur.sym) == 0;

    /* A leaf on a link-register arch has not saved its return address yet:
     * where the PC is exact, the link register is the first candidate (the
     * caller keeps the SP; the walker accepts that only for such frames). */
    if (!a->call_ra_on_stack && (in->top || in->non_call) &&
        sw_frame_reg(in, (unsigned)a->dw_ra, &lr) && wand_fit(w, &cur, lr) >= WAND_LIKELY) {
        wand_fill(s, in, lr, in->sp,
                  (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_ra }, out);
        return SW_GCF_SUCCESS;
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
        if (nwords <= 4)
            return SW_GCF_NOT_ME;
        nwords /= 2;
    }

    for (size_t i = 0; i < nwords; i++) {
        sw_addr slot = in->sp + i * word;
        sw_addr ra = arch_load(a, buf + i * word, word);
        sw_addr sp = wand_caller_sp(a, slot, in->sp);
        enum wand_fit fit;

        if (ra == 0 || sp == 0)
            continue;
        fit = wand_fit(w, &cur, ra);
        if (fit == WAND_NO)
            continue;
        if (fit == WAND_MAYBE) {
            if (maybe_ra == 0) {
                maybe_ra = ra;
                maybe_slot = slot;
            }
            continue;
        }
        sw_debug(SW_DBG_STEP, "wanderer: ra 0x%" PRIx64 " at 0x%" PRIx64 " (%s)", ra, slot,
                 fit == WAND_EXACT ? "exact" : "likely");
        wand_fill(s, in, ra, sp, (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = slot }, out);
        return SW_GCF_SUCCESS;
    }
    /* No call to this function: a tail call may sit between (the caller
     * called another function that jumped here); take the first call. */
    if (maybe_ra != 0) {
        sw_debug(SW_DBG_STEP, "wanderer: ra 0x%" PRIx64 " at 0x%" PRIx64 " (inexact)", maybe_ra,
                 maybe_slot);
        wand_fill(s, in, maybe_ra, wand_caller_sp(a, maybe_slot, in->sp),
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
