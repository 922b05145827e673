/* disasm/disasm.h -- one instruction decoded into the facts stack analysis needs.
 *
 * The only interface to capstone (the files of disasm/ hold every capstone
 * include).  Not a disassembler for printing: it says how long an
 * instruction is, where control goes, and what it does to the stack
 * pointer, the frame pointer and the return address.
 */
#ifndef RSPWALK_DISASM_H
#define RSPWALK_DISASM_H

#include "rspwalk/arch.h"
#include "rspwalk/errors.h"
#include "rspwalk/types.h"

struct sw_disasm;

enum sw_insn_flow {
    SW_FLOW_NEXT = 0, /* falls through to the next instruction */
    SW_FLOW_CALL,     /* a call: returns to the next instruction */
    SW_FLOW_RET,      /* returns to the caller */
    SW_FLOW_JUMP,     /* unconditional jump (TARGET if has_target, else indirect) */
    SW_FLOW_CJUMP,    /* conditional jump to TARGET, or falls through */
    SW_FLOW_STOP,     /* execution does not continue here (hlt, ud2, trap) */
};

/* What an instruction does to the stack pointer. */
enum sw_insn_sp {
    SW_SP_KEEP = 0,  /* unchanged */
    SW_SP_ADD,       /* SP += sp_delta (push: -word, sub $n: -n, stwu r1,-n(r1): -n) */
    SW_SP_FROM_FP,   /* SP = FP + sp_delta (mov %rbp,%rsp; leave: +word; mov sp,x29) */
    SW_SP_BACKCHAIN, /* SP = [SP]: the PowerPC back chain (lwz/ld r1,0(r1)) */
    SW_SP_FROM_REG,  /* SP = general register sp_reg + sp_delta (lea -4(%ecx),%esp) */
    SW_SP_ADD_REG,   /* SP += general register sp_reg, or -= it when sp_reg_neg (a frame size
                      * too large for an immediate: mov x12,#0x15f0; sub sp,sp,x12) */
    SW_SP_ALIGN,     /* SP &= mask (and $-16,%rsp): the height is no longer known */
    SW_SP_OTHER,     /* any other write to SP */
};

/* What an instruction does to the frame pointer (arch_desc dw_fp). */
enum sw_insn_fp {
    SW_FP_KEEP = 0, /* unchanged (a store of it is in the stores) */
    SW_FP_SET,      /* FP = SP-before + fp_off (mov %rsp,%rbp; add x29,sp,#n) */
    SW_FP_LOAD,     /* FP loaded from the stack: see loads */
    SW_FP_OTHER,    /* any other write */
};

/* General registers are opaque ids, one per architectural register whatever the width
 * named: x86's eax, ax and al are rax; aarch64's w12 is x12. */

/* The registers whose saves and restores matter to a walk. */
enum sw_insn_reg {
    SW_IREG_FP = 0, /* the frame pointer: rbp, ebp, x29, r31 */
    SW_IREG_LR,     /* the link register as a GPR: x30 (aarch64) */
    SW_IREG_R0,     /* PowerPC r0, where prologues copy the LR */
    SW_IREG_GPR,    /* another general register (x86): sw_insn_mem.gpr says which */
    SW_IREG_NUM,
};

/* What an instruction does to the constant a general register may hold (frame sizes
 * materialised before SW_SP_ADD_REG: mov $imm,%eax; mov/movz/movn/movk/orr on aarch64;
 * li, lis, ori, oris, addi, addis on PowerPC). */
enum sw_insn_kop {
    SW_K_NONE = 0,
    SW_K_SET,    /* k_dst = k_imm */
    SW_K_ADD,    /* k_dst = k_src + k_imm */
    SW_K_OR,     /* k_dst = k_src | k_imm */
    SW_K_INSERT, /* k_dst's 16 bits at k_shift = k_imm (aarch64 movk) */
};

/* The condition of a conditional jump, where it is an equality test of the flags a compare
 * set (SW_FLOW_CJUMP only; PowerPC: of CR0). */
