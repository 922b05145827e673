/* walker/disasm.c -- capstone adapter: one instruction into struct sw_insn.
 *
 * The only file that includes capstone (4.0.2 names).  Each architecture
 * family has one classifier that turns capstone's operands into the few
 * facts the stack-height analysis uses; anything it does not recognise
 * that writes SP or FP is reported as an "other" write, so the analysis
 * gives up rather than guesses.
 */
#include "walker/disasm.h"

#include <capstone/capstone.h>
#include <string.h>

#include "util/util.h"

struct sw_disasm {
    const struct arch_desc *arch;
    csh cs;
};

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

void
sw_disasm_free(struct sw_disasm *d)
{
    if (d == NULL)
        return;
    cs_close(&d->cs);
    sw_free(d);
}

static bool
in_group(const cs_insn *in, uint8_t g)
{
    for (uint8_t i = 0; i < in->detail->groups_count; i++)
        if (in->detail->groups[i] == g)
            return true;
    return false;
}

static void
add_store(struct sw_insn *o, enum sw_insn_reg r, int64_t off)
{
    if (o->nstores < 2)
        o->stores[o->nstores++] = (struct sw_insn_mem){ .reg = r, .off = off };
}

static void
add_load(struct sw_insn *o, enum sw_insn_reg r, int64_t off)
{
    if (o->nloads < 2)
        o->loads[o->nloads++] = (struct sw_insn_mem){ .reg = r, .off = off };
}

/* Registers written that no rule above accounted for. */
static void
other_writes(csh cs, const cs_insn *in, unsigned sp, unsigned sp32, unsigned fp, unsigned fp32,
             unsigned lr, unsigned r0, struct sw_insn *o)
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

static void
x86_classify(struct sw_disasm *d, const cs_insn *in, struct sw_insn *o)
{
    const cs_x86 *x = &in->detail->x86;
    const int64_t word = d->arch->word_size;
    const cs_x86_op *op0 = x->op_count > 0 ? &x->operands[0] : NULL;
    const cs_x86_op *op1 = x->op_count > 1 ? &x->operands[1] : NULL;
    bool reg_dst = op0 && op0->type == X86_OP_REG;

    if (in_group(in, CS_GRP_CALL)) {
        o->flow = SW_FLOW_CALL;
    } else if (in_group(in, CS_GRP_RET) || in_group(in, CS_GRP_IRET)) {
        o->flow = SW_FLOW_RET;
    } else if (in_group(in, CS_GRP_JUMP)) {
        o->flow = (in->id == X86_INS_JMP || in->id == X86_INS_LJMP) ? SW_FLOW_JUMP : SW_FLOW_CJUMP;
    } else if (in->id == X86_INS_HLT || in->id == X86_INS_UD2) {
        o->flow = SW_FLOW_STOP;
    }
    if ((o->flow == SW_FLOW_CALL || o->flow == SW_FLOW_JUMP || o->flow == SW_FLOW_CJUMP) && op0 &&
        op0->type == X86_OP_IMM) {
        o->has_target = true;
        o->target = (sw_addr)op0->imm;
    }

    switch (in->id) {
    case X86_INS_PUSH:
        o->sp = SW_SP_ADD;
        o->sp_delta = -(op0 ? op0->size : word);
        if (reg_dst && x86_is_fp(op0->reg))
            add_store(o, SW_IREG_FP, 0);
        else if (reg_dst && !x86_is_sp(op0->reg) && o->nstores < 2)
            o->stores[o->nstores++] =
                (struct sw_insn_mem){ .reg = SW_IREG_GPR, .off = 0, .gpr = op0->reg };
        return;
    case X86_INS_POP:
        o->sp = SW_SP_ADD;
        o->sp_delta = op0 ? op0->size : word;
        if (reg_dst && x86_is_fp(op0->reg)) {
            o->fp = SW_FP_LOAD;
            add_load(o, SW_IREG_FP, -o->sp_delta);
        } else if (reg_dst && x86_is_sp(op0->reg)) {
            o->sp = SW_SP_OTHER;
        } else if (reg_dst && o->nloads < 2) {
            o->loads[o->nloads++] =
                (struct sw_insn_mem){ .reg = SW_IREG_GPR, .off = -o->sp_delta, .gpr = op0->reg };
        }
        return;
    case X86_INS_LEAVE:
        o->sp = SW_SP_FROM_FP;
        o->sp_delta = word;
        o->fp = SW_FP_LOAD;
        add_load(o, SW_IREG_FP, -word);
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
                o->sp_reg = op1->reg;
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
                                                          .gpr = op0->reg };
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
                o->sp_reg = op1->mem.base;
                o->sp_delta = op1->mem.disp;
                return;
            }
            if (x86_is_sp(op1->mem.base) && !x86_is_fp(op0->reg)) {
                o->gpr_from_sp = true;
                o->gpr_set = op0->reg;
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
    other_writes(d->cs, in, X86_REG_RSP, X86_REG_ESP, X86_REG_RBP, X86_REG_EBP, 0, 0, o);
}

