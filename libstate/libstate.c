/* libstate/libstate.c -- LibraryState: the modules loaded in the target.
 *
 * Places the executable (its PIE bias from the auxiliary vector), the
 * modules the ProcessState reports, each matched to a local file under the
 * sysroot and opened through the ELF cache, and what the auxiliary vector
 * adds when the list lacks them: the dynamic linker (AT_BASE) and the vDSO
 * (AT_SYSINFO_EHDR, read from target memory).  Not a link-map reader: the
 * backend supplies the module list.
 */
#include "rspwalk/libstate.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rspwalk/proc.h"
#include "util/util.h"
#include "elf/elf.h"
#include "elf/image.h"
#include "libstate/fetch.h"
#include "libstate/jit.h"
#include "libstate/maps.h"
#include "libstate/files.h"
#include "libstate/lib.h"
#include "libstate/libstate_internal.h"
#include "libstate/module.h"

/* Auxiliary vector tags (Linux include/uapi/linux/auxvec.h). */
#define AUX_AT_NULL         0
#define AUX_AT_PHDR         3
#define AUX_AT_BASE         7
#define AUX_AT_ENTRY        9
#define AUX_AT_SYSINFO_EHDR 33
/* A load bias is a multiple of the page size; 4 KiB divides every page size
 * of the supported targets, so a bias that is not a multiple is a mismatch. */
#define BIAS_ALIGN 0xfffu
/* The vDSO is read from target memory: its ELF header first (64 bytes, the
 * larger of Elf32_Ehdr and Elf64_Ehdr), then as much as the headers say,
 * bounded because a garbage header must not make us read megabytes.  Linux
 * vDSOs are 2 pages (x86_64, aarch64: 8 KiB); 64 KiB leaves room for
 * 64 KiB-page kernels' single page. */
#define VDSO_HEAD_BYTES 64
#define VDSO_MAX_BYTES  (64u * 1024)
/* The name the vDSO is listed and cached under, as /proc/PID/maps shows it. */
#define VDSO_NAME "[vdso]"

/* What the refresh uses from the auxiliary vector; 0 where absent. */
struct aux_info {
    sw_addr entry, phdr, base, sysinfo_ehdr;
};

/* How a module is placed again when its checked file changes. */
enum replace_how { REPLACE_MODULE, REPLACE_EXE, REPLACE_INTERP };

/* The local files a refresh leaves to be checked in one go, and the listed
 * vDSO, placed after that check (whose batch fetches its image). */
struct pending {
    struct sw_ls_check *v;
    enum replace_how *how;
    size_t n, cap;
    bool has_vdso;
    size_t vdso_idx;
    sw_addr vdso_addr, vdso_fallback;
};

static void
pending_fini(struct pending *pd)
{
    for (size_t i = 0; i < pd->n; i++)
        sw_free(pd->v[i].target);
    sw_free(pd->v);
    sw_free(pd->how);
}

/* Resolve TARGET's local file for LIBS[IDX] (sw_ls_resolve), leaving its
 * check to the batch in PD.  Returns 0, SW_ENOMEM or a link error. */
static int
resolve(struct sw_libstate *ls, const char *target, struct sw_lib_entry *libs, size_t idx,
        enum replace_how how, struct pending *pd)
{
    bool deferred;
    int rc = sw_ls_resolve(ls, target, true, &libs[idx].pub.path, &libs[idx].elf, &deferred);
    if (rc != 0 || !deferred)
        return rc;
    if (pd->n == pd->cap) {
        size_t cap = pd->cap ? pd->cap * 2 : 8;
        struct sw_ls_check *v = sw_realloc(pd->v, cap * sizeof *v);
        if (v != NULL)
            pd->v = v;
        enum replace_how *h = v ? sw_realloc(pd->how, cap * sizeof *h) : NULL;
        if (h == NULL)
            return sw_fail(&ls->err, SW_ENOMEM, "%s: out of memory", target);
        pd->how = h;
        pd->cap = cap;
    }
    char *copy = sw_strdup(target);
    if (copy == NULL)
        return sw_fail(&ls->err, SW_ENOMEM, "%s: out of memory", target);
    pd->v[pd->n] = (struct sw_ls_check){ .lib = idx, .target = copy };
    pd->how[pd->n++] = how;
    return 0;
}

void
sw_libstate_config_init(struct sw_libstate_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->modcache = NULL; /* a module cache of the library state's own */
}

