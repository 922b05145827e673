/* tests/unit/rtos/test_rtos.c -- FreeRTOS tasks as threads: the context decoder on recorded
 * memory, the kernel's lists read from a fake target.
 *
 * The contexts were read with gdb-multiarch from qemu-system-arm 7.2 running the fixtures of
 * fixtures/src/freertos/ stopped at run_leaf: on -M mps2-an385 (ARM_CM3) the task "sem"
 * blocked in xQueueSemaphoreTake and "IDLE", which never ran (pxPortInitialiseStack's
 * context); on -M mps2-an386 (ARM_CM4F) "spin", preempted with FP state (EXC_RETURN
 * 0xFFFFFFED, s16-s31 and the extended frame, the alignment word), and "sem" (0xFFFFFFFD).
 * The lists are laid out by hand in FreeRTOS's default layout over the symbols of
 * tests/unit/data/freertos_syms.S.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "rtos/rtos_internal.h"
#include "tests/tools/fake_proc.h"

#define DW_R7 7
#define DW_SP 13
#define DW_LR 14
#define DW_PC 15

/* an385, "sem": r4-r11, then r0-r3, r12, lr, pc, xPSR. */
#define CM3_SEM_TOP 0x20000998u
static const uint32_t cm3_sem[16] = { 0, 0,          0,          0x200009d8, 0,          0,
                                      0, 0,          0,          0x20000a3c, 0x10000000, 0xe000ed04,
                                      0, 0x00001029, 0x000034e6, 0x61000000 };
/* an385, "IDLE": LR prvTaskExitError, PC prvIdleTask, xPSR the Thumb bit alone. */
#define CM3_IDLE_TOP 0x20001ff0u
static const uint32_t cm3_idle[16] = { 0, 0, 0, 0, 0, 0,          0,          0,
                                       0, 0, 0, 0, 0, 0x000042b1, 0x00001938, 0x01000000 };
/* an386, "spin": r4-r11, EXC_RETURN, s16-s31, the extended frame, the alignment word. */
#define CM4F_SPIN_TOP 0x20001674u
static const uint32_t cm4f_spin[52] = {
    0,          0,          0, 0x20001744, 0,          0,          0,          0, 0xffffffed,
    0,          0,          0, 0,          0,          0,          0,          0, 0,
    0,          0,          0, 0,          0,          0,          0,          0, 0,
    0x20000010, 0x20000014, 0, 0x00000321, 0x000002f0, 0x01000200, 0,          0, 0,
    0,          0,          0, 0,          0,          0,          0,          0, 0,
    0,          0,          0, 0x3f000000, 0x3f800000, 0x00000010, 0xfffffffd,
};
/* an386, "sem": EXC_RETURN 0xFFFFFFFD, the basic frame. */
#define CM4F_SEM_TOP 0x20000994u
static const uint32_t cm4f_sem[17] = { 0,          0,          0,          0x200009d8, 0,
                                       0,          0,          0,          0xfffffffd, 0,
                                       0x20000a3c, 0x10000000, 0xe000ed04, 0,          0x00001039,
                                       0x0000351a, 0x61000000 };

static void
put_words(uint8_t *out, const uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 4; b++)
            out[4 * i + b] = (uint8_t)(w[i] >> (8 * b));
}

static int
decode_words(enum rtos_port port, sw_addr top, const uint32_t *w, size_t n, struct rtos_ctx *c,
             char *why, size_t why_len)
{
    uint8_t mem[RTOS_CTX_MAX];
    put_words(mem, w, n);
    return sw_rtos_ctx_decode(port, &arch_armv7m, top, mem, 4 * n, c, why, why_len);
}

static void
test_cm3_blocked_task_resumes_where_pendsv_parked_it(void **state)
{
    struct rtos_ctx c;
    char why[128];
    (void)state;
    assert_int_equal(decode_words(RTOS_PORT_CM3, CM3_SEM_TOP, cm3_sem, 16, &c, why, sizeof why), 0);
    assert_int_equal(c.r[DW_PC], 0x34e6);
    assert_int_equal(c.r[DW_LR], 0x1029);
    assert_int_equal(c.r[DW_R7], 0x200009d8);
    assert_int_equal(c.r[1], 0x20000a3c);
    /* 16 words above the saved SP: the frame pointer's value in xQueueSemaphoreTake. */
    assert_int_equal(c.r[DW_SP], CM3_SEM_TOP + 64);
    assert_false(c.fp);
}

