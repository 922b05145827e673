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
    WAND_MAYBE,  /* a call to some other known function (a tail call may sit between),
                  * or to unnamed code of another module */
    WAND_LIKELY, /* an indirect call, a call to a linker stub (PLT) or to unnamed code
                  * of the current function's module, or the current function is
                  * unknown */
    WAND_EXACT,  /* a direct call to the current function */
};

/* ---- PLT stubs: which function a stub leads to ----------------------- */

/* The link-time address of the GOT slot the PLT stub at TARGET of LIB jumps
 * through, 0 if the stub is none of these (the linkers' PLT entries, with
 * the CET/BTI landing pad they may start with):
 *   x86-64   [endbr64] [bnd] jmp *disp32(%rip)         ff 25 / f2 ff 25
 *   i386     [endbr32] jmp *abs32 (ff 25), jmp *disp32(%ebx) (ff a3: %ebx
 *            holds the GOT, .got.plt's address)
 *   aarch64  [bti c] adrp x16, PAGE; ldr x17, [x16, #OFF]
 * PowerPC's call stubs load through the TOC or r30: not decoded (their
 * targets stay unnamed). */
static sw_addr
wand_plt_slot(const struct arch_desc *a, const struct sw_lib *lib, sw_addr target)
{
    const sw_addr link = target - lib->bias;
    uint8_t c[16];
    size_t i = 0;

    if (sw_elf_read(lib->elf, link, c, sizeof c) != 0)
        return 0;
    if (a->elf_machine == EM_X86_64 || a->elf_machine == EM_386) {
        if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && (c[3] == 0xfa || c[3] == 0xfb))
            i = 4;
        if (c[i] == 0xf2)
            i++;
        if (c[i] != 0xff)
            return 0;
        uint32_t d = (uint32_t)c[i + 2] | (uint32_t)c[i + 3] << 8 | (uint32_t)c[i + 4] << 16 |
                     (uint32_t)c[i + 5] << 24;
        if (c[i + 1] == 0x25 && a->elf_machine == EM_X86_64)
            return link + i + 6 + (sw_addr)(int64_t)(int32_t)d;
        if (c[i + 1] == 0x25)
            return d;
        const uint8_t *data;
        size_t len;
        sw_addr got;
        if (c[i + 1] == 0xa3 && a->elf_machine == EM_386 &&
            sw_elf_section(lib->elf, ".got.plt", false, &data, &len, &got) == 0)
            return (got + d) & 0xffffffffu;
        return 0;
    }
    if (a->elf_machine != EM_AARCH64)
        return 0;
    if (arch_load(a, c, 4) == 0xd503245fu) /* bti c */
        i = 4;
    uint32_t adrp = (uint32_t)arch_load(a, c + i, 4), ldr = (uint32_t)arch_load(a, c + i + 4, 4);
    if ((adrp & 0x9f00001fu) != 0x90000010u || (ldr & 0xffc003ffu) != 0xf9400211u)
        return 0;
    int64_t pages = (int64_t)(((adrp >> 29) & 3u) | ((adrp >> 5) & 0x7ffffu) << 2);
    pages = (pages ^ 0x100000) - 0x100000; /* 21-bit signed */
    sw_addr page = ((link + i) & ~(sw_addr)0xfff) + (sw_addr)(pages * 4096);
    return page + ((ldr >> 10) & 0xfffu) * 8;
}

/* The name of the function the PLT stub at TARGET of LIB leads to: the
 * .dynsym symbol of the relocation that fills its GOT slot (.rela.plt's
 * JUMP_SLOT, or .rela.dyn's GLOB_DAT for .plt.got), NULL if unknown.
 * Borrowed from the ELF cache. */
