/* rspwalk/frame.h -- Frame: one stack frame as a value.
 *
 * A frame holds its RA (the PC for frame 0, the return address otherwise),
 * SP and FP, where each was found, the stepper that produced it and the
 * registers of that frame recovered so far, by DWARF number.
 *
 * Threads: a frame is a plain value; these functions touch only the frames
 * they are given.  Its borrowed pointers (stepper, vname) follow the
 * walker's rules (rspwalk/walker.h).
 */
#ifndef RSPWALK_FRAME_H
#define RSPWALK_FRAME_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_stepper;

enum sw_loc_kind {
    SW_LOC_UNKNOWN = 0,
    SW_LOC_REGISTER, /* in register REG of the next-inner frame */
    SW_LOC_ADDRESS,  /* in target memory at ADDR */
};

/* Where a value was found (StackwalkerAPI's location_t). */
struct sw_location {
    enum sw_loc_kind kind;
    unsigned reg;
    sw_addr addr;
};

enum sw_frame_kind {
    SW_FRAME_NORMAL = 0,
    SW_FRAME_SIGNAL,   /* a signal trampoline: the frame the kernel built for a handler */
    SW_FRAME_INLINE,   /* code inlined into the next-outer frame's function (DWARF
                        * DW_TAG_inlined_subroutine): same RA, SP and FP as it */
    SW_FRAME_TAILCALL, /* a function that tail-called the next-inner one (DWARF call
                        * sites): RA is the address after its jump, SP its caller's */
};

/* How a frame was found, from the most to the least trusted. */
enum sw_trust {
    SW_TRUST_REGISTERS = 0, /* frame 0: straight from the thread's registers */
    SW_TRUST_SIGFRAME,      /* from a saved signal context */
    SW_TRUST_CFI,           /* DWARF call frame information */
    SW_TRUST_FP,            /* frame-pointer chain */
    SW_TRUST_ANALYSIS,      /* instruction analysis */
    SW_TRUST_SCAN,          /* stack scanning */
};

/* DWARF registers a frame can carry; numbers at or above this are dropped. */
#define SW_FRAME_MAX_REGS 128

struct sw_frame {
    sw_addr ra; /* the PC for the top frame, the return address for the others */
    sw_addr sp;
    sw_addr fp;
    struct sw_location ra_loc, sp_loc, fp_loc;
    sw_tid thread;
    const struct sw_stepper *stepper; /* borrowed: produced this frame; NULL for frame 0 */
    unsigned level;                   /* 0 for the top frame */
    enum sw_frame_kind kind;
    enum sw_trust trust;
    bool top;      /* the most recent frame of the walk */
    bool bottom;   /* the outermost frame: nothing calls it */
    bool non_call; /* RA is the exact resume PC, not after a call (signal frames and
                    * the frame they interrupted), so lookups use RA, not RA-1 */
    /* Borrowed, valid until the walker is freed: the function's name from DWARF
     * debug information, as gdb prints it: always set for inline and tail-call
     * frames, set for other frames when debug information covers their PC
     * (it can differ from the ELF symbol: "fib" for "fib.cold"); else NULL. */
    const char *vname;
    uint64_t regs_valid[SW_FRAME_MAX_REGS / 64];
    sw_word regs[SW_FRAME_MAX_REGS];
};

/* Initialise F as an empty frame: everything zero, no registers known. */
SW_API void sw_frame_init(struct sw_frame *f);

/* Store in *VAL the value of DWARF register DW in F; false if not known. */
SW_API bool sw_frame_reg(const struct sw_frame *f, unsigned dw, sw_word *val);

/* Record VAL as the value of DWARF register DW in F (ignored past the limit). */
SW_API void sw_frame_set_reg(struct sw_frame *f, unsigned dw, sw_word val);

/* Forget DWARF register DW in F. */
SW_API void sw_frame_clear_reg(struct sw_frame *f, unsigned dw);

/* The address to look up the function and unwind rules of F: RA for the top
 * frame and non-call frames, RA - 1 otherwise (the call may be the last
 * instruction of its function). */
SW_API sw_addr sw_frame_lookup_pc(const struct sw_frame *f);

/* Whether A and B describe the same frame (RA, SP, FP and thread). */
SW_API bool sw_frame_equal(const struct sw_frame *a, const struct sw_frame *b);

/* The trust level's name: "registers", "sigframe", "cfi", "fp", "analysis", "scan". */
SW_API const char *sw_trust_name(enum sw_trust t);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_FRAME_H */
