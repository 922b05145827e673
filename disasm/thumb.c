/* disasm/thumb.c -- capstone adapter, Thumb-2 (ARMv7-M): one instruction into struct sw_insn.
 *
 * GCC's Thumb prologues and epilogues: push/pop (and push.w/pop.w, stmdb/ldmia sp!), vpush/
 * vpop, str/ldr with SP writeback, sub/add sp, #imm, the r7 frame pointer (add r7, sp, #n;
 * mov r7, sp; mov sp, r7), returns by bx lr, pop {..., pc} and ldr pc, [sp], #4, and movw/
 * movt/mov constants for frames larger than an immediate.  An IT instruction is a
 * conditional jump past its block (th_it); a conditional instruction capstone does see as
 * one that would return is a conditional exit (its fall-through state is unchanged), and
 * other conditional writes of SP or r7 are "other" writes.
 */
#include <string.h>

#include "disasm/disasm_internal.h"

/* r0-r12 as opaque ids (r7 is the frame pointer, but also a general register in frameless
 * code: its writes are tracked as one). */
static bool
th_is_gpr(unsigned r)
{
    return r >= ARM_REG_R0 && r <= ARM_REG_R12;
}

static enum sw_insn_reg
th_reg(unsigned r)
{
    if (r == ARM_REG_R7)
        return SW_IREG_FP;
    if (r == ARM_REG_LR)
        return SW_IREG_LR;
    return SW_IREG_NUM;
}

/* A register list of push/pop/stm/ldm/vpush/vpop from operand FIRST: its size in bytes;
 * *PC set if it names pc. */
static int64_t
th_list_bytes(const cs_arm *x, uint8_t first, bool *pc)
{
    int64_t bytes = 0;
    *pc = false;
    for (uint8_t i = first; i < x->op_count; i++) {
        unsigned r = (unsigned)x->operands[i].reg;
        if (x->operands[i].type != ARM_OP_REG)
            continue;
        bytes += r >= ARM_REG_D0 && r <= ARM_REG_D31 ? 8 : 4;
        *pc |= r == ARM_REG_PC;
    }
    return bytes;
}

/* A store (STORE) or load of the core registers in the list from operand FIRST, lowest
 * register at the lowest address, the list at SP-after + BASE. */
static void
th_list_slots(const cs_arm *x, uint8_t first, int64_t base, bool store, struct sw_insn *o)
{
    int64_t at = base;
    for (uint8_t i = first; i < x->op_count; i++) {
        if (x->operands[i].type != ARM_OP_REG)
            continue;
        enum sw_insn_reg r = th_reg((unsigned)x->operands[i].reg);
        if (r != SW_IREG_NUM) {
            if (store) {
                sw_dis_add_store(o, r, at);
            } else {
                sw_dis_add_load(o, r, at);
                if (r == SW_IREG_FP)
                    o->fp = SW_FP_LOAD;
            }
        }
        at += 4;
    }
}

