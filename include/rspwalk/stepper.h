/* rspwalk/stepper.h -- FrameStepper and StepperGroup.
 *
 * A stepper knows one kind of frame and computes its caller.  The group maps
 * address ranges to steppers and tries them in priority order (lower first).
 *
 * Threads: a stepper and a stepper group belong to one walker and are used
 * on the thread that uses it, one at a time; caller_frame needs no locks.
 * The constructors and sw_stepper_default_name may be called from any
 * thread.  An ops table is read-only and may serve steppers on many threads.
 */
#ifndef RSPWALK_STEPPER_H
#define RSPWALK_STEPPER_H

#include "rspwalk/frame.h"
#include "rspwalk/libstate.h"
#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_walker;
struct sw_stepper;
struct sw_stepper_group;

enum sw_gcf {
    SW_GCF_SUCCESS = 0, /* *OUT is the caller of IN */
    SW_GCF_STACKBOTTOM, /* IN is the outermost frame: the walk ends normally */
    SW_GCF_NOT_ME,      /* this stepper cannot handle IN; the group tries the next */
    SW_GCF_ERROR,       /* the walk must stop; the reason is on the walker */
};

/* StackwalkerAPI's priorities of its default steppers; lower values run first. */
enum {
    SW_PRIO_STACKBOTTOM = 0x10000,
    SW_PRIO_SIGHANDLER = 0x10020,
    SW_PRIO_DEBUG = 0x10040,
    SW_PRIO_EHABI = 0x10048, /* ARM's .ARM.exidx tables: after the DWARF CFI */
    SW_PRIO_FRAME_FUNC = 0x10050,
    SW_PRIO_ANALYSIS = 0x10058,
    SW_PRIO_WANDERER = 0x10060,
};

/* Operations of a stepper.  Borrowed: the table must outlive the stepper. */
struct sw_stepper_ops {
    const char *name;  /* REQUIRED: "frame-func"; also the JSON "stepper" value */
    unsigned priority; /* REQUIRED: one of SW_PRIO_* or a value between them */

    /* REQUIRED.  Compute the caller of IN.  Writes *OUT only on
     * SW_GCF_SUCCESS.  Target memory that cannot be read means NOT_ME; a dead
     * link or a timeout means ERROR, with the message left on the walker. */
    enum sw_gcf (*caller_frame)(struct sw_stepper *s, const struct sw_frame *in,
                                struct sw_frame *out);

    /* OPTIONAL (default: register for the whole address space).  Register
     * the address ranges this stepper handles with sw_stepper_group_add. */
    int (*group_registered)(struct sw_stepper *s, struct sw_stepper_group *g);

    /* OPTIONAL (default: ignore).  LIB was loaded or unloaded. */
    void (*library_changed)(struct sw_stepper *s, const struct sw_lib *lib,
                            enum sw_lib_change change);

    /* OPTIONAL (default: free(S)).  Release the stepper and what it owns. */
    void (*destroy)(struct sw_stepper *s);
};

/* The base every stepper embeds first. */
struct sw_stepper {
    const struct sw_stepper_ops *ops; /* borrowed, static */
    struct sw_walker *walker;         /* borrowed: set by sw_add_stepper */
};

/* Register S for addresses [START, END) in G.  Returns 0 or SW_ENOMEM. */
SW_API int sw_stepper_group_add(struct sw_stepper_group *g, struct sw_stepper *s, sw_addr start,
                                sw_addr end);

/* Remove every range S registered in G. */
SW_API void sw_stepper_group_remove(struct sw_stepper_group *g, struct sw_stepper *s);

/* The next stepper to try for ADDR after LAST_TRIED (NULL for the first):
 * steppers whose ranges cover ADDR, in ascending priority, ties in the order
 * they were added.  Returns NULL when none is left. */
SW_API struct sw_stepper *sw_stepper_group_find(const struct sw_stepper_group *g, sw_addr addr,
                                                const struct sw_stepper *last_tried);

/* Store up to MAX registered steppers in OUT (in priority order) and their
 * number in *N. */
SW_API void sw_stepper_group_steppers(const struct sw_stepper_group *g, struct sw_stepper **out,
                                      size_t max, size_t *n);

/* Free S, which no walker holds: its ops->destroy, or free(S) without one.
 * A stepper given to sw_add_stepper is the walker's (sw_walker_free frees
 * it; so does sw_add_stepper when it fails).  NULL is a no-op. */
SW_API void sw_stepper_free(struct sw_stepper *s);

/* The default steppers.  Each returns a new stepper (caller frees with
 * sw_stepper_free, or hands it to sw_add_stepper, which takes it over), or
 * NULL when out of memory. */
SW_API struct sw_stepper *sw_stepper_stackbottom_new(void);
SW_API struct sw_stepper *sw_stepper_sighandler_new(void);
SW_API struct sw_stepper *sw_stepper_debug_new(void);
SW_API struct sw_stepper *sw_stepper_ehabi_new(void);
SW_API struct sw_stepper *sw_stepper_frame_func_new(void);
SW_API struct sw_stepper *sw_stepper_analysis_new(void);
SW_API struct sw_stepper *sw_stepper_wanderer_new(void);

/* The name of default stepper I in priority order ("stackbottom",
 * "sighandler", "debug", "ehabi", "frame-func", "analysis", "wanderer": each one's
 * ops->name), or NULL when I is past the last. */
SW_API const char *sw_stepper_default_name(size_t i);

/* A new default stepper by its name, for choosing the steppers of a walker
 * (sw_walker_config.no_default_steppers, then sw_add_stepper for each).
 * Returns 0 with *OUT set (caller frees with sw_stepper_free, or hands it to
 * sw_add_stepper),
 * SW_ENOENT when no default stepper has that name, SW_ENOMEM. */
SW_API int sw_stepper_new_named(const char *name, struct sw_stepper **out);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_STEPPER_H */
