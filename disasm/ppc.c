/* disasm/ppc.c -- capstone adapter, PowerPC (32 and 64, both byte orders).
 *
 * Branches and the integer forms that move r1 (SP) and r31 (FP) or build a
 * constant are decoded from the instruction word; loads and stores through
 * r1 from capstone's operands.  General registers are PPC_REG_R0 + n.
 */
#include <string.h>

#include "disasm/disasm_internal.h"

/* Branches from the encoding (Power ISA 2.07 book I 2.4): opcode 18 is
 * b[l][a], 16 bc[l][a], 19/16 bclr[l], 19/528 bcctr[l]; BO bit 0x14 set
 * means "branch always". */
static void
ppc_branch(uint32_t w, sw_addr addr, struct sw_insn *o)
{
    unsigned opc = w >> 26, xo = (w >> 1) & 0x3ff, bo = (w >> 21) & 0x1f;
    bool lk = w & 1, aa = (w >> 1) & 1, always = (bo & 0x14) == 0x14;

    if (opc == 18) {
        int64_t li = (int64_t)(int32_t)((w & 0x03fffffc) << 6) >> 6;
        o->flow = lk ? SW_FLOW_CALL : SW_FLOW_JUMP;
        o->has_target = true;
        o->target = aa ? (sw_addr)li : addr + (sw_addr)li;
    } else if (opc == 16) {
        int64_t bd = (int64_t)(int16_t)(w & 0xfffc);
        o->flow = lk ? SW_FLOW_CALL : always ? SW_FLOW_JUMP : SW_FLOW_CJUMP;
        o->has_target = true;
        o->target = aa ? (sw_addr)bd : addr + (sw_addr)bd;
        /* bne and beq on CR0: BI 2 (CR0's EQ bit), BO 001at (branch if false)
         * or 011at (if true), no CTR decrement */
        if (o->flow == SW_FLOW_CJUMP && ((w >> 16) & 0x1f) == 2)
            o->cc = (bo & 0x1c) == 0x04 ? SW_CC_NE : (bo & 0x1c) == 0x0c ? SW_CC_EQ : SW_CC_OTHER;
    } else if (opc == 19 && xo == 16) {
        o->flow = lk ? SW_FLOW_CALL : always ? SW_FLOW_RET : SW_FLOW_CJUMP;
    } else if (opc == 19 && xo == 528) {
        o->flow = lk ? SW_FLOW_CALL : always ? SW_FLOW_JUMP : SW_FLOW_CJUMP;
    } else if (opc == 31 && xo == 4 && ((w >> 21) & 0x1f) == 31) {
        o->flow = SW_FLOW_STOP; /* trap (tw 31,0,0) */
    }
    if (o->flow == SW_FLOW_CALL)
        o->writes[SW_IREG_LR] = true;
}

static bool
starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool
ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The general registers a PowerPC instruction writes, from its operands:
 * capstone 4 has no register-access tables for PowerPC (cs_regs_access
 * fails), so the destination is taken as the first register operand --
 * assembler syntax puts it first -- except in stores, compares, traps,
 * moves to special registers and cache or sync instructions; update forms
 * (stwu, lwzu, stwux, ...) also write their base register, and lmw every
 * register from its first to r31. */
static size_t
ppc_writes(const cs_insn *in, unsigned wr[4])
{
    const cs_ppc *x = &in->detail->ppc;
    const char *m = in->mnemonic;
    size_t n = 0;
    bool store = starts(m, "st"), load = m[0] == 'l';
    bool update = (store || load) && (ends(m, "u") || ends(m, "ux"));
    bool no_dest = store || starts(m, "cmp") || starts(m, "tw") || starts(m, "td") ||
                   starts(m, "trap") || starts(m, "mt") || starts(m, "dcb") || starts(m, "icb") ||
                   ends(m, "sync") || starts(m, "eieio") || starts(m, "nop");
    if (x->op_count > 0 && x->operands[0].type == PPC_OP_REG && !no_dest)
        wr[n++] = x->operands[0].reg;
    if (update && x->op_count > 1) {
        const cs_ppc_op *b = &x->operands[1];
        if (b->type == PPC_OP_MEM)
            wr[n++] = b->mem.base;
        else if (b->type == PPC_OP_REG)
            wr[n++] = b->reg;
    }
    if (strcmp(m, "lmw") == 0 && n == 1 && wr[0] >= PPC_REG_R0 && wr[0] <= PPC_REG_R31) {
        if (wr[0] <= PPC_REG_R1)
            wr[n++] = PPC_REG_R1;
        wr[n++] = PPC_REG_R31; /* the last register it loads */
    }
    return n;
}