/* The forms that move SP or set r7; true if one applied. */
static bool
th_stack_forms(const cs_insn *in, struct sw_insn *o)
{
    const cs_arm *x = &in->detail->arm;
    const cs_arm_op *op = x->operands;
    uint8_t n = x->op_count;
    bool pc = false;
    int64_t bytes;

    switch (in->id) {
    case ARM_INS_PUSH:
    case ARM_INS_VPUSH:
        bytes = th_list_bytes(x, 0, &pc);
        o->sp = SW_SP_ADD;
        o->sp_delta = -bytes;
        if (in->id == ARM_INS_PUSH)
            th_list_slots(x, 0, 0, true, o);
        return true;
    case ARM_INS_POP:
    case ARM_INS_VPOP:
        bytes = th_list_bytes(x, 0, &pc);
        o->sp = SW_SP_ADD;
        o->sp_delta = bytes;
        if (in->id == ARM_INS_POP)
            th_list_slots(x, 0, -bytes, false, o);
        if (pc)
            o->flow = SW_FLOW_RET;
        return true;
    case ARM_INS_STMDB:
    case ARM_INS_LDM:
        /* stmdb sp!, {...} and ldmia sp!, {...}: push.w and pop.w by another name. */
        if (n < 2 || op[0].type != ARM_OP_REG || op[0].reg != ARM_REG_SP || !x->writeback)
            return false;
        bytes = th_list_bytes(x, 1, &pc);
        o->sp = SW_SP_ADD;
        o->sp_delta = in->id == ARM_INS_STMDB ? -bytes : bytes;
        th_list_slots(x, 1, in->id == ARM_INS_STMDB ? 0 : -bytes, in->id == ARM_INS_STMDB, o);
        if (pc && in->id == ARM_INS_LDM)
            o->flow = SW_FLOW_RET;
        return true;
    case ARM_INS_STR:
    case ARM_INS_LDR: {
        if (n < 2 || op[0].type != ARM_OP_REG || op[1].type != ARM_OP_MEM ||
            op[1].mem.base != ARM_REG_SP || op[1].mem.index != ARM_REG_INVALID)
            return false;
        bool load = in->id == ARM_INS_LDR;
        int64_t disp = op[1].mem.disp, base_after = 0;
        if (x->writeback && n > 2 && op[2].type == ARM_OP_IMM) {
            /* post-index: access at SP-before, then SP += imm */
            o->sp = SW_SP_ADD;
            o->sp_delta = op[2].subtracted ? -op[2].imm : op[2].imm;
            base_after = -o->sp_delta;
        } else if (x->writeback) {
            o->sp = SW_SP_ADD; /* pre-index: SP += disp, then access at the new SP */
            o->sp_delta = disp;
        } else {
            base_after = disp;
        }
        unsigned r = (unsigned)op[0].reg;
        if (load && r == ARM_REG_PC) {
            o->flow = SW_FLOW_RET;
            return true;
        }
        enum sw_insn_reg ir = th_reg(r);
        if (ir == SW_IREG_NUM) {
            if (load && th_is_gpr(r))
                sw_dis_add_gpr_write(o, r);
            return o->sp != SW_SP_KEEP || !load;
        }
        if (load) {
            sw_dis_add_load(o, ir, base_after);
            if (ir == SW_IREG_FP)
                o->fp = SW_FP_LOAD;
        } else {
            sw_dis_add_store(o, ir, base_after);
        }
        return true;
    }
    case ARM_INS_SUB:
    case ARM_INS_ADD:
    case ARM_INS_SUBW:
    case ARM_INS_ADDW: {
        /* sub sp, #n (two operands) or sub sp, sp, #n; add r7, sp, #n; sub sp, r7, #n */
        if (n < 2 || op[0].type != ARM_OP_REG)
            return false;
        unsigned dst = (unsigned)op[0].reg;
        unsigned src = n == 3 && op[1].type == ARM_OP_REG ? (unsigned)op[1].reg : dst;
        const cs_arm_op *last = &op[n - 1];
        bool sub = in->id == ARM_INS_SUB || in->id == ARM_INS_SUBW;
        if (last->type == ARM_OP_IMM && (n == 2 || n == 3)) {
            int64_t imm = sub ? -(int64_t)last->imm : last->imm;
            if (dst == ARM_REG_SP && src == ARM_REG_SP) {
                o->sp = SW_SP_ADD;
                o->sp_delta = imm;
                return true;
            }
            if (dst == ARM_REG_R7 && src == ARM_REG_SP) {
                o->fp = SW_FP_SET;
                o->fp_off = imm;
                return true;
            }
            if (dst == ARM_REG_SP && src == ARM_REG_R7) {
                o->sp = SW_SP_FROM_FP;
                o->sp_delta = imm;
                return true;
            }
            if (th_is_gpr(dst) && src == ARM_REG_SP) {
                o->gpr_from_sp = true;
                o->gpr_set = dst;
                o->gpr_set_off = imm;
                return true;
            }
            if (th_is_gpr(dst) && th_is_gpr(src) && dst != ARM_REG_R7) {
                o->k_op = SW_K_ADD;
                o->k_dst = dst;
                o->k_src = src;
                o->k_imm = imm;
                sw_dis_add_gpr_write(o, dst);
                return true;
            }
            return false;
        }
        /* sub sp, sp, r3 (or sub sp, r3): a frame size held in a register */
        if (last->type == ARM_OP_REG && dst == ARM_REG_SP && src == ARM_REG_SP &&
            th_is_gpr((unsigned)last->reg) && last->shift.type == ARM_SFT_INVALID) {
            o->sp = SW_SP_ADD_REG;
            o->sp_reg = (unsigned)last->reg;
            o->sp_reg_neg = sub;
            return true;
        }
        return false;
    }
    case ARM_INS_MOV:
    case ARM_INS_MOVW:
        if (n != 2 || op[0].type != ARM_OP_REG)
            return false;
        if (op[1].type == ARM_OP_REG) {
            if (op[0].reg == ARM_REG_R7 && op[1].reg == ARM_REG_SP) {
                o->fp = SW_FP_SET;
                o->fp_off = 0;
                return true;
            }
            if (op[0].reg == ARM_REG_SP && op[1].reg == ARM_REG_R7) {
                o->sp = SW_SP_FROM_FP;
                o->sp_delta = 0;
                return true;
            }
            if (th_is_gpr((unsigned)op[0].reg) && op[1].reg == ARM_REG_SP &&
                op[0].reg != ARM_REG_R7) {
                o->gpr_from_sp = true;
                o->gpr_set = (unsigned)op[0].reg;
                return true;
            }
            return false;
        }
        if (op[1].type == ARM_OP_IMM && th_is_gpr((unsigned)op[0].reg) && op[0].reg != ARM_REG_R7) {
            o->k_op = SW_K_SET;
            o->k_dst = (unsigned)op[0].reg;
            o->k_imm = (int64_t)(uint32_t)op[1].imm;
            sw_dis_add_gpr_write(o, o->k_dst);
            return true;
        }
        return false;
    case ARM_INS_MOVT:
        if (n == 2 && op[0].type == ARM_OP_REG && op[1].type == ARM_OP_IMM &&
            th_is_gpr((unsigned)op[0].reg) && op[0].reg != ARM_REG_R7) {
            o->k_op = SW_K_INSERT;
            o->k_dst = o->k_src = (unsigned)op[0].reg;
            o->k_imm = op[1].imm & 0xffff;
            o->k_shift = 16;
            o->k_w32 = true;
            sw_dis_add_gpr_write(o, o->k_dst);
            return true;
        }
        return false;
    default:
        return false;
    }
}

