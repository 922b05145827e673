/* walker/steppers/wanderer_internal.h -- the wanderer's reading of code, shared by its files.
 *
 * walker/steppers/wanderer_code.c says what the code around a candidate
 * return address is (tail calls, PLT stubs) with the encodings of the
 * target's family (wanderer_x86.c, wanderer_aarch64.c, wanderer_ppc.c: the
 * call before it, jumps, thunks); walker/steppers/wanderer.c scans the stack
 * with them.  Included by those files.
 */
#ifndef RSPWALK_WALKER_WANDERER_INTERNAL_H
#define RSPWALK_WALKER_WANDERER_INTERNAL_H

#include "rspwalk/arch.h"
#include "rspwalk/libstate.h"
#include "rspwalk/symlookup.h"
#include "rspwalk/walker.h"

/* What the instruction before a candidate return address is. */
enum wand_call {
    WAND_NOT_CALL = 0,
    WAND_CALL_DIRECT,   /* target known */
    WAND_CALL_INDIRECT, /* through a register or memory: target unknown */
};

/* Bytes of a PLT stub its family's plt_slot sees: more than the longest
 * stub prefix decoded (aarch64's bti c; adrp; ldr: 12). */
#define WAND_PLT_STUB_BYTES 16

/* One instruction-set family's encodings, for the wanderer: one static const
 * instance per family (wanderer_x86.c, wanderer_aarch64.c, wanderer_ppc.c),
 * picked by the arch table's family.  Code is read with sw_wand_code: from
 * the modules' local files only. */
struct sw_wand_family {
    /* REQUIRED.  isPrevInstrACall: what the instruction that ends at RA is;
     * for a direct call, its target in *TARGET (written only then). */
    enum wand_call (*call_before)(struct sw_walker *w, sw_addr ra, sw_addr *target);
    /* REQUIRED.  Whether an unconditional direct jump (no link) starts at
     * CODE, the N >= 1 bytes of a function from runtime address PC on; its
     * destination in *DEST (written only then).  Called at each offset of the
     * function that is a multiple of insn_align. */
    bool (*jump_at)(const struct arch_desc *a, const uint8_t *code, size_t n, sw_addr pc,
                    sw_addr *dest);
    /* REQUIRED.  Whether the code at TARGET returns at once without a frame:
     * an empty function (ret, blr, blrl), or i386's __x86.get_pc_thunk.REG
     * (mov (%esp),%reg; ret).  A call to it leaves a return address that is
     * stale as soon as it returns. */
    bool (*returns_at_once)(struct sw_walker *w, sw_addr target);
    /* OPTIONAL (NULL: no stub is decoded, calls through stubs stay unnamed,
     * as PowerPC's call stubs, which load through the TOC or r30).  The
     * link-time address of the GOT slot the PLT stub at link-time address
     * LINK of LIB jumps through, from CODE, the stub's first
     * WAND_PLT_STUB_BYTES bytes; 0 if the code is no stub this decodes. */
    sw_addr (*plt_slot)(const struct arch_desc *a, const struct sw_lib *lib, sw_addr link,
                        const uint8_t *code);
    /* OPTIONAL (NULL: the SP the caller's slot gives).  The SP of a signal
     * frame whose handler returns to the sigreturn trampoline, from EST, the
     * least SP it can have: where a callee saves its return address in its
     * own frame, the slot does not tell. */
    sw_addr (*sigframe_sp)(struct sw_walker *w, sw_addr est);
    /* REQUIRED.  Every instruction starts at a multiple of this: 1 (x86), 4. */
    uint8_t insn_align;
    /* OPTIONAL (0: the slot of the return address gives the caller's SP: the
     * call pushed it, or the back chain locates it).  Where the callee saves
     * its return address in its own frame at a distance the slot does not
     * tell (AArch64's x30), the alignment the ABI keeps the SP at (AAPCS64:
     * 16): the caller's SP is at least the slot's end rounded up to it, and
     * the caller's analysis is searched for the exact one from there. */
    uint8_t sp_align;
};

extern const struct sw_wand_family sw_wand_x86;
extern const struct sw_wand_family sw_wand_aarch64;
extern const struct sw_wand_family sw_wand_ppc;
extern const struct sw_wand_family sw_wand_thumb;

/* LEN bytes at runtime address ADDR from the local ELF file of the module
 * covering it only (no reads of the target); false if there are none. */
bool sw_wand_code(struct sw_walker *w, sw_addr addr, void *buf, size_t len);

/* Whether function FN jumps to TO (a tail call or a jump to a split-off part):
 * its analysed jumps, conditional ones included, or FAM's unconditional jump
 * encodings anywhere in its code. */
bool sw_wand_tail_calls(struct sw_walker *w, const struct sw_wand_family *fam,
                        const struct sw_symbol *fn, sw_addr to);

/* The name of the function the PLT stub at TARGET of LIB leads to (the
 * .dynsym symbol of the relocation that fills its GOT slot, the stub decoded
 * by FAM), NULL if unknown.  Borrowed from the ELF cache. */
const char *sw_wand_plt_name(const struct arch_desc *a, const struct sw_wand_family *fam,
                             const struct sw_lib *lib, sw_addr target);

/* Whether TARGET is in a PLT section of LIB. */
bool sw_wand_in_plt(const struct sw_lib *lib, sw_addr target);

#endif /* RSPWALK_WALKER_WANDERER_INTERNAL_H */
