/* cli/output.c -- text (gdb-like) and JSON output of the walks.
 *
 * The JSON schema is documented in docs/json.md; "version" changes when a
 * field changes meaning.  Nothing here walks: it asks the library.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "cli/cli.h"

static void
json_str(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

uint64_t
cli_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void
json_stats(FILE *f, const struct rsp_stats *st, uint64_t wall_us)
{
    fprintf(f,
            "{\"packets_sent\": %" PRIu64 ", \"packets_received\": %" PRIu64
            ", \"bytes_sent\": %" PRIu64 ", \"bytes_received\": %" PRIu64
            ", \"round_trips\": %" PRIu64 ", \"cached_replies\": %" PRIu64
            ", \"retransmits\": %" PRIu64 ", \"elapsed_us\": %" PRIu64 ", \"wall_us\": %" PRIu64
            ", \"by_kind\": {",
            st->packets_sent, st->packets_received, st->bytes_sent, st->bytes_received,
            st->round_trips, st->cached_replies, st->retransmits, st->elapsed_us, wall_us);
    bool first = true;
    for (size_t i = 0; i < sizeof st->by_kind / sizeof st->by_kind[0]; i++) {
        const char *name = rsp_packet_name(i);
        if (name == NULL)
            break;
        if (st->by_kind[i] == 0)
            continue;
        fprintf(f, "%s", first ? "" : ", ");
        json_str(f, name);
        fprintf(f, ": %" PRIu64, st->by_kind[i]);
        first = false;
    }
    fputs("}}", f);
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
}

/* The frame's function as gdb's backtrace names it: its DWARF name, else its
 * symbol's, a C++ name demangled as gdb does (sw_name_demangle).  Caller
 * frees with free(); NULL when the frame has no name or out of memory. */
static char *
frame_function(const struct sw_frame *fr, const struct sw_symbol *sym, bool have)
{
    if (fr->vname != NULL)
        return sw_name_demangle(fr->vname, SW_NAME_FROM_DEBUG);
    return have ? sw_name_demangle(sym->name, SW_NAME_FROM_SYMBOL) : NULL;
}

static void
print_frame_text(FILE *f, struct sw_walker *w, const struct sw_frame *fr, unsigned width)
{
    struct sw_symbol sym;
    bool have = sw_frame_symbol(w, fr, &sym) == 0;
    const char *lib = NULL;
    sw_addr off;
    char *fn = frame_function(fr, &sym, have);
    const char *name = fn ? fn : fr->vname ? fr->vname : have ? sym.name : NULL;

    if (!have)
        sw_frame_lib_offset(w, fr, &lib, &off);
    fprintf(f, "#%-2u 0x%0*" PRIx64 " in ", fr->level, (int)width, fr->ra);
    if (fr->vname != NULL && fr->kind != SW_FRAME_NORMAL)
        fprintf(f, "%s [%s] (%s)", name, fr->kind == SW_FRAME_INLINE ? "inline" : "tail call",
                have && sym.module ? sym.module : "?");
    else if (have && strcmp(name, sym.name) != 0)
        /* Named from DWARF where the ELF symbol differs ("fib", "fib.cold"),
         * or demangled ("Square::area() const", "_ZNK6Square4areaEv"). */
        fprintf(f, "%s [%s+%" PRIu64 "] (%s)", name, sym.name, fr->ra - sym.start,
                sym.module ? sym.module : "?");
    else if (have)
        fprintf(f, "%s+%" PRIu64 " (%s)", sym.name, fr->ra - sym.start,
                sym.module ? sym.module : "?");
    else
        fprintf(f, "?? (%s)", lib ? lib : "no module");
    free(fn);
    if (fr->kind == SW_FRAME_SIGNAL)
        fputs(" <signal handler called>", f);
    if (fr->trust == SW_TRUST_SCAN)
        fputs(" [scan]", f); /* found by stack scanning: a guess, say so */
    fputc('\n', f);
}