static void
test_cm3_task_that_never_ran_starts_at_its_entry(void **state)
{
    struct rtos_ctx c;
    char why[128];
    (void)state;
    assert_int_equal(decode_words(RTOS_PORT_CM3, CM3_IDLE_TOP, cm3_idle, 16, &c, why, sizeof why),
                     0);
    assert_int_equal(c.r[DW_PC], 0x1938);
    assert_int_equal(c.r[DW_LR], 0x42b1);
    assert_int_equal(c.r[DW_SP], CM3_IDLE_TOP + 64);
}

static void
test_cm4f_fp_context_skips_s16_s31_and_the_extended_frame(void **state)
{
    struct rtos_ctx c;
    char why[128];
    uint8_t head[RTOS_CTX_HEAD];
    (void)state;
    put_words(head, cm4f_spin, RTOS_CTX_HEAD / 4);
    assert_int_equal(sw_rtos_ctx_size(RTOS_PORT_CM4F, &arch_armv7m, head), 36 + 64 + 104);
    assert_int_equal(
        decode_words(RTOS_PORT_CM4F, CM4F_SPIN_TOP, cm4f_spin, 51, &c, why, sizeof why), 0);
    assert_true(c.fp);
    assert_int_equal(c.exc_return, 0xffffffed);
    assert_int_equal(c.r[DW_PC], 0x2f0);
    assert_int_equal(c.r[DW_LR], 0x321);
    assert_int_equal(c.r[2], 0x20000010);
    /* xPSR bit 9: the alignment word above the 104-byte frame; r7 (spin_leaf's frame) is the
     * SP the task had. */
    assert_int_equal(c.r[DW_SP], 0x20001744);
    assert_int_equal(c.r[DW_SP], c.r[DW_R7]);
}

static void
test_cm4f_basic_context_has_the_exc_return_word(void **state)
{
    struct rtos_ctx c;
    char why[128];
    uint8_t head[RTOS_CTX_HEAD];
    (void)state;
    put_words(head, cm4f_sem, RTOS_CTX_HEAD / 4);
    assert_int_equal(sw_rtos_ctx_size(RTOS_PORT_CM4F, &arch_armv7m, head), 36 + 32);
    assert_int_equal(decode_words(RTOS_PORT_CM4F, CM4F_SEM_TOP, cm4f_sem, 17, &c, why, sizeof why),
                     0);
    assert_false(c.fp);
    assert_int_equal(c.r[DW_PC], 0x351a);
    assert_int_equal(c.r[DW_SP], 0x200009d8);
}

static void
test_zero_filled_memory_is_no_context(void **state)
{
    static const uint32_t zeros[16];
    struct rtos_ctx c;
    char why[128];
    (void)state;
    assert_int_equal(decode_words(RTOS_PORT_CM3, 0x20000000, zeros, 16, &c, why, sizeof why),
                     SW_EINVAL);
    assert_non_null(strstr(why, "lacks the Thumb bit"));
}

static void
test_cm4f_context_returning_to_handler_mode_is_refused(void **state)
{
    uint32_t w[17];
    struct rtos_ctx c;
    char why[160];
    (void)state;
    memcpy(w, cm4f_sem, sizeof w);
    w[8] = 0xfffffff1;
    assert_int_equal(decode_words(RTOS_PORT_CM4F, CM4F_SEM_TOP, w, 17, &c, why, sizeof why),
                     SW_EINVAL);
    assert_non_null(strstr(why, "EXC_RETURN 0xfffffff1"));
}

static void
test_short_context_is_refused(void **state)
{
    struct rtos_ctx c;
    char why[128];
    (void)state;
    assert_int_equal(decode_words(RTOS_PORT_CM3, CM3_SEM_TOP, cm3_sem, 12, &c, why, sizeof why),
                     SW_EINVAL);
    assert_non_null(strstr(why, "too short"));
}

/* ---- the lists ----------------------------------------------------------------------------- */

#define SYMS_ELF    SW_TEST_DATA "/freertos_syms.elf"
#define READY(prio) (0x20000100u + 20u * (prio))
#define DELAYED1    0x20000200u
#define SUSPENDED   0x20000260u
#define T_RUN       0x20001000u
#define T_IDLE      0x20001100u
#define T_SEM       0x20001200u
#define T_RX        0x20001300u
#define T_SUSP      0x20001400u

static void
put_tcb(struct sw_proc *p, sw_addr tcb, sw_addr top, unsigned prio, const char *name,
        sw_addr event_container)
{
    uint8_t b[68] = { 0 };
    fake_proc_add_mem(p, tcb, b, sizeof b);
    fake_proc_put_word(p, tcb, top);
    fake_proc_put_word(p, tcb + 16, tcb);                  /* xStateListItem.pvOwner */
    fake_proc_put_word(p, tcb + 24 + 16, event_container); /* xEventListItem.pxContainer */
    fake_proc_put_word(p, tcb + 44, prio);
    fake_proc_put(p, tcb + 52, name, strlen(name) + 1);
}