/* Every general register X86 writes, for the analysis to forget what it
 * knew of them (a DRAP register overwritten). */
static void
x86_gpr_writes(csh cs, const cs_insn *in, struct sw_insn *o)
{
    cs_regs rd, wr;
    uint8_t nrd = 0, nwr = 0;
    if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
        return;
    for (uint8_t i = 0; i < nwr && o->ngpr_writes < 4; i++) {
        unsigned r = wr[i];
        if (x86_is_sp(r) || x86_is_fp(r) || r == X86_REG_RIP || r == X86_REG_EIP ||
            r == X86_REG_EFLAGS)
            continue;
        o->gpr_writes[o->ngpr_writes++] = r;
    }
}

/* ---- aarch64 --------------------------------------------------------- */

static enum sw_insn_reg
a64_reg(unsigned r)
{
    if (r == ARM64_REG_X29)
        return SW_IREG_FP;
    if (r == ARM64_REG_X30)
        return SW_IREG_LR;
    return SW_IREG_NUM;
}

static void
a64_classify(struct sw_disasm *d, const cs_insn *in, struct sw_insn *o)
{
    const cs_arm64 *x = &in->detail->arm64;
    const cs_arm64_op *op = x->operands;
    uint8_t n = x->op_count;

    /* capstone 4 files bl and blr under "jump" only: go by the ids. */
    if (in->id == ARM64_INS_BL || in->id == ARM64_INS_BLR || in_group(in, CS_GRP_CALL)) {
        o->flow = SW_FLOW_CALL;
        o->writes[SW_IREG_LR] = true;
    } else if (in_group(in, CS_GRP_RET) || in->id == ARM64_INS_RET) {
        o->flow = SW_FLOW_RET;
    } else if (in_group(in, CS_GRP_JUMP)) {
        bool cond = x->cc != ARM64_CC_INVALID && x->cc != ARM64_CC_AL;
        cond = cond || in->id == ARM64_INS_CBZ || in->id == ARM64_INS_CBNZ ||
               in->id == ARM64_INS_TBZ || in->id == ARM64_INS_TBNZ;
        o->flow = cond ? SW_FLOW_CJUMP : SW_FLOW_JUMP;
    } else if (in->id == ARM64_INS_BRK || in->id == ARM64_INS_HLT) {
        o->flow = SW_FLOW_STOP;
    }
    if (o->flow == SW_FLOW_CALL || o->flow == SW_FLOW_JUMP || o->flow == SW_FLOW_CJUMP) {
        if (n > 0 && op[n - 1].type == ARM64_OP_IMM) {
            o->has_target = true;
            o->target = (sw_addr)op[n - 1].imm;
        }
        return;
    }

    /* paciasp and pacibsp are hints #25 and #27 to capstone 4 (Arm ARM C6.2.201). */
    if (in->id == ARM64_INS_HINT && n == 1 && op[0].type == ARM64_OP_IMM &&
        (op[0].imm == 25 || op[0].imm == 27)) {
        o->ra_signed = true;
        return;
    }

    switch (in->id) {
    case ARM64_INS_STP:
    case ARM64_INS_STR:
    case ARM64_INS_LDP:
    case ARM64_INS_LDR: {
        bool pair = in->id == ARM64_INS_STP || in->id == ARM64_INS_LDP;
        bool load = in->id == ARM64_INS_LDP || in->id == ARM64_INS_LDR;
        uint8_t mi = pair ? 2 : 1;
        if (n <= mi || op[mi].type != ARM64_OP_MEM || op[mi].mem.base != ARM64_REG_SP)
            break;
        int64_t disp = op[mi].mem.disp, base_after = 0; /* slot = SP-after + ... */
        if (x->writeback && n > mi + 1 && op[mi + 1].type == ARM64_OP_IMM) {
            /* post-index: access at SP-before, then SP += imm */
            o->sp = SW_SP_ADD;
            o->sp_delta = op[mi + 1].imm;
            base_after = -o->sp_delta;
        } else if (x->writeback) {
            /* pre-index: SP += disp, then access at the new SP */
            o->sp = SW_SP_ADD;
            o->sp_delta = disp;
        } else {
            base_after = disp;
        }
        int64_t size = 8; /* x registers; w registers never hold x29/x30 */
        for (uint8_t i = 0; i < (pair ? 2 : 1); i++) {
            if (op[i].type != ARM64_OP_REG)
                continue;
            enum sw_insn_reg r = a64_reg(op[i].reg);
            if (r == SW_IREG_NUM)
                continue;
            if (load) {
                add_load(o, r, base_after + i * size);
                if (r == SW_IREG_FP)
                    o->fp = SW_FP_LOAD;
            } else {
                add_store(o, r, base_after + i * size);
            }
        }
        return;
    }
    case ARM64_INS_SUB:
    case ARM64_INS_ADD:
        if (n == 3 && op[0].type == ARM64_OP_REG && op[1].type == ARM64_OP_REG &&
            op[2].type == ARM64_OP_IMM && op[1].reg == ARM64_REG_SP) {
            int64_t imm = op[2].imm;
            if (op[2].shift.type == ARM64_SFT_LSL)
                imm <<= op[2].shift.value;
            if (in->id == ARM64_INS_SUB)
                imm = -imm;
            if (op[0].reg == ARM64_REG_SP) {
                o->sp = SW_SP_ADD;
                o->sp_delta = imm;
                return;
            }
            if (op[0].reg == ARM64_REG_X29) {
                o->fp = SW_FP_SET;
                o->fp_off = imm;
                return;
            }
        }
        if (n == 3 && op[0].type == ARM64_OP_REG && op[0].reg == ARM64_REG_SP &&
            op[1].type == ARM64_OP_REG && op[1].reg == ARM64_REG_X29 &&
            op[2].type == ARM64_OP_IMM) {
            o->sp = SW_SP_FROM_FP;
            o->sp_delta = in->id == ARM64_INS_SUB ? -op[2].imm : op[2].imm;
            return;
        }
        break;
    case ARM64_INS_MOV:
        if (n == 2 && op[0].type == ARM64_OP_REG && op[1].type == ARM64_OP_REG) {
            if (op[0].reg == ARM64_REG_X29 && op[1].reg == ARM64_REG_SP) {
                o->fp = SW_FP_SET;
                o->fp_off = 0;
                return;
            }
            if (op[0].reg == ARM64_REG_SP && op[1].reg == ARM64_REG_X29) {
                o->sp = SW_SP_FROM_FP;
                o->sp_delta = 0;
                return;
            }
        }
        break;
    default:
        break;
    }
    other_writes(d->cs, in, ARM64_REG_SP, ARM64_REG_WSP, ARM64_REG_X29, ARM64_REG_W29,
                 ARM64_REG_X30, 0, o);
}