static const char *
wand_plt_name(const struct arch_desc *a, const struct sw_lib *lib, sw_addr target)
{
    static const char *const rels[] = { ".rela.plt", ".rel.plt", ".rela.dyn", ".rel.dyn" };
    const bool is64 = a->word_size == 8;
    const size_t symsz = is64 ? 24 : 16;
    const uint8_t *sym, *str, *rel;
    size_t nsym, nstr, len;
    sw_addr addr, slot = wand_plt_slot(a, lib, target);

    if (slot == 0 || sw_elf_section(lib->elf, ".dynsym", false, &sym, &nsym, &addr) != 0 ||
        sw_elf_section(lib->elf, ".dynstr", false, &str, &nstr, &addr) != 0)
        return NULL;
    for (size_t k = 0; k < sizeof rels / sizeof rels[0]; k++) {
        if (sw_elf_section(lib->elf, rels[k], false, &rel, &len, &addr) != 0)
            continue;
        const size_t ent = (size_t)a->word_size * (rels[k][4] == 'a' ? 3 : 2);
        for (size_t off = 0; off + ent <= len; off += ent) {
            if (arch_load(a, rel + off, a->word_size) != slot)
                continue;
            uint64_t info = arch_load(a, rel + off + a->word_size, a->word_size);
            size_t idx = (size_t)(is64 ? info >> 32 : info >> 8);
            if (idx == 0 || (idx + 1) * symsz > nsym)
                return NULL;
            uint32_t name = (uint32_t)arch_load(a, sym + idx * symsz, 4);
            if (name >= nstr || memchr(str + name, '\0', nstr - name) == NULL)
                return NULL;
            return (const char *)str + name;
        }
    }
    return NULL;
}

/* Whether TARGET is in a PLT section of LIB (x86 and aarch64 put their PLT
 * stubs there; PowerPC's call stubs are in .text). */
static bool
wand_in_plt(const struct sw_lib *lib, sw_addr target)
{
    static const char *const plts[] = { ".plt", ".plt.sec", ".plt.got", ".iplt" };
    const uint8_t *data;
    size_t len;
    sw_addr addr;

    for (size_t i = 0; i < sizeof plts / sizeof plts[0]; i++)
        if (sw_elf_section(lib->elf, plts[i], false, &data, &len, &addr) == 0 &&
            target - lib->bias >= addr && target - lib->bias < addr + len)
            return true;
    return false;
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

    if (sw_libstate_lib_at(ls, target, &tlib) != 0 || tlib->elf == NULL)
        return WAND_LIKELY;
    if (wand_in_plt(tlib, target) ||
        sw_elf_section(tlib->elf, ".symtab", false, &data, &len, &addr) == 0 ||
        sw_elf_section(tlib->elf, ".symtab", true, &data, &len, &addr) == 0)
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
wand_plt_fit(struct sw_walker *w, const struct wand_cur *cur, const char *name)
{
    const struct sw_lib *clib;
    struct sw_elfsym es;

    if (cur->sym.name != NULL && strcmp(name, cur->sym.name) == 0)
        return WAND_EXACT;
    if (sw_libstate_lib_at(sw_walker_libstate(w), cur->sym.start, &clib) != 0 ||
        clib->elf == NULL || sw_elf_symbol_by_name(clib->elf, name, &es) != 0)
        return WAND_MAYBE;
    struct sw_symbol fn = { .name = es.name, .start = es.value + clib->bias, .size = es.size };
    if (fn.start == cur->sym.start || wand_tail_calls(w, &fn, cur->sym.start))
        return WAND_EXACT;
    return WAND_MAYBE;
}

static enum wand_fit
wand_fit(struct sw_walker *w, const struct wand_cur *cur, sw_addr ra)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_symbol tsym;
    sw_addr target = 0;
    enum wand_call call = wand_call_before(w, ra, &target);

    if (call == WAND_NOT_CALL) {
        /* A signal handler's return address is the sigreturn trampoline,
         * which the kernel put there: no call before it.  Checking reads the
         * target: not for words that cannot be code addresses (the first 64
         * KiB are never mapped, Linux's mmap_min_addr; instructions of
         * fixed-size ISAs are 4-aligned), each such read a round trip. */
        if (ra < 0x10000 || (!a->call_ra_on_stack && (ra & 3) != 0))
            return WAND_NO;
        return sw_walker_sigframe_at(w, ra) != NULL ? WAND_LIKELY : WAND_NO;
    }
    if (!cur->known)
        return WAND_LIKELY;
    /* ppc64 ELFv2 calls local entry points, up to 8 bytes past the symbol. */
    bool to_cur =
        call == WAND_CALL_DIRECT &&
        (target == cur->sym.start ||
         (a->elf_machine == EM_PPC64 && target > cur->sym.start && target <= cur->sym.start + 8));
    /* A return address into the current function itself is a leftover of a
     * call it made earlier, unless it is a recursive call to its own start. */
    if (ra - 1 >= cur->sym.start &&
        (cur->sym.size == 0 || ra - 1 < cur->sym.start + cur->sym.size) && !to_cur)
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
        if (sw_libstate_lib_at(sw_walker_libstate(w), target, &tlib) == 0 && tlib->elf != NULL)
            name = wand_plt_name(a, tlib, target);
        if (name == NULL)
            return wand_unnamed_target(w, cur->sym.start, target);
        return wand_plt_fit(w, cur, name);
    }
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
 *     somewhere above: SLOT + word rounded up to 16 (the AAPCS64 keeps SP
 *     16-byte aligned) is the least SP it can have, so the next scan from
 *     there cannot miss the caller's own return address, and skips the
 *     padding word of a 16-byte slot that holds only x30.
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
    case EM_AARCH64:
        sp = (slot + a->word_size + 15) & ~(sw_addr)15;
        break;
    default:
        sp = slot + a->word_size;
        break;
    }
    return sp > in_sp ? sp : 0;
}

