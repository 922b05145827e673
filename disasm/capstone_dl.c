/* disasm/capstone_dl.c -- capstone's six calls through dlopen (disasm/capstone_dl.h). */
#define SW_CAPSTONE_DL_IMPL
#include "disasm/capstone_dl.h"

#include "util/dl.h"

#ifndef SW_CAPSTONE_SONAME
#define SW_CAPSTONE_SONAME "libcapstone.so.4"
#endif

static struct {
    cs_err (*open)(cs_arch, cs_mode, csh *);
    cs_err (*close)(csh *);
    cs_err (*option)(csh, cs_opt_type, size_t);
    size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
    void (*free)(cs_insn *, size_t);
    cs_err (*regs_access)(csh, const cs_insn *, cs_regs, uint8_t *, cs_regs, uint8_t *);
} cs;

static const struct sw_dl_sym cs_syms[] = {
    { "cs_open", &cs.open },     { "cs_close", &cs.close }, { "cs_option", &cs.option },
    { "cs_disasm", &cs.disasm }, { "cs_free", &cs.free },   { "cs_regs_access", &cs.regs_access },
};

static struct sw_dl cs_dl = { .soname = SW_CAPSTONE_SONAME,
                              .syms = cs_syms,
                              .nsyms = sizeof cs_syms / sizeof cs_syms[0],
                              .lock = PTHREAD_MUTEX_INITIALIZER };

bool
sw_cs_load(void)
{
    return sw_dl_load(&cs_dl, NULL);
}

const char *
sw_cs_load_error(void)
{
    return cs_dl.error;
}

cs_err
sw_cs_open(cs_arch arch, cs_mode mode, csh *handle)
{
    return sw_cs_load() ? cs.open(arch, mode, handle) : CS_ERR_MEM;
}

cs_err
sw_cs_close(csh *handle)
{
    return sw_cs_load() ? cs.close(handle) : CS_ERR_MEM;
}

cs_err
sw_cs_option(csh handle, cs_opt_type type, size_t value)
{
    return sw_cs_load() ? cs.option(handle, type, value) : CS_ERR_MEM;
}

size_t
sw_cs_disasm(csh handle, const uint8_t *code, size_t code_size, uint64_t address, size_t count,
             cs_insn **insn)
{
    *insn = NULL;
    return sw_cs_load() ? cs.disasm(handle, code, code_size, address, count, insn) : 0;
}

void
sw_cs_free(cs_insn *insn, size_t count)
{
    if (sw_cs_load())
        cs.free(insn, count);
}

cs_err
sw_cs_regs_access(csh handle, const cs_insn *insn, cs_regs regs_read, uint8_t *regs_read_count,
                  cs_regs regs_write, uint8_t *regs_write_count)
{
    return sw_cs_load() ? cs.regs_access(handle, insn, regs_read, regs_read_count, regs_write,
                                         regs_write_count)
                        : CS_ERR_MEM;
}
