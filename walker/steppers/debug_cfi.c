/* walker/steppers/debug_cfi.c -- DebugStepper: callers from DWARF call frame information.
 *
 * Finds the module covering the frame's lookup PC, opens its CFI once
 * (.eh_frame, .debug_frame, the separate debug file's .debug_frame; for the
 * vDSO, which has no file, those of its image read from target memory) and
 * applies the row there (debug_step.c).  Priority 0x10040: after the signal
 * handler stepper, before the frame-pointer one.
 */
#include "rspwalk/stepper.h"

#include <inttypes.h>
#include <string.h>

#include "walker/steppers/debug_internal.h"
#include "walker/walker_internal.h"

/* One file's CFI, or why it has none (so a file without CFI is opened once). */
struct debug_file {
    char *path;           /* owned: the local file, or the module's name for an image */
    const uint8_t *image; /* the cache key with PATH for an in-memory image (the vDSO):
                             borrowed from the library state, compared, never read */
    struct sw_cfi *cfi;   /* owned; NULL when opening failed */
    struct sw_errbuf why;
};

struct debug_stepper {
    struct sw_stepper base;
    struct debug_file *files; /* owned: nfiles entries */
    size_t nfiles, capfiles;
};

/* The name LIB's CFI is cached under: its local file, else (an image read
 * from target memory, the vDSO) its name. */
static const char *
debug_key(const struct sw_lib *lib)
{
    return lib->path ? lib->path : lib->name;
}

static bool
debug_file_is(const struct debug_file *f, const struct sw_lib *lib)
{
    const uint8_t *image = lib->path ? NULL : lib->image;
    return f->image == image && strcmp(f->path, debug_key(lib)) == 0;
}

/* The CFI of LIB, opened on first use: from its file, or from its image in
 * memory.  Returns 0 with *CFI (NULL when the module has none: *WHY says
 * why) or SW_ENOMEM. */
static int
debug_cfi_of(struct debug_stepper *ds, const struct sw_lib *lib, unsigned word_size,
             struct sw_cfi **cfi, const struct sw_errbuf **why)
{
    for (size_t i = 0; i < ds->nfiles; i++) {
        if (debug_file_is(&ds->files[i], lib)) {
            *cfi = ds->files[i].cfi;
            *why = &ds->files[i].why;
            return 0;
        }
    }
    if (ds->nfiles == ds->capfiles) {
        size_t cap = ds->capfiles ? 2 * ds->capfiles : 8;
        struct debug_file *nf = sw_realloc(ds->files, cap * sizeof *nf);
        if (nf == NULL)
            return SW_ENOMEM;
        ds->files = nf;
        ds->capfiles = cap;
    }
    struct debug_file *f = &ds->files[ds->nfiles];
    memset(f, 0, sizeof *f);
    f->path = sw_strdup(debug_key(lib));
    if (f->path == NULL)
        return SW_ENOMEM;
    int rc;
    if (lib->path) {
        /* The uncompressed copy in the cache directory where there is one:
         * libdwarf would inflate the debug file's sections on every run. */
        const char *debug_path = lib->elf ? sw_elf_dwarf_path(lib->elf) : NULL;
        rc = sw_cfi_open(lib->path, debug_path, word_size, &f->cfi, &f->why);
    } else {
        f->image = lib->image;
        rc = sw_cfi_open_mem(lib->image, lib->image_len, lib->name, word_size, &f->cfi, &f->why);
    }
    if (rc == SW_ENOMEM) {
        sw_free(f->path);
        return rc;
    }
    if (rc < 0)
        f->cfi = NULL;
    sw_debug(SW_DBG_CACHE, "debug: CFI of %s: %s\n", f->path, rc < 0 ? f->why.msg : "opened");
    ds->nfiles++;
    *cfi = f->cfi;
    *why = &f->why;
    return 0;
}

static enum sw_gcf
debug_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct debug_stepper *ds = (struct debug_stepper *)s;
    struct sw_walker *w = s->walker;
    struct sw_proc *p = sw_walker_proc(w);
    const struct sw_lib *lib;
    const struct sw_errbuf *why;
    struct sw_cfi *cfi;
    struct sw_errbuf err;
    struct sw_frame f;
    sw_addr pc = sw_frame_lookup_pc(in);

    if (sw_libstate_lib_at(sw_walker_libstate(w), pc, &lib) < 0 ||
        (lib->path == NULL && lib->image == NULL))
        return SW_GCF_NOT_ME;
    if (debug_cfi_of(ds, lib, p->arch->word_size, &cfi, &why) < 0) {
        sw_walker_fail(w, SW_ENOMEM, "opening the CFI of %s for 0x%" PRIx64 ": out of memory",
                       debug_key(lib), pc);
        return SW_GCF_ERROR;
    }
    if (cfi == NULL)
        return SW_GCF_NOT_ME;

    sw_err_clear(&err);
    enum sw_gcf r = sw_debug_step_with_cfi(p->arch, p, cfi, lib->bias, in, &f, &err);
    if (r == SW_GCF_NOT_ME && sw_walker_frame_lazy(w, in)) {
        /* The row needs a register frame 0 did not read (a CFA in rbx, the
         * RA in x30): again with every lazy register filled in. */
        struct sw_frame full = *in;
        int rc = sw_walker_fill_lazy(w, &full);
        if (rc < 0)
            return SW_GCF_ERROR;
        sw_err_clear(&err);
        r = sw_debug_step_with_cfi(p->arch, p, cfi, lib->bias, &full, &f, &err);
    }
    switch (r) {
    case SW_GCF_SUCCESS:
        f.stepper = s;
        *out = f;
        break;
    case SW_GCF_ERROR:
        sw_walker_fail(w, err.code ? err.code : SW_EIO, "%s (%s)", err.msg, debug_key(lib));
        break;
    case SW_GCF_NOT_ME:
        sw_debug(SW_DBG_STEP, "debug: %s (%s)\n", err.msg, debug_key(lib));
        break;
    case SW_GCF_STACKBOTTOM:
        break;
    }
    return r;
}

static void
debug_library_changed(struct sw_stepper *s, const struct sw_lib *lib, enum sw_lib_change change)
{
    struct debug_stepper *ds = (struct debug_stepper *)s;

    /* A file replaced on disk between loads would keep stale CFI; drop it
     * on unload so the next load reads it again. */
    if (change != SW_LIB_UNLOAD || lib == NULL || (lib->path == NULL && lib->name == NULL))
        return;
    for (size_t i = 0; i < ds->nfiles; i++) {
        if (debug_file_is(&ds->files[i], lib)) {
            sw_cfi_close(ds->files[i].cfi);
            sw_free(ds->files[i].path);
            ds->files[i] = ds->files[--ds->nfiles];
            return;
        }
    }
}

static void
debug_destroy(struct sw_stepper *s)
{
    struct debug_stepper *ds = (struct debug_stepper *)s;
    for (size_t i = 0; i < ds->nfiles; i++) {
        sw_cfi_close(ds->files[i].cfi);
        sw_free(ds->files[i].path);
    }
    sw_free(ds->files);
    sw_free(ds);
}

static const struct sw_stepper_ops debug_ops = {
    .name = "debug",
    .priority = SW_PRIO_DEBUG,
    .caller_frame = debug_caller_frame,
    .library_changed = debug_library_changed,
    .destroy = debug_destroy,
};

struct sw_stepper *
sw_stepper_debug_new(void)
{
    struct debug_stepper *ds = sw_calloc(1, sizeof *ds);
    if (ds == NULL)
        return NULL;
    ds->base.ops = &debug_ops;
    return &ds->base;
}
