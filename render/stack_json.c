/* render/stack_json.c -- the stack document (docs/json.md) and walks into a merged tree.
 *
 * The one writer of `rspwalk -f json` and rspwalkd's stacks: each thread is
 * walked and written as it comes, so a slow link shows in the timing, not in
 * memory.  The same loop feeds a struct sw_tree (render/tree.c) when asked.
 * No text output here (cli/output.c), and no walking logic: the walker walks.
 */
#include "rspwalk/render.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render/json.h"
#include "rspwalk/errors.h"
#include "rspwalk/frame.h"
#include "rspwalk/locals.h"
#include "rspwalk/proc.h"
#include "rspwalk/rsp.h"
#include "rspwalk/symlookup.h"
#include "rspwalk/target.h"
#include "rspwalk/walker.h"
#include "util/util.h"
#include "walker/context.h"

/* Values larger than this are "<too large>": a frame's locals are for
 * reading, not for dumping buffers. */
#define RENDER_LOCAL_MAX 4096

/* One run of walks: where they go and the first failure. */
struct walk_run {
    FILE *f;                        /* the document; NULL: none */
    const struct sw_render_opts *o; /* never NULL (zeroed defaults) */
    struct sw_tree *tree;           /* NULL: none */
    struct sw_errbuf *err;          /* NULL: not reported */
    int status;                     /* 0 or the first failure's code */
};

static void
run_fail(struct walk_run *r, int code, const char *msg)
{
    if (r->status != 0)
        return;
    r->status = code;
    if (r->err != NULL)
        sw_fail(r->err, code, "%s", msg);
}

static void __attribute__((format(printf, 2, 3))) run_warn(struct walk_run *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (r->o->warn == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    r->o->warn(r->o->warn_arg, line);
}

static uint64_t
now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

char *
sw_render_frame_function(const struct sw_frame *fr, const struct sw_symbol *sym)
{
    if (fr->vname != NULL)
        return sw_name_demangle(fr->vname, SW_NAME_FROM_DEBUG);
    return sym != NULL ? sw_name_demangle(sym->name, SW_NAME_FROM_SYMBOL) : NULL;
}

void
sw_render_local_value(struct sw_walker *w, const struct sw_stack *st, size_t k,
                      const struct sw_local_var *v, char *buf, size_t len)
{
    static _Thread_local unsigned char val[RENDER_LOCAL_MAX];
    int rc = sw_local_value(w, st, k, v, val, sizeof val);
    switch (rc) {
    case 0:
        if (sw_local_format(w, v, val, v->size, buf, len) < 0)
            snprintf(buf, len, "<error>");
        break;
    case SW_EOUTOFSCOPE:
        snprintf(buf, len, "<optimized out>");
        break;
    case SW_EBUFSIZE:
        snprintf(buf, len, "<too large>");
        break;
    default:
        snprintf(buf, len, "<unavailable>");
        break;
    }
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
        sw_json_str(f, name);
        fprintf(f, ": %" PRIu64, st->by_kind[i]);
        first = false;
    }
    fputs("}}", f);
}

/* Frame K's ", \"locals\": [...]" member. */
static void
json_locals(FILE *f, struct sw_walker *w, const struct sw_stack *st, size_t k)
{
    struct sw_function *fn;
    char val[1024];

    fputs(", \"locals\": [", f);
    if (sw_frame_function(w, st, k, &fn) == 0) {
        for (size_t i = 0; i < fn->nvars; i++) {
            const struct sw_local_var *v = &fn->vars[i];
            sw_render_local_value(w, st, k, v, val, sizeof val);
            fputs(i ? ", {\"name\": " : "{\"name\": ", f);
            sw_json_str(f, v->name);
            fputs(", \"type\": ", f);
            sw_json_str(f, v->type_name);
            fputs(", \"value\": ", f);
            sw_json_str(f, val);
            fputs(", \"kind\": ", f);
            sw_json_str(f, v->kind == SW_VAR_PARAM ? "param" : "local");
            fputc('}', f);
        }
        sw_function_free(fn);
    }
    fputc(']', f);
}

