/* rtos/freertos.c -- FreeRTOS's tasks read from target memory (tasks.c's lists and TCBs).
 *
 * The kernel keeps every task's TCB in exactly one state list: pxReadyTasksLists[prio],
 * xDelayedTaskList1/2 (pxDelayedTaskList and pxOverflowDelayedTaskList point at them),
 * xSuspendedTaskList, xTasksWaitingTermination; a task readied from an interrupt while the
 * scheduler was suspended waits in xPendingReadyList through its event list item.  The state
 * follows eTaskGetState (tasks.c): a task in the suspended list that waits on an event or a
 * notification is blocked (a wait without timeout).  Symbols come from the ELF's .symtab
 * (the lists are static: LOCAL symbols), the layouts of TCB_t, List_t and ListItem_t from its
 * DWARF, else FreeRTOS's defaults for a 32-bit port without MPU or list integrity checks.
 */
#include "rtos/rtos_internal.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf/dwarf.h"
#include "dwarf/layout.h"
#include "util/util.h"

enum fr_sym {
    SYM_CURRENT_TCB,
    SYM_READY,
    SYM_DELAYED1,
    SYM_DELAYED2,
    SYM_PENDING,
    SYM_SUSPENDED,
    SYM_TERMINATION,
    SYM_SCHED_RUNNING,
    SYM_EXIT_ERROR,
    SYM_ENABLE_VFP,
    SYM_NOTIFY_TAKE,
    SYM_NOTIFY_WAIT,
    SYM_CURRENT_TCBS,
    SYM_COUNT,
};

static const char *const sym_names[SYM_COUNT] = {
    [SYM_CURRENT_TCB] = "pxCurrentTCB",
    [SYM_READY] = "pxReadyTasksLists",
    [SYM_DELAYED1] = "xDelayedTaskList1",
    [SYM_DELAYED2] = "xDelayedTaskList2",
    [SYM_PENDING] = "xPendingReadyList",
    [SYM_SUSPENDED] = "xSuspendedTaskList",
    [SYM_TERMINATION] = "xTasksWaitingTermination",
    [SYM_SCHED_RUNNING] = "xSchedulerRunning",
    [SYM_EXIT_ERROR] = "prvTaskExitError",
    [SYM_ENABLE_VFP] = "vPortEnableVFP", /* ARM_CM4F/port.c only */
    /* The calls a task waits for a notification in (tasks.c) */
    [SYM_NOTIFY_TAKE] = "ulTaskGenericNotifyTake",
    [SYM_NOTIFY_WAIT] = "xTaskGenericNotifyWait",
    [SYM_CURRENT_TCBS] = "pxCurrentTCBs", /* configNUMBER_OF_CORES > 1 */
};

/* Offsets into TCB_t, List_t and ListItem_t. */
struct fr_layout {
    uint64_t tcb_top, tcb_state_item, tcb_event_item, tcb_priority, tcb_name, tcb_name_len;
    uint64_t tcb_notify_state, tcb_notify_len; /* len 0: not known (no DWARF) */
    uint64_t tcb_base_priority, tcb_base_len;  /* len 0: not known (no DWARF, or no mutexes) */
    uint64_t list_count, list_end, list_size;
    uint64_t item_next, item_owner, item_container;
};

/* FreeRTOS's defaults (include/list.h, tasks.c's TCB_t): a 32-bit port, one core,
 * portUSING_MPU_WRAPPERS 0, configUSE_LIST_DATA_INTEGRITY_CHECK_BYTES 0,
 * configUSE_MINI_LIST_ITEM 1.  Everything the configuration puts after pcTaskName (thread-local
 * pointers, newlib's struct _reent, notification arrays, run-time counters) leaves these
 * alone; the name's length is not known: it is read up to its NUL, which the kernel puts
 * within configMAX_TASK_NAME_LEN. */
static const struct fr_layout default_layout = {
    .tcb_top = 0,
    .tcb_state_item = 4,
    .tcb_event_item = 24,
    .tcb_priority = 44,
    .tcb_name = 52,
    .tcb_name_len = 0,
    .list_count = 0,
    .list_end = 8,
    .list_size = 20,
    .item_next = 4,
    .item_owner = 12,
    .item_container = 16,
};

struct rtos_freertos {
    char *path;
    sw_addr sym[SYM_COUNT];
    uint64_t sym_size[SYM_COUNT];
    bool have[SYM_COUNT];
    struct fr_layout lay;
    bool from_dwarf;
};