/* List_t at LIST holding the N TCBs' state list items, in order. */
static void
put_list(struct sw_proc *p, sw_addr list, const sw_addr *tcbs, size_t n)
{
    sw_addr end = list + 8;
    uint8_t b[20] = { 0 };
    fake_proc_add_mem(p, list, b, sizeof b);
    fake_proc_put_word(p, list, n);
    sw_addr prev = end;
    for (size_t i = 0; i < n; i++) {
        fake_proc_put_word(p, prev + 4, tcbs[i] + 4);  /* pxNext of the previous item */
        fake_proc_put_word(p, tcbs[i] + 4 + 16, list); /* its pxContainer */
        prev = tcbs[i] + 4;
    }
    fake_proc_put_word(p, prev + 4, end);
}

static struct sw_proc *
fake_board(void)
{
    struct sw_proc *p = fake_proc_new(&arch_armv7m);
    uint8_t ctx[64];
    assert_non_null(p);
    uint8_t globals[8] = { 0 };
    fake_proc_add_mem(p, 0x20000000, globals, sizeof globals);
    fake_proc_put_word(p, 0x20000000, T_RUN);
    fake_proc_put_word(p, 0x20000004, 1);
    for (unsigned i = 0; i < 5; i++)
        put_list(p, READY(i), NULL, 0);
    for (sw_addr l = DELAYED1; l <= 0x20000280; l += 0x20)
        put_list(p, l, NULL, 0);
    put_tcb(p, T_RUN, 0x20003000, 2, "run", 0);
    put_tcb(p, T_IDLE, CM3_IDLE_TOP, 0, "IDLE", 0);
    put_tcb(p, T_SEM, CM3_SEM_TOP, 3, "sem", 0);
    put_tcb(p, T_RX, 0x20004000, 3, "rx", 0x20000178); /* waits on a queue: blocked */
    put_tcb(p, T_SUSP, 0x20005000, 3, "susp", 0);
    put_list(p, READY(2), (const sw_addr[]){ T_RUN }, 1);
    put_list(p, READY(0), (const sw_addr[]){ T_IDLE }, 1);
    put_list(p, DELAYED1, (const sw_addr[]){ T_SEM }, 1);
    put_list(p, SUSPENDED, (const sw_addr[]){ T_RX, T_SUSP }, 2);
    put_words(ctx, cm3_idle, 16);
    fake_proc_add_mem(p, CM3_IDLE_TOP, ctx, sizeof ctx);
    put_words(ctx, cm3_sem, 16);
    fake_proc_add_mem(p, CM3_SEM_TOP, ctx, sizeof ctx);
    memset(ctx, 0, sizeof ctx);
    fake_proc_add_mem(p, 0x20004000, ctx, sizeof ctx); /* rx's context: zeros, not one */
    fake_proc_set_reg(p, 1, DW_PC, 0x3e8);
    fake_proc_set_reg(p, 1, DW_SP, 0x20003100);
    return p;
}

static void
test_tasks_are_threads_with_name_state_and_priority(void **state)
{
    struct sw_proc *inner = fake_board(), *p;
    struct sw_errbuf err = { 0 };
    sw_tid tids[8];
    size_t n;
    char label[32];
    struct sw_thread_info ti;
    (void)state;

    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_AUTO, SYMS_ELF, &p, &err), 0);
    assert_int_equal(sw_proc_threads(p, tids, 8, &n), 0);
    assert_int_equal(n, 5);
    /* The running task first, then ready by priority, delayed, suspended. */
    const sw_addr order[5] = { T_RUN, T_IDLE, T_SEM, T_RX, T_SUSP };
    const char *names[5] = { "run", "IDLE", "sem", "rx", "susp" };
    const char *states[5] = { "running", "ready", "blocked", "blocked", "suspended" };
    const int64_t prios[5] = { 2, 0, 3, 3, 3 };
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(tids[i], order[i]);
        assert_int_equal(sw_proc_thread_info(p, tids[i], &ti), 0);
        assert_string_equal(ti.name, names[i]);
        assert_string_equal(ti.state, states[i]);
        assert_int_equal(ti.priority, prios[i]);
    }
    assert_int_equal(p->default_tid, T_RUN);
    assert_int_equal(sw_proc_thread_label(p, T_SEM, label, sizeof label), 0);
    assert_string_equal(label, "tcb:0x20001200");
    sw_proc_free(p);
}

