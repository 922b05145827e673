/* tests/unit/sample/test_sampler.c -- sw_sample_run's loop, and the speedscope writer.
 *
 * A fake process (tests/tools/fake_proc.h) over tests/unit/data/aarch64_frames.elf with two
 * threads on a built stack, given a fake ProcDebug that records every pause and resume and
 * fails the ones a test scripts; a process without an RSP session counts as stopped when the
 * run begins.  A target found running is an RSP process over a recorded transcript
 * (tests/tools/fake_transport.h), whose round trips the run counts.  The speedscope writer is
 * checked whole against its expected text.  Not the QEMU signal stops (run-sample.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "rsp/session.h"
#include "rspwalk/sampler.h"
#include "tests/tools/fake_proc.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"
#include "tests/unit/walker/test_frame_func.h"
#include "util/util.h"

#define ELF SW_TEST_DATA "/aarch64_frames.elf"
#define S   0x7fff0400u /* thread 1's SP; the stack of test_frame_func.c's walks */

/* ---- the fake ProcDebug ----------------------------------------------------- */

/* What the target did, as the fake sees it; one test at a time. */
static struct {
    bool stopped, terminated;
    unsigned pauses, resumes;
    unsigned pause_fail_from; /* pauses from this one on (1-based) fail; 0: none */
    unsigned pause_fail_count;
    int pause_rc;         /* ...with this code */
    unsigned resume_fail; /* this resume (1-based) fails with SW_ECONN; 0: none */
    unsigned exit_at;     /* this pause (1-based) finds the target exited; 0: never */
    char ops[256];        /* "r" a resume, "p" a pause, "x" a failed pause, in order */
    bool misuse;          /* paused a stopped target or resumed a running one */
} fk;

static void
fk_op(char c)
{
    size_t n = strlen(fk.ops);
    if (n + 1 < sizeof fk.ops)
        fk.ops[n] = c;
}

static int
fk_pause(struct sw_proc *p, sw_tid tid)
{
    (void)tid;
    fk.pauses++;
    if (fk.exit_at && fk.pauses >= fk.exit_at) {
        fk.terminated = true;
        return sw_fail(&p->err, SW_EEXITED, "the target exited with status 0");
    }
    if (fk.pause_fail_from && fk.pauses >= fk.pause_fail_from &&
        fk.pauses < fk.pause_fail_from + fk.pause_fail_count) {
        fk_op('x');
        return sw_fail(&p->err, fk.pause_rc, "no stop reply within 200 ms");
    }
    fk_op('p');
    fk.misuse |= fk.stopped;
    fk.stopped = true;
    p->stop_gen++;
    return 0;
}

static int
fk_resume(struct sw_proc *p, sw_tid tid, int sig)
{
    (void)tid;
    assert_int_equal(sig, 0);
    fk.resumes++;
    if (fk.resumes == fk.resume_fail)
        return sw_fail(&p->err, SW_ECONN, "vCont;c: connection reset");
    fk_op('r');
    fk.misuse |= !fk.stopped;
    fk.stopped = false;
    return 0;
}

static int
fk_detach(struct sw_proc *p, bool leave_stopped)
{
    (void)p;
    (void)leave_stopped;
    return 0;
}

static bool
fk_is_terminated(struct sw_proc *p)
{
    (void)p;
    return fk.terminated;
}

static int
fk_notification_fd(struct sw_proc *p)
{
    (void)p;
    return -1;
}

static int
fk_handle_debug_event(struct sw_proc *p, bool block)
{
    (void)p;
    (void)block;
    return SW_ETIMEDOUT;
}

static const struct sw_procdebug_ops fk_debug = {
    .pause = fk_pause,
    .resume = fk_resume,
    .detach = fk_detach,
    .is_terminated = fk_is_terminated,
    .notification_fd = fk_notification_fd,
    .handle_debug_event = fk_handle_debug_event,
};

/* ---- the target ------------------------------------------------------------- */

/* Two threads of aarch64_frames.elf: thread 1 in leaf (leaf <- multi <- outer <- _start),
 * thread 2 in multi after its call of leaf (multi <- outer <- _start); test_frame_func.c
 * walks the same stack. */