/* The tasks.c notify state of a task waiting for a notification (taskWAITING_NOTIFICATION). */
#define FR_WAITING_NOTIFICATION 1
/* More tasks than this in one list is taken for a broken list (a cycle that misses its end). */
#define FR_LIST_MAX 1024

static int
read_symbols(struct rtos_freertos *f, struct sw_errbuf *err)
{
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sw_fail(err, SW_ENOENT, "FreeRTOS: opening %s: no such file", f->path);
    if (elf_version(EV_CURRENT) == EV_NONE) {
        close(fd);
        return sw_fail(err, SW_EBADELF, "FreeRTOS: %s: libelf out of date", f->path);
    }
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf == NULL || elf_kind(elf) != ELF_K_ELF) {
        if (elf)
            elf_end(elf);
        close(fd);
        return sw_fail(err, SW_EBADELF, "FreeRTOS: %s is not an ELF file", f->path);
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t n = data ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            if (gelf_getsym(data, (int)i, &s) == NULL || s.st_shndx == SHN_UNDEF)
                continue;
            const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
            for (unsigned k = 0; name && k < SYM_COUNT; k++) {
                if (f->have[k] || strcmp(name, sym_names[k]) != 0)
                    continue;
                f->have[k] = true;
                /* Thumb functions carry bit 0 in their symbol value. */
                f->sym[k] =
                    GELF_ST_TYPE(s.st_info) == STT_FUNC ? s.st_value & ~(GElf_Addr)1 : s.st_value;
                f->sym_size[k] = s.st_size;
            }
        }
    }
    elf_end(elf);
    close(fd);
    return 0;
}

/* Take the layouts from the DWARF where it has all of them; a partial one is not mixed with
 * the defaults. */
static void
read_layout(struct rtos_freertos *f)
{
    struct sw_dinfo *d = NULL;
    struct sw_errbuf err = { 0 };
    /* Older kernels' names last: xGenericListItem before V9, pvContainer before V10. */
    struct sw_dinfo_field tcb[] = { { .name = "pxTopOfStack" },     { .name = "xStateListItem" },
                                    { .name = "xEventListItem" },   { .name = "uxPriority" },
                                    { .name = "pcTaskName" },       { .name = "ucNotifyState" },
                                    { .name = "xGenericListItem" }, { .name = "uxBasePriority" } };
    struct sw_dinfo_field list[] = { { .name = "uxNumberOfItems" }, { .name = "xListEnd" } };
    struct sw_dinfo_field item[] = { { .name = "pxNext" },
                                     { .name = "pvOwner" },
                                     { .name = "pxContainer" },
                                     { .name = "pvContainer" } };
    uint64_t list_size = 0;

    f->lay = default_layout;
    if (sw_dinfo_open(f->path, NULL, NULL, &d, &err) < 0)
        return;
    bool ok = sw_dinfo_struct_layout(d, "tskTaskControlBlock", tcb, 8, NULL) == 0 &&
              sw_dinfo_struct_layout(d, "xLIST", list, 2, &list_size) == 0 &&
              sw_dinfo_struct_layout(d, "xLIST_ITEM", item, 4, NULL) == 0;
    if (ok && !tcb[1].found)
        tcb[1] = tcb[6];
    if (ok && !item[2].found)
        item[2] = item[3];
    for (size_t i = 0; ok && i < 5; i++)
        ok = tcb[i].found;
    ok = ok && list[0].found && list[1].found && item[0].found && item[1].found && item[2].found;
    if (ok && tcb[4].size > 0) {
        f->lay = (struct fr_layout){
            .tcb_top = tcb[0].offset,
            .tcb_state_item = tcb[1].offset,
            .tcb_event_item = tcb[2].offset,
            .tcb_priority = tcb[3].offset,
            .tcb_name = tcb[4].offset,
            .tcb_name_len = tcb[4].size,
            .tcb_notify_state = tcb[5].offset,
            .tcb_notify_len = tcb[5].found ? tcb[5].size : 0,
            .tcb_base_priority = tcb[7].offset,
            .tcb_base_len = tcb[7].found ? tcb[7].size : 0,
            .list_count = list[0].offset,
            .list_end = list[1].offset,
            .list_size = list_size,
            .item_next = item[0].offset,
            .item_owner = item[1].offset,
            .item_container = item[2].offset,
        };
        f->from_dwarf = true;
    }
    sw_dinfo_close(d);
}

