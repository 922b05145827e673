/* walker/capstone_dl.c -- capstone's six calls through dlopen (walker/capstone_dl.h). */
#define SW_CAPSTONE_DL_IMPL
#include "walker/capstone_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

#ifndef SW_CAPSTONE_SONAME
#define SW_CAPSTONE_SONAME "libcapstone.so.4"
#endif

static struct {
    void *lib; /* never closed: decoders may live until exit */
    char error[256];
    cs_err (*open)(cs_arch, cs_mode, csh *);
    cs_err (*close)(csh *);
    cs_err (*option)(csh, cs_opt_type, size_t);
    size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
    void (*free)(cs_insn *, size_t);
    cs_err (*regs_access)(csh, const cs_insn *, cs_regs, uint8_t *, cs_regs, uint8_t *);
} cs;

static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

/* dlsym's void * to a function pointer: through memcpy, which ISO C allows. */
#define RESOLVE(field, name)                                                                       \
    do {                                                                                           \
        void *sym = dlsym(cs.lib, name);                                                           \
        if (sym == NULL) {                                                                         \
            snprintf(cs.error, sizeof cs.error, "%s: no %s", SW_CAPSTONE_SONAME, name);            \
            return false;                                                                          \
        }                                                                                          \
        memcpy(&cs.field, &sym, sizeof sym);                                                       \
    } while (0)

static bool
resolve_all(void)
{
    RESOLVE(open, "cs_open");
    RESOLVE(close, "cs_close");
    RESOLVE(option, "cs_option");
    RESOLVE(disasm, "cs_disasm");
    RESOLVE(free, "cs_free");
    RESOLVE(regs_access, "cs_regs_access");
    return true;
}

static void
load_once(void)
{
    cs.lib = dlopen(SW_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (cs.lib == NULL) {
        const char *e = dlerror();
        snprintf(cs.error, sizeof cs.error, "%s", e ? e : SW_CAPSTONE_SONAME ": cannot be loaded");
    } else if (!resolve_all()) {
        dlclose(cs.lib);
        cs.lib = NULL;
    }
    if (cs.lib == NULL)
        sw_debug(SW_DBG_STEP, "capstone: %s: no instruction analysis", cs.error);
}

bool
sw_cs_load(void)
{
    pthread_once(&cs_once, load_once);
    return cs.lib != NULL;
}

const char *
sw_cs_load_error(void)
{
    return cs.error;
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
