/* disasm/insn.c -- what the families' classifiers share: filling struct sw_insn.
 *
 * Stores, loads and general-register writes recorded once each, capstone's
 * groups and its register-access tables.  Below every family's file
 * (disasm/x86.c, disasm/aarch64.c, disasm/ppc.c); no architecture here.
 */
#include "disasm/disasm_internal.h"

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
