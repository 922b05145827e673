/* rspwalk/sampler.h -- a profile of a running target: stop, walk every thread, resume, again.
 *
 * sw_sample_run drives one walker kept across stops (rspwalk/walker.h) at a
 * rate or as fast as the link allows, feeds every walked thread's call path
 * to a merged tree (rspwalk/render.h, a task a thread, count 1 a sample) and
 * to a callback, counts every round trip (the stop's included) and leaves
 * the target as it found it.  `rspwalk --sample` and rspwalkd's samples use
 * it; docs/usage.md says what a QEMU user-mode target can and cannot give.
 *
 * Threads: a run uses its walker (and the link under it) alone, on the
 * calling thread; the cancel flag may be set from any thread.
 */
#ifndef RSPWALK_SAMPLER_H
#define RSPWALK_SAMPLER_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_walker;
struct sw_stack;
struct sw_tree;

/* How a sample stops the target. */
enum sw_sample_stop {
    /* SIGNAL where the stub is a QEMU user-mode process on this host (it
     * ignores the interrupt byte while the guest runs), else INTERRUPT. */
    SW_SAMPLE_STOP_AUTO = 0,
    /* ProcDebug's pause: the interrupt (all-stop: every thread stops). */
    SW_SAMPLE_STOP_INTERRUPT,
    /* SIGINT sent to one guest thread of a QEMU user-mode process on this
     * host (tgkill on the host thread the stub names), a different thread
     * each sample; QEMU reports that thread's stop and lets the others run:
     * only it is walked, the others are SW_SAMPLE_RUNNING. */
    SW_SAMPLE_STOP_SIGNAL,
    /* A link in non-stop mode (rsp_session_config.non_stop; gdbserver
     * offers it): the threads taken in two groups, first those that ran
     * since their last walk, then the parked ones (PC and SP those of their
     * last walk), each group paused with one request, fetched, walked and
     * resumed with one request (sw_proc_rsp_pause_threads, _resume_threads),
     * so that a busy thread is not stopped while the others are stopped and
     * read.  A sample is then not one instant: its groups are seen one after
     * the other.  AUTO picks it on a non-stop link. */
    SW_SAMPLE_STOP_THREADS,
};

/* What became of one thread in one sample. */
enum sw_sample_state {
    SW_SAMPLE_WALKED = 0, /* stopped and walked: the stack says how far */
    SW_SAMPLE_RUNNING,    /* the stub let it run during the stop: not walked */
    SW_SAMPLE_FAILED,     /* stopped, but its walk failed (the message in the sample) */
};

struct sw_sample_thread {
    sw_tid tid;
    const char *label; /* borrowed for the callback: "p1f2.1f3" */
    enum sw_sample_state state;
    const struct sw_stack *stack; /* borrowed for the callback; NULL unless WALKED */
};

/* One sample, handed to sw_sample_config.on_sample. */
struct sw_sample {
    uint64_t index;   /* from 0 */
    uint64_t time_us; /* since the run began, when the stop was asked for */
    uint64_t round_trips;
    size_t nthreads;
    const struct sw_sample_thread *threads; /* borrowed for the callback */
    const char *error;                      /* borrowed; NULL: every walk succeeded */
};

/* Counters of a run (sw_sample_run's STATS; also handed to progress). */
struct sw_sample_stats {
    uint64_t samples;         /* stops walked */
    uint64_t walks;           /* thread walks */
    uint64_t walks_bottom;    /* of which reached the bottom of the stack */
    uint64_t threads_running; /* threads marked SW_SAMPLE_RUNNING, summed over samples */
    uint64_t walks_failed;    /* thread walks that failed */
    uint64_t round_trips;     /* the run's, every stop's included (a QEMU signal counts one) */
    uint64_t stops_failed;    /* stops that did not come, the target left running */
    uint64_t late_ticks;      /* ticks missed because a sample took longer than the period */
    uint64_t resyncs;         /* QEMU user's stub brought back in step (a stop or sample lost) */
    uint64_t elapsed_us;      /* from the first stop asked for to the last resume */
    uint64_t stopped_us;      /* time the target spent stopped for samples (THREADS:
                               * the first group's, the threads that ran) */
    enum sw_sample_stop stop; /* the method used (never AUTO) */
    /* Of WALKS, those taken again: the thread (not the one that reported
     * the stop) started from the registers and over the stack bytes of its
     * last walk, which reached the bottom, so that walk is this one (a
     * parked thread); counted in WALKS_BOTTOM too. */
    uint64_t walks_reused;
    /* Stops that came with a signal of the program's own (not the
     * interrupt's SIGINT, not a SIGTRAP), delivered to it at the resume
     * that followed, as gdb's default "handle ... pass" does. */
    uint64_t signals_delivered;
};

/* What a run does.  Every member's zero is its default. */
struct sw_sample_config {
    double seconds;       /* how long to sample; 0: until max_samples or cancel */
    double hz;            /* samples a second; 0: as fast as the link allows */
    uint64_t max_samples; /* 0: no limit */
    enum sw_sample_stop stop;
    /* OPTIONAL: each walked thread's path goes here, count 1 a sample: a
     * task a thread (target TARGET, added when first seen), walked outermost
     * first and named as sw_render_stacks_tree names frames.  Borrowed. */
    struct sw_tree *tree;
    const char *target; /* the tree tasks' target; NULL: none */
    /* OPTIONAL: called after every sample (the walks of every thread). */
    void (*on_sample)(void *arg, const struct sw_sample *s);
    /* OPTIONAL: called about every PROGRESS_MS (default 200) with the
     * counters so far (a progress line, the server's progress events). */
    void (*progress)(void *arg, const struct sw_sample_stats *st);
    void *arg;
    unsigned progress_ms;
    /* OPTIONAL: the run ends at the next sample once *CANCEL is true. */
    const volatile bool *cancel;
};

/* Sample the process of walker W as CFG says (NULL: the defaults, which
 * run until cancelled, so give one).  W is kept: its library state, plan
 * and caches serve every stop.  Before the first sample a stopped target
 * is resumed (with no signal); after the last one it is left stopped if it
 * was stopped at the start, else resumed.  A stop that came with the
 * program's own signal (not SIGINT, not SIGTRAP) is sampled, and the
 * signal delivered at the next resume (STATS->signals_delivered).  A stop that does not come
 * (SW_ETIMEDOUT) is counted in STATS and the next tick tries again; three
 * in a row end the run.  STATS (may be NULL) gets the counters also on
 * failure.  Returns 0, or SW_EUNSUP (no ProcDebug, or no way to stop this
 * stub), SW_EEXITED (the target exited: the samples so far stand), a link
 * error, or SW_ENOMEM, with the message in ERR (may be NULL). */
SW_API int sw_sample_run(struct sw_walker *w, const struct sw_sample_config *cfg,
                         struct sw_sample_stats *stats, struct sw_errbuf *err);

/* The name of STOP: "auto", "interrupt", "signal", "threads". */
SW_API const char *sw_sample_stop_name(enum sw_sample_stop stop);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_SAMPLER_H */
