/* walker/steppers/analysis_stub.c -- linker stubs as functions, for the stack-height analysis.
 *
 * PLT entries and PowerPC's call stubs are code the linker writes: no symbol with a size
 * covers them and often no CFI does either (aarch64's .plt, ppc64's plt_call stubs), yet a
 * thread is often stopped in one, about to enter a library.  A stub builds no frame: it jumps
 * on with the return address where the call left it (the link register), or, in aarch64's
 * PLT0, pushed with x16.  This file finds the extent of the stub covering a PC, which
 * analysis.c then analyses like any function, from its first instruction, as gdb's prologue
 * analyzer does from a PLT entry's minimal symbol.  Not for x86: its linkers describe .plt
 * with CFI, and variable-length code cannot be read backwards.
 */
#include <string.h>

#include "libstate/lib.h"
#include "walker/steppers/analysis_internal.h"
#include "walker/walker_internal.h"

/* Instructions a stub spans either side of a PC: the longest linker stubs are ppc64's
 * plt_call variants (up to about 14) and aarch64's PLT0 (8). */
#define STUB_MAX_INSNS 32
/* Every instruction of the families this reads is one 4-byte word. */
#define STUB_INSN 4

/* Whether NAME is a stub symbol of the PowerPC linkers ("0000001b.plt_call.puts@@GLIBC_2.17",
 * "00008000.got2.plt_pic32.puts", "00000000.long_branch.f": binutils' ppc64_stub_name and
 * ppc_stub_name; __glink and __glink_PLTresolve, the lazy-binding resolver's entries). */
static bool
stub_symbol_name(const char *name)
{
    if (name == NULL)
        return false;
    if (strncmp(name, "__glink", 7) == 0)
        return true;
    for (int i = 0; i < 8; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return false;
    if (name[8] != '.')
        return false;
    const char *kind = name + 9;
    if (strncmp(kind, "got2.", 5) == 0)
        kind += 5;
    return strncmp(kind, "plt_", 4) == 0 || strncmp(kind, "long_branch", 11) == 0;
}

/* The section of LIB's file holding linker stubs that covers PC: *LO and *HI its run-time
 * bounds.  .plt is data on ppc64 (the table the stubs load from), where no PC can be. */
static bool
stub_section(const struct sw_lib *lib, sw_addr pc, sw_addr *lo, sw_addr *hi)
{
    static const char *const secs[] = { ".plt", ".iplt", ".plt.sec", ".plt.got", ".glink" };
    const uint8_t *data;
    size_t len;
    sw_addr addr;

    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        if (sw_elf_section(sw_lib_elf(lib), secs[i], false, &data, &len, &addr) != 0)
            continue;
        if (pc - lib->bias >= addr && pc - lib->bias - addr < len) {
            *lo = addr + lib->bias;
            *hi = *lo + len;
            return true;
        }
    }
    return false;
}

/* Whether the instruction at ADDR ends a straight line of code (an unconditional jump, a
 * return, a trap): 1, 0, or a negative code.  Bytes that decode to nothing end it too. */
static int
stub_insn_ends(struct sw_walker *w, struct sw_disasm *dis, sw_addr addr)
{
    uint8_t code[STUB_INSN];
    struct sw_insn i;
    int rc = sw_walker_read_code(w, addr, code, sizeof code);
    if (rc < 0)
        return rc;
    if (sw_disasm_one(dis, code, sizeof code, addr, &i) < 0)
        return 1;
    return i.flow == SW_FLOW_JUMP || i.flow == SW_FLOW_RET || i.flow == SW_FLOW_STOP;
}

int
sw_an_stub_at(struct sw_walker *w, struct sw_disasm *dis, sw_addr pc, const struct sw_symbol *near,
              struct sw_symbol *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    const struct sw_lib *lib;
    sw_addr lo, hi;

    if ((a->family != ARCH_FAMILY_AARCH64 && a->family != ARCH_FAMILY_PPC) || pc % STUB_INSN != 0)
        return SW_ENOSYM;
    if (sw_libstate_lib_at(sw_walker_libstate(w), pc, &lib) < 0 || sw_lib_elf(lib) == NULL)
        return SW_ENOSYM;
    if (!stub_section(lib, pc, &lo, &hi)) {
        /* PowerPC's stubs sit in .text, each after a sizeless symbol of its own. */
        if (near == NULL || near->size != 0 || !stub_symbol_name(near->name) || pc < near->start)
            return SW_ENOSYM;
        lo = near->start;
        hi = lib->end;
    }
    /* Further back than a stub is long: the start must be a jump's end, not LO. */
    const bool clamped = pc - lo > (sw_addr)STUB_MAX_INSNS * STUB_INSN;
    if (clamped)
        lo = pc - (sw_addr)STUB_MAX_INSNS * STUB_INSN;

    /* The stub starts after the previous end of a straight line (the stub before it, or
     * PLT0) and ends with its own jump. */
    sw_addr start = pc, end = pc;
    int rc = 0;
    while (start > lo && (rc = stub_insn_ends(w, dis, start - STUB_INSN)) == 0)
        start -= STUB_INSN;
    if (rc < 0)
        return sw_is_link_error(rc) ? rc : SW_ENOSYM;
    if (rc == 0 && clamped)
        return SW_ENOSYM;
    for (unsigned k = 0; end < hi && k < STUB_MAX_INSNS; k++) {
        rc = stub_insn_ends(w, dis, end);
        if (rc < 0)
            return sw_is_link_error(rc) ? rc : SW_ENOSYM;
        end += STUB_INSN;
        if (rc == 1) {
            *out = (struct sw_symbol){ .start = start, .size = end - start };
            return 0;
        }
    }
    return SW_ENOSYM; /* no jump on within a stub's length: not a stub */
}