int
sw_libstate_new(struct sw_proc *p, const struct sw_libstate_config *cfg, struct sw_libstate **out)
{
    if (p == NULL || out == NULL)
        return SW_EINVAL;
    struct sw_libstate *ls = sw_calloc(1, sizeof *ls);
    if (ls == NULL)
        return SW_ENOMEM;
    ls->proc = p;
    if (cfg && cfg->sysroot && cfg->sysroot[0]) {
        ls->sysroot = sw_strdup(cfg->sysroot);
        if (ls->sysroot == NULL)
            goto nomem;
        size_t n = strlen(ls->sysroot);
        while (n > 1 && ls->sysroot[n - 1] == '/')
            ls->sysroot[--n] = '\0';
    }
    if (cfg && cfg->lib_path && cfg->lib_path[0]) {
        ls->lib_path = sw_strdup(cfg->lib_path);
        if (ls->lib_path == NULL)
            goto nomem;
    }
    if (cfg && cfg->exe) {
        ls->exe = sw_strdup(cfg->exe);
        if (ls->exe == NULL)
            goto nomem;
    }
    if (cfg && cfg->cache_dir) {
        ls->cache_dir = cfg->cache_dir[0] ? sw_strdup(cfg->cache_dir) : NULL;
        if (cfg->cache_dir[0] && ls->cache_dir == NULL)
            goto nomem;
    } else {
        ls->cache_dir = sw_fetch_default_cache_dir(); /* NULL: no HOME, no fetching */
    }
    ls->cache_max_bytes = cfg ? cfg->cache_max_bytes : 0;
    if (cfg && cfg->modcache) {
        sw_modcache_ref(cfg->modcache);
        ls->mc = cfg->modcache;
    } else if (sw_modcache_new(cfg ? cfg->debug_dir : NULL, ls->cache_dir ? ls->cache_dir : "",
                               &ls->mc) != 0) {
        goto nomem;
    }
    if (cfg == NULL || cfg->modcache == NULL)
        sw_modcache_set_inflate_limits(ls->mc, cfg ? cfg->max_inflate_bytes : 0,
                                       cfg ? cfg->max_inflate_ratio : 0);
    ls->max_modules = cfg && cfg->max_modules ? cfg->max_modules : SW_LS_MAX_MODULES;
    ls->no_jit = cfg && cfg->no_jit;
    ls->no_maps = cfg && cfg->no_maps;
    ls->max_fetch_bytes =
        cfg && cfg->max_fetch_bytes ? cfg->max_fetch_bytes : SW_LS_MAX_FETCH_BYTES;
    ls->cache = sw_modcache_elfs(ls->mc);
    *out = ls;
    return 0;
nomem:
    sw_libstate_free(ls);
    return SW_ENOMEM;
}

static void
libs_free(struct sw_lib_entry *libs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sw_free(libs[i].pub.name);
        sw_free(libs[i].pub.path);
    }
    sw_free(libs);
}

void
sw_libstate_free(struct sw_libstate *ls)
{
    if (ls == NULL)
        return;
    libs_free(ls->libs, ls->nlibs);
    sw_ls_jit_free(ls);
    sw_ls_maps_free(ls);
    sw_modcache_free(ls->mc);
    sw_free(ls->sysroot);
    sw_free(ls->lib_path);
    sw_free(ls->exe);
    sw_free(ls->cache_dir);
    sw_ls_resolved_free(ls);
    for (size_t i = 0; i < ls->nwarnings; i++)
        sw_free(ls->warnings[i]);
    sw_free(ls->warnings);
    sw_free(ls->watch);
    sw_free(ls);
}

struct sw_elfcache *
sw_libstate_elfcache(struct sw_libstate *ls)
{
    return ls->cache;
}

/* Give every module of LIBS[0..N) with a local file its module (CFI and
 * DWARF, opened on first use).  Returns 0 or SW_ENOMEM (message on LS). */