/* Frame K of ST as an object, its closing brace included. */
static void
json_frame(FILE *f, struct sw_walker *w, const struct sw_stack *st, size_t k, bool locals,
           bool lines)
{
    const struct sw_frame *fr = &st->frames[k];
    struct sw_symbol sym;
    bool have = sw_frame_symbol(w, fr, &sym) == 0;
    const char *lib = NULL;
    sw_addr off;

    fprintf(f,
            "{\"level\": %u, \"pc\": \"0x%" PRIx64 "\", \"sp\": \"0x%" PRIx64
            "\", \"fp\": \"0x%" PRIx64 "\", \"function\": ",
            fr->level, fr->ra, fr->sp, fr->fp);
    /* The function as gdb names it: from DWARF when debug information
     * covers the pc (inline and tail-call frames always), else the ELF
     * symbol, C++ demangled as gdb does; "symbol" and "offset" are the ELF
     * symbol that holds the pc, by its linkage name. */
    char *fn = sw_render_frame_function(fr, have ? &sym : NULL);
    sw_json_str(f, fn ? fn : fr->vname ? fr->vname : have ? sym.name : NULL);
    free(fn);
    fputs(", \"symbol\": ", f);
    sw_json_str(f, have ? sym.name : NULL);
    if (have)
        fprintf(f, ", \"offset\": %" PRIu64, fr->ra - sym.start);
    else
        fputs(", \"offset\": null", f);
    fputs(", \"module\": ", f);
    if (have)
        sw_json_str(f, sym.module);
    else
        sw_json_str(f, sw_frame_lib_offset(w, fr, &lib, &off) == 0 ? lib : NULL);
    fputs(", \"stepper\": ", f);
    sw_json_str(f, fr->stepper ? fr->stepper->ops->name : NULL);
    fputs(", \"trust\": ", f);
    sw_json_str(f, sw_trust_name(fr->trust));
    fputs(", \"kind\": ", f);
    sw_json_str(f, fr->kind == SW_FRAME_SIGNAL     ? "signal"
                   : fr->kind == SW_FRAME_INLINE   ? "inline"
                   : fr->kind == SW_FRAME_TAILCALL ? "tailcall"
                                                   : "normal");
    /* Where gdb's backtrace says "at FILE:LINE": the line table's file, made
     * absolute with the compilation directory when it is relative. */
    struct sw_source_line src;
    if (!lines) {
        /* Not asked for: no members, the document as before. */
    } else if (sw_frame_source(w, st, k, &src) == 0 && src.file != NULL) {
        fputs(", \"file\": ", f);
        if (src.file[0] != '/' && src.dir != NULL) {
            size_t len = strlen(src.dir) + strlen(src.file) + 2;
            char *path = malloc(len);
            if (path != NULL)
                snprintf(path, len, "%s/%s", src.dir, src.file);
            sw_json_str(f, path ? path : src.file);
            free(path);
        } else {
            sw_json_str(f, src.file);
        }
        fprintf(f, ", \"line\": %u", src.line);
    } else {
        fputs(", \"file\": null, \"line\": null", f);
    }
    if (locals)
        json_locals(f, w, st, k);
    fputc('}', f);
}

/* A new task of R's tree for thread LABEL of W, its path ST's frames
 * outermost first (none for NULL: a failed walk). */
