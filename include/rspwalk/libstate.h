/* rspwalk/libstate.h -- LibraryState: the modules loaded in the target.
 *
 * Built from what the ProcessState reports (libraries-svr4), the executable
 * (--exe, else the stub's exec-file) and the auxiliary vector (the PIE load
 * bias; the dynamic linker at AT_BASE and the vDSO at AT_SYSINFO_EHDR when
 * the list lacks them); each module resolved to a local file under the
 * sysroot, except the vDSO, whose image is read from target memory.
 *
 * Threads: a library state is used by one thread at a time (its walker's);
 * different library states may be used on different threads at once.  The
 * files it reads -- each with its symbols, call frame information and DWARF
 * -- are kept in a module cache, which several library states may share
 * from as many threads at once (sw_libstate_config.modcache).
 */
#ifndef RSPWALK_LIBSTATE_H
#define RSPWALK_LIBSTATE_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_proc;
struct sw_libstate;
struct sw_modcache;

/* One loaded module (StackwalkerAPI's LibAddrPair, grown).  Only a library
 * state makes these: it hands out pointers to the ones it holds, with more
 * of its own about each module kept alongside. */
struct sw_lib {
    char *name;    /* owned: the target's path, or "[vdso]" */
    char *path;    /* owned: the local file read for it; NULL if none was found */
    sw_addr bias;  /* load displacement: runtime address = link-time address + bias */
    sw_addr start; /* lowest runtime address of its PT_LOAD segments */
    sw_addr end;   /* one past the highest */
    sw_addr l_ld;  /* runtime address of PT_DYNAMIC, 0 if unknown */
    bool is_exe;   /* the main executable */
};

/* Where a library state finds files.  Every member's zero is its default,
 * so a zeroed config (or NULL) means the defaults. */
struct sw_libstate_config {
    const char *sysroot;   /* prefix for target paths; NULL or "" for none */
    const char *exe;       /* local executable, overriding the stub's exec-file; NULL: none */
    const char *debug_dir; /* separate debug files; NULL means /usr/lib/debug */
    /* Directories (colon-separated) searched for a module missing under
     * the sysroot, by its file name alone, in order (gdb's
     * solib-search-path); the file found is checked against the target
     * like any other.  NULL or "": none. */
    const char *lib_path;
    /* Where files read from the target are kept, as CACHE_DIR/<build-id
     * hex>/<basename>: a module whose file is missing under the sysroot,
     * or is another build than the target's (its build-id differs), is read
     * through the ProcessState's read_file when it offers one.  NULL:
     * $XDG_CACHE_HOME/rspwalk, else $HOME/.cache/rspwalk; "": never fetch. */
    const char *cache_dir;
    /* The module cache to read local files through, shared with other
     * library states (this one takes a reference of its own: the caller may
     * free its own at once).  Its debug and cache directories apply:
     * DEBUG_DIR is not used, CACHE_DIR only for fetching.  NULL (the
     * default): a cache of this library state's own, from DEBUG_DIR and
     * CACHE_DIR. */
    struct sw_modcache *modcache;
    /* The most bytes CACHE_DIR holds: after each file fetched into it, the
     * entries least recently used are removed until it holds no more.  0:
     * 1 GiB. */
    uint64_t cache_max_bytes;
    /* What the target and its files may make this library state hold (0 in
     * a member: its default).  Past a limit the walk goes on with what it
     * has, and sw_libstate_warnings says what was left out. */
    size_t max_modules;       /* modules listed: default SW_LS_MAX_MODULES */
    uint64_t max_fetch_bytes; /* one file read from the target: default SW_LS_MAX_FETCH_BYTES */
    /* One compressed section inflated (its own modcache only; a shared one
     * keeps its own, sw_modcache_set_inflate_limits): default 512 MiB, and
     * at most MAX_INFLATE_RATIO (default 100) times its compressed size. */
    uint64_t max_inflate_bytes;
    unsigned max_inflate_ratio;
    /* Do not read the GDB JIT interface (__jit_debug_descriptor and the ELF
     * objects it lists): code generated at run time is then in no module. */
    bool no_jit;
    /* Do not read the target's memory map (/proc/PID/maps through the
     * ProcessState's read_file): executable memory in no module (V8's
     * compiled code, a JIT's anonymous buffer) is then unknown code. */
    bool no_maps;
};

/* The default most modules a library state lists: a large program maps a
 * few thousand; a link map or a stub's list longer than this is a loop or
 * a lie, and every module costs a file lookup. */
#define SW_LS_MAX_MODULES 32768u
/* The default most bytes read of one file from the target: more than any
 * shared library Debian ships (libxul, about 150 MB), and a bound on what
 * a stub whose reads never reach the end of the file costs. */
#define SW_LS_MAX_FETCH_BYTES (256ull * 1024 * 1024)

/* Fill CFG with the defaults (all zero). */
SW_API void sw_libstate_config_init(struct sw_libstate_config *cfg);

/* A module cache: the local files walks read, each opened once with its
 * symbols, call frame information and DWARF, for library states (and so
 * walkers) to share -- one walker per target, each in a thread of its own,
 * every file parsed once.  DEBUG_DIR and CACHE_DIR as sw_libstate_config's
 * (here CACHE_DIR is where uncompressed copies of debug files are kept).
 * May be used from several threads at once.  Returns 0, SW_EINVAL or
 * SW_ENOMEM.  *OUT: the caller's reference, dropped with sw_modcache_free. */
SW_API int sw_modcache_new(const char *debug_dir, const char *cache_dir, struct sw_modcache **out);

/* Drop a reference to MC: it is freed with the last one (the library states
 * given it hold one each).  NULL is a no-op. */