static void
target_open(struct ff_fixture *fx)
{
    ff_open(fx, &arch_aarch64, ELF, FF_DEFAULTS);
    memset(&fk, 0, sizeof fk);
    fk.stopped = true;
    fx->p->debug = &fk_debug;
    fake_proc_put_word(fx->p, S + 96, S + 112); /* multi's record: outer's x29 */
    fake_proc_put_word(fx->p, S + 104, ff_sym(fx, "outer") + 16);
    fake_proc_put_word(fx->p, S + 112, 0); /* outer's record: _start cleared x29 */
    fake_proc_put_word(fx->p, S + 120, ff_sym(fx, "_start") + 8);
    const sw_tid tids[] = { 1, 2 };
    fake_proc_set_threads(fx->p, tids, 2); /* before the registers: it makes new threads */
    ff_regs(fx, ff_sym(fx, "leaf") + 4, S, S + 96, ff_sym(fx, "multi") + 36);
    fake_proc_set_reg(fx->p, 2, (unsigned)arch_aarch64.dw_pc, ff_sym(fx, "multi") + 36);
    fake_proc_set_reg(fx->p, 2, (unsigned)arch_aarch64.dw_sp, S + 16);
    fake_proc_set_reg(fx->p, 2, (unsigned)arch_aarch64.dw_fp, S + 96);
    fake_proc_set_reg(fx->p, 2, (unsigned)arch_aarch64.dw_ra, 0xdead);
}

/* What a run's samples said, kept by the callback. */
struct seen {
    uint64_t samples;
    uint64_t time_us[64];
    size_t nthreads[64];
    unsigned walked, bottom;
    bool errors;
    uint64_t cancel_after; /* set *cancel after this many samples; 0: never */
    volatile bool *cancel;
    unsigned sleep_ms; /* each sample takes this long */
};

static void
on_sample(void *arg, const struct sw_sample *s)
{
    struct seen *sn = arg;
    assert_int_equal(s->index, sn->samples);
    if (sn->samples < 64) {
        sn->time_us[sn->samples] = s->time_us;
        sn->nthreads[sn->samples] = s->nthreads;
    }
    for (size_t i = 0; i < s->nthreads; i++) {
        if (s->threads[i].state != SW_SAMPLE_WALKED)
            continue;
        sn->walked++;
        sn->bottom += s->threads[i].stack->end == SW_END_BOTTOM;
    }
    sn->errors |= s->error != NULL;
    sn->samples++;
    if (sn->cancel_after && sn->samples == sn->cancel_after)
        *sn->cancel = true;
    if (sn->sleep_ms) {
        struct timespec ts = { 0, (long)sn->sleep_ms * 1000000L };
        nanosleep(&ts, NULL);
    }
}

/* T written folded; caller frees. */
static char *
folded(const struct sw_tree *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(sw_tree_write(t, SW_TREE_FOLDED, f), 0);
    fclose(f);
    return buf;
}

/* ---- counts, the tree, the target left as found ----------------------------- */

static void
test_sampler_max_samples_walks_every_thread_and_leaves_the_target_stopped(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_tree *tree;
    struct sw_sample_stats st;
    struct sw_errbuf err = { 0 };
    struct seen sn = { 0 };
    target_open(&fx);
    assert_int_equal(sw_tree_new(&tree), 0);
    struct sw_sample_config cfg = {
        .max_samples = 5, .tree = tree, .target = "fake", .on_sample = on_sample, .arg = &sn
    };
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, &err), 0);
    /* stopped when found: resumed first, stopped by the last sample, left so */
    assert_string_equal(fk.ops, "rprprprprp");
    assert_false(fk.misuse);
    assert_true(fk.stopped);
    assert_int_equal(st.samples, 5);
    assert_int_equal(sn.samples, 5);
    assert_int_equal(st.walks, 10);
    assert_int_equal(st.walks_bottom, 10);
    /* thread 2 (not the one that reported the stops) never moved: its first walk taken again */
    assert_int_equal(st.walks_reused, 4);
    assert_int_equal(st.walks_failed, 0);
    assert_int_equal(st.threads_running, 0);
    assert_int_equal(st.stops_failed, 0);
    assert_int_equal(st.stop, SW_SAMPLE_STOP_INTERRUPT);
    assert_int_equal(st.round_trips, 0); /* no RSP session under the fake */
    assert_int_equal(sn.walked, 10);
    assert_int_equal(sn.bottom, 10);
    assert_false(sn.errors);
    assert_int_equal(sn.nthreads[4], 2);
    /* a task a thread, each path outermost first, count 1 a sample */
    assert_int_equal(sw_tree_tasks(tree), 2);
    char *s = folded(tree);
    assert_string_equal(s, "_start;outer;multi 5\n_start;outer;multi;leaf 5\n");
    free(s);
    sw_tree_free(tree);
    ff_close(&fx);
}

