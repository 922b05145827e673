/* rspwalk/walker.h -- Walker: walks the stacks of one process.
 *
 * A walker owns its ProcessState, StepperGroup, LibraryState and
 * SymbolLookup.  Walks always end: bounded depth, stack pointers that move
 * outward (signal frames excepted) and no repeated frame.
 *
 * Threads: walkers are independent: different walkers may walk on different
 * threads at once (a server walking many targets: a walker per target, each
 * on its thread), also when they share one module cache
 * (sw_walker_config.modcache), the one object several walkers use at the
 * same time.  One walker, with everything it owns or hands out (its process,
 * stepper group, library state, symbol lookup, the sw_lib pointers and
 * names it returns), is used by one thread at a time; walkers of one walker
 * set that share a link count as one (rspwalk/walker_set.h).  sw_version,
 * sw_walk_end_name and the sw_stack functions (on stacks no other thread
 * touches) may be called from any thread.
 */
#ifndef RSPWALK_WALKER_H
#define RSPWALK_WALKER_H

#include "rspwalk/frame.h"
#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_walker;
struct sw_proc;
struct sw_stepper;
struct sw_stepper_group;
struct sw_libstate;
struct sw_symlookup;
struct sw_symbol;
struct sw_modcache;

/* Why a walk stopped. */
enum sw_walk_end {
    SW_END_NONE = 0,   /* not walked yet */
    SW_END_BOTTOM,     /* the bottom of the stack was reached */
    SW_END_NO_STEPPER, /* no stepper could find the caller */
    SW_END_MEMORY,     /* the caller's frame lies in memory that cannot be read */
    SW_END_DEPTH,      /* the frame limit was reached */
    SW_END_CORRUPT,    /* a stepper produced a frame that does not move outward */
    SW_END_LINK,       /* the link to the target failed (timeout, hang-up) */
};

/* A walked stack: frames[0] is the top. */
struct sw_stack {
    struct sw_frame *frames; /* owned: n frames */
    size_t n, cap;
    enum sw_walk_end end;
};

SW_API void sw_stack_init(struct sw_stack *st);
SW_API void sw_stack_fini(struct sw_stack *st);

/* The name of END: "bottom", "no-stepper", "memory", "depth", "corrupt", "link". */
SW_API const char *sw_walk_end_name(enum sw_walk_end end);

/* How a walker works.  Every member's zero is its default, so a zeroed
 * config (or NULL) means the defaults. */
struct sw_walker_config {
    const char *sysroot;      /* where target libraries are found locally; NULL: none */
    const char *exe;          /* local executable; NULL: ask the target */
    const char *debug_dir;    /* separate debug files; NULL: /usr/lib/debug */
    const char *lib_path;     /* sw_libstate_config's: where else to look; NULL: nowhere */
    size_t max_frames;        /* 0: the default, 4096 */
    bool no_default_steppers; /* start with an empty stepper group; default false */
    bool no_virtual_frames;   /* physical frames only (no inline or tail-call frames);
                               * default false */
    /* Files read from the target, kept by build-id (sw_libstate_config's
     * cache_dir: NULL the XDG default, "" never fetch). */
    const char *cache_dir;
    /* sw_libstate_config's modcache: local files, their CFI and DWARF
     * shared with other walkers, which may walk in other threads at the
     * same time.  NULL (the default): a cache of this walker's own. */
    struct sw_modcache *modcache;
    /* sw_libstate_config's cache_max_bytes: CACHE_DIR's size limit; 0:
     * 1 GiB. */
    uint64_t cache_max_bytes;
    /* sw_libstate_config's no_jit: code registered through the GDB JIT
     * interface is not read (rspwalk --no-jit). */
    bool no_jit;
    /* sw_libstate_config's no_maps: the target's memory map is not read
     * (rspwalk --no-maps). */
    bool no_maps;
};

/* Fill CFG with the defaults (all zero). */
SW_API void sw_walker_config_init(struct sw_walker_config *cfg);

/* A walker over PROC, which it takes over (freed by sw_walker_free, also on
 * failure).  The default steppers are added unless the configuration says
 * otherwise.  Returns 0, SW_EINVAL, SW_ENOMEM; *OUT: caller frees with
 * sw_walker_free.  ERR (may be NULL) receives the message on failure. */
SW_API int sw_walker_new(struct sw_proc *proc, const struct sw_walker_config *cfg,
                         struct sw_walker **out, struct sw_errbuf *err);

/* Free W, its steppers, process state, library state and symbol lookup. */
SW_API void sw_walker_free(struct sw_walker *w);

/* The message of the last failure on W; valid until the next call on W. */
SW_API const char *sw_walker_errmsg(const struct sw_walker *w);

