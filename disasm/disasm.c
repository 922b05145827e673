/* disasm/disasm.c -- capstone adapter: one instruction into struct sw_insn.
 *
 * This file, disasm/aarch64.c and disasm/ppc.c are the only
 * ones that include capstone (4.0.2 names).  Each architecture family has
 * one classifier that turns capstone's operands into the few facts the
 * stack-height analysis uses; anything it does not recognise that writes SP
 * or FP is reported as an "other" write, so the analysis gives up rather
 * than guesses.  Here: the decoder object, the shared helpers, x86.
 */
#include "disasm/disasm.h"

#include <string.h>

#include "util/util.h"
#include "disasm/disasm_internal.h"

struct sw_disasm *
sw_disasm_new(const struct arch_desc *a)
{
    struct sw_disasm *d = sw_calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->arch = a;
    if (cs_open((cs_arch)a->cs_arch, (cs_mode)a->cs_mode, &d->cs) != CS_ERR_OK) {
        sw_free(d);
        return NULL;
    }
    cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
    return d;
}

bool
sw_disasm_available(const char **why)
{
    bool ok = sw_cs_load();
    if (!ok && why != NULL)
        *why = sw_cs_load_error();
    return ok;
}

void
sw_disasm_free(struct sw_disasm *d)
{
    if (d == NULL)
        return;
    cs_close(&d->cs);
    sw_free(d);
}

bool
sw_dis_in_group(const cs_insn *in, uint8_t g)
{
    for (uint8_t i = 0; i < in->detail->groups_count; i++)
        if (in->detail->groups[i] == g)
            return true;
    return false;
}

void
sw_dis_add_store(struct sw_insn *o, enum sw_insn_reg r, int64_t off)
{
    if (o->nstores < 2)
        o->stores[o->nstores++] = (struct sw_insn_mem){ .reg = r, .off = off };
}

void
sw_dis_add_load(struct sw_insn *o, enum sw_insn_reg r, int64_t off)
{
    if (o->nloads < 2)
        o->loads[o->nloads++] = (struct sw_insn_mem){ .reg = r, .off = off };
}

void
sw_dis_add_gpr_write(struct sw_insn *o, unsigned r)
{
    for (uint8_t i = 0; i < o->ngpr_writes; i++)
        if (o->gpr_writes[i] == r)
            return;
    if (o->ngpr_writes < sizeof o->gpr_writes / sizeof o->gpr_writes[0])
        o->gpr_writes[o->ngpr_writes++] = r;
}

void
sw_dis_other_writes(csh cs, const cs_insn *in, unsigned sp, unsigned sp32, unsigned fp,
                    unsigned fp32, unsigned lr, unsigned r0, struct sw_insn *o)
{
    cs_regs rd, wr;
    uint8_t nrd = 0, nwr = 0;
    if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
        return;
    for (uint8_t i = 0; i < nwr; i++) {
        unsigned r = wr[i];
        if ((r == sp || (sp32 && r == sp32)) && o->sp == SW_SP_KEEP)
            o->sp = SW_SP_OTHER;
        if ((r == fp || (fp32 && r == fp32)) && o->fp == SW_FP_KEEP)
            o->fp = SW_FP_OTHER;
        if (lr && r == lr)
            o->writes[SW_IREG_LR] = true;
        if (r0 && r == r0)
            o->writes[SW_IREG_R0] = true;
    }
}

/* ---- x86 and x86-64 ---------------------------------------------------- */

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

int
sw_disasm_one(struct sw_disasm *d, const uint8_t *code, size_t len, sw_addr addr,
              struct sw_insn *out)
{
    cs_insn *in = NULL;
    size_t count = cs_disasm(d->cs, code, len, addr, 1, &in);
    if (count == 0 && d->arch->cs_arch == CS_ARCH_PPC)
        return sw_dis_ppc_unknown(d, code, len, out);
    if (count == 0)
        return SW_EINVAL;
    struct sw_insn o;
    memset(&o, 0, sizeof o);
    o.len = (uint8_t)in->size;
    switch (d->arch->cs_arch) {
    case CS_ARCH_X86:
        x86_classify(d, in, &o);
        x86_gpr_writes(d->cs, in, &o);
        break;
    case CS_ARCH_ARM64:
        sw_dis_arm64(d, in, &o);
        break;
    case CS_ARCH_PPC:
        sw_dis_ppc(d, in, code, &o);
        break;
    default:
        break;
    }
    cs_free(in, count);
    *out = o;
    return 0;
}
