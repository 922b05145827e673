/* walker/steppers/frame_func_entry.c -- the entry scan: frame 0 outside its frame record (x86).
 *
 * Code no analysed function covers (a JIT's, such as V8's, outside every
 * module) may be stopped at its entry, before `push %rbp; mov %rsp,%rbp`
 * (V8 tests its code object's deoptimization mark first), or after `pop
 * %rbp` with a test before the `ret`.  Decoding forward along the
 * fall-through path says where the return address is.  Not an analysis of
 * the function: only the instructions from the PC on.
 */
#include "walker/steppers/frame_func_entry.h"

#include <string.h>

#include "disasm/disasm.h"
#include "walker/walker_internal.h"

/* V8's checks before the record are three or four instructions (a load, a
 * test, a conditional jump); gcc's entry code (endbr64, a stack protector's
 * load) fewer. */
#define ENTRY_INSNS    12
#define ENTRY_MAX_INSN 16

/* Whether I is `push %rbp` / `mov %rsp,%rbp` as the disassembler states them. */
static bool
is_push_fp(const struct arch_desc *a, const struct sw_insn *i)
{
    return i->flow == SW_FLOW_NEXT && i->sp == SW_SP_ADD && i->sp_delta == -(int64_t)a->word_size &&
           i->fp == SW_FP_KEEP && i->nstores == 1 && i->stores[0].reg == SW_IREG_FP &&
           i->stores[0].off == 0 && !i->stores[0].fp_base && i->stores[0].base == 0;
}

static bool
is_set_fp(const struct sw_insn *i)
{
    return i->flow == SW_FLOW_NEXT && i->sp == SW_SP_KEEP && i->fp == SW_FP_SET && i->fp_off == 0;
}

static void
entry_facts(const struct arch_desc *a, bool pushed, struct sw_an_pc *out)
{
    const int64_t word = (int64_t)a->word_size;
    memset(out, 0, sizeof *out);
    out->sp_known = true;
    out->height = pushed ? 2 * word : word;
    out->ra = SW_AN_RA_SLOT;
    out->ra_off = -word;
    out->caller_fp = pushed ? SW_AN_FP_SAVED : SW_AN_FP_CALLER;
    out->fp_pushed = pushed;
    out->fp_save_off = pushed ? -2 * word : 0;
}

int
sw_ff_entry_scan(struct sw_walker *w, sw_addr pc, struct sw_an_pc *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    if (a->family != ARCH_FAMILY_X86 || !a->call_ra_on_stack)
        return SW_EINVAL; /* the record's prologue is x86's here */
    struct sw_disasm *dis = sw_disasm_new(a);
    if (dis == NULL)
        return sw_disasm_available(NULL) ? SW_ENOMEM : SW_EINVAL;
    uint8_t code[ENTRY_MAX_INSN];
    size_t n = 0;
    struct sw_insn i, next;
    sw_addr at = pc;
    int rc = SW_EINVAL;
    bool first = true;
    for (unsigned k = 0; k < ENTRY_INSNS; k++, first = false) {
        if ((rc = sw_walker_read_insn(w, at, code, ENTRY_MAX_INSN, &n)) < 0)
            break;
        rc = SW_EINVAL;
        if (sw_disasm_one(dis, code, n, at, &i) < 0)
            break;
        if (first && is_set_fp(&i)) {
            /* `mov %rsp,%rbp` right after a `push %rbp` (its one byte): the
             * caller's FP is at SP, the return address above it.  Only as
             * the first instruction: the byte before it is not otherwise
             * known to be an instruction's start. */
            uint8_t prev;
            if (pc > 0 && sw_walker_read_code(w, pc - 1, &prev, 1) == 0 && prev == 0x55) {
                entry_facts(a, true, out);
                rc = 0;
            }
            break;
        }
        if (is_push_fp(a, &i)) {
            /* the record is being built: only if FP is set right after */
            sw_addr after = at + i.len;
            if (sw_walker_read_insn(w, after, code, ENTRY_MAX_INSN, &n) == 0 &&
                sw_disasm_one(dis, code, n, after, &next) == 0 && is_set_fp(&next)) {
                entry_facts(a, false, out);
                rc = 0;
            }
            break;
        }
        if (i.flow == SW_FLOW_RET) {
            /* past the record's teardown (V8 tests the argument count
             * between `pop %rbp` and `ret $n`), or a frameless function:
             * the return address at SP either way */
            entry_facts(a, false, out);
            rc = 0;
            break;
        }
        /* Before the record only code that leaves SP, FP and the return
         * address alone; a conditional jump's fall-through is followed (the
         * checks' taken side leaves for other code). */
        if ((i.flow != SW_FLOW_NEXT && i.flow != SW_FLOW_CJUMP) || i.sp != SW_SP_KEEP ||
            i.fp != SW_FP_KEEP || i.writes[SW_IREG_FP] || i.nstores != 0)
            break;
        at += i.len;
    }
    sw_disasm_free(dis);
    return rc;
}