static void
print_frame_json(FILE *f, struct sw_walker *w, const struct sw_frame *fr, unsigned width)
{
    struct sw_symbol sym;
    bool have = sw_frame_symbol(w, fr, &sym) == 0;
    const char *lib = NULL;
    sw_addr off;

    (void)width;
    fprintf(f,
            "{\"level\": %u, \"pc\": \"0x%" PRIx64 "\", \"sp\": \"0x%" PRIx64
            "\", \"fp\": \"0x%" PRIx64 "\", \"function\": ",
            fr->level, fr->ra, fr->sp, fr->fp);
    /* The function as gdb names it: from DWARF when debug information
     * covers the pc (inline and tail-call frames always), else the ELF
     * symbol, C++ demangled as gdb does; "symbol" and "offset" are the ELF
     * symbol that holds the pc, by its linkage name. */
    char *fn = frame_function(fr, &sym, have);
    json_str(f, fn ? fn : fr->vname ? fr->vname : have ? sym.name : NULL);
    free(fn);
    fputs(", \"symbol\": ", f);
    json_str(f, have ? sym.name : NULL);
    if (have)
        fprintf(f, ", \"offset\": %" PRIu64, fr->ra - sym.start);
    else
        fputs(", \"offset\": null", f);
    fputs(", \"module\": ", f);
    if (have)
        json_str(f, sym.module);
    else
        json_str(f, sw_frame_lib_offset(w, fr, &lib, &off) == 0 ? lib : NULL);
    fputs(", \"stepper\": ", f);
    json_str(f, fr->stepper ? fr->stepper->ops->name : NULL);
    fputs(", \"trust\": ", f);
    json_str(f, sw_trust_name(fr->trust));
    fputs(", \"kind\": ", f);
    json_str(f, fr->kind == SW_FRAME_SIGNAL     ? "signal"
                : fr->kind == SW_FRAME_INLINE   ? "inline"
                : fr->kind == SW_FRAME_TAILCALL ? "tailcall"
                                                : "normal");
}

/* The walks of the N threads TIDS of W: JSON thread objects (comma-separated)
 * or text blocks.  Returns 0 or -1 when a walk failed (message on stderr). */
static int
print_threads(const struct cli_opts *o, struct sw_walker *w, const sw_tid *tids, size_t n, FILE *f)
{
    struct sw_proc *p = sw_walker_proc(w);
    struct rsp_session *s = sw_proc_rsp_session(p);
    unsigned width = p->arch->word_size * 2;
    int status = 0;
    struct sw_stack st;

    bool ahead = false;
    sw_stack_init(&st);
    for (size_t i = 0; i < n; i++) {
        char label[64];
        uint64_t rt0 = s ? rsp_session_stats(s)->round_trips : 0;
        uint64_t pk0 = s ? rsp_session_stats(s)->packets_sent : 0;
        /* The threads from the first one that is not the stopped one are
         * fetched ahead together (two round trips for all under gdbserver),
         * counted in that thread's stats; one thread alone would cost its
         * walk's two anyway.  A failure here is the walks' failure too. */
        if (!ahead && tids[i] != p->default_tid && n - i >= 2) {
            ahead = true;
            if (sw_walker_prefetch(w, tids + i, n - i) < 0)
                fprintf(stderr, "rspwalk: fetching %zu threads ahead: %s\n", n - i,
                        sw_walker_errmsg(w));
        }
        sw_proc_thread_label(p, tids[i], label, sizeof label);
        int rc = sw_walk_stack(w, tids[i], &st);
        bool stopped = tids[i] == p->default_tid;
        bool link_failed = rc < 0 || st.end == SW_END_LINK;
        if (link_failed) {
            fprintf(stderr, "rspwalk: thread %s: %s\n", label, sw_walker_errmsg(w));
            status = -1;
        }
        if (o->format == CLI_JSON) {
            fprintf(f, "%s\n  {\"id\": ", i ? "," : "");
            json_str(f, label);
            fprintf(f, ", \"lwp\": %" PRIu64 ", \"stopped\": %s, \"end\": ", tids[i],
                    stopped ? "true" : "false");
            json_str(f, rc < 0 ? "error" : sw_walk_end_name(st.end));
            if (link_failed) {
                fputs(", \"error\": ", f);
                json_str(f, sw_walker_errmsg(w));
            }
            fputs(", \"frames\": [", f);
            for (size_t k = 0; rc == 0 && k < st.n; k++) {
                fputs(k ? ",\n    " : "\n    ", f);
                print_frame_json(f, w, &st.frames[k], width);
                if (o->locals)
                    cli_print_locals_json(f, w, &st, k, json_str);
                fputc('}', f);
            }
            uint64_t rt1 = s ? rsp_session_stats(s)->round_trips : 0;
            uint64_t pk1 = s ? rsp_session_stats(s)->packets_sent : 0;
            fprintf(f, "], \"stats\": {\"round_trips\": %" PRIu64 ", \"packets\": %" PRIu64 "}}",
                    rt1 - rt0, pk1 - pk0);
        } else {
            fprintf(f, "%sThread %s%s:\n", i ? "\n" : "", label, stopped ? " (stopped)" : "");
            for (size_t k = 0; rc == 0 && k < st.n; k++) {
                print_frame_text(f, w, &st.frames[k], width);
                if (o->locals)
                    cli_print_locals_text(f, w, &st, k);
            }
            if (rc == 0 && st.end != SW_END_BOTTOM)
                fprintf(f, "(walk ended: %s)\n", sw_walk_end_name(st.end));
        }
    }
    sw_stack_fini(&st);
    return status;
}

