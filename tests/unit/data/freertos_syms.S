/* tests/unit/data/freertos_syms.S -- the FreeRTOS kernel's symbols, and nothing else, for
 * tests/unit/rtos/test_rtos.c: absolute addresses and sizes where the test puts the lists in
 * a fake target's memory (5 priorities: 5 List_t of 20 bytes), no DWARF (the reader's
 * default layouts).  prvTaskExitError and ulTaskGenericNotifyTake are Thumb functions: their
 * values have bit 0 set. */
    .macro obj name, addr, size
    .globl \name
    .type \name, @object
    .set \name, \addr
    .size \name, \size
    .endm
    obj pxCurrentTCB, 0x20000000, 4
    obj xSchedulerRunning, 0x20000004, 4
    obj pxReadyTasksLists, 0x20000100, 100
    obj xDelayedTaskList1, 0x20000200, 20
    obj xDelayedTaskList2, 0x20000220, 20
    obj xPendingReadyList, 0x20000240, 20
    obj xSuspendedTaskList, 0x20000260, 20
    obj xTasksWaitingTermination, 0x20000280, 20
    .globl prvTaskExitError
    .type prvTaskExitError, @function
    .set prvTaskExitError, 0x42b1
    .size prvTaskExitError, 16
    .globl ulTaskGenericNotifyTake
    .type ulTaskGenericNotifyTake, @function
    .set ulTaskGenericNotifyTake, 0x5001
    .size ulTaskGenericNotifyTake, 64
    .text
    .globl _start
_start:
    ret
    .section .note.GNU-stack, "", @progbits