/* walkStack: walk thread TID (SW_TID_DEFAULT: the default thread) into ST,
 * which is reset first.  Returns 0 whenever at least the top frame was found
 * (ST->end says why the walk stopped), or an error.  Unless the configuration
 * says no_virtual_frames, ST then also holds the frames gdb shows from DWARF
 * debug information: SW_FRAME_INLINE and SW_FRAME_TAILCALL (frame.h).
 * When the process has stopped again since the library state was read
 * (sw_proc.stop_gen moved), the state is refreshed first, which reaches every
 * stepper's library_changed and ends the life of earlier sw_lib pointers
 * and symbol module names. */
SW_API int sw_walk_stack(struct sw_walker *w, sw_tid tid, struct sw_stack *st);

/* walkStackFromFrame: walk from FRAME (copied to ST->frames[0]). */
SW_API int sw_walk_from_frame(struct sw_walker *w, const struct sw_frame *frame,
                              struct sw_stack *st);

/* walkSingleFrame: the caller of IN.  Returns 0 with *OUT set, or a negative
 * code; *END (may be NULL) says why there is no caller: SW_END_BOTTOM when IN
 * is the bottom (then the code is SW_ENOENT). */
SW_API int sw_walk_single(struct sw_walker *w, const struct sw_frame *in, struct sw_frame *out,
                          enum sw_walk_end *end);

/* getInitialFrame: the top frame of thread TID from its registers. */
SW_API int sw_initial_frame(struct sw_walker *w, sw_tid tid, struct sw_frame *out);

/* getAvailableThreads: up to MAX thread ids in TIDS, their number in *N. */
SW_API int sw_threads(struct sw_walker *w, sw_tid *tids, size_t max, size_t *n);

/* An rspwalk addition (StackwalkerAPI has no such call): the N threads TIDS
 * are walked next.  The process state may fetch what their walks start with
 * ahead, together (sw_proc_ops.prefetch_threads; the RSP backend under
 * gdbserver: every thread's registers in one round trip and the stack at
 * each one's SP in a second, where each walk alone would cost two).  Walks
 * are the same with or without it.  Returns 0 (also where the process state
 * has nothing to fetch ahead) or a link error with the message in W. */
SW_API int sw_walker_prefetch(struct sw_walker *w, const sw_tid *tids, size_t n);

/* addStepper: add S and let it register its ranges.  W takes S over, also
 * when this fails (S is freed at once, or with W when only its registration
 * failed): never sw_stepper_free it afterwards.  Returns 0,
 * SW_EINVAL (no name or caller_frame), SW_ENOMEM, or the failure of its
 * group_registered; the message on W. */
SW_API int sw_add_stepper(struct sw_walker *w, struct sw_stepper *s);

/* version: the library's version. */
SW_API void sw_version(int *major, int *minor, int *maintenance);

/* The parts; borrowed, valid until sw_walker_free. */
SW_API struct sw_proc *sw_walker_proc(struct sw_walker *w);
SW_API struct sw_stepper_group *sw_walker_group(struct sw_walker *w);
SW_API struct sw_libstate *sw_walker_libstate(struct sw_walker *w);
SW_API struct sw_symlookup *sw_walker_symlookup(struct sw_walker *w);

/* getName: the function covering F's lookup PC.  Returns 0, SW_ENOSYM. */
SW_API int sw_frame_symbol(struct sw_walker *w, const struct sw_frame *f, struct sw_symbol *out);

/* getLibOffset: F's module and the offset of its RA from the module's bias. */
SW_API int sw_frame_lib_offset(struct sw_walker *w, const struct sw_frame *f, const char **lib,
                               sw_addr *offset);

/* Where a frame is in the source, as gdb's backtrace prints it after "at". */
struct sw_source_line {
    const char *file; /* as the line table names it: absolute, or relative to DIR */
    const char *dir;  /* the compilation directory (DW_AT_comp_dir); NULL if none */
    unsigned line;    /* from 1 */
};

/* An rspwalk addition: the source file and line of frame FRAME_INDEX of
 * STACK from its module's DWARF.  The innermost frame at a pc (frame 0, a
 * caller, or the innermost inline frame of one) has the line-table row of
 * its lookup pc (sw_frame_lookup_pc); a frame that code was inlined into (an
 * outer inline frame, or the physical frame after inline frames) has the
 * call site of the inlined subroutine just inside it.  Signal frames have
 * none.  The strings in *OUT are borrowed, valid until W's library state is
 * refreshed (the next walk after a stop) or W is freed.  Returns 0,
 * SW_EINVAL (a NULL argument, an index past the stack), SW_ENOSYM (no debug
 * information or no line covers the frame; message on W), SW_ENOMEM. */
SW_API int sw_frame_source(struct sw_walker *w, const struct sw_stack *stack, size_t frame_index,
                           struct sw_source_line *out);

/* Record a failure on W from inside a stepper or backend: returns CODE. */
SW_API int sw_walker_fail(struct sw_walker *w, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_WALKER_H */
