/* cli/output.c -- the output of the walks: text (gdb-like) here, the rest from the library.
 *
 * JSON is the library's stack document (sw_render_stacks_json, docs/json.md),
 * the one rspwalkd serves; folded, dot and tree are its merged tree of every
 * walked thread (sw_tree).  Nothing here walks: it asks the library.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "cli/cli.h"

uint64_t
cli_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void
text_stats(FILE *f, const struct rsp_stats *st, uint64_t wall_us)
{
    fprintf(f,
            "stats: %" PRIu64 " packets sent, %" PRIu64 " received; %" PRIu64
            " bytes sent, %" PRIu64 " received; %" PRIu64 " round trips; %" PRIu64
            " requests answered from prefetched replies; %" PRIu64
            " retransmits; %.3f ms waiting, %.3f ms in all\n",
            st->packets_sent, st->packets_received, st->bytes_sent, st->bytes_received,
            st->round_trips, st->cached_replies, st->retransmits, (double)st->elapsed_us / 1000.0,
            (double)wall_us / 1000.0);
    fputs("stats: requests by kind:", f);
    for (size_t i = 0; i < sizeof st->by_kind / sizeof st->by_kind[0]; i++) {
        const char *name = rsp_packet_name(i);
        if (name == NULL)
            break;
        if (st->by_kind[i])
            fprintf(f, " %s=%" PRIu64, name, st->by_kind[i]);
    }
    fputc('\n', f);
    if (st->stray_stops)
        fprintf(f,
                "stats: %" PRIu64 " stop replies came in place of other replies and were set "
                "aside\n",
                st->stray_stops);
}

/* Names and paths below come from the target and its files: each is
 * written through sw_text_fputs, so that none can end the line or drive the
 * terminal (a module named "x\n#1 ..." must not forge a frame). */
static void
print_frame_text(FILE *f, struct sw_walker *w, const struct sw_frame *fr, unsigned width)
{
    struct sw_symbol sym;
    bool have = sw_frame_symbol(w, fr, &sym) == 0;
    const char *lib = NULL;
    sw_addr off;
    char *fn = sw_render_frame_function(fr, have ? &sym : NULL);
    const char *name = fn ? fn : fr->vname ? fr->vname : have ? sym.name : NULL;
    const char *module = have && sym.module ? sym.module : "?";

    if (!have)
        sw_frame_lib_offset(w, fr, &lib, &off);
    fprintf(f, "#%-2u 0x%0*" PRIx64 " in ", fr->level, (int)width, fr->ra);
    if (fr->vname != NULL && fr->kind != SW_FRAME_NORMAL) {
        sw_text_fputs(f, name, 0);
        fprintf(f, " [%s] (", fr->kind == SW_FRAME_INLINE ? "inline" : "tail call");
        sw_text_fputs(f, module, 0);
        fputc(')', f);
    } else if (have && strcmp(name, sym.name) != 0) {
        /* Named from DWARF where the ELF symbol differs ("fib", "fib.cold"),
         * or demangled ("Square::area() const", "_ZNK6Square4areaEv"). */
        sw_text_fputs(f, name, 0);
        fputs(" [", f);
        sw_text_fputs(f, sym.name, 0);
        fprintf(f, "+%" PRIu64 "] (", fr->ra - sym.start);
        sw_text_fputs(f, module, 0);
        fputc(')', f);
    } else if (have) {
        sw_text_fputs(f, sym.name, 0);
        fprintf(f, "+%" PRIu64 " (", fr->ra - sym.start);
        sw_text_fputs(f, module, 0);
        fputc(')', f);
    } else {
        fputs("?? (", f);
        sw_text_fputs(f, lib ? lib : "no module", 0);
        fputc(')', f);
    }
    free(fn);
    if (fr->kind == SW_FRAME_SIGNAL)
        fputs(" <signal handler called>", f);
    if (fr->trust == SW_TRUST_SCAN)
        fputs(" [scan]", f); /* found by stack scanning: a guess, say so */
    fputc('\n', f);
}

