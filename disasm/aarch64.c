/* disasm/aarch64.c -- capstone adapter, aarch64: one instruction into struct sw_insn.
 *
 * Frame records and pairs (stp/ldp x29, x30), SP arithmetic with an
 * immediate or a register holding a constant (mov x12, #0x15f0; sub sp, sp,
 * x12 for frames beyond sub's 24-bit immediate), the probe loop's bound
 * (sub x12, sp, #N; cmp sp, x12).  General registers are reported as x
 * registers whatever the width named (w12 is x12).
 */
#include <string.h>

#include "disasm/disasm_internal.h"

/* The x register of W or X register R; R itself for the others. */
static unsigned
a64_x(unsigned r)
{
    if (r >= ARM64_REG_W0 && r <= ARM64_REG_W28)
        return ARM64_REG_X0 + (r - ARM64_REG_W0);
    if (r == ARM64_REG_W29)
        return ARM64_REG_X29;
    if (r == ARM64_REG_W30)
        return ARM64_REG_X30;
    return r;
}

/* A general register x0..x28 (or its w half): not SP, FP, LR or zero. */
static bool
a64_is_gpr(const cs_arm64_op *op)
{
    unsigned r = a64_x(op->reg);
    return op->type == ARM64_OP_REG && r >= ARM64_REG_X0 && r <= ARM64_REG_X28;
}

static bool
a64_is_w(unsigned r)
{
    return r >= ARM64_REG_W0 && r <= ARM64_REG_W30;
}

/* Constants into general registers (movz, movn, movk, orr from the zero
 * register, add/sub of an immediate), SP +/- a register, a register set
 * from SP, compares of SP with a register.  True if one applied. */