static int
attach_modules(struct sw_libstate *ls, struct sw_lib_entry *libs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        libs[i].module = NULL;
        if (libs[i].elf == NULL)
            continue;
        int rc = sw_modcache_module(ls->mc, libs[i].elf, &libs[i].module, &ls->err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The vDSO has no file: gdbserver lists it as "linux-vdso.so.1" (i386 and
 * older kernels: "linux-gate.so.1"). */
static bool
is_vdso(const char *name)
{
    return strncmp(name, "linux-vdso", 10) == 0 || strncmp(name, "linux-gate", 10) == 0 ||
           strcmp(name, "[vdso]") == 0;
}

/* Set START, END and L_LD from the file's PT_LOAD range and BIAS.  Without a
 * file the range is empty at BIAS: it covers no address. */
static void
place(struct sw_lib_entry *lib, sw_addr bias)
{
    struct sw_lib *pub = &lib->pub;
    sw_addr lo, hi;

    pub->bias = bias;
    pub->start = pub->end = bias;
    if (lib->elf == NULL)
        return;
    sw_elf_load_range(lib->elf, &lo, &hi);
    pub->start = lo + bias;
    pub->end = hi + bias;
    if (pub->l_ld == 0 && sw_elf_dynamic_vaddr(lib->elf) != 0)
        pub->l_ld = sw_elf_dynamic_vaddr(lib->elf) + bias;
}

/* The auxiliary vector, read once per refresh.  Not offered, or any failure
 * but a link error, leaves *AUX all zero (PIE bias 0, no dynamic linker or
 * vDSO from it).  Returns 0 or a link error (SW_ENOMEM included). */
static int
read_auxv(struct sw_libstate *ls, struct aux_info *aux)
{
    struct sw_proc *p = ls->proc;
    uint8_t *buf = NULL;
    size_t len = 0;

    memset(aux, 0, sizeof *aux);
    if (p->ops->auxv == NULL)
        return 0;
    int rc = p->ops->auxv(p, &buf, &len);
    if (rc != 0) {
        if (sw_is_link_error(rc))
            return sw_fail(&ls->err, rc, "reading the auxiliary vector: %s", sw_proc_errmsg(p));
        sw_debug(SW_DBG_CACHE, "libstate: no auxiliary vector: %s", sw_proc_errmsg(p));
        return 0;
    }
    size_t w = p->arch->word_size;
    for (size_t off = 0; off + 2 * w <= len; off += 2 * w) {
        uint64_t tag = arch_load(p->arch, buf + off, w);
        uint64_t val = arch_load(p->arch, buf + off + w, w);
        if (tag == AUX_AT_NULL)
            break;
        if (tag == AUX_AT_ENTRY)
            aux->entry = val;
        else if (tag == AUX_AT_PHDR)
            aux->phdr = val;
        else if (tag == AUX_AT_BASE)
            aux->base = val;
        else if (tag == AUX_AT_SYSINFO_EHDR)
            aux->sysinfo_ehdr = val;
    }
    free(buf);
    return 0;
}

/* The PIE bias from the auxiliary vector: AT_ENTRY - e_entry, else
 * AT_PHDR - the program headers' link-time address.  Returns 0 and the bias,
 * or SW_EUNSUP (no usable entry; the caller assumes 0). */
static int
pie_bias(const struct aux_info *aux, struct sw_elf *elf, sw_addr *bias)
{
    if (aux->entry != 0 && ((aux->entry - sw_elf_entry(elf)) & BIAS_ALIGN) == 0) {
        *bias = aux->entry - sw_elf_entry(elf);
        return 0;
    }
    if (aux->phdr != 0 && sw_elf_phdr_vaddr(elf) != 0 &&
        ((aux->phdr - sw_elf_phdr_vaddr(elf)) & BIAS_ALIGN) == 0) {
        *bias = aux->phdr - sw_elf_phdr_vaddr(elf);
        return 0;
    }
    return SW_EUNSUP;
}

/* Place the executable LIB by its file (none: at 0). */
static void
place_exe_file(const struct aux_info *aux, struct sw_lib_entry *lib)
{
    sw_addr bias = 0;
    if (lib->elf != NULL && sw_elf_is_dyn(lib->elf) && pie_bias(aux, lib->elf, &bias) != 0) {
        /* libraries-svr4's main-lm would give l_addr, but sw_modinfo
         * does not carry it; 0 is right for a non-randomised PIE only. */
        sw_debug(SW_DBG_CACHE,
                 "libstate: %s is PIE but the target offers no usable auxv; assuming bias 0",
                 lib->pub.path);
        bias = 0;
    }
    place(lib, bias);
}

/* The executable's local path (owned) and whether it came from the target
 * (then it goes through the sysroot).  *PATH NULL: no executable is known. */
static int
exe_source(struct sw_libstate *ls, char **path, bool *from_target)
{
    struct sw_proc *p = ls->proc;
    const char *given = ls->exe ? ls->exe : p->exe_path;

    *path = NULL;
    *from_target = false;
    if (given != NULL) {
        *path = sw_strdup(given);
        return *path ? 0 : SW_ENOMEM;
    }
    if (p->ops->exec_path == NULL)
        return 0;
    char *target = NULL;
    int rc = p->ops->exec_path(p, &target);
    if (rc != 0) {
        if (sw_is_link_error(rc))
            return sw_fail(&ls->err, rc, "asking the target for its executable: %s",
                           sw_proc_errmsg(p));
        sw_debug(SW_DBG_CACHE, "libstate: no executable from the target: %s", sw_proc_errmsg(p));
        return 0;
    }
    *path = target;
    *from_target = true;
    return 0;
}

/* Place the executable as LIB.  A file the user named (--exe, or the
 * process's local exe_path) must be a usable ELF file for the target: any
 * failure is the refresh's error.  A path the target named is only a hint:
 * without a usable local copy under the sysroot the executable is listed
 * without a file (path NULL), and its frames get no names. */
static int
place_exe(struct sw_libstate *ls, const struct aux_info *aux, struct sw_lib_entry *libs, bool *have,
          struct pending *pd)
{
    struct sw_lib_entry *lib = &libs[0];
    char *path = NULL;
    bool from_target;
    int rc;

    *have = false;
    rc = exe_source(ls, &path, &from_target);
    if (rc != 0 || path == NULL)
        return rc;
    *have = true;
    lib->pub.is_exe = true;
    lib->pub.name = path;
    if (from_target) {
        rc = resolve(ls, path, libs, 0, REPLACE_EXE, pd);
        if (rc != 0)
            return rc;
        if (lib->elf == NULL) {
            sw_debug(SW_DBG_CACHE, "libstate: executable %s: no usable local copy", lib->pub.name);
            place(lib, 0);
            return 0;
        }
    } else {
        lib->pub.path = sw_strdup(path);
        if (lib->pub.path == NULL)
            return SW_ENOMEM;
        rc = sw_elfcache_open(ls->cache, lib->pub.path, &lib->elf, &ls->err);
        if (rc != 0)
            return rc;
        const struct arch_desc *a = sw_elf_arch(lib->elf);
        if (a != ls->proc->arch)
            return sw_fail(&ls->err, SW_EBADELF, "%s: built for %s, the target is %s",
                           lib->pub.path, a ? a->name : "an unsupported architecture",
                           ls->proc->arch->name);
    }
    place_exe_file(aux, lib);
    return 0;
}

/* Read the vDSO's image at ADDR from target memory into *BUF (owned, of
 * *LEN bytes).  Returns 0, SW_EMEM or SW_EBADELF (with the message in ERR),
 * or a link error (with the message on LS). */
static int
read_vdso_image(struct sw_libstate *ls, sw_addr addr, uint8_t **buf, size_t *len,
                struct sw_errbuf *err)
{
    struct sw_proc *p = ls->proc;
    uint8_t *b = sw_malloc(VDSO_MAX_BYTES);
    size_t have = 0, want = VDSO_HEAD_BYTES;
    int rc = 0;

    if (b == NULL)
        return sw_fail(&ls->err, SW_ENOMEM, "reading the vDSO: out of memory");
    /* Header, program headers, the rest: a well-formed image is complete
     * by the third round. */
    for (int round = 0; round < 3 && want > have; round++) {
        if (want > VDSO_MAX_BYTES) {
            rc = sw_fail(err, SW_EBADELF,
                         "reading the vDSO at 0x%" PRIx64 ": its headers claim %zu bytes, "
                         "more than %u",
                         addr, want, VDSO_MAX_BYTES);
            break;
        }
        rc = p->ops->read_mem(p, addr + have, b + have, want - have);
        if (rc != 0) {
            if (sw_is_link_error(rc))
                sw_fail(&ls->err, rc, "reading the vDSO at 0x%" PRIx64 ": %s", addr,
                        sw_proc_errmsg(p));
            else
                sw_fail(err, rc, "reading the vDSO at 0x%" PRIx64 ": %s", addr, sw_proc_errmsg(p));
            break;
        }
        have = want;
        rc = sw_elf_image_size(b, have, VDSO_NAME, &want, err);
        if (rc != 0)
            break;
    }
    if (rc == 0 && want > have)
        rc = sw_fail(err, SW_EBADELF, "reading the vDSO at 0x%" PRIx64 ": headers never settle",
                     addr);
    if (rc != 0) {
        sw_free(b);
        return rc;
    }
    *buf = b;
    *len = want;
    return 0;
}

/* Give LIB (the vDSO, ELF header at ADDR in the target) its image from the
 * ELF cache, reading it from target memory the first time, and place it:
 * bias = ADDR - its lowest PT_LOAD address (Linux links the vDSO with its
 * first PT_LOAD at file offset 0, so that address holds the ELF header).
 * An image that cannot be read or parsed leaves LIB without a file, placed
 * at FALLBACK_BIAS.  Returns 0 or a link error. */
static int
place_vdso(struct sw_libstate *ls, struct sw_lib_entry *lib, sw_addr addr, sw_addr fallback_bias)
{
    struct sw_errbuf err;
    struct sw_elf *elf = addr ? ls->vdso : NULL;

    sw_err_clear(&err);
    if (elf == NULL && addr != 0) {
        uint8_t *image = NULL;
        size_t len = 0;
        int rc = read_vdso_image(ls, addr, &image, &len, &err);
        if (rc == 0) {
            rc = sw_elfcache_open_mem(ls->cache, VDSO_NAME, image, len, &elf, &err);
            sw_free(image);
            if (rc == 0)
                ls->vdso = elf;
            if (rc == SW_ENOMEM)
                return sw_err_copy(&ls->err, &err);
        }
        if (rc != 0 && sw_is_link_error(rc))
            return rc;
        if (rc != 0)
            elf = NULL;
    }
    if (elf != NULL && sw_elf_arch(elf) != ls->proc->arch) {
        sw_fail(&err, SW_EBADELF, "%s: built for %s, the target is %s", VDSO_NAME,
                sw_elf_arch(elf) ? sw_elf_arch(elf)->name : "an unsupported architecture",
                ls->proc->arch->name);
        elf = NULL;
    }
    if (elf == NULL) {
        sw_debug(SW_DBG_CACHE, "libstate: vDSO without symbols: %s",
                 err.code ? err.msg : "no address");
        place(lib, fallback_bias);
        return 0;
    }
    sw_addr lo, hi;
    sw_elf_load_range(elf, &lo, &hi);
    lib->elf = elf;
    sw_elf_image(elf, &lib->image, &lib->image_len);
    place(lib, addr - lo);
    return 0;
}

/* A module from the target's list.  The vDSO has no file: its image is read
 * at AT_SYSINFO_EHDR, else at its l_addr (glibc's l_addr for the vDSO is its
 * ELF header's address when it is linked at 0, as Linux links it), after
 * the files' check, whose batch fetches it (PD->vdso_*). */
static int
add_module(struct sw_libstate *ls, const struct aux_info *aux, struct sw_lib_entry *libs,
           size_t idx, const struct sw_modinfo *m, struct pending *pd)
{
    struct sw_lib_entry *lib = &libs[idx];
    bool vdso = is_vdso(m->name);
    lib->pub.name = sw_strdup(vdso ? VDSO_NAME : m->name);
    if (lib->pub.name == NULL)
        return SW_ENOMEM;
    lib->pub.l_ld = m->l_ld;
    if (vdso) {
        if (pd->has_vdso) /* listed twice: placed at once, as a module of its own */
            return place_vdso(ls, lib, aux->sysinfo_ehdr ? aux->sysinfo_ehdr : m->l_addr,
                              m->l_addr);
        pd->has_vdso = true;
        pd->vdso_idx = idx;
        pd->vdso_addr = aux->sysinfo_ehdr ? aux->sysinfo_ehdr : m->l_addr;
        pd->vdso_fallback = m->l_addr;
        return 0;
    }
    int rc = resolve(ls, m->name, libs, idx, REPLACE_MODULE, pd);
    if (rc != 0)
        return rc;
    place(lib, m->l_addr);
    return 0;
}

/* Whether any of LIBS[0..N) is placed at BIAS or covers ADDR. */
static bool
address_taken(const struct sw_lib_entry *libs, size_t n, sw_addr bias, sw_addr addr)
{
    for (size_t i = 0; i < n; i++)
        if (libs[i].pub.bias == bias || (addr >= libs[i].pub.start && addr < libs[i].pub.end))
            return true;
    return false;
}

/* Place the dynamic linker LIB at AT_BASE by its file's lowest address. */
static void
place_interp_file(const struct aux_info *aux, struct sw_lib_entry *lib)
{
    sw_addr lo = 0, hi;
    if (lib->elf != NULL)
        sw_elf_load_range(lib->elf, &lo, &hi);
    place(lib, aux->base - lo);
}

/* Check the local files PD gathered, all at once, and place again the
 * modules whose file changed; the vDSO's image at WARM (0: none to read)
 * comes in the same batch.  Returns 0, SW_ENOMEM or a link error. */
static int
check_pending(struct sw_libstate *ls, const struct aux_info *aux, struct sw_lib_entry *libs,
              size_t nlibs, struct pending *pd, sw_addr warm)
{
    if (pd->n == 0 && warm == 0)
        return 0;
    int rc = sw_ls_check_files(ls, libs, pd->v, pd->n, warm, nlibs);
    for (size_t i = 0; i < pd->n && rc == 0; i++) {
        struct sw_lib_entry *lib = &libs[pd->v[i].lib];
        if (!pd->v[i].changed)
            continue;
        lib->pub.l_ld = pd->how[i] == REPLACE_MODULE ? lib->pub.l_ld : 0;
        if (pd->how[i] == REPLACE_EXE)
            place_exe_file(aux, lib);
        else if (pd->how[i] == REPLACE_INTERP)
            place_interp_file(aux, lib);
        else
            place(lib, lib->pub.bias);
    }
    return rc;
}

/* The dynamic linker when the target's list lacks it: gdbserver's
 * libraries-svr4 is empty at a dynamic program's entry point, where the PC
 * is in ld.so's _start.  Like gdb (solib-svr4.c,
 * enable_break), take its path from the executable's PT_INTERP and its load
 * address from AT_BASE; bias = AT_BASE - its lowest PT_LOAD address.
 * Appends to LIBS[*N] (room for it is the caller's).  Returns 0 or SW_ENOMEM. */
static int
add_interp(struct sw_libstate *ls, const struct aux_info *aux, struct sw_lib_entry *libs, size_t *n,
           struct pending *pd)
{
    const struct sw_lib_entry *exe = *n > 0 && libs[0].pub.is_exe ? &libs[0] : NULL;
    const char *interp = exe && exe->elf ? sw_elf_interp(exe->elf) : NULL;

    if (aux->base == 0 || address_taken(libs, *n, aux->base, aux->base))
        return 0;
    if (interp == NULL) {
        sw_debug(SW_DBG_CACHE,
                 "libstate: AT_BASE 0x%" PRIx64 " but no executable with PT_INTERP to name it",
                 aux->base);
        return 0;
    }
    size_t idx = (*n)++;
    struct sw_lib_entry *lib = &libs[idx];
    lib->pub.name = sw_strdup(interp);
    if (lib->pub.name == NULL)
        return SW_ENOMEM;
    int rc = resolve(ls, interp, libs, idx, REPLACE_INTERP, pd);
    if (rc != 0)
        return rc;
    place_interp_file(aux, lib);
    sw_debug(SW_DBG_CACHE, "libstate: %s from PT_INTERP at AT_BASE 0x%" PRIx64, lib->pub.name,
             aux->base);
    return 0;
}

/* The vDSO when the target's list lacks it (it lists no libraries at the
 * entry point, or has no list at all): from AT_SYSINFO_EHDR, as gdb does
 * (symfile-mem.c, add_vsyscall_page).  Returns 0 or a link error. */
static int
add_vdso(struct sw_libstate *ls, const struct aux_info *aux, struct sw_lib_entry *libs, size_t *n)
{
    if (aux->sysinfo_ehdr == 0)
        return 0;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(libs[i].pub.name, VDSO_NAME) == 0)
            return 0;
    if (address_taken(libs, *n, aux->sysinfo_ehdr, aux->sysinfo_ehdr))
        return 0;
    struct sw_lib_entry *lib = &libs[(*n)++];
    lib->pub.name = sw_strdup(VDSO_NAME);
    if (lib->pub.name == NULL)
        return SW_ENOMEM;
    return place_vdso(ls, lib, aux->sysinfo_ehdr, aux->sysinfo_ehdr);
}

/* Where the vDSO's image will be read from target memory (0: nowhere, or
 * it was read before): the listed vDSO's address, else AT_SYSINFO_EHDR. */
static sw_addr
vdso_to_read(struct sw_libstate *ls, const struct aux_info *aux, const struct pending *pd)
{
    sw_addr addr = pd->has_vdso ? pd->vdso_addr : aux->sysinfo_ehdr;
    if (addr == 0 || ls->vdso != NULL)
        return 0;
    return addr;
}

static bool
same_lib(const struct sw_lib *a, const struct sw_lib *b)
{
    return a->bias == b->bias && a->is_exe == b->is_exe && strcmp(a->name, b->name) == 0;
}

/* The order same_lib agrees with, for sorting and bsearch. */
static int
lib_cmp(const void *pa, const void *pb)
{
    const struct sw_lib *a = *(const struct sw_lib *const *)pa;
    const struct sw_lib *b = *(const struct sw_lib *const *)pb;
    int c = strcmp(a->name, b->name);
    if (c != 0)
        return c;
    if (a->bias != b->bias)
        return a->bias < b->bias ? -1 : 1;
    return (int)a->is_exe - (int)b->is_exe;
}

/* Call CB with KIND for each of the N libraries of FROM that OTHER (M of
 * them) lacks: sorted and searched, so that two lists of 30000 modules are
 * compared in O(n log n), not module by module.  Out of memory: pairwise. */
static void
report_missing(struct sw_libstate *ls, const struct sw_lib_entry *from, size_t n,
               const struct sw_lib_entry *other, size_t m, enum sw_lib_change kind)
{
    const struct sw_lib **sorted = m ? sw_malloc(m * sizeof *sorted) : NULL;
    if (sorted != NULL) {
        for (size_t i = 0; i < m; i++)
            sorted[i] = &other[i].pub;
        qsort(sorted, m, sizeof *sorted, lib_cmp);
    }
    for (size_t i = 0; i < n; i++) {
        const struct sw_lib *lib = &from[i].pub;
        bool found = false;
        if (sorted != NULL)
            found = bsearch(&lib, sorted, m, sizeof *sorted, lib_cmp) != NULL;
        else
            for (size_t k = 0; k < m && !found; k++)
                found = same_lib(lib, &other[k].pub);
        if (!found)
            ls->cb(ls->cb_arg, lib, kind);
    }
    sw_free(sorted);
}

/* The module list: not offered (no op, SW_EUNSUP) is an empty list with
 * *OFFERED false (the link map is read instead); a link failure or no memory
 * is an error; any other failure (a malformed list) leaves the executable
 * alone, with the message kept on LS. */
static int
read_modules(struct sw_libstate *ls, struct sw_modinfo **mods, size_t *n, bool *offered)
{
    struct sw_proc *p = ls->proc;

    *mods = NULL;
    *n = 0;
    *offered = false;
    if (p->ops->modules == NULL)
        return 0;
    int rc = p->ops->modules(p, mods, n);
    if (rc == 0) {
        *offered = true;
        return 0;
    }
    *mods = NULL;
    *n = 0;
    if (rc == SW_EUNSUP)
        return 0;
    *offered = true;
    sw_fail(&ls->err, rc, "reading the module list: %s", sw_proc_errmsg(p));
    return sw_is_link_error(rc) ? rc : 0;
}

/* Keep the link map of MODS (N) to check at later stops, and have the
 * process read its entries, and the JIT descriptor, with each stop's first
 * reads.  Nothing to check by: every later update is a refresh. */
static int
watch_modules(struct sw_libstate *ls, const struct sw_modinfo *mods, size_t n)
{
    struct sw_rdebug_entry *e = NULL;
    size_t ne = 0;
    struct sw_mem_req *reqs = NULL;
    int rc = sw_rdebug_watch(mods, n, &e, &ne);
    sw_addr jit_addr;
    size_t jit_len;
    sw_ls_jit_stop_read(ls, &jit_addr, &jit_len);
    size_t nreq = ne + (jit_len > 0);
    if (rc == 0 && nreq > 0 && (reqs = sw_calloc(nreq, sizeof *reqs)) == NULL)
        rc = SW_ENOMEM;
    if (rc != 0) {
        sw_free(e);
        return sw_fail(&ls->err, rc, "keeping the link map: out of memory");
    }
    for (size_t i = 0; i < ne; i++)
        reqs[i] = (struct sw_mem_req){ .addr = e[i].lm, .len = sw_rdebug_entry_bytes(ls->proc) };
    sw_free(ls->watch);
    ls->watch = e;
    ls->nwatch = ne;
    if (jit_len > 0)
        reqs[ne] = (struct sw_mem_req){ .addr = jit_addr, .len = jit_len };
    rc = sw_proc_stop_reads(ls->proc, reqs, nreq);
    sw_free(reqs);
    if (rc != 0)
        return sw_fail(&ls->err, rc, "keeping the link map: %s", sw_proc_errmsg(ls->proc));
    return 0;
}

int
sw_libstate_update(struct sw_libstate *ls)
{
    sw_err_clear(&ls->err);
    if (ls->nwatch > 0) {
        bool same = false;
        int rc = sw_rdebug_unchanged(ls->proc, ls->watch, ls->nwatch, &same, &ls->err);
        if (rc != 0)
            return rc;
        if (same) {
            sw_debug(SW_DBG_CACHE, "libstate: link map unchanged (%zu entries)", ls->nwatch);
            return sw_ls_jit_update(ls);
        }
    }
    return sw_libstate_refresh(ls);
}

/* Builds the new list completely before replacing the old one, so a failed
 * refresh leaves the previous list in place.  No executable at all (no
 * --exe, no exec-file from the target) is not an error: the modules are
 * listed and frames in the executable get no names. */
int
sw_libstate_refresh(struct sw_libstate *ls)
{
    struct sw_modinfo *mods = NULL;
    size_t nmods = 0, cap = 0;
    struct sw_lib_entry *libs = NULL;
    size_t n = 0;
    struct aux_info aux;
    struct pending pd = { 0 };
    bool have_exe, offered;
    int rc;

    sw_err_clear(&ls->err);
    ls->trap_read = false;
    sw_ls_maps_reset(ls);
    rc = read_modules(ls, &mods, &nmods, &offered);
    if (rc != 0)
        return rc;
    rc = read_auxv(ls, &aux);
    if (rc != 0)
        goto out;
    cap = nmods + 3; /* the executable, the modules, the dynamic linker, the vDSO */
    libs = sw_calloc(cap, sizeof *libs);
    if (libs == NULL) {
        rc = sw_fail(&ls->err, SW_ENOMEM, "refreshing the module list: out of memory");
        goto out;
    }
    rc = place_exe(ls, &aux, libs, &have_exe, &pd);
    if (rc != 0)
        goto out;
    n = have_exe ? 1 : 0;
    if (!offered && have_exe) {
        /* No list from the stub (QEMU user): the dynamic linker's link map. */
        rc = sw_rdebug_modules(ls->proc, libs[0].pub.l_ld, &mods, &nmods, &ls->lib_trap, &ls->err);
        ls->trap_read = rc == 0;
        if (rc == 0 && nmods + 3 > cap) {
            struct sw_lib_entry *grown = sw_realloc(libs, (nmods + 3) * sizeof *libs);
            if (grown == NULL) {
                rc = sw_fail(&ls->err, SW_ENOMEM, "refreshing the module list: out of memory");
                goto out;
            }
            memset(grown + cap, 0, (nmods + 3 - cap) * sizeof *grown);
            libs = grown;
            cap = nmods + 3;
        }
        if (rc != 0)
            goto out;
    }
    for (size_t i = 0; i < nmods; i++) {
        if (mods[i].name == NULL || mods[i].name[0] == '\0')
            continue;
        if (n >= ls->max_modules) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "the target lists %zu modules, more than the limit of %zu: the rest are "
                     "left out",
                     nmods, ls->max_modules);
            rc = sw_ls_warn(ls, msg);
            if (rc != 0)
                goto out;
            break;
        }
        rc = add_module(ls, &aux, libs, n++, &mods[i], &pd);
        if (rc != 0)
            goto out;
    }
    rc = add_interp(ls, &aux, libs, &n, &pd);
    if (rc == 0)
        rc = check_pending(ls, &aux, libs, n, &pd, vdso_to_read(ls, &aux, &pd));
    if (rc == 0 && pd.has_vdso)
        rc = place_vdso(ls, &libs[pd.vdso_idx], pd.vdso_addr, pd.vdso_fallback);
    if (rc == 0)
        rc = add_vdso(ls, &aux, libs, &n);
    if (rc == 0)
        rc = attach_modules(ls, libs, n);
    if (rc == 0)
        rc = sw_ls_jit_refresh(ls, libs, n);
    if (rc != 0)
        goto out;

    if (ls->cb) {
        report_missing(ls, ls->libs, ls->nlibs, libs, n, SW_LIB_UNLOAD);
        report_missing(ls, libs, n, ls->libs, ls->nlibs, SW_LIB_LOAD);
    }
    libs_free(ls->libs, ls->nlibs);
    ls->libs = libs;
    ls->nlibs = n;
    libs = NULL;
    n = 0;
    sw_debug(SW_DBG_CACHE, "libstate: %zu modules", ls->nlibs);
    rc = watch_modules(ls, mods, nmods);
