/* disasm/disasm_internal.h -- what the capstone adapter's files share.
 *
 * disasm/x86.c, disasm/aarch64.c and disasm/ppc.c each turn one
 * architecture family's capstone operands into struct sw_insn with the
 * helpers of disasm/insn.c; disasm/disasm.c, the decoder object, picks the
 * family.  The only files that include capstone.
 */
#ifndef RSPWALK_DISASM_INTERNAL_H
#define RSPWALK_DISASM_INTERNAL_H

#include <capstone/capstone.h>

#include "disasm/capstone_dl.h"
#include "disasm/disasm.h"

struct sw_disasm {
    const struct arch_desc *arch;
    csh cs;
};

/* Helpers of disasm/insn.c.  Whether IN is in capstone group G. */
bool sw_dis_in_group(const cs_insn *in, uint8_t g);

/* Record a store or load of R at SP-after + OFF (at most two of each). */
void sw_dis_add_store(struct sw_insn *o, enum sw_insn_reg r, int64_t off);
void sw_dis_add_load(struct sw_insn *o, enum sw_insn_reg r, int64_t off);

/* Add general register R to O's writes (once; at most eight). */
void sw_dis_add_gpr_write(struct sw_insn *o, unsigned r);

/* Registers IN writes (capstone's access tables) that no rule accounted for: SP (SP or
 * SP32) and FP (FP or FP32) as "other" writes, LR and R0 (0: none) in o->writes. */
void sw_dis_other_writes(csh cs, const cs_insn *in, unsigned sp, unsigned sp32, unsigned fp,
                         unsigned fp32, unsigned lr, unsigned r0, struct sw_insn *o);

/* The families: disasm/x86.c, disasm/aarch64.c, disasm/ppc.c. */
void sw_dis_x86(struct sw_disasm *d, const cs_insn *in, struct sw_insn *o);
void sw_dis_arm64(struct sw_disasm *d, const cs_insn *in, struct sw_insn *o);
void sw_dis_ppc(struct sw_disasm *d, const cs_insn *in, const uint8_t *code, struct sw_insn *o);
/* disasm/thumb.c: Thumb-2 of an M-profile core (arch_armv7m). */
void sw_dis_thumb(struct sw_disasm *d, const cs_insn *in, const uint8_t *code, size_t len,
                  struct sw_insn *o);

/* A PowerPC word capstone does not decode, as an instruction that may write
 * the registers its fields name; SW_EINVAL if it is none. */
int sw_dis_ppc_unknown(struct sw_disasm *d, const uint8_t *code, size_t len, struct sw_insn *o);

#endif /* RSPWALK_DISASM_INTERNAL_H */
