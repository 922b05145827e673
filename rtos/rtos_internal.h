/* rtos/rtos_internal.h -- what the files of rtos/ share: the task table, the port's context
 * decoder and the FreeRTOS reader.
 *
 * rtos/rtos_proc.c is the ProcessState that shows tasks as threads; rtos/freertos.c reads the
 * kernel's lists from target memory; rtos/cortexm_ctx.c decodes a parked task's saved context.
 * The public face is rspwalk/rtos.h.
 */
#ifndef RSPWALK_RTOS_INTERNAL_H
#define RSPWALK_RTOS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/arch.h"
#include "rspwalk/errors.h"
#include "rspwalk/proc.h"
#include "rspwalk/types.h"

/* FreeRTOS's ports whose saved context is decoded (portable/GCC/ARM_CM3/port.c and
 * portable/GCC/ARM_CM4F/port.c, pxPortInitialiseStack and xPortPendSVHandler). */
enum rtos_port {
    RTOS_PORT_CM3,  /* r4-r11, then the basic hardware frame */
    RTOS_PORT_CM4F, /* r4-r11, EXC_RETURN, s16-s31 when its bit 4 is clear, then the hardware
                     * frame (extended when bit 4 is clear) */
};

/* Bytes a context takes at most: 9 words, 16 FP words, an extended hardware frame (26 words). */
#define RTOS_CTX_MAX (4 * (9 + 16 + 26))

/* A parked task's registers, from its saved context. */
struct rtos_ctx {
    uint32_t r[16]; /* r0-r15: r13 the task's SP after the context, r15 its resume PC */
    uint32_t xpsr;
    uint32_t exc_return; /* the EXC_RETURN it resumes with (CM3: 0xFFFFFFFD, implied) */
    bool fp;             /* an FP context was saved (extended frame) */
};

/* The bytes of the context at TOP (the TCB's pxTopOfStack) that PORT needs, given the first
 * RTOS_CTX_HEAD bytes already read (the CM4F's EXC_RETURN says how many more): 0 when
 * HEAD does not hold what the port needs to know. */
#define RTOS_CTX_HEAD 36
size_t sw_rtos_ctx_size(enum rtos_port port, const struct arch_desc *a, const uint8_t *head);

/* Decode the LEN bytes MEM saved at TOP by PORT into *OUT (A's byte order).  Returns 0, or
 * SW_EINVAL with the reason in WHY (WHY_LEN bytes) when the bytes are no context the port
 * wrote: too short, an EXC_RETURN that does not return to Thread mode on the process stack,
 * a stacked xPSR without the Thumb bit (zero-filled memory), an odd resume PC. */
int sw_rtos_ctx_decode(enum rtos_port port, const struct arch_desc *a, sw_addr top,
                       const uint8_t *mem, size_t len, struct rtos_ctx *out, char *why,
                       size_t why_len);

/* ---- FreeRTOS (rtos/freertos.c) ---------------------------------------------------------- */

/* One task as the kernel's lists show it. */
struct rtos_task {
    sw_addr tcb;
    sw_addr top;           /* pxTopOfStack: its saved context, when it is not running */
    char name[32];         /* pcTaskName, NUL-terminated */
    const char *state;     /* static: "running", "ready", "blocked", "suspended", "deleted" */
    int64_t priority;      /* uxPriority: the inherited one while it holds a mutex a higher task
                            * waits on */
    int64_t base_priority; /* uxBasePriority (the DWARF's); -1: not known */
    bool maybe_notify;     /* suspended, maybe a wait for a notification the layout cannot tell */
    bool running;          /* pxCurrentTCB, with the scheduler started: the CPU's registers */
    int ctx_rc;            /* 1: not decoded yet; 0: CTX holds it; < 0: why not (CTX_WHY) */
    struct rtos_ctx ctx;
    char ctx_why[96];
};

struct rtos_freertos; /* the symbols and layouts read from the ELF file */

/* Read the kernel's symbols and structure layouts from the ELF file PATH.  Returns 0,
 * SW_ENOENT (no pxCurrentTCB: not FreeRTOS, or stripped), SW_EUNSUP (an SMP kernel's
 * pxCurrentTCBs instead), SW_EBADELF, SW_EIO, SW_ENOMEM; the
 * message in ERR names the file.  *OUT: sw_freertos_free. */
int sw_freertos_open(const char *path, struct rtos_freertos **out, struct sw_errbuf *err);
void sw_freertos_free(struct rtos_freertos *f);
/* The port the image was built with (the CM4F's vPortEnableVFP in its symbols). */
enum rtos_port sw_freertos_port(const struct rtos_freertos *f);
/* The task return address (prvTaskExitError) every task's entry function returns to, Thumb
 * bit clear; 0 when the image has none. */
sw_addr sw_freertos_exit_addr(const struct rtos_freertos *f);
/* Whether PC lies in one of the kernel's notification waits (ulTaskGenericNotifyTake,
 * xTaskGenericNotifyWait, by their symbols). */
bool sw_freertos_in_notify_wait(const struct rtos_freertos *f, sw_addr pc);
/* Where the layouts came from: "dwarf" or "defaults". */
const char *sw_freertos_layout_source(const struct rtos_freertos *f);

/* Read every task from P's memory: *TASKS (caller frees with free()) gets *N tasks, the running
 * one first, then by list (ready by descending priority, pending, delayed, suspended,
 * terminating).  *SCHEDULER_RUNNING says whether pxCurrentTCB runs on the CPU.  Returns 0, a
 * memory or link error with the message in ERR naming the list or TCB, SW_ENOMEM. */
int sw_freertos_tasks(const struct rtos_freertos *f, struct sw_proc *p, struct rtos_task **tasks,
                      size_t *n, bool *scheduler_running, struct sw_errbuf *err);

#endif /* RSPWALK_RTOS_INTERNAL_H */