/* ---- PowerPC (32 and 64, both byte orders) ---------------------------- */

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
static void
ppc_other_writes(const cs_insn *in, struct sw_insn *o)
{
    const cs_ppc *x = &in->detail->ppc;
    const char *m = in->mnemonic;
    unsigned wr[4];
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
    for (size_t i = 0; i < n; i++) {
        if (wr[i] == PPC_REG_R1 && o->sp == SW_SP_KEEP)
            o->sp = SW_SP_OTHER;
        if (wr[i] == PPC_REG_R31 && o->fp == SW_FP_KEEP)
            o->fp = SW_FP_OTHER;
        if (wr[i] == PPC_REG_R0)
            o->writes[SW_IREG_R0] = true;
    }
}

static void
ppc_classify(struct sw_disasm *d, const cs_insn *in, const uint8_t *code, struct sw_insn *o)
{
    const cs_ppc *x = &in->detail->ppc;
    const cs_ppc_op *op = x->operands;
    uint8_t n = x->op_count;
    uint32_t w = (uint32_t)arch_load(d->arch, code, 4);

    ppc_branch(w, in->address, o);
    if (o->flow != SW_FLOW_NEXT)
        return;

    switch (in->id) {
    case PPC_INS_STWU:
    case PPC_INS_STDU:
        if (n == 2 && op[0].type == PPC_OP_REG && op[0].reg == PPC_REG_R1 &&
            op[1].type == PPC_OP_MEM && op[1].mem.base == PPC_REG_R1) {
            o->sp = SW_SP_ADD;
            o->sp_delta = op[1].mem.disp;
            return;
        }
        break;
    case PPC_INS_STW:
    case PPC_INS_STD:
    case PPC_INS_LWZ:
    case PPC_INS_LD:
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
                    add_load(o, r, op[1].mem.disp);
                    if (r == SW_IREG_FP)
                        o->fp = SW_FP_LOAD;
                } else {
                    add_store(o, r, op[1].mem.disp);
                }
                return;
            }
        }
        break;
    case PPC_INS_ADDI:
        if (n == 3 && op[0].type == PPC_OP_REG && op[1].type == PPC_OP_REG &&
            op[2].type == PPC_OP_IMM) {
            if (op[0].reg == PPC_REG_R1 && op[1].reg == PPC_REG_R1) {
                o->sp = SW_SP_ADD;
                o->sp_delta = op[2].imm;
                return;
            }
            if (op[0].reg == PPC_REG_R1 && op[1].reg == PPC_REG_R31) {
                o->sp = SW_SP_FROM_FP;
                o->sp_delta = op[2].imm;
                return;
            }
            if (op[0].reg == PPC_REG_R31 && op[1].reg == PPC_REG_R1) {
                o->fp = SW_FP_SET;
                o->fp_off = op[2].imm;
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

int
sw_disasm_one(struct sw_disasm *d, const uint8_t *code, size_t len, sw_addr addr,
              struct sw_insn *out)
{
    cs_insn *in = NULL;
    size_t count = cs_disasm(d->cs, code, len, addr, 1, &in);
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
        a64_classify(d, in, &o);
        break;
    case CS_ARCH_PPC:
        ppc_classify(d, in, code, &o);
        break;
    default:
        break;
    }
    cs_free(in, count);
    *out = o;
    return 0;
}