enum sw_insn_cc {
    SW_CC_OTHER = 0,
    SW_CC_NE, /* taken when the operands compared were not equal */
    SW_CC_EQ, /* taken when they were equal */
};

/* A store of REG to, or a load of REG from, the stack at SP-after + OFF
 * (offsets from the SP after the instruction so push, pop, leave and
 * pre/post-indexed pairs all read the same way). */
struct sw_insn_mem {
    enum sw_insn_reg reg;
    int64_t off;
    bool fp_base;  /* the slot is at FP + OFF instead (mov -4(%ebp),%ecx) */
    unsigned gpr;  /* an opaque register id, for SW_IREG_GPR */
    unsigned base; /* stores only: the slot is at general register BASE + OFF instead, 0
                    * for none (PowerPC's stw r0,4(r12) with r12 the caller's SP) */
};

struct sw_insn {
    uint8_t len;
    enum sw_insn_flow flow;
    bool has_target; /* a direct jump or call */
    sw_addr target;
    enum sw_insn_sp sp;
    int64_t sp_delta;
    enum sw_insn_fp fp;
    int64_t fp_off;
    struct sw_insn_mem stores[2], loads[2];
    uint8_t nstores, nloads;
    unsigned sp_reg;         /* SW_SP_FROM_REG, SW_SP_ADD_REG: the register (opaque id) */
    bool gpr_from_sp;        /* general register GPR_SET = SP-before + gpr_set_off */
    unsigned gpr_set;        /* (lea 4(%esp),%ecx: gcc's DRAP, the CFA in a register; */
    int64_t gpr_set_off;     /* sub x12,sp,#0xf0000: a probe loop's bound) */
    unsigned gpr_set_plus;   /* ...plus the constant in this register, 0 for none (PowerPC
                              * add r0,r1,r0) */
    unsigned gpr_writes[12]; /* general registers written, other than SP and FP (opaque ids) */
    uint8_t ngpr_writes;
    bool sp_reg_neg; /* SW_SP_ADD_REG: SP -= sp_reg */
    enum sw_insn_kop k_op;
    unsigned k_dst, k_src; /* opaque ids */
    int64_t k_imm;         /* already shifted, except for SW_K_INSERT */
    uint8_t k_shift;
    bool k_w32;  /* the result is the register's low 32 bits (w registers, x86's
                  * 32-bit destinations): zero-extended on a 64-bit target */
    bool cmp_sp; /* compares SP with general register cmp_reg (a stack probe loop's
                  * bound; PowerPC: into CR0) */
    unsigned cmp_reg;
    enum sw_insn_cc cc;
    bool writes[SW_IREG_NUM]; /* writes the register other than by a load above */
    bool lr_to_r0;            /* mflr r0 */
    bool r0_to_lr;            /* mtlr r0 */
    bool ra_signed;           /* aarch64 paciasp/pacibsp: the saved LR will carry a PAC */
};

/* A decoder for architecture A (borrowed: static).  Returns NULL when out
 * of memory, when capstone lacks the architecture, or when capstone cannot
 * be loaded (sw_disasm_available).  Free with sw_disasm_free. */
struct sw_disasm *sw_disasm_new(const struct arch_desc *a);

/* NULL is a no-op. */
void sw_disasm_free(struct sw_disasm *d);

/* Whether capstone can be loaded (disasm/capstone_dl.h: opened on first
 * use); false leaves the reason in *WHY (may be NULL). */
bool sw_disasm_available(const char **why);

/* Decode the instruction at ADDR from the LEN bytes at CODE into *OUT.
 * Returns 0, or SW_EINVAL if the bytes are not a valid instruction (or, on
 * PowerPC, one capstone 4 does not know whose effect on the registers is not
 * known either). */
int sw_disasm_one(struct sw_disasm *d, const uint8_t *code, size_t len, sw_addr addr,
                  struct sw_insn *out);

#endif /* RSPWALK_DISASM_H */