out:
    if (rc == SW_ENOMEM && ls->err.code != SW_ENOMEM)
        sw_fail(&ls->err, rc, "refreshing the module list: out of memory");
    if (libs)
        libs_free(libs, cap); /* calloc'd: unused entries hold NULL */
    sw_modinfo_free(mods, nmods);
    pending_fini(&pd);
    return rc;
}

int
sw_libstate_lib_at(struct sw_libstate *ls, sw_addr addr, const struct sw_lib **lib)
{
    for (size_t i = 0; i < ls->nlibs; i++) {
        const struct sw_lib *l = &ls->libs[i].pub;
        if (addr >= l->start && addr < l->end) {
            *lib = l;
            return 0;
        }
    }
    const struct sw_lib *jit = sw_ls_jit_lib_at(ls, addr); /* generated code */
    if (jit == NULL)
        return SW_ENOENT;
    *lib = jit;
    return 0;
}

int
sw_libstate_exec_at(struct sw_libstate *ls, sw_addr addr)
{
    return sw_ls_maps_exec_at(ls, addr);
}

uint64_t
sw_libstate_maps_reads(const struct sw_libstate *ls)
{
    return ls->maps_reads;
}

size_t
sw_libstate_count(const struct sw_libstate *ls)
{
    return ls->nlibs;
}

