/* cli/cli.h -- what the files of cli/ share. */
#ifndef RSPWALK_CLI_H
#define RSPWALK_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rspwalk/rspwalk.h"

enum cli_format {
    CLI_TEXT,       /* gdb-like (cli/output.c) */
    CLI_JSON,       /* the stack document (sw_render_stacks_json) */
    CLI_FOLDED,     /* the merged tree of the walked threads (sw_tree) as folded stacks */
    CLI_DOT,        /* ... as STAT's dot */
    CLI_TREE,       /* ... as JSON */
    CLI_SPEEDSCOPE, /* ... as a speedscope profile */
};

enum cli_rtos {
    CLI_RTOS_NONE,     /* the stub's threads */
    CLI_RTOS_AUTO,     /* --rtos auto */
    CLI_RTOS_FREERTOS, /* --rtos freertos */
};

struct cli_opts {
    const char *target;
    const char *exe;
    const char *sysroot;
    const char *lib_path; /* --lib-path DIR[:DIR...]; NULL: none */
    const char *thread;
    const char *debug_dir;
    const char *cache_dir;    /* --cache-dir; NULL: the library's default */
    uint64_t cache_max_bytes; /* --cache-max MIB; 0: the library's default */
    enum cli_format format;
    size_t max_frames;
    int timeout_ms;
    /* --deadline, resolved: the whole run, from the session's open (what
     * comes before it is the parsing of this command line) */
    int deadline_ms;
    bool cont;
    bool stats;
    bool no_cache;
    bool no_jit;          /* --no-jit */
    bool no_maps;         /* --no-maps */
    bool non_stop;        /* --non-stop: the link in non-stop mode (with --sample) */
    bool locals;          /* --locals: each frame's variables (cli/locals.c) */
    bool lines;           /* --lines: each frame's source file and line (JSON) */
    const char *attach;   /* --attach PID[,PID...]: NULL for one process */
    const char *steppers; /* --steppers LIST (checked): NULL for the default steppers */
    long long pid;        /* --pid N: 0 if not given */
    int pass[64];
    size_t npass;
    uint64_t start_us;     /* CLOCK_MONOTONIC when main began: stats' wall time (cli_now_us) */
    double sample_seconds; /* --sample SECONDS[@HZ]: 0 when not sampling */
    double sample_hz;      /* 0: as fast as the link allows */
    enum cli_rtos rtos;    /* --rtos */
    size_t max_threads;    /* --max-threads N: 0 for the library's default (65536) */
    bool all_threads;      /* --all-threads: a thread list cut at max_threads is an error */
};

/* CLOCK_MONOTONIC in microseconds. */
uint64_t cli_now_us(void);
/* "rspwalk: PREFIX MSG" on stderr, MSG escaped (sw_text_fputs): the
 * library's messages quote file names and replies the stub chose, which
 * must not end the line or drive the terminal.  PREFIX is ours. */
void cli_warn_line(const char *prefix, const char *msg);
/* "rspwalk: " and FMT's text on stderr as one line, escaped as cli_warn_line
 * does: for every error line that may carry a name, a reply or a message
 * from the target. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* After a thread list of W: when the stub listed more threads than
 * O->max_threads, a warning line that only the first ones are walked
 * (returns 0), or with O->all_threads an error line (returns -1).  0 when
 * the list was whole. */
int cli_threads_cut(const struct cli_opts *o, struct sw_walker *w);

int cli_run(const struct cli_opts *o);

/* --locals (cli/locals.c): the variables of frame K of ST, as text lines
 * (the JSON's are the library's). */
void cli_print_locals_text(FILE *f, struct sw_walker *w, const struct sw_stack *st, size_t k);
/* --attach: attach to every listed process over O->target (extended remote),
 * walk all their threads, print, detach leaving them running (cli/attach.c). */
int cli_run_attach(const struct cli_opts *o);

/* Walk each of the N threads TIDS of W and print them in O->format on stdout
 * (folded, dot, tree: their merged tree, a task a thread).  Returns 0, or -1
 * when a walk failed (the message is on stderr too). */
int cli_print_walks(const struct cli_opts *o, struct sw_walker *w, const sw_tid *tids, size_t n);

/* The same for several processes (--attach): NPROC walkers W with their
 * pids and thread lists; JSON has "processes": [{"pid", "threads"}], the
 * merged tree every thread of every process. */
int cli_print_processes(const struct cli_opts *o, struct sw_walker *const *w, const int64_t *pids,
                        sw_tid *const *tids, const size_t *ntids, size_t nproc);

/* --steppers (cli/steppers.c): whether every name in LIST is one of the
 * library's default steppers, none twice: 0, or -1 with the message on
 * stderr. */
int cli_check_steppers(const char *list);

/* --steppers: add O->steppers' steppers to W, created with no_default_steppers
 * (nothing when O->steppers is NULL).  Returns 0, or -1 with the message on
 * stderr. */
int cli_add_steppers(const struct cli_opts *o, struct sw_walker *w);

/* --sample (cli/sample.c): parse SECONDS[@HZ|@max] into O.  Returns 0, or
 * -1 with the message on stderr. */
int cli_parse_sample(const char *arg, struct cli_opts *o);

/* --sample: sample W's target as O says and write the profile in O->format
 * on stdout.  Returns 0, or -1 with the message on stderr (what was sampled
 * before a failure is written all the same). */
int cli_run_sample(const struct cli_opts *o, struct sw_walker *w);

/* The gdb signal number's name without "SIG", or NULL. */
const char *cli_signal_name(int gdb_sig);

/* Print the library state's warnings (local files not used) on stderr, one
 * "rspwalk: warning: ..." line each. */
void cli_print_warnings(struct sw_walker *w);

#endif /* RSPWALK_CLI_H */
