/* tests/unit/compose/test_walker_set.c -- a walker set of walkers made by the caller, one link
 * each.
 *
 * sw_walker_set_create and sw_walker_set_add gather walkers over processes of
 * their own (here fake ones of two architectures, as several QEMU user
 * instances would be); sw_walker_set_walk_all walks every thread of every
 * walker in the set's order, goes on past a failed walk and reports the
 * first; a callback can stop it; the threads from the first one that is not
 * the stopped one are handed to the process state ahead (sw_walker_prefetch).  The shared-link set
 * (vAttach through gdbserver --multi) is tested against gdbserver: tests/integration/run-multi.sh,
 * the one-link-per-walker set against QEMU: run-qemu-procdebug.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "rspwalk/walker_set.h"
#include "tests/tools/fake_proc.h"

/* A walker over a fake process of arch A whose threads TIDS all stop at PC
 * (no stack and no steppers: the walk ends after frame 0). */
static struct sw_walker *
walker_regs(const struct arch_desc *a, const sw_tid *tids, size_t n, size_t nregs, sw_addr pc,
            int64_t pid)
{
    struct sw_proc *p = fake_proc_new(a);
    fake_proc_set_threads(p, tids, n);
    for (size_t i = 0; i < nregs; i++) {
        fake_proc_set_reg(p, tids[i], (unsigned)a->dw_pc, pc);
        fake_proc_set_reg(p, tids[i], (unsigned)a->dw_sp, 0x7000);
        fake_proc_set_reg(p, tids[i], (unsigned)a->dw_fp, 0);
        if (a->dw_ra >= 0 && a->dw_ra != a->dw_pc)
            fake_proc_set_reg(p, tids[i], (unsigned)a->dw_ra, 0);
    }
    p->pid = pid;
    struct sw_walker_config cfg = { .no_default_steppers = true };
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_walker_new(p, &cfg, &w, &err), 0);
    return w;
}

static struct sw_walker *
walker_at(const struct arch_desc *a, const sw_tid *tids, size_t n, sw_addr pc, int64_t pid)
{
    return walker_regs(a, tids, n, n, pc, pid);
}

struct seen {
    size_t n, stop_after;
    size_t walker[8];
    sw_tid tid[8];
    int rc[8];
    sw_addr pc[8];
};

static bool
record(void *arg, size_t i, sw_tid tid, int rc, const struct sw_stack *st)
{
    struct seen *s = arg;
    if (s->n < 8) {
        s->walker[s->n] = i;
        s->tid[s->n] = tid;
        s->rc[s->n] = rc;
        s->pc[s->n] = rc == 0 && st->n > 0 ? st->frames[0].ra : 0;
    }
    s->n++;
    return s->stop_after != 0 && s->n == s->stop_after;
}

static void
test_walker_set_of_own_links_walks_every_thread_of_every_walker(void **state)
{
    (void)state;
    static const sw_tid x86_tids[] = { 11, 12 }, a64_tids[] = { 7 };
    struct sw_walker_set *set;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_walker_set_create(&set, &err), 0);
    assert_int_equal(sw_walker_set_count(set), 0);
    assert_null(sw_walker_set_session(set));
    struct sw_walker *w1 = walker_at(&arch_x86_64, x86_tids, 2, 0x401000, 100);
    struct sw_walker *w2 = walker_at(&arch_aarch64, a64_tids, 1, 0x400800, 200);
    assert_int_equal(sw_walker_set_add(set, w1), 0);
    assert_int_equal(sw_walker_set_add(set, w2), 0);
    assert_int_equal(sw_walker_set_add(set, w1), SW_EINVAL);
    assert_non_null(strstr(sw_walker_set_errmsg(set), "already in it"));
    assert_int_equal(sw_walker_set_add(set, NULL), SW_EINVAL);
    assert_int_equal(sw_walker_set_count(set), 2);
    assert_ptr_equal(sw_walker_set_walker(set, 1), w2);
    assert_int_equal(sw_walker_set_pid(set, 0), 100);
    assert_int_equal(sw_walker_set_pid(set, 1), 200);

    struct seen s = { 0 };
    assert_int_equal(sw_walker_set_walk_all(set, record, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.walker[0], 0);
    assert_int_equal(s.tid[0], 11);
    assert_int_equal(s.pc[0], 0x401000);
    assert_int_equal(s.tid[1], 12);
    assert_int_equal(s.walker[2], 1);
    assert_int_equal(s.tid[2], 7);
    assert_int_equal(s.pc[2], 0x400800);
    /* A callback ends the walk. */
    struct seen one = { .stop_after = 1 };
    assert_int_equal(sw_walker_set_walk_all(set, record, &one), 0);
    assert_int_equal(one.n, 1);
    /* No ProcDebug on these: detach has nothing to do. */
    assert_int_equal(sw_walker_set_detach(set), 0);
    assert_int_equal(sw_walker_set_walk_all(set, NULL, NULL), 0);
    sw_walker_set_free(set);
}