/* A callback that moves thread 2 between samples: a word of its stack that its walk does not
 * take (multi's locals), or a register its walk does not use. */
struct mover {
    struct seen sn;
    struct sw_proc *p;
    bool reg;
    sw_word n;
};

static void
move_thread_2(void *arg, const struct sw_sample *s)
{
    struct mover *m = arg;
    on_sample(&m->sn, s);
    m->n++;
    if (m->reg)
        fake_proc_set_reg(m->p, 2, 19, m->n);
    else
        fake_proc_put_word(m->p, S + 40, m->n);
}

static void
test_sampler_walks_again_a_thread_whose_stack_or_registers_moved(void **state)
{
    (void)state;
    for (int reg = 0; reg <= 1; reg++) {
        struct ff_fixture fx;
        struct sw_tree *tree;
        struct sw_sample_stats st;
        target_open(&fx);
        struct mover m = { .p = fx.p, .reg = reg };
        assert_int_equal(sw_tree_new(&tree), 0);
        struct sw_sample_config cfg = {
            .max_samples = 5, .tree = tree, .target = "fake", .on_sample = move_thread_2, .arg = &m
        };
        assert_int_equal(sw_sample_run(fx.w, &cfg, &st, NULL), 0);
        assert_int_equal(st.walks, 10);
        assert_int_equal(st.walks_bottom, 10);
        assert_int_equal(st.walks_reused, 0);
        /* the same stacks all the same */
        char *s = folded(tree);
        assert_string_equal(s, "_start;outer;multi 5\n_start;outer;multi;leaf 5\n");
        free(s);
        sw_tree_free(tree);
        ff_close(&fx);
    }
}

static void
test_sampler_cancel_flag_ends_the_run_at_the_next_sample(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_sample_stats st;
    volatile bool cancel = false;
    struct seen sn = { .cancel_after = 3, .cancel = &cancel };
    target_open(&fx);
    struct sw_sample_config cfg = { .on_sample = on_sample, .arg = &sn, .cancel = &cancel };
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, NULL), 0);
    assert_int_equal(st.samples, 3);
    assert_string_equal(fk.ops, "rprprp");
    assert_true(fk.stopped);
    /* cancelled before it began: the target is not touched */
    memset(fk.ops, 0, sizeof fk.ops);
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, NULL), 0);
    assert_int_equal(st.samples, 0);
    assert_string_equal(fk.ops, "");
    assert_true(fk.stopped);
    ff_close(&fx);
}

/* ---- the rate --------------------------------------------------------------- */

static void
test_sampler_rate_places_one_sample_in_each_period(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_sample_stats st;
    struct seen sn = { 0 };
    target_open(&fx);
    /* 200 Hz: sample K is asked for within period K (5 ms each), never before it */
    struct sw_sample_config cfg = {
        .hz = 200, .max_samples = 10, .on_sample = on_sample, .arg = &sn
    };
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, NULL), 0);
    assert_int_equal(st.samples, 10);
    for (uint64_t k = 0; k < 10; k++)
        if (sn.time_us[k] < k * 5000)
            fail_msg("sample %lu at %lu us, before its period began at %lu us", (unsigned long)k,
                     (unsigned long)sn.time_us[k], (unsigned long)(k * 5000));
    assert_true(st.elapsed_us >= 45000);
    assert_true(st.stopped_us <= st.elapsed_us);
    ff_close(&fx);
}

