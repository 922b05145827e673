/* walker/steppers/wanderer_internal.h -- the wanderer's reading of code, shared by its files.
 *
 * walker/steppers/wanderer_code.c says what the code around a candidate
 * return address is (the call before it, tail calls, PLT stubs, thunks);
 * walker/steppers/wanderer.c scans the stack with it.  Included by those two.
 */
#ifndef RSPWALK_WALKER_WANDERER_INTERNAL_H
#define RSPWALK_WALKER_WANDERER_INTERNAL_H

#include "rspwalk/arch.h"
#include "rspwalk/libstate.h"
#include "rspwalk/symlookup.h"
#include "rspwalk/walker.h"

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

/* LEN bytes at runtime address ADDR from the local ELF file of the module
 * covering it only (no reads of the target); false if there are none. */
bool sw_wand_code(struct sw_walker *w, sw_addr addr, void *buf, size_t len);

/* isPrevInstrACall for the target's architecture: what ends at RA, and the
 * target of a direct call in *TARGET. */
enum wand_call sw_wand_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target);

/* Whether function FN jumps to TO (a tail call or a jump to a split-off part):
 * its analysed jumps, conditional ones included, or unconditional jump
 * encodings anywhere in its code. */
bool sw_wand_tail_calls(struct sw_walker *w, const struct sw_symbol *fn, sw_addr to);

/* Whether the code at TARGET returns at once without a frame: i386's
 * __x86.get_pc_thunk.REG (mov (%esp),%reg; ret), an empty function (ret,
 * blr, blrl), or the next instruction itself (call 1f; 1: pop %ebx; bl .+4).
 * A call to it leaves a return address that is stale as soon as it returns;
 * RA is the return address of the call. */
bool sw_wand_returns_at_once(struct sw_walker *w, sw_addr target, sw_addr ra);

/* The name of the function the PLT stub at TARGET of LIB leads to (the
 * .dynsym symbol of the relocation that fills its GOT slot), NULL if
 * unknown.  Borrowed from the ELF cache. */
const char *sw_wand_plt_name(const struct arch_desc *a, const struct sw_lib *lib, sw_addr target);

/* Whether TARGET is in a PLT section of LIB. */
bool sw_wand_in_plt(const struct sw_lib *lib, sw_addr target);

#endif /* RSPWALK_WALKER_WANDERER_INTERNAL_H */
