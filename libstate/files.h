/* libstate/files.h -- the LibraryState object and each module's local file.
 *
 * Shared by libstate/libstate.c (the module list: where each module is) and
 * libstate/files.c (which local file each module is read from:
 * found under the sysroot, checked against the target, or fetched from it).
 * Included only by those two and their tests.
 */
#ifndef RSPWALK_LIBSTATE_FILES_H
#define RSPWALK_LIBSTATE_FILES_H

#include "rspwalk/libstate.h"
#include "libstate/lib.h"
#include "util/util.h"

/* A target path and the local file chosen for it (owned; NULL: none). */
struct resolved {
    char *target, *path;
};

struct sw_libstate {
    struct sw_proc *proc;
    struct sw_modcache *mc;    /* a reference: its own, or one shared with others */
    struct sw_elfcache *cache; /* borrowed: MC's */
    struct sw_elf *vdso;       /* the vDSO's image once read (in CACHE), NULL: not yet */
    char *sysroot;             /* NULL: none */
    char *lib_path;            /* directories searched by file name, ':'-separated; NULL: none */
    char *exe;                 /* NULL: ask the target */
    char *cache_dir;           /* files fetched from the target; NULL: none */
    uint64_t cache_max_bytes;  /* CACHE_DIR's size limit; 0: the default */
    /* Target files already matched to a local file (PATH NULL: none), so a
     * refresh asks the target about each file once. */
    void *resolved; /* tsearch tree of struct resolved, each owned; sw_ls_resolved_free */
    size_t nresolved;
    char **warnings; /* owned: messages about local files not used, limits hit */
    size_t nwarnings, warnings_cap;
    size_t max_modules;        /* sw_libstate_config's, defaults applied */
    uint64_t max_fetch_bytes;  /* the same */
    struct sw_lib_entry *libs; /* each module, its PUB handed out */
    size_t nlibs;
    sw_lib_change_cb cb;
    void *cb_arg;
    sw_addr lib_trap; /* r_debug.r_brk, 0 when unknown; valid when TRAP_READ */
    bool trap_read;   /* LIB_TRAP read since the last refresh */
    /* The link map as the last refresh read it, checked at later stops
     * (sw_libstate_update); NULL when there is nothing to check by. */
    struct sw_rdebug_entry *watch; /* owned */
    size_t nwatch;
    /* Code generated at run time, listed through the GDB JIT interface
     * (libstate/jit.h): owned, NULL until the first refresh looks; never
     * with NO_JIT. */
    struct sw_ls_jit *jit;
    bool no_jit;
    /* Executable ranges of the target's memory map (libstate/maps.h): owned,
     * sorted; read at a miss, at most once per stop generation MAPS_GEN. */
    struct sw_maps_range *maps;
    size_t nmaps;
    uint64_t maps_gen;
    uint64_t maps_reads; /* how many times the map was read */
    bool maps_read;      /* MAPS_GEN is valid: read since the last refresh */
    bool maps_failed;    /* the target cannot serve it: not asked again */
    bool no_maps;
    struct sw_errbuf err;
};

/* The local file for the target's file TARGET (a listed module, the
 * executable or dynamic linker the target names): under the sysroot, else
 * (or when that file is another build) the target's copy fetched into the
 * cache.  *PATH (owned) and *ELF are NULL when there is none.  Each target
 * path is looked at once per library state.  With DEFER, a local file that
 * can be checked in target memory (its build-id note is in a loaded
 * segment) is returned unchecked with *DEFERRED set: the caller places it
 * and hands it to sw_ls_check_files.  Returns 0, SW_ENOMEM or a link error
 * (message on LS). */
int sw_ls_resolve(struct sw_libstate *ls, const char *target, bool defer, char **path,
                  struct sw_elf **elf, bool *deferred);

/* Keep MSG for sw_libstate_warnings (past SW_LS_MAX_WARNINGS, one last
 * line says that more were dropped).  Returns 0 or SW_ENOMEM. */
int sw_ls_warn(struct sw_libstate *ls, const char *msg);

/* Free LS's remembered target files (sw_ls_resolve); LS stays usable. */
void sw_ls_resolved_free(struct sw_libstate *ls);

/* A module whose local file waits for its check (sw_ls_resolve's DEFER). */
struct sw_ls_check {
    size_t lib;   /* index in the LIBS given to sw_ls_check_files */
    char *target; /* owned: the target's path of the file */
    bool changed; /* out: LIB's file was dropped or replaced (place it again) */
};

/* Check the local files of LIBS[CHECKS[i].lib], placed at their bias, all
 * at once: each build-id note is read from target memory where the file
 * puts it (one round trip for them all where the backend batches), and while
 * that round trip is under way the symbol tables of LIBS[0..NLIBS) are read
 * (a walk names frames in them next; a file the check drops was read for
 * nothing, harmlessly).  WARM,
 * when not 0, is an address read soon after (the vDSO's image): asked for
 * in the same batch as a read to come (sw_mem_req without a buffer), also
 * when N is 0.  A note
 * that matches confirms the file; a readable note of another build-id drops
 * the file (a warning) and fetches the target's copy where read_file and a
 * cache directory allow; a note that cannot be read or recognised is left
 * to read_file's check, as an undeferred file.  Returns 0, SW_ENOMEM or a
 * link error (message on LS). */
int sw_ls_check_files(struct sw_libstate *ls, struct sw_lib_entry *libs, struct sw_ls_check *checks,
                      size_t n, sw_addr warm, size_t nlibs);

#endif /* RSPWALK_LIBSTATE_FILES_H */