static void
test_sampler_slow_samples_skip_ticks_and_never_burst(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_sample_stats st;
    struct seen sn = { .sleep_ms = 12 };
    target_open(&fx);
    /* 500 Hz asked, 12 ms a sample: ticks are missed, counted, and not made up */
    struct sw_sample_config cfg = {
        .hz = 500, .max_samples = 5, .on_sample = on_sample, .arg = &sn
    };
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, NULL), 0);
    assert_int_equal(st.samples, 5);
    assert_true(st.late_ticks >= 4);
    for (int k = 1; k < 5; k++)
        if (sn.time_us[k] - sn.time_us[k - 1] < 12000)
            fail_msg("samples %d and %d %lu us apart: a burst", k - 1, k,
                     (unsigned long)(sn.time_us[k] - sn.time_us[k - 1]));
    ff_close(&fx);
}

static void
test_sampler_seconds_bound_the_run(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_sample_stats st;
    target_open(&fx);
    struct sw_sample_config cfg = { .seconds = 0.05, .hz = 100 };
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, NULL), 0);
    assert_true(st.samples >= 1 && st.samples <= 6);
    assert_true(st.elapsed_us >= 50000);
    assert_true(fk.stopped);
    ff_close(&fx);
}

/* ---- stops that do not come ------------------------------------------------- */

static void
test_sampler_a_missed_stop_is_counted_and_retried(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_sample_stats st;
    target_open(&fx);
    fk.pause_fail_from = 2; /* the second and third stops do not come */
    fk.pause_fail_count = 2;
    fk.pause_rc = SW_ETIMEDOUT;
    struct sw_sample_config cfg = { .max_samples = 3 };
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, NULL), 0);
    assert_int_equal(st.samples, 3);
    assert_int_equal(st.stops_failed, 2);
    /* the target ran on after each: the next tick stops it, no resume between */
    assert_string_equal(fk.ops, "rprxxprp");
    assert_false(fk.misuse);
    assert_true(fk.stopped);
    ff_close(&fx);
}

static void
test_sampler_three_missed_stops_in_a_row_end_the_run(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_sample_stats st;
    struct sw_errbuf err = { 0 };
    target_open(&fx);
    fk.pause_fail_from = 2; /* every stop after the first: the stub no longer stops */
    fk.pause_fail_count = 1000;
    fk.pause_rc = SW_ETIMEDOUT;
    struct sw_sample_config cfg = { .max_samples = 100 };
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, &err), SW_ETIMEDOUT);
    assert_int_equal(err.code, SW_ETIMEDOUT);
    assert_contains(err.msg, "stopping");
    assert_contains(err.msg, "no stop reply within 200 ms");
    assert_contains(err.msg, "(3 stops in a row did not come)");
    assert_int_equal(st.samples, 1);
    /* three in the run, and the one that tried to leave the target stopped as found */
    assert_string_equal(fk.ops, "rprxxxx");
    assert_int_equal(st.stops_failed, 4);
    ff_close(&fx);
}

/* ---- failures --------------------------------------------------------------- */

static void
test_sampler_refuses_a_target_it_cannot_sample(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_sample_stats st;
    struct sw_errbuf err = { 0 };
    struct sw_sample_config cfg = { .max_samples = 1 };
    target_open(&fx);
    fx.p->debug = NULL;
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, &err), SW_EUNSUP);
    assert_contains(err.msg, "cannot be stopped and resumed");
    fx.p->debug = &fk_debug;
    cfg.hz = -1;
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, &err), SW_EINVAL);
    assert_contains(err.msg, "negative rate");
    cfg.hz = 0;
    cfg.stop = SW_SAMPLE_STOP_SIGNAL;
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, &err), SW_EUNSUP);
    assert_contains(err.msg, "not a QEMU user-mode process");
    cfg.stop = SW_SAMPLE_STOP_AUTO;
    fk.terminated = true;
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, &err), SW_EEXITED);
    assert_contains(err.msg, "has exited");
    assert_string_equal(fk.ops, ""); /* none of them touched the target */
    ff_close(&fx);
}