/* Control flow: calls, returns, jumps; true if IN is one. */
static bool
th_flow(const cs_insn *in, bool cond, struct sw_insn *o)
{
    const cs_arm *x = &in->detail->arm;
    const cs_arm_op *op = x->operands;
    uint8_t n = x->op_count;

    switch (in->id) {
    case ARM_INS_BL:
    case ARM_INS_BLX:
        o->flow = SW_FLOW_CALL;
        o->writes[SW_IREG_LR] = true;
        break;
    case ARM_INS_BX:
        if (n == 1 && op[0].type == ARM_OP_REG && op[0].reg == ARM_REG_LR) {
            o->flow = cond ? SW_FLOW_CJUMP : SW_FLOW_RET;
            return true;
        }
        o->flow = cond ? SW_FLOW_CJUMP : SW_FLOW_JUMP; /* a tail call through a register */
        return true;
    case ARM_INS_B:
        o->flow = cond ? SW_FLOW_CJUMP : SW_FLOW_JUMP;
        o->cc = x->cc == ARM_CC_NE ? SW_CC_NE : x->cc == ARM_CC_EQ ? SW_CC_EQ : SW_CC_OTHER;
        break;
    case ARM_INS_CBZ:
    case ARM_INS_CBNZ:
        o->flow = SW_FLOW_CJUMP;
        break;
    case ARM_INS_TBB:
    case ARM_INS_TBH:
        o->flow = SW_FLOW_JUMP; /* a jump table: targets not followed */
        return true;
    case ARM_INS_UDF:
        o->flow = SW_FLOW_STOP;
        return true;
    default:
        return false;
    }
    if (n > 0 && op[n - 1].type == ARM_OP_IMM) {
        o->has_target = true;
        o->target = (sw_addr)(uint32_t)op[n - 1].imm;
    }
    return true;
}

