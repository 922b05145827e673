/* tests/fuzz/fuzz_libstate.c -- libFuzzer target for target memory the library state reads.
 *
 * The input is [npairs:1][auxv: npairs * 16 bytes][addr:8 LE][memory]: an
 * x86-64 process whose memory at ADDR holds the rest.  The link map is read
 * from a dynamic section at ADDR (r_debug, link_map entries, their names),
 * then a library state is refreshed over the auxiliary vector, which may
 * place the vDSO's headers in that memory (AT_SYSINFO_EHDR).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libstate/libstate_internal.h"
#include "rspwalk/libstate.h"
#include "tests/tools/fake_proc.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t
le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t auxv_len = (size_t)data[0] * 16;
    if (auxv_len > size - 1)
        auxv_len = (size - 1) / 16 * 16;
    const uint8_t *auxv = data + 1, *rest = auxv + auxv_len;
    size_t left = size - 1 - auxv_len;
    if (left < 8)
        return 0;
    sw_addr addr = le64(rest) & ~(sw_addr)7;
    const uint8_t *mem = rest + 8;
    size_t mem_len = left - 8;
    if (mem_len == 0 || addr + mem_len < addr)
        return 0;

    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(p, addr, mem, mem_len);
    fake_proc_set_auxv(p, auxv, auxv_len);

    struct sw_modinfo *mods = NULL;
    size_t n = 0;
    sw_addr brk;
    struct sw_errbuf err = { 0, "" };
    if (sw_rdebug_modules(p, addr, &mods, &n, &brk, &err) == 0) {
        struct sw_rdebug_entry *e = NULL;
        size_t ne = 0;
        if (sw_rdebug_watch(mods, n, &e, &ne) == 0) {
            bool same;
            (void)sw_rdebug_unchanged(p, e, ne, &same, &err);
            sw_free(e);
        }
        sw_modinfo_free(mods, n);
    }
    (void)sw_rdebug_brk(p, addr, &brk, &err);

    struct sw_libstate *ls;
    if (sw_libstate_new(p, NULL, &ls) == 0) {
        if (sw_libstate_refresh(ls) == 0) {
            const struct sw_lib *lib;
            (void)sw_libstate_lib_at(ls, addr, &lib);
        }
        sw_libstate_free(ls);
    }
    sw_proc_free(p);
    return 0;
}