static void
test_sampler_exit_and_dead_link_end_the_run_with_the_samples_so_far(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_sample_stats st;
    struct sw_errbuf err = { 0 };
    struct sw_sample_config cfg = { .max_samples = 10 };
    target_open(&fx);
    fk.exit_at = 3;
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, &err), SW_EEXITED);
    assert_contains(err.msg, "exited");
    assert_int_equal(st.samples, 2);
    assert_string_equal(fk.ops, "rprpr"); /* nothing asked of an exited target */
    ff_close(&fx);

    target_open(&fx);
    fk.resume_fail = 2;
    assert_int_equal(sw_sample_run(fx.w, &cfg, &st, &err), SW_ECONN);
    assert_contains(err.msg, "resuming: vCont;c: connection reset");
    assert_int_equal(st.samples, 1);
    assert_string_equal(fk.ops, "rp"); /* a dead link is left alone */
    ff_close(&fx);
}

/* Every allocation of a run failing in turn: the run fails with SW_ENOMEM and a message,
 * or succeeds; the target is left stopped either way, and a tree holds whole paths only. */
static void
test_sampler_every_allocation_fails_cleanly(void **state)
{
    (void)state;
    for (unsigned long n = 1;; n++) {
        struct ff_fixture fx;
        struct sw_tree *tree;
        struct sw_sample_stats st;
        struct sw_errbuf err = { 0 };
        target_open(&fx);
        assert_int_equal(sw_tree_new(&tree), 0);
        struct sw_sample_config cfg = { .max_samples = 3, .tree = tree, .target = "fake" };
        sw_test_fail_alloc_at(n);
        int rc = sw_sample_run(fx.w, &cfg, &st, &err);
        sw_test_fail_alloc_at(0);
        assert_true(fk.stopped);
        assert_false(fk.misuse);
        char *s = folded(tree);
        unsigned long sum = 0;
        for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
            sum += strtoul(strrchr(line, ' ') + 1, NULL, 10);
        free(s);
        sw_tree_free(tree);
        ff_close(&fx);
        if (rc == 0) {
            if (sum != 6)
                fail_msg("allocation %lu: %lu paths, walks failed %lu: %s", n, sum,
                         (unsigned long)st.walks_failed, err.msg);
            break;
        }
        if (rc != SW_ENOMEM)
            fail_msg("allocation %lu: rc %d (%s), want SW_ENOMEM", n, rc, err.msg);
        if (err.msg[0] == '\0')
            fail_msg("allocation %lu: SW_ENOMEM without a message", n);
        assert_true(sum <= 6);
        assert_true(n < 100000);
    }
}

/* ---- a target found running, over RSP ---------------------------------------- */

/* An x86-64 stub without target.xml (the architecture from a local x86-64 ELF, gdb's default
 * numbering); the stop replies carry rbp, rsp and rip, all frame 0 needs when the walker has
 * no stepper. */
#define STOP_T02 "T0206:10e0000000000000;07:00e0000000000000;10:0810400000000000;thread:p10.10;"
#define STOP_T05 "T0506:10e0000000000000;07:00e0000000000000;10:0810400000000000;thread:p10.10;"
/* The connect of such a stub, up to the first resume's vCont probe. */
#define CONNECT_X86                                                                                \
    "-> qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;"                   \
    "xmlRegisters=i386\n"                                                                          \
    "<- PacketSize=108;QStartNoAckMode+;multiprocess+\n"                                           \
    "-> QStartNoAckMode\n<- OK\n"                                                                  \
    "-> ?\n<- " STOP_T05 "\n"                                                                      \
    "-> vCont?\n<- vCont;c;C;t;s;S\n"

/* A walker over transcript TEXT (CONNECT_X86 and what follows), the target resumed by the
 * caller as a front end would; *FS, *S, *P and *W set, the walker owning the rest. */