SW_API void sw_modcache_free(struct sw_modcache *mc);

/* The limits on inflating the compressed sections of MC's files: one
 * section at most MAX_BYTES once inflated and at most MAX_RATIO times its
 * compressed size (0: the defaults, 512 MiB and 100).  A section over them
 * is not read (a warning, the walk goes on without it).  Before MC is
 * shared or used. */
SW_API void sw_modcache_set_inflate_limits(struct sw_modcache *mc, uint64_t max_bytes,
                                           unsigned max_ratio);

/* A new library state over P (borrowed: must outlive it).  Nothing is read
 * from the target until sw_libstate_refresh.  Returns 0, SW_ENOMEM.
 * *OUT: caller frees with sw_libstate_free. */
SW_API int sw_libstate_new(struct sw_proc *p, const struct sw_libstate_config *cfg,
                           struct sw_libstate **out);

/* Free LS and every module and ELF file it holds.  NULL is a no-op. */
SW_API void sw_libstate_free(struct sw_libstate *ls);

/* notifyOfUpdate: read the module list from the target again.  Returns 0, or
 * an error when even the executable cannot be placed or the link fails
 * (reading the list, the auxiliary vector or the vDSO).  A module without a
 * usable file, or a vDSO that cannot be read, is listed without symbols. */
SW_API int sw_libstate_refresh(struct sw_libstate *ls);

/* The list as it is at this stop, read again only when it may have
 * changed: the link map's entries as the last refresh found them (each
 * one's link_map address, load address and neighbours) are read and
 * compared, and only a difference (dlopen, dlclose) or a list that gave
 * nothing to compare by makes it sw_libstate_refresh.  The reads are the
 * process's stop_reads (rspwalk/proc.h): the RSP backend fetches them with a
 * stop's first reads, so an unchanged list costs no round trip.  Returns as
 * sw_libstate_refresh. */
SW_API int sw_libstate_update(struct sw_libstate *ls);

/* getLibraryAtAddr: the module whose segments cover ADDR, else the in-memory
 * object of code generated at run time that covers it ("[jit 0xADDR]", from
 * the GDB JIT interface; not counted by sw_libstate_count).  *LIB is valid
 * until the next refresh or update.  Returns 0 or SW_ENOENT. */
SW_API int sw_libstate_lib_at(struct sw_libstate *ls, sw_addr addr, const struct sw_lib **lib);

/* Whether ADDR lies in executable memory of the target's memory map
 * (/proc/PID/maps, read through the ProcessState's read_file, RSP Host
 * I/O): code in no module, as V8's compiled code or a JIT's anonymous
 * buffer, which a walk may pass through.  Ask after sw_libstate_lib_at
 * found no module.  The map is read when ADDR is in none of the ranges
 * last read, at most once per stop (sw_proc.stop_gen) and once after each
 * refresh; never with no_maps, without read_file, or for a target without
 * a process id or with QEMU user mode's 1 (its /proc is the host's QEMU).
 * Returns 0, SW_ENOENT (not in one, or no map), or a link error. */
SW_API int sw_libstate_exec_at(struct sw_libstate *ls, sw_addr addr);

/* How many times LS has read the target's memory map. */
SW_API uint64_t sw_libstate_maps_reads(const struct sw_libstate *ls);

/* getLibraries: the number of modules, and module I (0 <= I < that number;
 * NULL past it), in the order read: the executable first when it is known.
 * Both valid until the next refresh. */
SW_API size_t sw_libstate_count(const struct sw_libstate *ls);
SW_API const struct sw_lib *sw_libstate_lib(const struct sw_libstate *ls, size_t i);

/* getLibOffset: the module covering ADDR and ADDR's offset from its bias. */
SW_API int sw_libstate_lib_offset(struct sw_libstate *ls, sw_addr addr, const char **name,
                                  sw_addr *offset);

/* getLibTrapAddress: r_debug.r_brk, the function the dynamic linker calls
 * before and after every load and unload (a breakpoint there sees dlopen
 * and dlclose).  From the link-map walk when the list came from it (QEMU
 * user), else read through the executable's DT_DEBUG on the first call
 * after a refresh.  Returns 0, SW_ENOENT when unknown (a static program,
 * or the dynamic linker has not run yet: refresh after the next stop), or a
 * link error. */
SW_API int sw_libstate_trap_address(struct sw_libstate *ls, sw_addr *addr);

/* Messages about local files found but not used, one per file, in the
 * order seen ("/lib/x86_64-linux-gnu/libc.so.6: local file's build-id
 * differs from the target's; not used"); each file is checked once per
 * library state.  Returns their number; *MSGS is borrowed, valid until the
 * next refresh (earlier messages keep their index). */
SW_API size_t sw_libstate_warnings(const struct sw_libstate *ls, const char *const **msgs);

/* The message of the last failure; valid until the next call on LS. */
SW_API const char *sw_libstate_errmsg(const struct sw_libstate *ls);

/* What a refresh saw happen to a module. */
enum sw_lib_change {
    SW_LIB_LOAD = 0, /* added to the list */
    SW_LIB_UNLOAD,   /* dropped from it */
};

/* Callback for a load or unload seen by a refresh. */
typedef void (*sw_lib_change_cb)(void *arg, const struct sw_lib *lib, enum sw_lib_change change);

/* Call CB for every module that a refresh adds (SW_LIB_LOAD) or drops
 * (SW_LIB_UNLOAD). */
SW_API void sw_libstate_set_change_cb(struct sw_libstate *ls, sw_lib_change_cb cb, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_LIBSTATE_H */