/* Every r0-r12 IN writes (capstone's access tables): the analysis forgets them. */
static void
th_gpr_writes(csh cs, const cs_insn *in, struct sw_insn *o)
{
    cs_regs rd, wr;
    uint8_t nrd = 0, nwr = 0;
    if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
        return;
    for (uint8_t i = 0; i < nwr; i++)
        if (th_is_gpr(wr[i]) && wr[i] != ARM_REG_R7)
            sw_dis_add_gpr_write(o, wr[i]);
}

/* Whether the halfword HW starts a 32-bit Thumb instruction (ARMv7-M ARM A5.1: bits 15:11
 * 0b11101, 0b11110 or 0b11111). */
static bool
th_is_32bit(unsigned hw)
{
    return (hw >> 11) >= 0x1d;
}

/* IT and its block.  capstone decodes one instruction at a time here, without the IT state
 * a run of instructions would carry, so popeq {r4, pc} reads as an unconditional pop: the IT
 * itself is reported as a conditional jump past its block (from the bytes that follow in
 * CODE), and the analysis follows both the block and the path that skips it. */
static void
th_it(const cs_insn *in, const uint8_t *code, size_t len, struct sw_insn *o)
{
    unsigned mask = in->bytes[0] & 0xf;
    size_t n = mask & 1 ? 4 : mask & 2 ? 3 : mask & 4 ? 2 : 1;
    size_t off = 2;
    for (size_t k = 0; k < n; k++) {
        if (off + 2 > len)
            return; /* the block runs past the code: fall through only */
        off += th_is_32bit((unsigned)code[off] | (unsigned)code[off + 1] << 8) ? 4 : 2;
    }
    o->flow = SW_FLOW_CJUMP;
    o->has_target = true;
    o->target = (sw_addr)in->address + off;
}

void
sw_dis_thumb(struct sw_disasm *d, const cs_insn *in, const uint8_t *code, size_t len,
             struct sw_insn *o)
{
    const cs_arm *x = &in->detail->arm;
    bool cond = x->cc != ARM_CC_INVALID && x->cc != ARM_CC_AL;

    if (in->id == ARM_INS_IT) {
        th_it(in, code, len, o);
        return;
    }

    if (th_flow(in, cond, o)) {
        th_gpr_writes(d->cs, in, o);
        return;
    }
    struct sw_insn t = *o;
    if (th_stack_forms(in, &t)) {
        if (!cond) {
            *o = t;
        } else if (t.flow == SW_FLOW_RET) {
            /* popeq {r4, pc} in an IT block: a return taken or not; the path that goes
             * on sees nothing popped. */
            o->flow = SW_FLOW_CJUMP;
        } else {
            o->sp = t.sp != SW_SP_KEEP ? SW_SP_OTHER : SW_SP_KEEP;
            o->fp = t.fp != SW_FP_KEEP ? SW_FP_OTHER : SW_FP_KEEP;
        }
        th_gpr_writes(d->cs, in, o);
        return;
    }
    /* mov pc, lr: a return by another name */
    if (in->id == ARM_INS_MOV && x->op_count == 2 && x->operands[0].type == ARM_OP_REG &&
        x->operands[0].reg == ARM_REG_PC && x->operands[1].type == ARM_OP_REG &&
        x->operands[1].reg == ARM_REG_LR) {
        o->flow = cond ? SW_FLOW_CJUMP : SW_FLOW_RET;
        return;
    }
    sw_dis_other_writes(d->cs, in, ARM_REG_SP, 0, ARM_REG_R7, 0, ARM_REG_LR, 0, o);
    th_gpr_writes(d->cs, in, o);
}