static void
test_running_task_has_the_cpu_registers_and_parked_ones_their_context(void **state)
{
    struct sw_proc *inner = fake_board(), *p;
    struct sw_errbuf err = { 0 };
    sw_word v;
    (void)state;

    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_FREERTOS, SYMS_ELF, &p, &err), 0);
    assert_int_equal(p->ops->read_reg(p, T_RUN, DW_PC, &v), 0);
    assert_int_equal(v, 0x3e8);
    assert_int_equal(p->ops->read_reg(p, SW_TID_DEFAULT, DW_SP, &v), 0);
    assert_int_equal(v, 0x20003100);
    assert_int_equal(p->ops->read_reg(p, T_SEM, DW_PC, &v), 0);
    assert_int_equal(v, 0x34e6);
    assert_int_equal(p->ops->read_reg(p, T_SEM, DW_SP, &v), 0);
    assert_int_equal(v, CM3_SEM_TOP + 64);
    assert_int_equal(p->ops->read_reg(p, T_IDLE, DW_LR, &v), 0);
    assert_int_equal(v, 0x42b1);
    /* A context that is not one: the register read fails naming the task. */
    assert_int_equal(p->ops->read_reg(p, T_RX, DW_PC, &v), SW_EINVAL);
    assert_non_null(strstr(sw_proc_errmsg(p), "task rx (tcb 0x20001300)"));
    assert_non_null(strstr(sw_proc_errmsg(p), "Thumb"));
    struct sw_stepper *s = sw_rtos_stepper_new(p);
    assert_non_null(s);
    sw_stepper_free(s);
    assert_null(sw_rtos_stepper_new(inner));
    sw_proc_free(p);
}

static void
test_list_with_an_impossible_count_fails_naming_it(void **state)
{
    struct sw_proc *inner = fake_board(), *p = NULL;
    struct sw_errbuf err = { 0 };
    (void)state;

    fake_proc_put_word(inner, DELAYED1, 5000);
    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_FREERTOS, SYMS_ELF, &p, &err), SW_EINVAL);
    assert_non_null(strstr(err.msg, "xDelayedTaskList1 at 0x20000200 claims 5000 tasks"));
    sw_proc_free(inner); /* still the caller's after a failure */
}

static void
test_list_longer_than_its_count_fails(void **state)
{
    struct sw_proc *inner = fake_board(), *p = NULL;
    struct sw_errbuf err = { 0 };
    (void)state;

    fake_proc_put_word(inner, SUSPENDED, 1); /* two items linked */
    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_FREERTOS, SYMS_ELF, &p, &err), SW_EINVAL);
    assert_non_null(strstr(err.msg, "more items than its count"));
    sw_proc_free(inner);
}

/* Without DWARF the default layout is checked against the lists: each item its TCB's, in its
 * list, a ready list's tasks of its priority, names that are text. */
static void
expect_layout_unknown(struct sw_proc *inner, const char *why)
{
    struct sw_proc *p = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_FREERTOS, SYMS_ELF, &p, &err), SW_EINVAL);
    assert_non_null(strstr(err.msg, why));
    assert_non_null(strstr(err.msg, "the kernel's layout is unknown"));
    assert_non_null(strstr(err.msg, "freertos_syms.elf has no DWARF"));
    sw_proc_free(inner);
}

static void
test_default_layout_that_does_not_fit_is_unknown(void **state)
{
    struct sw_proc *inner = fake_board();
    (void)state;

    /* The owner's state list item is not where the item is (a field before it). */
    fake_proc_put_word(inner, T_SEM + 4 + 12, T_SEM + 8);
    expect_layout_unknown(inner, "xDelayedTaskList1 at 0x20000200 holds an item that is not a "
                                 "TCB's in it");
    inner = fake_board();
    fake_proc_put_word(inner, T_IDLE + 4 + 16, DELAYED1); /* another list's */
    expect_layout_unknown(inner, "holds an item that is not a TCB's");
    inner = fake_board();
    fake_proc_put_word(inner, T_IDLE + 44, 7); /* uxPriority elsewhere */
    expect_layout_unknown(inner, "pxReadyTasksLists at 0x20000100 holds a task of another "
                                 "priority");
    inner = fake_board();
    fake_proc_put(inner, T_SUSP + 52, "s\001\002", 4);
    expect_layout_unknown(inner, "the name of TCB at 0x20001400 is not text");
}