void
cli_warn_line(const char *prefix, const char *msg)
{
    fprintf(stderr, "rspwalk: %s", prefix);
    sw_text_fputs(stderr, msg, 0);
    fputc('\n', stderr);
}

void
cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = sw_text_vescapef(0, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rspwalk: %s\n", line != NULL ? line : "out of memory writing an error");
    free(line);
}

int
cli_threads_cut(const struct cli_opts *o, struct sw_walker *w)
{
    struct rsp_session *s = sw_proc_rsp_session(sw_walker_proc(w));
    if (s == NULL || !rsp_threads_cut(s))
        return 0;
    size_t max = rsp_threads_max(s);
    if (o->all_threads) {
        cli_error("%s: the stub lists more than %zu threads (--max-threads) and --all-threads "
                  "asks for every one",
                  o->target, max);
        return -1;
    }
    cli_error("warning: %s: the stub lists more than %zu threads: the first %zu are walked "
              "(--max-threads)",
              o->target, max, max);
    return 0;
}

/* The walks of the N threads TIDS of W as text blocks.  Returns 0 or -1 when
 * a walk failed (message on stderr). */
static int
print_threads(const struct cli_opts *o, struct sw_walker *w, const sw_tid *tids, size_t n, FILE *f)
{
    struct sw_proc *p = sw_walker_proc(w);
    unsigned width = p->arch->word_size * 2;
    int status = 0;
    struct sw_stack st;

    bool ahead = false;
    sw_stack_init(&st);
    for (size_t i = 0; i < n; i++) {
        char label[64];
        /* Fetched ahead as the stack document does (render/stack_json.c). */
        if (!ahead && tids[i] != p->default_tid && n - i >= 2) {
            ahead = true;
            if (sw_walker_prefetch(w, tids + i, n - i) < 0) {
                char what[64];
                snprintf(what, sizeof what, "fetching %zu threads ahead: ", n - i);
                cli_warn_line(what, sw_walker_errmsg(w));
            }
        }
        sw_proc_thread_label(p, tids[i], label, sizeof label);
        int rc = sw_walk_stack(w, tids[i], &st);
        bool stopped = tids[i] == p->default_tid;
        if (rc < 0 || st.end == SW_END_LINK) {
            char what[80];
            snprintf(what, sizeof what, "thread %s: ", label);
            cli_warn_line(what, sw_walker_errmsg(w));
            status = -1;
        }
        struct sw_thread_info ti;
        fprintf(f, "%sThread %s", i ? "\n" : "", label);
        if (sw_proc_thread_info(p, tids[i], &ti) == 0) {
            /* An RTOS task: its name (the target's text, escaped), state and priority. */
            fputs(" \"", f);
            sw_text_fputs(f, ti.name, 0);
            fprintf(f, "\" (%s, priority %" PRId64, ti.state ? ti.state : "unknown", ti.priority);
            /* Raised above its own by a mutex it holds (priority inheritance). */
            if (ti.base_priority >= 0 && ti.base_priority != ti.priority)
                fprintf(f, ", base priority %" PRId64, ti.base_priority);
            fputc(')', f);
        }
        fprintf(f, "%s:\n", stopped ? " (stopped)" : "");
        for (size_t k = 0; rc == 0 && k < st.n; k++) {
            print_frame_text(f, w, &st.frames[k], width);
            if (o->locals)
                cli_print_locals_text(f, w, &st, k);
        }
        if (rc == 0 && st.end != SW_END_BOTTOM)
            fprintf(f, "(walk ended: %s)\n", sw_walk_end_name(st.end));
    }
    sw_stack_fini(&st);
    return status;
}

/* The library's one-line reports of failed walks, on stderr. */
static void
warn_stderr(void *arg, const char *line)
{
    (void)arg;
    cli_warn_line("", line);
}