/* The end of the document: the session's statistics. */
static void
print_trailer(const struct cli_opts *o, struct rsp_session *s, FILE *f)
{
    if (o->format == CLI_JSON) {
        fputs("\n], \"stats\": ", f);
        if (s)
            json_stats(f, rsp_session_stats(s), cli_now_us() - o->start_us);
        else
            fputs("null", f);
        fputs("}\n", f);
    } else if (o->stats && s) {
        text_stats(f, rsp_session_stats(s), cli_now_us() - o->start_us);
    }
}

int
cli_print_walks(const struct cli_opts *o, struct sw_walker *w, const sw_tid *tids, size_t n)
{
    struct sw_proc *p = sw_walker_proc(w);
    struct rsp_session *s = sw_proc_rsp_session(p);
    FILE *f = stdout;

    if (o->format == CLI_JSON) {
        fprintf(f, "{\"version\": 1, \"arch\": ");
        json_str(f, p->arch->name);
        fprintf(f, ", \"target\": ");
        json_str(f, o->target);
        fprintf(f, ", \"threads\": [");
    }
    int status = print_threads(o, w, tids, n, f);
    print_trailer(o, s, f);
    return status;
}

int
cli_print_processes(const struct cli_opts *o, struct sw_walker *const *w, const int64_t *pids,
                    sw_tid *const *tids, const size_t *ntids, size_t nproc)
{
    struct rsp_session *s = nproc ? sw_proc_rsp_session(sw_walker_proc(w[0])) : NULL;
    FILE *f = stdout;
    int status = 0;

    if (o->format == CLI_JSON) {
        fprintf(f, "{\"version\": 1, \"arch\": ");
        json_str(f, nproc ? sw_walker_proc(w[0])->arch->name : "");
        fprintf(f, ", \"target\": ");
        json_str(f, o->target);
        fprintf(f, ", \"processes\": [");
    }
    for (size_t i = 0; i < nproc; i++) {
        if (o->format == CLI_JSON)
            fprintf(f, "%s\n {\"pid\": %" PRId64 ", \"threads\": [", i ? "," : "", pids[i]);
        else
            fprintf(f, "%sProcess %" PRId64 ":\n", i ? "\n" : "", pids[i]);
        if (print_threads(o, w[i], tids[i], ntids[i], f) < 0)
            status = -1;
        if (o->format == CLI_JSON)
            fputs("\n ]}", f);
    }
    print_trailer(o, s, f);
    return status;
}