static void
test_walker_set_walk_all_goes_on_past_a_failed_walk(void **state)
{
    (void)state;
    static const sw_tid tids[] = { 1 };
    struct sw_walker_set *set;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_walker_set_create(&set, &err), 0);
    /* Thread 5 is listed but has no registers: its walk fails. */
    static const sw_tid two[] = { 1, 5 };
    struct sw_walker *bad = walker_regs(&arch_x86_64, two, 2, 1, 0x1000, 300);
    assert_int_equal(sw_walker_set_add(set, bad), 0);
    assert_int_equal(sw_walker_set_add(set, walker_at(&arch_aarch64, tids, 1, 0x2000, 301)), 0);
    struct seen s = { 0 };
    int rc = sw_walker_set_walk_all(set, record, &s);
    assert_true(rc < 0);
    assert_non_null(strstr(sw_walker_set_errmsg(set), "process 300 thread 5"));
    assert_int_equal(s.n, 3); /* the next walker was still walked */
    assert_int_equal(s.rc[0], 0);
    assert_true(s.rc[1] < 0);
    assert_int_equal(s.rc[2], 0);
    assert_int_equal(s.pc[2], 0x2000);
    sw_walker_set_free(set);
    sw_walker_set_free(NULL);
}

/* What the process state had been told ahead when each thread was walked. */
struct ahead {
    struct sw_proc *p;
    size_t n;
    unsigned prefetches[8];
};

static bool
record_ahead(void *arg, size_t i, sw_tid tid, int rc, const struct sw_stack *st)
{
    struct ahead *a = arg;
    (void)i, (void)tid, (void)rc, (void)st;
    if (a->n < 8)
        a->prefetches[a->n] = fake_proc_prefetches(a->p);
    a->n++;
    return false;
}

/* A walk of every thread of one walker whose threads are TIDS (1 stopped). */
static struct sw_walker_set *
set_of(const sw_tid *tids, size_t n, struct ahead *a)
{
    struct sw_walker_set *set;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_walker_set_create(&set, &err), 0);
    struct sw_walker *w = walker_at(&arch_x86_64, tids, n, 0x401000, 100);
    a->p = sw_walker_proc(w);
    a->p->default_tid = 1; /* the stopped thread, wherever it is listed */
    fake_proc_enable_prefetch(a->p);
    assert_int_equal(sw_walker_set_add(set, w), 0);
    return set;
}

static void
test_walker_set_walk_all_fetches_the_threads_after_the_stopped_one_ahead(void **state)
{
    (void)state;
    const sw_tid *got;
    /* The stopped thread first: the others are fetched ahead, once, right
     * before the first of them is walked. */
    static const sw_tid first[] = { 1, 2, 3 };
    struct ahead a = { 0 };
    struct sw_walker_set *set = set_of(first, 3, &a);
    assert_int_equal(sw_walker_set_walk_all(set, record_ahead, &a), 0);
    assert_int_equal(a.n, 3);
    assert_int_equal(a.prefetches[0], 0);
    assert_int_equal(a.prefetches[1], 1);
    assert_int_equal(a.prefetches[2], 1);
    assert_int_equal(fake_proc_prefetched(a.p, &got), 2);
    assert_int_equal(got[0], 2);
    assert_int_equal(got[1], 3);
    sw_walker_set_free(set);

    /* The stopped thread in the middle: everything from the first thread on. */
    static const sw_tid middle[] = { 2, 1, 3 };
    a = (struct ahead){ 0 };
    set = set_of(middle, 3, &a);
    assert_int_equal(sw_walker_set_walk_all(set, record_ahead, &a), 0);
    assert_int_equal(a.prefetches[0], 1);
    assert_int_equal(fake_proc_prefetched(a.p, &got), 3);
    assert_int_equal(got[1], 1);
    sw_walker_set_free(set);

    /* One other thread alone: its walk costs what fetching it ahead would. */
    static const sw_tid two[] = { 1, 2 };
    a = (struct ahead){ 0 };
    set = set_of(two, 2, &a);
    assert_int_equal(sw_walker_set_walk_all(set, record_ahead, &a), 0);
    assert_int_equal(fake_proc_prefetches(a.p), 0);
    sw_walker_set_free(set);
}

static void
test_walker_set_walk_all_reports_a_failed_prefetch_and_still_walks(void **state)
{
    (void)state;
    static const sw_tid tids[] = { 1, 2, 3 };
    struct ahead a = { 0 };
    struct sw_walker_set *set = set_of(tids, 3, &a);
    fake_proc_fail_prefetch(a.p, SW_ETIMEDOUT);
    assert_int_equal(sw_walker_set_walk_all(set, record_ahead, &a), SW_ETIMEDOUT);
    assert_non_null(strstr(sw_walker_set_errmsg(set), "process 100: prefetch: injected failure"));
    assert_int_equal(a.n, 3);
    sw_walker_set_free(set);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walker_set_of_own_links_walks_every_thread_of_every_walker),
        cmocka_unit_test(test_walker_set_walk_all_goes_on_past_a_failed_walk),
        cmocka_unit_test(test_walker_set_walk_all_fetches_the_threads_after_the_stopped_one_ahead),
        cmocka_unit_test(test_walker_set_walk_all_reports_a_failed_prefetch_and_still_walks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
