/* walker/steppers/wanderer_aarch64.c -- the wanderer's AArch64 encodings and signal-frame SP.
 *
 * The call before a return address, direct jumps, functions that return at
 * once and PLT stubs, decoded from instruction words of the modules' local
 * files; where a signal frame starts above a handler's frame.  No scanning
 * (walker/steppers/wanderer.c) and no disassembler (disasm/aarch64.c).
 */
#include "walker/steppers/wanderer_internal.h"
#include "walker/walker_internal.h"

/* Arm ARM C6.2: BL imm26 is 100101 imm26, BLR Xn is
 * 1101011 0001 11111 000000 n 00000. */
static enum wand_call
aarch64_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t b[4];

    if ((ra & 3) != 0 || !sw_wand_code(w, ra - 4, b, 4))
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

/* B imm26 is 000101 imm26. */
static bool
aarch64_jump_at(const struct arch_desc *a, const uint8_t *code, size_t n, sw_addr pc, sw_addr *dest)
{
    if (n < 4)
        return false;
    uint32_t insn = (uint32_t)arch_load(a, code, 4);
    if ((insn & 0xfc000000u) != 0x14000000u)
        return false;
    *dest = pc + (sw_addr)(((int64_t)((insn & 0x03ffffffu) ^ 0x02000000u) - 0x02000000) * 4);
    return true;
}

/* ret (RET X30). */
static bool
aarch64_returns_at_once(struct sw_walker *w, sw_addr target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t c[4];

    if ((target & 3) != 0 || !sw_wand_code(w, target, c, 4))
        return false;
    return (uint32_t)arch_load(a, c, 4) == 0xd65f03c0u;
}

/* The linkers' PLT entries, with the BTI landing pad they may start with:
 *   [bti c] adrp x16, PAGE; ldr x17, [x16, #OFF] */
static sw_addr
aarch64_plt_slot(const struct arch_desc *a, const struct sw_lib *lib, sw_addr link,
                 const uint8_t *c)
{
    size_t i = 0;

    (void)lib;
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

/* A signal handler's return address (the sigreturn trampoline) gives no
 * exact SP for the signal frame -- the handler saved x30 somewhere in its
 * own frame -- but the frame is recognisable: struct rt_sigframe
 * (arch/arm64/kernel/signal.c, QEMU's target_rt_sigframe) has siginfo (128
 * bytes), then the ucontext whose uc_mcontext.__reserved, at 464 in it,
 * starts with the FP/SIMD record and its magic.  The first 16-aligned SP
 * from EST up (within A64_SIGFRAME_REACH) where the magic sits; EST if
 * none. */
#define A64_RESERVED       (128 + 464)
#define A64_FPSIMD_MAGIC   0x46508001u
#define A64_SIGFRAME_REACH 1024
static sw_addr
aarch64_sigframe_sp(struct sw_walker *w, sw_addr est)
{
    struct sw_proc *p = sw_walker_proc(w);
    uint8_t buf[A64_SIGFRAME_REACH + A64_RESERVED + 4];

    if (p->ops->read_mem(p, est, buf, sizeof buf) != 0)
        return est;
    for (size_t off = 0; off <= A64_SIGFRAME_REACH; off += 16)
        if (arch_load(p->arch, buf + off + A64_RESERVED, 4) == A64_FPSIMD_MAGIC)
            return est + off;
    return est;
}

const struct sw_wand_family sw_wand_aarch64 = {
    .call_before = aarch64_call_before,
    .jump_at = aarch64_jump_at,
    .returns_at_once = aarch64_returns_at_once,
    .plt_slot = aarch64_plt_slot,
    .sigframe_sp = aarch64_sigframe_sp,
    .insn_align = 4,
    .sp_align = 16, /* AAPCS64: SP is 16-byte aligned wherever it is used */
};