static void
open_running(const char *text, struct fake_script **fs, struct rsp_session **s, struct sw_proc **p,
             struct sw_walker **w)
{
    struct rsp_session_config scfg;
    struct sw_errbuf err = { 0 };
    *fs = fake_script_parse(text);
    assert_non_null(*fs);
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = 200;
    scfg.no_prefetch = true;
    assert_int_equal(rsp_session_connect(fake_transport_new(*fs), &scfg, s, &err), 0);
    struct sw_rsp_config pcfg = { .exe = SW_TEST_DATA "/x86_64_frames.elf" };
    if (sw_proc_rsp_new(*s, &pcfg, p, &err) != 0)
        fail_msg("sw_proc_rsp_new: %s (transcript: %s)", err.msg, fake_script_error(*fs));
    struct sw_walker_config wcfg = { .exe = pcfg.exe, .no_default_steppers = true };
    if (sw_walker_new(*p, &wcfg, w, &err) != 0)
        fail_msg("sw_walker_new: %s (transcript: %s)", err.msg, fake_script_error(*fs));
    assert_int_equal((*p)->debug->resume(*p, SW_TID_DEFAULT, 0), 0);
}

static void
test_sampler_running_target_is_left_running_and_round_trips_counted(void **state)
{
    (void)state;
    struct fake_script *fs;
    struct rsp_session *s;
    struct sw_errbuf err = { 0 };
    struct sw_proc *p = NULL;
    struct sw_walker *w = NULL;
    /* connect, a resume by the caller; then two samples (the interrupt, the thread list,
     * the resume after each), and the target resumed at the end as it was found */
    open_running(CONNECT_X86 "-> vCont;c\n"
                             "-! interrupt\n<- " STOP_T02 "\n"
                             "-> qfThreadInfo\n<- mp10.10\n-> qsThreadInfo\n<- l\n"
                             "-> vCont;c\n"
                             "-! interrupt\n<- " STOP_T02 "\n"
                             "-> qfThreadInfo\n<- mp10.10\n-> qsThreadInfo\n<- l\n"
                             "-> vCont;c\n",
                 &fs, &s, &p, &w);
    assert_false(sw_proc_rsp_thread_stopped(p, SW_TID_DEFAULT));
    uint64_t rt0 = rsp_session_stats(s)->round_trips;

    struct sw_sample_stats st;
    struct seen sn = { 0 };
    struct sw_sample_config cfg = { .max_samples = 2, .on_sample = on_sample, .arg = &sn };
    int rc = sw_sample_run(w, &cfg, &st, &err);
    if (rc != 0)
        fail_msg("sw_sample_run: %d %s (transcript: %s)", rc, err.msg, fake_script_error(fs));
    assert_string_equal(fake_script_error(fs), "");
    assert_true(fake_script_done(fs));
    assert_false(sw_proc_rsp_thread_stopped(p, SW_TID_DEFAULT)); /* running, as found */
    assert_int_equal(st.samples, 2);
    assert_int_equal(st.walks, 2);
    /* every exchange of the run counted: per sample the interrupt and two for the thread
     * list; the resumes wait for no reply */
    assert_int_equal(st.round_trips, rsp_session_stats(s)->round_trips - rt0);
    assert_int_equal(st.round_trips, 6);
    sw_walker_free(w);
    fake_script_free(fs);
}

/* A stop the program's own signal brought (SIGTERM from elsewhere, reported before the
 * sampler's tick): taken as the sample's stop without an interrupt (one sent to the stopped
 * process would stop its next run at once), and the signal delivered at the resume; the
 * interrupt's SIGINT is not. */
#define STOP_T0F "T0f06:10e0000000000000;07:00e0000000000000;10:0810400000000000;thread:p10.10;"

static void
test_sampler_delivers_the_programs_signal_and_sends_no_interrupt_to_a_stopped_target(void **state)
{
    (void)state;
    struct fake_script *fs;
    struct rsp_session *s;
    struct sw_errbuf err = { 0 };
    struct sw_proc *p = NULL;
    struct sw_walker *w = NULL;
    open_running(CONNECT_X86 "-> vCont;c\n<- " STOP_T0F "\n"
                             "-> qfThreadInfo\n<- mp10.10\n-> qsThreadInfo\n<- l\n"
                             "-> vCont;C0f:p10.10;c\n"
                             "-! interrupt\n<- " STOP_T02 "\n"
                             "-> qfThreadInfo\n<- mp10.10\n-> qsThreadInfo\n<- l\n"
                             "-> vCont;c\n",
                 &fs, &s, &p, &w);

    struct sw_sample_stats st;
    struct sw_sample_config cfg = { .max_samples = 2 };
    int rc = sw_sample_run(w, &cfg, &st, &err);
    if (rc != 0)
        fail_msg("sw_sample_run: %d %s (transcript: %s)", rc, err.msg, fake_script_error(fs));
    assert_string_equal(fake_script_error(fs), "");
    assert_true(fake_script_done(fs));
    assert_int_equal(st.samples, 2);
    assert_int_equal(st.signals_delivered, 1);
    assert_int_equal(rsp_session_stats(s)->interrupts, 1);
    sw_walker_free(w);
    fake_script_free(fs);
}