int
sw_freertos_open(const char *path, struct rtos_freertos **out, struct sw_errbuf *err)
{
    struct rtos_freertos *f = sw_calloc(1, sizeof *f);
    if (f == NULL || (f->path = sw_strdup(path)) == NULL) {
        free(f);
        return sw_fail(err, SW_ENOMEM, "FreeRTOS: reading %s: out of memory", path);
    }
    int rc = read_symbols(f, err);
    if (rc == 0 && !f->have[SYM_CURRENT_TCB] && f->have[SYM_CURRENT_TCBS])
        rc = sw_fail(err, SW_EUNSUP,
                     "FreeRTOS: %s is an SMP kernel (pxCurrentTCBs): its tasks are not read", path);
    if (rc == 0 && !f->have[SYM_CURRENT_TCB])
        rc = sw_fail(err, SW_ENOENT,
                     "FreeRTOS: %s has no symbol pxCurrentTCB (not FreeRTOS, "
                     "or stripped)",
                     path);
    if (rc == 0 && (!f->have[SYM_READY] || !f->have[SYM_DELAYED1] || !f->have[SYM_DELAYED2]))
        rc = sw_fail(err, SW_ENOENT,
                     "FreeRTOS: %s lacks pxReadyTasksLists or xDelayedTaskList1/2 in its symbols",
                     path);
    if (rc < 0) {
        sw_freertos_free(f);
        return rc;
    }
    read_layout(f);
    if (f->sym_size[SYM_READY] == 0 || f->sym_size[SYM_READY] % f->lay.list_size != 0) {
        rc = sw_fail(err, SW_EBADELF,
                     "FreeRTOS: %s: pxReadyTasksLists is %" PRIu64
                     " bytes, not a whole number of List_t (%" PRIu64 " bytes)",
                     path, f->sym_size[SYM_READY], f->lay.list_size);
        sw_freertos_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

void
sw_freertos_free(struct rtos_freertos *f)
{
    if (f == NULL)
        return;
    free(f->path);
    free(f);
}

enum rtos_port
sw_freertos_port(const struct rtos_freertos *f)
{
    return f->have[SYM_ENABLE_VFP] ? RTOS_PORT_CM4F : RTOS_PORT_CM3;
}

sw_addr
sw_freertos_exit_addr(const struct rtos_freertos *f)
{
    return f->have[SYM_EXIT_ERROR] ? f->sym[SYM_EXIT_ERROR] : 0;
}

bool
sw_freertos_in_notify_wait(const struct rtos_freertos *f, sw_addr pc)
{
    for (int k = SYM_NOTIFY_TAKE; k <= SYM_NOTIFY_WAIT; k++)
        if (f->have[k] && pc >= f->sym[k] && pc < f->sym[k] + f->sym_size[k])
            return true;
    return false;
}

const char *
sw_freertos_layout_source(const struct rtos_freertos *f)
{
    return f->from_dwarf ? "dwarf" : "defaults";
}

/* ---- reading the lists -------------------------------------------------------------------- */

struct fr_scan {
    const struct rtos_freertos *f;
    struct sw_proc *p;
    struct sw_errbuf *err;
    struct rtos_task *tasks;
    size_t n, cap;
};

static int
rd_word(struct fr_scan *sc, sw_addr addr, sw_word *v, const char *what)
{
    int rc = sw_proc_read_word(sc->p, addr, v);
    if (rc < 0)
        return sw_fail(sc->err, rc, "FreeRTOS: reading %s at 0x%" PRIx64 ": %s", what, addr,
                       sw_proc_errmsg(sc->p));
    return 0;
}

static bool
have_task(const struct fr_scan *sc, sw_addr tcb)
{
    for (size_t i = 0; i < sc->n; i++)
        if (sc->tasks[i].tcb == tcb)
            return true;
    return false;
}

/* A list or TCB that is not what the layout says.  With FreeRTOS's default layout that is most
 * likely a kernel configured otherwise, which only the DWARF could tell: the layout is unknown,
 * and nothing read with it is shown. */
static int
layout_fail(struct fr_scan *sc, const char *what, sw_addr addr, const char *why)
{
    if (!sc->f->from_dwarf)
        return sw_fail(sc->err, SW_EINVAL,
                       "FreeRTOS: %s at 0x%" PRIx64 " %s: the kernel's layout is unknown (%s has "
                       "no DWARF for TCB_t and List_t, and FreeRTOS's default layout does not fit "
                       "this kernel's configuration; build it with -g)",
                       what, addr, why, sc->f->path);
    return sw_fail(sc->err, SW_EINVAL,
                   "FreeRTOS: %s at 0x%" PRIx64 " %s (memory not a list, or the image not the one "
                   "running)",
                   what, addr, why);
}

/* The task's name: the layout's length, or with the defaults up to its NUL (at most
 * sizeof t->name - 1 bytes; the kernel's default 16 where more cannot be read). */
static int
read_name(struct fr_scan *sc, struct rtos_task *t)
{
    const struct fr_layout *l = &sc->f->lay;
    size_t len = l->tcb_name_len > 0 && l->tcb_name_len < sizeof t->name ? l->tcb_name_len
                                                                         : sizeof t->name - 1;
    int rc = sc->p->ops->read_mem(sc->p, t->tcb + l->tcb_name, t->name, len);
    if (rc < 0 && l->tcb_name_len == 0 && !sw_is_link_error(rc))
        rc = sc->p->ops->read_mem(sc->p, t->tcb + l->tcb_name, t->name, len = 16);
    if (rc < 0)
        return sw_fail(sc->err, rc, "FreeRTOS: reading the name of TCB 0x%" PRIx64 ": %s", t->tcb,
                       sw_proc_errmsg(sc->p));
    t->name[len] = '\0';
    /* The kernel copies the creator's text: control characters say the offset is wrong. */
    for (size_t i = 0; t->name[i] != '\0'; i++)
        if ((unsigned char)t->name[i] < 0x20 || t->name[i] == 0x7f)
            return layout_fail(sc, "the name of TCB", t->tcb, "is not text");
    return 0;
}

/* Read the TCB at TCB into a new task of state STATE. */
static int
add_task(struct fr_scan *sc, sw_addr tcb, const char *state, bool running)
{
    const struct fr_layout *l = &sc->f->lay;
    sw_word v;
    int rc;

    if (have_task(sc, tcb))
        return 0;
    if (sc->n == sc->cap) {
        size_t cap = sc->cap ? 2 * sc->cap : 16;
        struct rtos_task *t = sw_realloc(sc->tasks, cap * sizeof *t);
        if (t == NULL)
            return sw_fail(sc->err, SW_ENOMEM, "FreeRTOS: listing tasks: out of memory");
        sc->tasks = t;
        sc->cap = cap;
    }
    struct rtos_task *t = &sc->tasks[sc->n];
    memset(t, 0, sizeof *t);
    t->tcb = tcb;
    t->state = state;
    t->running = running;
    t->ctx_rc = 1;
    t->base_priority = -1;
    if ((rc = rd_word(sc, tcb + l->tcb_top, &v, "a TCB's pxTopOfStack")) < 0)
        return rc;
    t->top = v;
    if ((rc = rd_word(sc, tcb + l->tcb_priority, &v, "a TCB's uxPriority")) < 0)
        return rc;
    t->priority = (int64_t)v;
    if (l->tcb_base_len == 4 || l->tcb_base_len == 8) {
        if ((rc = rd_word(sc, tcb + l->tcb_base_priority, &v, "a TCB's uxBasePriority")) < 0)
            return rc;
        t->base_priority = (int64_t)v;
    }
    if ((rc = read_name(sc, t)) < 0)
        return rc;
    /* A task in the suspended list waiting on an event or a notification is blocked
     * (eTaskGetState). */
    if (strcmp(state, "suspended") == 0) {
        if ((rc = rd_word(sc, tcb + l->tcb_event_item + l->item_container, &v,
                          "a TCB's event list item")) < 0)
            return rc;
        bool waiting = v != 0;
        uint8_t ns[8];
        size_t nl = l->tcb_notify_len < sizeof ns ? l->tcb_notify_len : sizeof ns;
        if (!waiting && nl > 0 &&
            sc->p->ops->read_mem(sc->p, tcb + l->tcb_notify_state, ns, nl) == 0)
            for (size_t i = 0; i < nl; i++)
                waiting = waiting || ns[i] == FR_WAITING_NOTIFICATION;
        if (waiting)
            t->state = "blocked";
        /* Without the notify state's offset, where its saved context resumes tells. */
        t->maybe_notify = !waiting && l->tcb_notify_len == 0;
    }
    sc->n++;
    return 0;
}

/* Every task of the list at LIST (a List_t), in list order, each linked through the item at
 * ITEM_OFF of its TCB; PRIO >= 0: every task's uxPriority (a ready list's). */
static int
scan_list(struct fr_scan *sc, sw_addr list, const char *what, const char *state, uint64_t item_off,
          int64_t prio)
{
    const struct fr_layout *l = &sc->f->lay;
    sw_word count, item, owner, v;
    sw_addr end = list + l->list_end;
    int rc;

    if ((rc = rd_word(sc, list + l->list_count, &count, what)) < 0)
        return rc;
    if (count == 0)
        return 0;
    if (count > FR_LIST_MAX) {
        char why[64];
        snprintf(why, sizeof why, "claims %" PRIu64 " tasks", (uint64_t)count);
        return layout_fail(sc, what, list, why);
    }
    if ((rc = rd_word(sc, end + l->item_next, &item, what)) < 0)
        return rc;
    for (sw_word k = 0; item != end; k++) {
        if (k >= count)
            return layout_fail(sc, what, list, "has more items than its count");
        if ((rc = rd_word(sc, item + l->item_owner, &owner, what)) < 0)
            return rc;
        /* Each item is its TCB's and names the list it is in; a ready list's tasks have its
         * priority.  Checked with the default layout, which they confirm; the DWARF's is the
         * kernel's own, and a stop inside the kernel may find a task half moved. */
        if (!sc->f->from_dwarf) {
            if ((rc = rd_word(sc, item + l->item_container, &v, what)) < 0)
                return rc;
            if (owner == 0 || owner + item_off != item || v != list)
                return layout_fail(sc, what, list, "holds an item that is not a TCB's in it");
            if (prio >= 0 &&
                (rc = rd_word(sc, owner + l->tcb_priority, &v, "a TCB's uxPriority")) < 0)
                return rc;
            if (prio >= 0 && (int64_t)v != prio)
                return layout_fail(sc, what, list, "holds a task of another priority");
        }
        if (owner != 0 && (rc = add_task(sc, owner, state, false)) < 0)
            return rc;
        if ((rc = rd_word(sc, item + l->item_next, &item, what)) < 0)
            return rc;
    }
    return 0;
}

int
sw_freertos_tasks(const struct rtos_freertos *f, struct sw_proc *p, struct rtos_task **tasks,
                  size_t *n, bool *scheduler_running, struct sw_errbuf *err)
{
    struct fr_scan sc = { .f = f, .p = p, .err = err };
    sw_word cur = 0, running = 1;
    int rc;

    if ((rc = rd_word(&sc, f->sym[SYM_CURRENT_TCB], &cur, "pxCurrentTCB")) < 0)
        return rc;
    if (f->have[SYM_SCHED_RUNNING] &&
        (rc = rd_word(&sc, f->sym[SYM_SCHED_RUNNING], &running, "xSchedulerRunning")) < 0)
        return rc;
    bool on_cpu = cur != 0 && running != 0;
    if (on_cpu)
        rc = add_task(&sc, cur, "running", true);
    size_t nprio = (size_t)(f->sym_size[SYM_READY] / f->lay.list_size);
    for (size_t i = nprio; rc == 0 && i-- > 0;)
        rc = scan_list(&sc, f->sym[SYM_READY] + i * f->lay.list_size, "pxReadyTasksLists", "ready",
                       f->lay.tcb_state_item, (int64_t)i);
    static const struct {
        enum fr_sym sym;
        const char *state;
    } lists[] = {
        { SYM_PENDING, "ready" },       { SYM_DELAYED1, "blocked" },    { SYM_DELAYED2, "blocked" },
        { SYM_SUSPENDED, "suspended" }, { SYM_TERMINATION, "deleted" },
    };
    /* The pending list links tasks through their event list items. */
    for (size_t i = 0; rc == 0 && i < sizeof lists / sizeof lists[0]; i++)
        if (f->have[lists[i].sym])
            rc = scan_list(
                &sc, f->sym[lists[i].sym], sym_names[lists[i].sym], lists[i].state,
                lists[i].sym == SYM_PENDING ? f->lay.tcb_event_item : f->lay.tcb_state_item, -1);
    if (rc < 0) {
        free(sc.tasks);
        return rc;
    }
    *tasks = sc.tasks;
    *n = sc.n;
    *scheduler_running = on_cpu;
    return 0;
}