static bool
a64_gpr_forms(const cs_insn *in, struct sw_insn *o)
{
    const cs_arm64 *x = &in->detail->arm64;
    const cs_arm64_op *op = x->operands;
    uint8_t n = x->op_count;

    if (n < 2 || op[0].type != ARM64_OP_REG)
        return false;
    unsigned sh = op[n - 1].shift.type == ARM64_SFT_LSL ? op[n - 1].shift.value : 0;
    switch (in->id) {
    case ARM64_INS_MOV:
        if (n == 2 && a64_is_gpr(&op[0]) && !a64_is_w(op[0].reg) && op[1].type == ARM64_OP_REG &&
            op[1].reg == ARM64_REG_SP) {
            o->gpr_from_sp = true; /* mov x12, sp */
            o->gpr_set = a64_x(op[0].reg);
            return true;
        }
        __attribute__((fallthrough)); /* mov from an immediate is movz/movn */
    case ARM64_INS_MOVZ:
    case ARM64_INS_MOVN:
        if (n != 2 || !a64_is_gpr(&op[0]) || op[1].type != ARM64_OP_IMM || sh > 48)
            return false;
        o->k_op = SW_K_SET;
        o->k_dst = a64_x(op[0].reg);
        o->k_imm = (int64_t)((uint64_t)op[1].imm << sh);
        if (in->id == ARM64_INS_MOVN)
            o->k_imm = ~o->k_imm;
        o->k_w32 = a64_is_w(op[0].reg);
        return true;
    case ARM64_INS_MOVK:
        if (n != 2 || !a64_is_gpr(&op[0]) || op[1].type != ARM64_OP_IMM || sh > 48)
            return false;
        o->k_op = SW_K_INSERT;
        o->k_dst = o->k_src = a64_x(op[0].reg);
        o->k_imm = op[1].imm & 0xffff;
        o->k_shift = (uint8_t)sh;
        o->k_w32 = a64_is_w(op[0].reg);
        return true;
    case ARM64_INS_ORR:
        if (n != 3 || !a64_is_gpr(&op[0]) || op[1].type != ARM64_OP_REG ||
            (op[1].reg != ARM64_REG_XZR && op[1].reg != ARM64_REG_WZR) ||
            op[2].type != ARM64_OP_IMM)
            return false;
        o->k_op = SW_K_SET;
        o->k_dst = a64_x(op[0].reg);
        o->k_imm = op[2].imm;
        o->k_w32 = a64_is_w(op[0].reg);
        return true;
    case ARM64_INS_CMP:
        /* capstone 4 lists SP among the written registers of cmp sp, xN */
        if (op[0].reg == ARM64_REG_SP && a64_is_gpr(&op[1]) && sh == 0 &&
            op[1].ext == ARM64_EXT_INVALID) {
            o->cmp_sp = true;
            o->cmp_reg = a64_x(op[1].reg);
            return true;
        }
        if (op[0].reg == ARM64_REG_SP)
            return true; /* compares write only the flags */
        return false;
    case ARM64_INS_SUB:
    case ARM64_INS_ADD:
        if (n != 3 || op[1].type != ARM64_OP_REG)
            return false;
        if (op[0].reg == ARM64_REG_SP && op[1].reg == ARM64_REG_SP && a64_is_gpr(&op[2]) &&
            !a64_is_w(op[2].reg) && sh == 0) {
            o->sp = SW_SP_ADD_REG;
            o->sp_reg = a64_x(op[2].reg);
            o->sp_reg_neg = in->id == ARM64_INS_SUB;
            return true;
        }
        if (!a64_is_gpr(&op[0]) || op[2].type != ARM64_OP_IMM)
            return false;
        int64_t imm = (int64_t)((uint64_t)op[2].imm << sh);
        if (in->id == ARM64_INS_SUB)
            imm = -imm;
        if (op[1].reg == ARM64_REG_SP && !a64_is_w(op[0].reg)) {
            o->gpr_from_sp = true;
            o->gpr_set = a64_x(op[0].reg);
            o->gpr_set_off = imm;
            return true;
        }
        if (a64_is_gpr(&op[1])) {
            o->k_op = SW_K_ADD;
            o->k_dst = a64_x(op[0].reg);
            o->k_src = a64_x(op[1].reg);
            o->k_imm = imm;
            o->k_w32 = a64_is_w(op[0].reg);
            return true;
        }
        return false;
    default:
        return false;
    }
}

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
    if (in->id == ARM64_INS_BL || in->id == ARM64_INS_BLR || sw_dis_in_group(in, CS_GRP_CALL)) {
        o->flow = SW_FLOW_CALL;
        o->writes[SW_IREG_LR] = true;
    } else if (sw_dis_in_group(in, CS_GRP_RET) || in->id == ARM64_INS_RET) {
        o->flow = SW_FLOW_RET;
    } else if (sw_dis_in_group(in, CS_GRP_JUMP)) {
        bool cond = x->cc != ARM64_CC_INVALID && x->cc != ARM64_CC_AL;
        cond = cond || in->id == ARM64_INS_CBZ || in->id == ARM64_INS_CBNZ ||
               in->id == ARM64_INS_TBZ || in->id == ARM64_INS_TBNZ;
        o->flow = cond ? SW_FLOW_CJUMP : SW_FLOW_JUMP;
        o->cc = x->cc == ARM64_CC_NE ? SW_CC_NE : x->cc == ARM64_CC_EQ ? SW_CC_EQ : SW_CC_OTHER;
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
                sw_dis_add_load(o, r, base_after + i * size);
                if (r == SW_IREG_FP)
                    o->fp = SW_FP_LOAD;
            } else {
                sw_dis_add_store(o, r, base_after + i * size);
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
    if (a64_gpr_forms(in, o))
        return;
    sw_dis_other_writes(d->cs, in, ARM64_REG_SP, ARM64_REG_WSP, ARM64_REG_X29, ARM64_REG_W29,
                        ARM64_REG_X30, 0, o);
}

/* Every general register IN writes (capstone's access tables), as x
 * registers: the analysis forgets what it knew of them. */
static void
a64_gpr_writes(csh cs, const cs_insn *in, struct sw_insn *o)
{
    cs_regs rd, wr;
    uint8_t nrd = 0, nwr = 0;
    if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
        return;
    for (uint8_t i = 0; i < nwr; i++) {
        unsigned r = a64_x(wr[i]);
        if (r >= ARM64_REG_X0 && r <= ARM64_REG_X28)
            sw_dis_add_gpr_write(o, r);
    }
}

void
sw_dis_arm64(struct sw_disasm *d, const cs_insn *in, struct sw_insn *o)
{
    a64_classify(d, in, o);
    a64_gpr_writes(d->cs, in, o);
}