static int
tree_add_walk(struct walk_run *r, struct sw_walker *w, const char *label, const struct sw_stack *st)
{
    size_t task, n = st ? st->n : 0;
    struct sw_tree_frame *path = NULL;
    char **names = NULL;
    int rc = sw_tree_add_task(r->tree, r->o->target, sw_walker_proc(w)->pid, label, &task);

    if (rc == 0 && n > 0) {
        path = sw_calloc(n, sizeof *path);
        names = sw_calloc(n, sizeof *names);
        if (path == NULL || names == NULL)
            rc = SW_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct sw_frame *fr = &st->frames[n - 1 - i];
        struct sw_symbol sym;
        bool have = sw_frame_symbol(w, fr, &sym) == 0;
        const char *lib = NULL;
        sw_addr off;

        names[i] = sw_render_frame_function(fr, have ? &sym : NULL);
        path[i].function = names[i] ? names[i] : fr->vname ? fr->vname : have ? sym.name : NULL;
        if (have)
            path[i].module = sym.module;
        else
            path[i].module = sw_frame_lib_offset(w, fr, &lib, &off) == 0 ? lib : NULL;
        /* No symbol: named by module and offset, as STAT does, so the same
         * code merges across processes whatever its load address. */
        if (path[i].function == NULL && path[i].module != NULL) {
            const char *base = strrchr(path[i].module, '/');
            base = base ? base + 1 : path[i].module;
            size_t len = strlen(base) + 20;
            names[i] = malloc(len);
            if (names[i] != NULL)
                snprintf(names[i], len, "%s+0x%" PRIx64, base, off);
            else
                rc = SW_ENOMEM;
            path[i].function = names[i];
        }
        path[i].pc = fr->ra;
    }
    if (rc == 0)
        rc = sw_tree_add_path(r->tree, task, path, n, 1);
    for (size_t i = 0; names != NULL && i < n; i++)
        free(names[i]);
    sw_free(names);
    sw_free(path);
    if (rc < 0 && r->status == 0) {
        r->status = rc;
        if (r->err != NULL)
            sw_fail(r->err, rc, "adding thread %s to the merged tree: out of memory", label);
    }
    return rc;
}

/* The walks of the N threads TIDS of W: the comma-separated thread objects
 * on R->f, the tasks of R->tree. */
static void
walk_threads(struct walk_run *r, struct sw_walker *w, const sw_tid *tids, size_t n)
{
    struct sw_proc *p = sw_walker_proc(w);
    struct rsp_session *s = sw_proc_rsp_session(p);
    FILE *f = r->f;
    struct sw_stack st;
    bool ahead = false;
    /* A lower limit for these walks only: the walker is this call's. */
    size_t max_frames = w->max_frames;
    if (r->o->max_frames > 0 && r->o->max_frames < w->max_frames)
        w->max_frames = r->o->max_frames;

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
                run_warn(r, "fetching %zu threads ahead: %s", n - i, sw_walker_errmsg(w));
        }
        sw_proc_thread_label(p, tids[i], label, sizeof label);
        int rc = sw_walk_stack(w, tids[i], &st);
        bool stopped = tids[i] == p->default_tid;
        bool link_failed = rc < 0 || st.end == SW_END_LINK;
        if (link_failed) {
            run_warn(r, "thread %s: %s", label, sw_walker_errmsg(w));
            run_fail(r,
                     rc < 0            ? rc
                     : w->err.code < 0 ? w->err.code
                                       : SW_ECONN,
                     sw_walker_errmsg(w));
        }
        if (f != NULL) {
            fprintf(f, "%s\n  {\"id\": ", i ? "," : "");
            sw_json_str(f, label);
            struct sw_thread_info ti;
            if (sw_proc_thread_info(p, tids[i], &ti) == 0) {
                /* An RTOS task (rspwalk/rtos.h): docs/json.md, "threads". */
                fputs(", \"name\": ", f);
                sw_json_str(f, ti.name);
                fputs(", \"state\": ", f);
                sw_json_str(f, ti.state ? ti.state : "unknown");
                fprintf(f, ", \"priority\": %" PRId64, ti.priority);
                if (ti.base_priority >= 0)
                    fprintf(f, ", \"base_priority\": %" PRId64, ti.base_priority);
            }
            fprintf(f, ", \"lwp\": %" PRIu64 ", \"stopped\": %s, \"end\": ", tids[i],
                    stopped ? "true" : "false");
            sw_json_str(f, rc < 0 ? "error" : sw_walk_end_name(st.end));
            if (link_failed) {
                fputs(", \"error\": ", f);
                sw_json_str(f, sw_walker_errmsg(w));
            }
            fputs(", \"frames\": [", f);
            for (size_t k = 0; rc == 0 && k < st.n; k++) {
                fputs(k ? ",\n    " : "\n    ", f);
                json_frame(f, w, &st, k, r->o->locals, r->o->lines);
            }
            uint64_t rt1 = s ? rsp_session_stats(s)->round_trips : 0;
            uint64_t pk1 = s ? rsp_session_stats(s)->packets_sent : 0;
            fprintf(f, "], \"stats\": {\"round_trips\": %" PRIu64 ", \"packets\": %" PRIu64 "}}",
                    rt1 - rt0, pk1 - pk0);
        }
        if (r->tree != NULL)
            tree_add_walk(r, w, label, rc == 0 ? &st : NULL);
    }
    sw_stack_fini(&st);
    w->max_frames = max_frames;
}

