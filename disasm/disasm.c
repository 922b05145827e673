/* disasm/disasm.c -- capstone adapter: one instruction into struct sw_insn.
 *
 * The files of disasm/ are the only ones that include capstone (4.0.2
 * names).  Each architecture family has one classifier (disasm/x86.c,
 * disasm/aarch64.c, disasm/ppc.c, disasm/thumb.c) that turns capstone's operands into the
 * few facts the stack-height analysis uses; anything it does not recognise
 * that writes SP or FP is reported as an "other" write, so the analysis
 * gives up rather than guesses.  Here, above the families: the decoder
 * object and the dispatch to the family of its arch.  The helpers the
 * families share are disasm/insn.c's.
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
        sw_dis_x86(d, in, &o);
        break;
    case CS_ARCH_ARM64:
        sw_dis_arm64(d, in, &o);
        break;
    case CS_ARCH_PPC:
        sw_dis_ppc(d, in, code, &o);
        break;
    case CS_ARCH_ARM:
        sw_dis_thumb(d, in, code, len, &o); /* M-profile: Thumb only */
        break;
    default:
        break;
    }
    cs_free(in, count);
    *out = o;
    return 0;
}