static void
test_notification_wait_is_blocked_by_where_it_resumes(void **state)
{
    struct sw_proc *inner = fake_board(), *p;
    struct sw_errbuf err = { 0 };
    struct sw_thread_info ti;
    uint32_t w[16];
    uint8_t ctx[64];
    (void)state;

    /* susp parked inside ulTaskGenericNotifyTake: no notify state in the default layout. */
    memcpy(w, cm3_sem, sizeof w);
    w[14] = 0x5010;
    put_words(ctx, w, 16);
    fake_proc_add_mem(inner, 0x20005000, ctx, sizeof ctx);
    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_FREERTOS, SYMS_ELF, &p, &err), 0);
    assert_int_equal(sw_proc_thread_info(p, T_SUSP, &ti), 0);
    assert_string_equal(ti.state, "blocked");
    assert_int_equal(ti.base_priority, -1); /* not in the default layout */
    /* The task layer reads through to the CPU's state, and says so. */
    assert_ptr_equal(p->ops->inner(p), inner);
    assert_null(sw_proc_rsp_session(p)); /* a fake CPU, no RSP under it */
    sw_proc_free(p);
}

static void
test_image_without_dwarf_takes_the_default_layouts(void **state)
{
    struct rtos_freertos *f = NULL;
    struct sw_errbuf err = { 0 };
    (void)state;

    assert_int_equal(sw_freertos_open(SYMS_ELF, &f, &err), 0);
    assert_string_equal(sw_freertos_layout_source(f), "defaults");
    assert_int_equal(sw_freertos_port(f), RTOS_PORT_CM3);
    assert_int_equal(sw_freertos_exit_addr(f), 0x42b0); /* the Thumb bit cleared */
    sw_freertos_free(f);
}

static void
test_image_without_freertos_is_enoent(void **state)
{
    struct sw_proc *inner = fake_board(), *p = NULL;
    struct sw_errbuf err = { 0 };
    (void)state;

    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_AUTO, SW_TEST_DATA "/i386_cold.elf", &p, &err),
                     SW_ENOENT);
    assert_non_null(strstr(err.msg, "has no symbol pxCurrentTCB"));
    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_AUTO, "/nonexistent/fw.elf", &p, &err),
                     SW_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/fw.elf"));
    sw_proc_free(inner);
}

static void
test_smp_kernel_is_refused_by_name(void **state)
{
    struct sw_proc *inner = fake_board(), *p = NULL;
    struct sw_errbuf err = { 0 };
    (void)state;

    assert_int_equal(
        sw_proc_rtos_new(inner, SW_RTOS_AUTO, SW_TEST_DATA "/freertos_smp_syms.elf", &p, &err),
        SW_EUNSUP);
    assert_non_null(strstr(err.msg, "is an SMP kernel (pxCurrentTCBs)"));
    sw_proc_free(inner);
}

static void
test_other_architectures_are_unsupported(void **state)
{
    struct sw_proc *inner = fake_proc_new(&arch_x86_64), *p = NULL;
    struct sw_errbuf err = { 0 };
    (void)state;

    assert_int_equal(sw_proc_rtos_new(inner, SW_RTOS_FREERTOS, SYMS_ELF, &p, &err), SW_EUNSUP);
    assert_non_null(strstr(err.msg, "x86_64"));
    sw_proc_free(inner);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cm3_blocked_task_resumes_where_pendsv_parked_it),
        cmocka_unit_test(test_cm3_task_that_never_ran_starts_at_its_entry),
        cmocka_unit_test(test_cm4f_fp_context_skips_s16_s31_and_the_extended_frame),
        cmocka_unit_test(test_cm4f_basic_context_has_the_exc_return_word),
        cmocka_unit_test(test_zero_filled_memory_is_no_context),
        cmocka_unit_test(test_cm4f_context_returning_to_handler_mode_is_refused),
        cmocka_unit_test(test_short_context_is_refused),
        cmocka_unit_test(test_tasks_are_threads_with_name_state_and_priority),
        cmocka_unit_test(test_running_task_has_the_cpu_registers_and_parked_ones_their_context),
        cmocka_unit_test(test_list_with_an_impossible_count_fails_naming_it),
        cmocka_unit_test(test_list_longer_than_its_count_fails),
        cmocka_unit_test(test_default_layout_that_does_not_fit_is_unknown),
        cmocka_unit_test(test_notification_wait_is_blocked_by_where_it_resumes),
        cmocka_unit_test(test_image_without_dwarf_takes_the_default_layouts),
        cmocka_unit_test(test_image_without_freertos_is_enoent),
        cmocka_unit_test(test_smp_kernel_is_refused_by_name),
        cmocka_unit_test(test_other_architectures_are_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