/* The end of the document: the session's statistics. */
static void
write_trailer(struct walk_run *r, struct rsp_session *s)
{
    fputs("\n], \"stats\": ", r->f);
    if (s != NULL && r->o->stats)
        json_stats(r->f, rsp_session_stats(s), r->o->start_us ? now_us() - r->o->start_us : 0);
    else
        fputs("null", r->f);
    if (!r->o->members_only)
        fputs("}\n", r->f);
}

static void
write_head(struct walk_run *r, const char *arch, const char *list)
{
    fprintf(r->f, "%s\"version\": 1, \"arch\": ", r->o->members_only ? "" : "{");
    sw_json_str(r->f, arch);
    fprintf(r->f, ", \"target\": ");
    sw_json_str(r->f, r->o->target);
    fprintf(r->f, ", \"%s\": [", list);
}

/* R's status, or SW_EIO when its document could not be written. */
static int
run_end(struct walk_run *r)
{
    if (r->f != NULL && (fflush(r->f) != 0 || ferror(r->f))) {
        if (r->err != NULL)
            sw_fail(r->err, SW_EIO, "writing the stack document: output error");
        return SW_EIO;
    }
    return r->status;
}

int
sw_render_stacks_json(FILE *f, const struct sw_render_opts *o, struct sw_walker *w,
                      const sw_tid *tids, size_t n, struct sw_errbuf *err)
{
    static const struct sw_render_opts defaults;
    struct walk_run r = { .f = f, .o = o ? o : &defaults, .err = err };
    struct sw_proc *p = sw_walker_proc(w);

    r.tree = r.o->tree;
    write_head(&r, p->arch->name, "threads");
    walk_threads(&r, w, tids, n);
    write_trailer(&r, sw_proc_rsp_session(p));
    return run_end(&r);
}

int
sw_render_processes_json(FILE *f, const struct sw_render_opts *o, struct sw_walker *const *w,
                         const int64_t *pids, sw_tid *const *tids, const size_t *ntids,
                         size_t nproc, struct sw_errbuf *err)
{
    static const struct sw_render_opts defaults;
    struct walk_run r = { .f = f, .o = o ? o : &defaults, .err = err };
    struct rsp_session *s = nproc ? sw_proc_rsp_session(sw_walker_proc(w[0])) : NULL;

    r.tree = r.o->tree;
    write_head(&r, nproc ? sw_walker_proc(w[0])->arch->name : "", "processes");
    for (size_t i = 0; i < nproc; i++) {
        fprintf(f, "%s\n {\"pid\": %" PRId64 ", \"threads\": [", i ? "," : "", pids[i]);
        walk_threads(&r, w[i], tids[i], ntids[i]);
        fputs("\n ]}", f);
    }
    write_trailer(&r, s);
    return run_end(&r);
}

int
sw_render_stacks_tree(struct sw_tree *t, const struct sw_render_opts *o, struct sw_walker *w,
                      const sw_tid *tids, size_t n, struct sw_errbuf *err)
{
    static const struct sw_render_opts defaults;
    struct walk_run r = { .o = o ? o : &defaults, .tree = t, .err = err };

    walk_threads(&r, w, tids, n);
    return r.status;
}