const struct sw_lib *
sw_libstate_lib(const struct sw_libstate *ls, size_t i)
{
    return i < ls->nlibs ? &ls->libs[i].pub : NULL;
}

int
sw_libstate_lib_offset(struct sw_libstate *ls, sw_addr addr, const char **name, sw_addr *offset)
{
    const struct sw_lib *lib;
    int rc = sw_libstate_lib_at(ls, addr, &lib);
    if (rc != 0)
        return rc;
    *name = lib->name;
    *offset = addr - lib->bias;
    return 0;
}

/* With a list from the stub (libraries-svr4) r_brk is read on demand, once
 * per refresh, through the executable's DT_DEBUG: a few reads of its
 * dynamic section and one word. */
int
sw_libstate_trap_address(struct sw_libstate *ls, sw_addr *addr)
{
    sw_err_clear(&ls->err);
    if (!ls->trap_read) {
        sw_addr dyn = 0;
        for (size_t i = 0; i < ls->nlibs; i++)
            if (ls->libs[i].pub.is_exe)
                dyn = ls->libs[i].pub.l_ld;
        int rc = sw_rdebug_brk(ls->proc, dyn, &ls->lib_trap, &ls->err);
        if (rc != 0)
            return rc;
        ls->trap_read = true;
    }
    if (ls->lib_trap == 0)
        return sw_fail(&ls->err, SW_ENOENT,
                       "the library trap address: unknown (no DT_DEBUG in the executable, or the "
                       "dynamic linker has not filled it in yet)");
    *addr = ls->lib_trap;
    return 0;
}

size_t
sw_libstate_warnings(const struct sw_libstate *ls, const char *const **msgs)
{
    *msgs = (const char *const *)ls->warnings;
    return ls->nwarnings;
}

const char *
sw_libstate_errmsg(const struct sw_libstate *ls)
{
    return ls->err.msg;
}

void
sw_libstate_set_change_cb(struct sw_libstate *ls, sw_lib_change_cb cb, void *arg)
{
    ls->cb = cb;
    ls->cb_arg = arg;
}