/* What ppc_writes finds that no rule accounted for. */
static void
ppc_other_writes(const cs_insn *in, struct sw_insn *o)
{
    unsigned wr[4];
    size_t n = ppc_writes(in, wr);
    for (size_t i = 0; i < n; i++) {
        if (wr[i] == PPC_REG_R1 && o->sp == SW_SP_KEEP)
            o->sp = SW_SP_OTHER;
        if (wr[i] == PPC_REG_R31 && o->fp == SW_FP_KEEP)
            o->fp = SW_FP_OTHER;
        if (wr[i] == PPC_REG_R0)
            o->writes[SW_IREG_R0] = true;
    }
}

/* Integer arithmetic that moves SP or FP or builds a constant, from the
 * encoding (Power ISA book I 3.3; capstone 4 gives addi's immediate
 * unsigned): addi/addis (li/lis when RA is 0), ori/oris, add, the indexed
 * update stores stwux/stdux r1,r1,rB (a frame larger than stwu's 16-bit
 * displacement: lis r0,-2; ori r0,r0,N; stwux r1,r1,r0), mr (or rA,rS,rS),
 * and compares of r1 with a register into CR0.  True if one applied. */
static bool
ppc_int_forms(uint32_t w, struct sw_insn *o)
{
    const unsigned opc = w >> 26, rt = (w >> 21) & 0x1f, ra = (w >> 16) & 0x1f;
    const unsigned rb = (w >> 11) & 0x1f, xo = (w >> 1) & 0x3ff;
    const int64_t si = (int16_t)(w & 0xffff);
    const unsigned r = PPC_REG_R0;

    if (opc == 14 || opc == 15) { /* addi, addis: rt = (ra ? ra : 0) + si */
        int64_t imm = opc == 15 ? si * 65536 : si;
        if (rt == 1 && ra == 1) {
            o->sp = SW_SP_ADD;
            o->sp_delta = imm;
        } else if (rt == 1 && ra == 31) {
            o->sp = SW_SP_FROM_FP;
            o->sp_delta = imm;
        } else if (rt == 31 && ra == 1) {
            o->fp = SW_FP_SET;
            o->fp_off = imm;
        } else if (rt == 1 || rt == 31) {
            return false;
        } else if (ra == 0) {
            o->k_op = SW_K_SET;
            o->k_dst = r + rt;
            o->k_imm = imm;
        } else if (ra == 1) {
            o->gpr_from_sp = true;
            o->gpr_set = r + rt;
            o->gpr_set_off = imm;
        } else {
            o->k_op = SW_K_ADD;
            o->k_dst = r + rt;
            o->k_src = r + ra;
            o->k_imm = imm;
        }
        return true;
    }
    if (opc == 24 || opc == 25) { /* ori, oris: ra = rs | ui */
        if (ra == 1 || ra == 31)
            return false;
        o->k_op = SW_K_OR;
        o->k_dst = r + ra;
        o->k_src = r + rt;
        o->k_imm = (int64_t)(w & 0xffff) << (opc == 25 ? 16 : 0);
        return true;
    }
    if (opc != 31)
        return false;
    if ((xo == 183 || xo == 181) && rt == 1 && ra == 1) { /* stwux, stdux r1,r1,rb */
        o->sp = SW_SP_ADD_REG;
        o->sp_reg = r + rb;
        return true;
    }
    if (xo == 266 && (ra == 1 || rb == 1) && ra != rb && rt != 31) { /* add rt,ra,rb */
        unsigned other = ra == 1 ? rb : ra;
        if (rt == 1) {
            o->sp = SW_SP_ADD_REG;
            o->sp_reg = r + other;
        } else {
            o->gpr_from_sp = true;
            o->gpr_set = r + rt;
            o->gpr_set_plus = r + other;
        }
        return true;
    }
    if (xo == 444 && rt == rb && rt == 1 && ra != 1 && ra != 31) { /* mr ra,r1 */
        o->gpr_from_sp = true;
        o->gpr_set = r + ra;
        return true;
    }
    if ((xo == 0 || xo == 32) && ((w >> 23) & 7) == 0 && (ra == 1) != (rb == 1)) {
        o->cmp_sp = true; /* cmpw/cmpd/cmplw/cmpld cr0, r1, rb (or ra, r1) */
        o->cmp_reg = r + (ra == 1 ? rb : ra);
        return true;
    }
    return false;
}