/* aarch64: a signal handler's return address (the sigreturn trampoline)
 * gives no exact SP for the signal frame -- the handler saved x30 somewhere
 * in its own frame -- but the frame is recognisable: struct rt_sigframe
 * (arch/arm64/kernel/signal.c, QEMU's target_rt_sigframe) has siginfo (128
 * bytes), then the ucontext whose uc_mcontext.__reserved, at 464 in it,
 * starts with the FP/SIMD record and its magic.  The first 16-aligned SP
 * from EST up (within WAND_SIGFRAME_REACH) where the magic sits; EST if
 * none. */
#define WAND_A64_RESERVED     (128 + 464)
#define WAND_A64_FPSIMD_MAGIC 0x46508001u
#define WAND_SIGFRAME_REACH   1024
static sw_addr
wand_a64_sigframe_sp(struct sw_walker *w, sw_addr est)
{
    struct sw_proc *p = sw_walker_proc(w);
    uint8_t buf[WAND_SIGFRAME_REACH + WAND_A64_RESERVED + 4];

    if (p->ops->read_mem(p, est, buf, sizeof buf) != 0)
        return est;
    for (size_t off = 0; off <= WAND_SIGFRAME_REACH; off += 16)
        if (arch_load(p->arch, buf + off + WAND_A64_RESERVED, 4) == WAND_A64_FPSIMD_MAGIC)
            return est + off;
    return est;
}

static void
wand_fill(struct sw_stepper *s, const struct sw_frame *in, sw_addr ra, sw_addr sp,
          struct sw_location ra_loc, struct sw_frame *out)
{
    const struct arch_desc *a = sw_walker_proc(s->walker)->arch;
    struct sw_frame f = *in; /* registers not known to be saved are unchanged (gdb's rule) */

    if (a->elf_machine == EM_AARCH64 && sw_walker_sigframe_at(s->walker, ra) != NULL)
        sp = wand_a64_sigframe_sp(s->walker, sp);
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
        have_lr = rc == 1 && wand_fit(w, &cur, lr) >= WAND_LIKELY;
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
    if (a->elf_machine == EM_PPC || a->elf_machine == EM_PPC64) {
        sw_addr chain = arch_load(a, buf, word);
        sw_addr at = chain + (word == 8 ? 16 : 4);
        if (chain > in->sp && at + word <= in->sp + nwords * word)
            pref = (size_t)(at - in->sp) / word;
    }

    for (size_t n = 0; n <= nwords; n++) {
        if ((n == 0 && pref == SIZE_MAX) || (n > 0 && n - 1 == pref))
            continue;
        size_t i = n == 0 ? pref : n - 1;
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
        /* The link register's value saved on the stack: the frame is no
         * leaf, and the slot tells where its caller's frame starts (taking
         * the register would keep the SP, and the next scan would find the
         * same value again: one frame twice).  Another value first: the
         * frame has not saved the register. */
        if (have_lr && ra != lr)
            break;
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
