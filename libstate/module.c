/* libstate/module.c -- the module cache: each local file's ELF, CFI and DWARF, once.
 *
 * Wraps the ELF cache (elf/elf.h) and keeps, per file, what the DWARF and
 * CFI readers opened for it, so that the ELF layer knows nothing of either.
 * Shared by library states through a reference count.  Not the module list
 * (libstate.c) and not the choice of a module's file (files.c).
 */
#include "libstate/module.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/cfi.h"
#include "dwarf/dwarf.h"
#include "elf/elf.h"
#include "libstate/fetch.h"

/* LOCK guards CFI, DINFO and the rest of what is opened on first use; ELF
 * is set when the module is made. */
struct sw_module {
    struct sw_module *next;
    struct sw_elf *elf; /* borrowed from the cache's ELF cache */
    pthread_mutex_t lock;
    struct sw_dinfo *dinfo;   /* owned: its DWARF (sw_module_dinfo), opened on first use */
    bool dinfo_tried;         /* opened, or its opening failed for good (DINFO NULL) */
    struct sw_cfi *cfi;       /* owned: its call frame information (sw_module_cfi) */
    struct sw_errbuf cfi_why; /* why CFI is NULL */
    bool cfi_tried;           /* opened, or its opening failed for good (CFI NULL) */
};

/* LOCK guards MODULES and REFS. */
struct sw_modcache {
    pthread_mutex_t lock;
    unsigned refs;
    struct sw_elfcache *elfs; /* owned */
    struct sw_module *modules;
};

void
sw_modcache_set_inflate_limits(struct sw_modcache *mc, uint64_t max_bytes, unsigned max_ratio)
{
    struct sw_inflate_limits lim = { .max_bytes = max_bytes, .max_ratio = max_ratio };
    sw_elfcache_set_inflate_limits(mc->elfs, &lim);
}

int
sw_modcache_new(const char *debug_dir, const char *cache_dir, struct sw_modcache **out)
{
    if (out == NULL)
        return SW_EINVAL;
    struct sw_modcache *mc = sw_calloc(1, sizeof *mc);
    if (mc == NULL)
        return SW_ENOMEM;
    pthread_mutex_init(&mc->lock, NULL);
    mc->refs = 1;
    mc->elfs = sw_elfcache_new(debug_dir);
    char *dir = NULL;
    if (cache_dir == NULL)
        dir = sw_fetch_default_cache_dir(); /* NULL: no HOME, no copies */
    else if (cache_dir[0] != '\0' && (dir = sw_strdup(cache_dir)) == NULL)
        goto nomem;
    if (mc->elfs == NULL || sw_elfcache_set_cache_dir(mc->elfs, dir) != 0)
        goto nomem;
    sw_free(dir);
    *out = mc;
    return 0;
nomem:
    sw_free(dir);
    sw_modcache_free(mc);
    return SW_ENOMEM;
}

void
sw_modcache_ref(struct sw_modcache *mc)
{
    pthread_mutex_lock(&mc->lock);
    mc->refs++;
    pthread_mutex_unlock(&mc->lock);
}

static void
module_free(struct sw_module *m)
{
    sw_dinfo_close(m->dinfo); /* before the ELF cache: it names addresses through its file */
    sw_cfi_close(m->cfi);
    pthread_mutex_destroy(&m->lock);
    sw_free(m);
}

void
sw_modcache_free(struct sw_modcache *mc)
{
    if (mc == NULL)
        return;
    pthread_mutex_lock(&mc->lock);
    bool last = --mc->refs == 0;
    pthread_mutex_unlock(&mc->lock);
    if (!last)
        return;
    while (mc->modules) {
        struct sw_module *m = mc->modules;
        mc->modules = m->next;
        module_free(m);
    }
    sw_elfcache_free(mc->elfs);
    pthread_mutex_destroy(&mc->lock);
    sw_free(mc);
}

struct sw_elfcache *
sw_modcache_elfs(struct sw_modcache *mc)
{
    return mc->elfs;
}

int
sw_modcache_module(struct sw_modcache *mc, struct sw_elf *e, struct sw_module **out,
                   struct sw_errbuf *err)
{
    struct sw_module *m;
    int rc = 0;

    pthread_mutex_lock(&mc->lock);
    for (m = mc->modules; m != NULL; m = m->next)
        if (m->elf == e)
            break;
    if (m == NULL) {
        m = sw_calloc(1, sizeof *m);
        if (m == NULL) {
            rc = sw_fail(err, SW_ENOMEM, "%s: out of memory", sw_elf_path(e));
        } else {
            pthread_mutex_init(&m->lock, NULL);
            m->elf = e;
            m->next = mc->modules;
            mc->modules = m;
        }
    }
    pthread_mutex_unlock(&mc->lock);
    if (rc == 0)
        *out = m;
    return rc;
}

struct sw_elf *
sw_module_elf(const struct sw_module *m)
{
    return m->elf;
}

/* The file's bytes when it is an image read from memory (the vDSO). */
static bool
module_image(const struct sw_module *m, const uint8_t **data, size_t *len)
{
    sw_elf_image(m->elf, data, len);
    return *data != NULL;
}

int
sw_module_dinfo(struct sw_module *m, struct sw_dinfo **d, struct sw_errbuf *err)
{
    struct sw_errbuf oerr = { 0 };
    const uint8_t *image;
    size_t len;
    int rc = 0;

    pthread_mutex_lock(&m->lock);
    if (!m->dinfo_tried && !module_image(m, &image, &len)) {
        const char *path = sw_elf_path(m->elf);
        rc = sw_dinfo_open(path, sw_elf_dwarf_path(m->elf), m->elf, &m->dinfo, &oerr);
        if (rc < 0 && rc != SW_ENOMEM) {
            /* Remembered: a file whose DWARF is bad is not retried at every frame. */
            sw_debug(SW_DBG_STEP, "virtual frames: %s", oerr.msg);
            m->dinfo = NULL;
            rc = 0;
        }
    }
    if (rc == 0)
        m->dinfo_tried = true;
    *d = m->dinfo;
    pthread_mutex_unlock(&m->lock);
    if (rc != 0)
        return sw_fail(err, rc, "%s", oerr.msg);
    return 0;
}

int
sw_module_cfi(struct sw_module *m, unsigned word_size, struct sw_cfi **cfi,
              const struct sw_errbuf **why)
{
    const uint8_t *image;
    size_t len;
    int rc = 0;

    *cfi = NULL;
    *why = &m->cfi_why;
    pthread_mutex_lock(&m->lock);
    if (!m->cfi_tried) {
        const char *path = sw_elf_path(m->elf);
        sw_err_clear(&m->cfi_why);
        rc = module_image(m, &image, &len)
                 ? sw_cfi_open_mem(image, len, path, word_size, &m->cfi, &m->cfi_why)
                 : sw_cfi_open(path, sw_elf_dwarf_path(m->elf), word_size, &m->cfi, &m->cfi_why);
        if (rc < 0)
            m->cfi = NULL;
        if (rc != SW_ENOMEM) {
            m->cfi_tried = true;
            sw_debug(SW_DBG_CACHE, "elf: CFI of %s: %s", path, rc < 0 ? m->cfi_why.msg : "opened");
            rc = 0;
        }
    }
    *cfi = m->cfi;
    pthread_mutex_unlock(&m->lock);
    return rc;
}