static void
ppc_classify(struct sw_disasm *d, const cs_insn *in, const uint8_t *code, struct sw_insn *o)
{
    const cs_ppc *x = &in->detail->ppc;
    const cs_ppc_op *op = x->operands;
    uint8_t n = x->op_count;
    uint32_t w = (uint32_t)arch_load(d->arch, code, 4);

    ppc_branch(w, in->address, o);
    if (o->flow != SW_FLOW_NEXT || ppc_int_forms(w, o))
        return;

    switch (in->id) {
    case PPC_INS_STWU:
    case PPC_INS_STDU:
        /* stwu r1,-N(r1); the probe loop's stwu r12,-4096(r1) stores another copy of
         * the caller's SP */
        if (n == 2 && op[0].type == PPC_OP_REG && op[1].type == PPC_OP_MEM &&
            op[1].mem.base == PPC_REG_R1) {
            o->sp = SW_SP_ADD;
            o->sp_delta = op[1].mem.disp;
            return;
        }
        break;
    case PPC_INS_STW:
    case PPC_INS_STD:
    case PPC_INS_LWZ:
    case PPC_INS_LD:
        /* r0 (the LR's copy) or r31 stored through another register: gcc's big frames
         * keep the caller's SP in r12 (mr r12,r1; stwux r1,r1,r0; stw r0,4(r12)) */
        if (n == 2 && op[0].type == PPC_OP_REG && op[1].type == PPC_OP_MEM &&
            op[1].mem.base != PPC_REG_R1 && op[1].mem.base > PPC_REG_R1 &&
            op[1].mem.base <= PPC_REG_R31 && (in->id == PPC_INS_STW || in->id == PPC_INS_STD) &&
            (op[0].reg == PPC_REG_R0 || op[0].reg == PPC_REG_R31) && o->nstores < 2) {
            o->stores[o->nstores++] = (struct sw_insn_mem){
                .reg = op[0].reg == PPC_REG_R0 ? SW_IREG_R0 : SW_IREG_FP,
                .off = op[1].mem.disp,
                .base = op[1].mem.base,
            };
            return;
        }
        if (n == 2 && op[0].type == PPC_OP_REG && op[1].type == PPC_OP_MEM &&
            op[1].mem.base == PPC_REG_R1) {
            bool load = in->id == PPC_INS_LWZ || in->id == PPC_INS_LD;
            if (load && op[0].reg == PPC_REG_R1 && op[1].mem.disp == 0) {
                o->sp = SW_SP_BACKCHAIN;
                return;
            }
            enum sw_insn_reg r = op[0].reg == PPC_REG_R0    ? SW_IREG_R0
                                 : op[0].reg == PPC_REG_R31 ? SW_IREG_FP
                                                            : SW_IREG_NUM;
            if (r != SW_IREG_NUM) {
                if (load) {
                    sw_dis_add_load(o, r, op[1].mem.disp);
                    if (r == SW_IREG_FP)
                        o->fp = SW_FP_LOAD;
                } else {
                    sw_dis_add_store(o, r, op[1].mem.disp);
                }
                return;
            }
        }
        break;
    case PPC_INS_MR:
        if (n == 2 && op[0].type == PPC_OP_REG && op[1].type == PPC_OP_REG) {
            if (op[0].reg == PPC_REG_R31 && op[1].reg == PPC_REG_R1) {
                o->fp = SW_FP_SET;
                o->fp_off = 0;
                return;
            }
            if (op[0].reg == PPC_REG_R1 && op[1].reg == PPC_REG_R31) {
                o->sp = SW_SP_FROM_FP;
                o->sp_delta = 0;
                return;
            }
        }
        break;
    case PPC_INS_MFLR:
        if (n == 1 && op[0].type == PPC_OP_REG && op[0].reg == PPC_REG_R0) {
            o->lr_to_r0 = true;
            return;
        }
        break;
    case PPC_INS_MTLR:
        if (n == 1 && op[0].type == PPC_OP_REG && op[0].reg == PPC_REG_R0) {
            o->r0_to_lr = true;
            return;
        }
        o->writes[SW_IREG_LR] = true;
        return;
    default:
        break;
    }
    ppc_other_writes(in, o);
}

