/* walker/context.h -- what a walker is: the walk context's storage.
 *
 * For walker/context.c (the accessors steppers and virtual frames use) and
 * walker/walker.c (the walk loop, which fills it).  Steppers see only the
 * functions of walker/walker_internal.h.
 */
#ifndef RSPWALK_WALKER_CONTEXT_H
#define RSPWALK_WALKER_CONTEXT_H

#include "rspwalk/proc.h"
#include "rspwalk/walker.h"
#include "walker/stepper_group.h"
#include "walker/walker_internal.h"

/* Caches of the steppers' helpers a walker can keep (the analysis cache). */
#define SW_WALKER_MAX_CACHES 4

struct sw_walker_cache {
    const struct sw_walker_cache_ops *ops; /* borrowed, static; NULL: a free entry */
    void *cache;                           /* owned: freed with ops->free */
};

struct sw_walker {
    struct sw_proc *proc;          /* owned */
    struct sw_stepper_group group; /* owned storage; steppers borrowed from STEPPERS */
    struct sw_stepper **steppers;  /* owned: every stepper added */
    size_t nsteppers, capsteppers;
    struct sw_libstate *libs; /* owned */
    uint64_t libs_gen;        /* proc->stop_gen when LIBS was last refreshed */
    struct sw_symlookup *sym; /* owned */
    struct sw_virtual *virt;  /* owned: DWARF for inline and tail-call frames (virtual.c) */
    struct sw_walker_cache caches[SW_WALKER_MAX_CACHES];
    size_t max_frames;
    bool virtual_frames; /* add inline and tail-call frames to sw_walk_stack's walks */
    /* sw_wand_code may read the target where no module covers an address:
     * set only while one return address in the memory map's executable
     * ranges is checked (one caller, not every scanned word). */
    bool code_from_target;
    /* Lazy registers: sw_initial_frame reads only PC, SP and FP of thread
     * LAZY_TID; frames 0..LAZY_DEPTH of its walk (an unbroken chain of CFI
     * frames, whose same-value rules carry frame 0's registers outward) get
     * the others from the ProcessState when a stepper asks for them. */
    bool lazy_valid;
    sw_tid lazy_tid;
    unsigned lazy_depth;
    struct sw_errbuf err;
};

#endif /* RSPWALK_WALKER_CONTEXT_H */
