/* rspwalk/rtos.h -- RTOS tasks as threads: a ProcessState over another one.
 *
 * A bare-metal board's stub (QEMU's gdbstub, a probe's) shows one thread, the CPU.  The RTOS
 * process state reads the kernel's task lists from target memory and shows every task as a
 * thread: the running one with the CPU's registers, each other one with the registers its
 * saved context holds.  Walks then reach every task's entry function.  FreeRTOS on Cortex-M
 * (the ARM_CM3 and ARM_CM4F ports' contexts; ARM_CM4_MPU and ARM_CM7 save the same) is the
 * one RTOS read so far.  docs/design.md, "RTOS tasks as threads".
 *
 * Threads: as rspwalk/proc.h; the object adds nothing shared.
 */
#ifndef RSPWALK_RTOS_H
#define RSPWALK_RTOS_H

#include "rspwalk/proc.h"
#include "rspwalk/stepper.h"
#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sw_rtos_kind {
    SW_RTOS_AUTO,     /* whichever RTOS the image's symbols show (FreeRTOS: pxCurrentTCB) */
    SW_RTOS_FREERTOS, /* FreeRTOS */
};

/* A process state whose threads are the tasks of the RTOS KIND that the ELF file ELF_PATH (the
 * image the target runs, with its symbols; its DWARF gives the kernel's structure layouts
 * where present) shows in INNER's memory.  Thread ids are TCB addresses, labelled
 * "tcb:0xADDR"; sw_proc_thread_info gives name, state and priority; the running task is the
 * default thread.  Memory, files and ProcDebug are INNER's (after a stop the tasks are read
 * again).  Before the scheduler runs the CPU is a thread of its own beside the tasks.
 * On success the new state takes INNER over (sw_proc_free frees both); on failure INNER is
 * still the caller's.  Returns 0 with *OUT (caller frees with sw_proc_free), or: SW_ENOENT
 * (no such RTOS in the image: for SW_RTOS_AUTO, the caller goes on without), SW_EUNSUP (an
 * architecture whose task contexts are not decoded), SW_EBADELF, SW_EMEM and link errors
 * (the task lists could not be read), SW_ENOMEM; the message in ERR. */
SW_API int sw_proc_rtos_new(struct sw_proc *inner, enum sw_rtos_kind kind, const char *elf_path,
                            struct sw_proc **out, struct sw_errbuf *err);

/* A stepper for a walker over P (from sw_proc_rtos_new) that ends a task's walk at its entry
 * function: the frame whose caller would be the kernel's task return address (FreeRTOS's
 * prvTaskExitError, which pxPortInitialiseStack puts in the first LR and no call returns to).
 * Priority SW_PRIO_STACKBOTTOM + 1.  Returns a new stepper (sw_add_stepper takes it over, or
 * sw_stepper_free), or NULL when P is not an RTOS process state or out of memory. */
SW_API struct sw_stepper *sw_rtos_stepper_new(struct sw_proc *p);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_RTOS_H */