/* A word capstone 4 does not know: the general registers it may write,
 * from the encoding (Power ISA 3.0), for the families gcc emits that
 * capstone 4 lacks; -1 for a word of no family known here.  RT and RA are
 * the fields at bits 21 and 16. */
static int
ppc_unknown_writes(uint32_t w, unsigned wr[12], size_t *n)
{
    const unsigned opc = w >> 26, rt = (w >> 21) & 0x1f, ra = (w >> 16) & 0x1f;
    const unsigned xo = (w >> 1) & 0x3ff, vxo = w & 0x7ff;

    *n = 0;
    if (opc == 17 && (w & 3) != 0) { /* sc, scv: r3 the result, r0 and r4-r12 clobbered */
        wr[(*n)++] = 0;
        for (unsigned r = 3; r <= 12; r++)
            wr[(*n)++] = r;
        return 0;
    }
    if (opc == 4) { /* vector (VMX/VSX) arithmetic: vector registers, but for these */
        if (vxo == 1538 || vxo == 1549 || vxo == 1613 || vxo == 1677 || vxo == 1805 ||
            vxo == 1869 || vxo == 1933)
            wr[(*n)++] = rt; /* vclzlsbb/vctzlsbb, vextu[bhw][lr]x */
        return 0;
    }
    if (opc != 31)
        return -1;
    switch (xo) {
    case 20:  /* lwarx */
    case 52:  /* lbarx */
    case 84:  /* ldarx */
    case 116: /* lharx */
        wr[(*n)++] = rt;
        return 0;
    case 51:  /* mfvsrd */
    case 115: /* mfvsrwz */
    case 307: /* mfvsrld */
        wr[(*n)++] = ra;
        return 0;
    case 179: /* mtvsrd */
    case 211: /* mtvsrwa */
    case 243: /* mtvsrwz */
    case 403: /* mtvsrws */
    case 435: /* mtvsrdd */
        return 0;
    default:
        return -1;
    }
}

/* A PowerPC word capstone 4 does not decode (POWER8 and later: mtvsrwz,
 * mfvsrd, the vector operations; and sc, lwarx): it falls through and writes
 * the general registers its family does (ppc_unknown_writes) -- SP, FP and
 * r0 among them as "other" writes, the rest for the analysis to forget.
 * Words of no known family end the path as before (SW_EINVAL): no guess at
 * what they write. */
int
sw_dis_ppc_unknown(struct sw_disasm *d, const uint8_t *code, size_t len, struct sw_insn *o)
{
    unsigned wr[12];
    size_t n;
    if (len < 4 || ppc_unknown_writes((uint32_t)arch_load(d->arch, code, 4), wr, &n) < 0)
        return SW_EINVAL;
    uint32_t w = (uint32_t)arch_load(d->arch, code, 4);
    memset(o, 0, sizeof *o);
    o->len = 4;
    o->writes[SW_IREG_LR] = w >> 26 == 17 && (w & 3) == 1; /* scv clobbers the LR */
    for (size_t k = 0; k < n; k++) {
        if (wr[k] == 1)
            o->sp = SW_SP_OTHER;
        else if (wr[k] == 31)
            o->fp = SW_FP_OTHER;
        else
            sw_dis_add_gpr_write(o, PPC_REG_R0 + wr[k]);
        if (wr[k] == 0)
            o->writes[SW_IREG_R0] = true;
    }
    return 0;
}

void
sw_dis_ppc(struct sw_disasm *d, const cs_insn *in, const uint8_t *code, struct sw_insn *o)
{
    unsigned wr[12];
    ppc_classify(d, in, code, o);
    size_t n = ppc_writes(in, wr);
    for (size_t i = 0; i < n; i++)
        if (wr[i] != PPC_REG_R1 && wr[i] != PPC_REG_R31)
            sw_dis_add_gpr_write(o, wr[i]);
    /* sc, which capstone 4 decodes as writing nothing: what the kernel clobbers */
    uint32_t w = (uint32_t)arch_load(d->arch, code, 4);
    if (w >> 26 == 17 && ppc_unknown_writes(w, wr, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            sw_dis_add_gpr_write(o, PPC_REG_R0 + wr[i]);
        o->writes[SW_IREG_R0] = true;
    }
}
