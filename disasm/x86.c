/* disasm/x86.c -- capstone adapter, x86 and x86-64: one instruction into struct sw_insn.
 *
 * Pushes, pops, leave, SP and FP arithmetic with an immediate or a register
 * holding a constant, stack realignment (and $-N,%sp), gcc's DRAP (lea
 * 4(%esp),%ecx) and every general register an instruction writes.  General
 * registers are reported as their 64-bit names whatever the width named.
 */
#include <string.h>

#include "disasm/disasm_internal.h"

/* The 64-bit register of any part of a general register (eax, ax, al, ah:
 * rax); R itself for the others. */
static unsigned
x86_full(unsigned r)
{
    static const unsigned fam[][5] = {
        { X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
        { X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH },
        { X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
        { X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
        { X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_SIL },
        { X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_DIL },
        { X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, X86_REG_BPL },
        { X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, X86_REG_SPL },
    };
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++)
        for (size_t k = 0; k < 5; k++)
            if (fam[i][k] == r)
                return fam[i][0];
    if (r >= X86_REG_R8B && r <= X86_REG_R15B)
        return X86_REG_R8 + (r - X86_REG_R8B);
    if (r >= X86_REG_R8D && r <= X86_REG_R15D)
        return X86_REG_R8 + (r - X86_REG_R8D);
    if (r >= X86_REG_R8W && r <= X86_REG_R15W)
        return X86_REG_R8 + (r - X86_REG_R8W);
    return r;
}

static bool
x86_is_sp(unsigned r)
{
    return r == X86_REG_RSP || r == X86_REG_ESP;
}

static bool
x86_is_fp(unsigned r)
{
    return r == X86_REG_RBP || r == X86_REG_EBP;
}

/* A general register other than SP and FP, of 32 or 64 bits. */
static bool
x86_is_gpr(const cs_x86_op *op)
{
    if (op->type != X86_OP_REG || (op->size != 4 && op->size != 8))
        return false;
    unsigned r = x86_full(op->reg);
    return r == X86_REG_RAX || r == X86_REG_RBX || r == X86_REG_RCX || r == X86_REG_RDX ||
           r == X86_REG_RSI || r == X86_REG_RDI || (r >= X86_REG_R8 && r <= X86_REG_R15);
}

static void
x86_flow(const cs_insn *in, struct sw_insn *o)
{
    const cs_x86 *x = &in->detail->x86;
    const cs_x86_op *op0 = x->op_count > 0 ? &x->operands[0] : NULL;

    if (sw_dis_in_group(in, CS_GRP_CALL)) {
        o->flow = SW_FLOW_CALL;
    } else if (sw_dis_in_group(in, CS_GRP_RET) || sw_dis_in_group(in, CS_GRP_IRET)) {
        o->flow = SW_FLOW_RET;
    } else if (sw_dis_in_group(in, CS_GRP_JUMP)) {
        o->flow = (in->id == X86_INS_JMP || in->id == X86_INS_LJMP) ? SW_FLOW_JUMP : SW_FLOW_CJUMP;
        o->cc = in->id == X86_INS_JNE ? SW_CC_NE : in->id == X86_INS_JE ? SW_CC_EQ : SW_CC_OTHER;
    } else if (in->id == X86_INS_HLT || in->id == X86_INS_UD2) {
        o->flow = SW_FLOW_STOP;
    }
    if ((o->flow == SW_FLOW_CALL || o->flow == SW_FLOW_JUMP || o->flow == SW_FLOW_CJUMP) && op0 &&
        op0->type == X86_OP_IMM) {
        o->has_target = true;
        o->target = (sw_addr)op0->imm;
    }
}

/* Register-operand forms: SP += or -= a register, compares of SP with a
 * register, constants moved into registers.  True if one applied. */
static bool
x86_reg_forms(const cs_insn *in, struct sw_insn *o)
{
    const cs_x86 *x = &in->detail->x86;
    if (x->op_count != 2 || x->operands[0].type != X86_OP_REG)
        return false;
    const cs_x86_op *op0 = &x->operands[0], *op1 = &x->operands[1];
    switch (in->id) {
    case X86_INS_SUB:
    case X86_INS_ADD:
        if (x86_is_sp(op0->reg) && x86_is_gpr(op1)) {
            o->sp = SW_SP_ADD_REG;
            o->sp_reg = x86_full(op1->reg);
            o->sp_reg_neg = in->id == X86_INS_SUB;
            return true;
        }
        return false;
    case X86_INS_CMP:
        if (op1->type == X86_OP_REG && x86_is_sp(op0->reg) && x86_is_gpr(op1)) {
            o->cmp_sp = true;
            o->cmp_reg = x86_full(op1->reg);
        } else if (op1->type == X86_OP_REG && x86_is_sp(op1->reg) && x86_is_gpr(op0)) {
            o->cmp_sp = true;
            o->cmp_reg = x86_full(op0->reg);
        }
        return o->cmp_sp;
    case X86_INS_MOV:
    case X86_INS_MOVABS:
        if (op1->type == X86_OP_IMM && x86_is_gpr(op0)) {
            o->k_op = SW_K_SET;
            o->k_dst = x86_full(op0->reg);
            o->k_imm = op1->imm;
            o->k_w32 = op0->size == 4;
            return true;
        }
        return false;
    default:
        return false;
    }
}

static void
x86_classify(struct sw_disasm *d, const cs_insn *in, struct sw_insn *o)
{
    const cs_x86 *x = &in->detail->x86;
    const int64_t word = d->arch->word_size;
    const cs_x86_op *op0 = x->op_count > 0 ? &x->operands[0] : NULL;
    const cs_x86_op *op1 = x->op_count > 1 ? &x->operands[1] : NULL;
    bool reg_dst = op0 && op0->type == X86_OP_REG;

    x86_flow(in, o);
    if (x86_reg_forms(in, o))
        return;

    switch (in->id) {
    case X86_INS_PUSH:
        o->sp = SW_SP_ADD;
        o->sp_delta = -(op0 ? op0->size : word);
        if (reg_dst && x86_is_fp(op0->reg))
            sw_dis_add_store(o, SW_IREG_FP, 0);
        else if (reg_dst && !x86_is_sp(op0->reg) && o->nstores < 2)
            o->stores[o->nstores++] =
                (struct sw_insn_mem){ .reg = SW_IREG_GPR, .off = 0, .gpr = x86_full(op0->reg) };
        return;
    case X86_INS_POP:
        o->sp = SW_SP_ADD;
        o->sp_delta = op0 ? op0->size : word;
        if (reg_dst && x86_is_fp(op0->reg)) {
            o->fp = SW_FP_LOAD;
            sw_dis_add_load(o, SW_IREG_FP, -o->sp_delta);
        } else if (reg_dst && x86_is_sp(op0->reg)) {
            o->sp = SW_SP_OTHER;
        } else if (reg_dst && o->nloads < 2) {
            o->loads[o->nloads++] = (struct sw_insn_mem){ .reg = SW_IREG_GPR,
                                                          .off = -o->sp_delta,
                                                          .gpr = x86_full(op0->reg) };
        }
        return;
    case X86_INS_LEAVE:
        o->sp = SW_SP_FROM_FP;
        o->sp_delta = word;
        o->fp = SW_FP_LOAD;
        sw_dis_add_load(o, SW_IREG_FP, -word);
        return;
    case X86_INS_SUB:
    case X86_INS_ADD:
        if (reg_dst && x86_is_sp(op0->reg) && op1 && op1->type == X86_OP_IMM) {
            o->sp = SW_SP_ADD;
            o->sp_delta = in->id == X86_INS_ADD ? op1->imm : -op1->imm;
            return;
        }
        break;
    case X86_INS_AND:
        if (reg_dst && x86_is_sp(op0->reg)) {
            o->sp = SW_SP_ALIGN;
            return;
        }
        break;
    case X86_INS_MOV:
        if (reg_dst && op1 && op1->type == X86_OP_REG) {
            if (x86_is_fp(op0->reg) && x86_is_sp(op1->reg)) {
                o->fp = SW_FP_SET;
                o->fp_off = 0;
                return;
            }
            if (x86_is_sp(op0->reg) && x86_is_fp(op1->reg)) {
                o->sp = SW_SP_FROM_FP;
                o->sp_delta = 0;
                return;
            }
            if (x86_is_sp(op0->reg)) {
                o->sp = SW_SP_FROM_REG;
                o->sp_reg = x86_full(op1->reg);
                return;
            }
        }
        /* mov disp(%ebp),%reg: a reload of a register saved in the frame */
        if (reg_dst && op1 && op1->type == X86_OP_MEM && op1->mem.index == X86_REG_INVALID &&
            op1->mem.segment == X86_REG_INVALID && !x86_is_sp(op0->reg) && !x86_is_fp(op0->reg) &&
            (x86_is_fp(op1->mem.base) || x86_is_sp(op1->mem.base))) {
            o->loads[o->nloads++] = (struct sw_insn_mem){ .reg = SW_IREG_GPR,
                                                          .off = op1->mem.disp,
                                                          .fp_base = x86_is_fp(op1->mem.base),
                                                          .gpr = x86_full(op0->reg) };
            return;
        }
        break;
    case X86_INS_LEA:
        if (reg_dst && op1 && op1->type == X86_OP_MEM && op1->mem.index == X86_REG_INVALID &&
            op1->mem.segment == X86_REG_INVALID) {
            if (x86_is_sp(op0->reg) && x86_is_sp(op1->mem.base)) {
                o->sp = SW_SP_ADD;
                o->sp_delta = op1->mem.disp;
                return;
            }
            if (x86_is_sp(op0->reg) && x86_is_fp(op1->mem.base)) {
                o->sp = SW_SP_FROM_FP;
                o->sp_delta = op1->mem.disp;
                return;
            }
            if (x86_is_fp(op0->reg) && x86_is_sp(op1->mem.base)) {
                o->fp = SW_FP_SET;
                o->fp_off = op1->mem.disp;
                return;
            }
            if (x86_is_sp(op0->reg) && op1->mem.base != X86_REG_INVALID &&
                op1->mem.base != X86_REG_RIP && op1->mem.base != X86_REG_EIP) {
                o->sp = SW_SP_FROM_REG;
                o->sp_reg = x86_full(op1->mem.base);
                o->sp_delta = op1->mem.disp;
                return;
            }
            if (x86_is_sp(op1->mem.base) && !x86_is_fp(op0->reg)) {
                o->gpr_from_sp = true;
                o->gpr_set = x86_full(op0->reg);
                o->gpr_set_off = op1->mem.disp;
                return;
            }
        }
        break;
    default:
        break;
    }
    /* Calls, returns, pushes of flags and the like move SP in ways the
     * flow already says; only unexplained writes count. */
    if (o->flow != SW_FLOW_NEXT)
        return;
    if (in->id == X86_INS_PUSHFQ || in->id == X86_INS_PUSHFD || in->id == X86_INS_PUSHAL) {
        o->sp = SW_SP_ADD;
        o->sp_delta = in->id == X86_INS_PUSHAL ? -32 : -word;
        return;
    }
    if (in->id == X86_INS_POPFQ || in->id == X86_INS_POPFD) {
        o->sp = SW_SP_ADD;
        o->sp_delta = word;
        return;
    }
    sw_dis_other_writes(d->cs, in, X86_REG_RSP, X86_REG_ESP, X86_REG_RBP, X86_REG_EBP, 0, 0, o);
}

/* Every general register X86 writes, for the analysis to forget what it
 * knew of them (a DRAP register overwritten, a constant replaced). */
static void
x86_gpr_writes(csh cs, const cs_insn *in, struct sw_insn *o)
{
    cs_regs rd, wr;
    uint8_t nrd = 0, nwr = 0;
    if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
        return;
    for (uint8_t i = 0; i < nwr; i++) {
        unsigned r = x86_full(wr[i]);
        if (x86_is_sp(r) || x86_is_fp(r) || r == X86_REG_RIP || r == X86_REG_EIP ||
            r == X86_REG_EFLAGS)
            continue;
        sw_dis_add_gpr_write(o, r);
    }
}

void
sw_dis_x86(struct sw_disasm *d, const cs_insn *in, struct sw_insn *o)
{
    x86_classify(d, in, o);
    x86_gpr_writes(d->cs, in, o);
}
