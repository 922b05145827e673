/* tests/unit/data/freertos_smp_syms.S -- an SMP FreeRTOS kernel's symbols for
 * tests/unit/rtos/test_rtos.c: pxCurrentTCBs (configNUMBER_OF_CORES > 1) where a single-core
 * kernel has pxCurrentTCB, and the lists, so that only the SMP name tells it apart. */
    .macro obj name, addr, size
    .globl \name
    .type \name, @object
    .set \name, \addr
    .size \name, \size
    .endm
    obj pxCurrentTCBs, 0x20000000, 8
    obj pxReadyTasksLists, 0x20000100, 100
    obj xDelayedTaskList1, 0x20000200, 20
    obj xDelayedTaskList2, 0x20000220, 20
    .text
    .globl _start
_start:
    ret
    .section .note.GNU-stack, "", @progbits