static struct sw_render_opts
render_opts(const struct cli_opts *o)
{
    /* The JSON document always carries the session's stats (docs/json.md);
     * --stats adds them to the text. */
    return (struct sw_render_opts){ .target = o->target,
                                    .locals = o->locals,
                                    .lines = o->lines,
                                    .stats = true,
                                    .start_us = o->start_us,
                                    .warn = warn_stderr };
}

static enum sw_tree_format
tree_format(enum cli_format format)
{
    return format == CLI_DOT          ? SW_TREE_DOT
           : format == CLI_FOLDED     ? SW_TREE_FOLDED
           : format == CLI_SPEEDSCOPE ? SW_TREE_SPEEDSCOPE
                                      : SW_TREE_JSON;
}

/* The merged tree of every thread of the NPROC processes W (their threads
 * TIDS, NTIDS of each), written in O->format.  Returns 0 or -1 (message on
 * stderr). */
static int
print_tree(const struct cli_opts *o, struct sw_walker *const *w, sw_tid *const *tids,
           const size_t *ntids, size_t nproc)
{
    struct sw_render_opts ro = render_opts(o);
    struct sw_tree *t;
    int status = 0, rc;

    if (sw_tree_new(&t) < 0) {
        fprintf(stderr, "rspwalk: merging the stacks: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < nproc; i++) {
        rc = sw_render_stacks_tree(t, &ro, w[i], tids[i], ntids[i], NULL);
        if (rc == SW_ENOMEM) {
            fprintf(stderr, "rspwalk: merging the stacks: out of memory\n");
            sw_tree_free(t);
            return -1;
        }
        if (rc < 0)
            status = -1; /* the thread's line is on stderr already (warn_stderr) */
    }
    rc = sw_tree_write(t, tree_format(o->format), stdout);
    if (rc < 0) {
        fprintf(stderr, "rspwalk: writing the merged tree: %s\n", sw_strerror(rc));
        status = -1;
    }
    sw_tree_free(t);
    return status;
}

int
cli_print_walks(const struct cli_opts *o, struct sw_walker *w, const sw_tid *tids, size_t n)
{
    struct sw_render_opts ro = render_opts(o);
    struct rsp_session *s = sw_proc_rsp_session(sw_walker_proc(w));

    switch (o->format) {
    case CLI_JSON:
        return sw_render_stacks_json(stdout, &ro, w, tids, n, NULL) < 0 ? -1 : 0;
    case CLI_FOLDED:
    case CLI_DOT:
    case CLI_SPEEDSCOPE:
    case CLI_TREE: {
        sw_tid *const one[1] = { (sw_tid *)tids };
        return print_tree(o, &w, one, &n, 1);
    }
    case CLI_TEXT:
        break;
    }
    int status = print_threads(o, w, tids, n, stdout);
    if (o->stats && s)
        text_stats(stdout, rsp_session_stats(s), cli_now_us() - o->start_us);
    return status;
}

int
cli_print_processes(const struct cli_opts *o, struct sw_walker *const *w, const int64_t *pids,
                    sw_tid *const *tids, const size_t *ntids, size_t nproc)
{
    struct sw_render_opts ro = render_opts(o);
    struct rsp_session *s = nproc ? sw_proc_rsp_session(sw_walker_proc(w[0])) : NULL;
    int status = 0;

    switch (o->format) {
    case CLI_JSON:
        return sw_render_processes_json(stdout, &ro, w, pids, tids, ntids, nproc, NULL) < 0 ? -1
                                                                                            : 0;
    case CLI_FOLDED:
    case CLI_DOT:
    case CLI_SPEEDSCOPE:
    case CLI_TREE:
        return print_tree(o, w, tids, ntids, nproc);
    case CLI_TEXT:
        break;
    }
    for (size_t i = 0; i < nproc; i++) {
        printf("%sProcess %" PRId64 ":\n", i ? "\n" : "", pids[i]);
        if (print_threads(o, w[i], tids[i], ntids[i], stdout) < 0)
            status = -1;
    }
    if (o->stats && s)
        text_stats(stdout, rsp_session_stats(s), cli_now_us() - o->start_us);
    return status;
}