/* ---- the speedscope writer -------------------------------------------------- */

static void
test_speedscope_of_a_small_tree_is_exact(void **state)
{
    (void)state;
    static const struct sw_tree_frame b[] = {
        { "main", "/bin/prog", 0x1000 },
        { "a", "/bin/prog", 0x1100 },
        { "b \"q\"", "/bin/prog", 0x1200 },
    };
    static const struct sw_tree_frame c[] = {
        { "main", "/bin/prog", 0x1000 },
        { "a", "/bin/prog", 0x1104 },
        { "0x7000", NULL, 0x7000 },
    };
    struct sw_tree *t;
    size_t t0, t1;
    assert_int_equal(sw_tree_new(&t), 0);
    assert_int_equal(sw_tree_add_task(t, "fake", 100, "p64.65", &t0), 0);
    assert_int_equal(sw_tree_add_task(t, "fake", 100, "p64.66", &t1), 0);
    assert_int_equal(sw_tree_add_path(t, t0, b, 3, 7), 0);
    assert_int_equal(sw_tree_add_path(t, t0, b, 2, 2), 0);
    assert_int_equal(sw_tree_add_path(t, t1, c, 3, 1), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(sw_tree_write_speedscope(t, "prof", f), 0);
    fclose(f);
    assert_string_equal(buf,
                        "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
                        " \"exporter\": \"rspwalk\",\n"
                        " \"name\": \"prof\",\n"
                        " \"activeProfileIndex\": 0,\n"
                        " \"shared\": {\"frames\": [\n"
                        "  {\"name\": \"main\", \"file\": \"/bin/prog\"},\n"
                        "  {\"name\": \"a\", \"file\": \"/bin/prog\"},\n"
                        "  {\"name\": \"b \\\"q\\\"\", \"file\": \"/bin/prog\"},\n"
                        "  {\"name\": \"0x7000\"}]},\n"
                        " \"profiles\": [{\"type\": \"sampled\", \"name\": \"prof\", \"unit\": "
                        "\"none\", \"startValue\": 0,\n"
                        "  \"samples\": [\n"
                        "   [0,1],\n"
                        "   [0,1,2],\n"
                        "   [0,1,3]],\n"
                        "  \"weights\": [2, 7, 1],\n"
                        "  \"endValue\": 10}]}\n");
    free(buf);
    sw_tree_free(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampler_max_samples_walks_every_thread_and_leaves_the_target_stopped),
        cmocka_unit_test(test_sampler_walks_again_a_thread_whose_stack_or_registers_moved),
        cmocka_unit_test(test_sampler_cancel_flag_ends_the_run_at_the_next_sample),
        cmocka_unit_test(test_sampler_rate_places_one_sample_in_each_period),
        cmocka_unit_test(test_sampler_slow_samples_skip_ticks_and_never_burst),
        cmocka_unit_test(test_sampler_seconds_bound_the_run),
        cmocka_unit_test(test_sampler_a_missed_stop_is_counted_and_retried),
        cmocka_unit_test(test_sampler_three_missed_stops_in_a_row_end_the_run),
        cmocka_unit_test(test_sampler_refuses_a_target_it_cannot_sample),
        cmocka_unit_test(test_sampler_exit_and_dead_link_end_the_run_with_the_samples_so_far),
        cmocka_unit_test(
            test_sampler_delivers_the_programs_signal_and_sends_no_interrupt_to_a_stopped_target),
        cmocka_unit_test(test_sampler_every_allocation_fails_cleanly),
        cmocka_unit_test(test_sampler_running_target_is_left_running_and_round_trips_counted),
        cmocka_unit_test(test_speedscope_of_a_small_tree_is_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
