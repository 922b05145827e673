/* server/render_tmp.c -- a stand-in for sw_render_stacks_json until render/ has it.
 *
 * The JSON half of cli/output.c, with the signature of rspwalk/render.h's
 * sw_render_stacks_json, so that the server writes the CLI's document until
 * the library's one renderer lands; then this file goes.  No locals.
 */
#include "server/render_tmp.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rspwalk/rspwalk.h"

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

static uint64_t
now_us(void)
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

static char *
frame_function(const struct sw_frame *fr, const struct sw_symbol *sym, bool have)
{
    if (fr->vname != NULL)
        return sw_name_demangle(fr->vname, SW_NAME_FROM_DEBUG);
    return have ? sw_name_demangle(sym->name, SW_NAME_FROM_SYMBOL) : NULL;
}

static void
frame_json(FILE *f, struct sw_walker *w, const struct sw_frame *fr)
{
    struct sw_symbol sym;
    bool have = sw_frame_symbol(w, fr, &sym) == 0;
    const char *lib = NULL;
    sw_addr off;

    fprintf(f,
            "{\"level\": %u, \"pc\": \"0x%" PRIx64 "\", \"sp\": \"0x%" PRIx64
            "\", \"fp\": \"0x%" PRIx64 "\", \"function\": ",
            fr->level, fr->ra, fr->sp, fr->fp);
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
    fputc('}', f);
}

int
srv_tmp_render_stacks_json(FILE *f, const struct sw_render_opts *o, struct sw_walker *w,
                           const sw_tid *tids, size_t n, struct sw_errbuf *err)
{
    struct sw_proc *p = sw_walker_proc(w);
    struct rsp_session *s = sw_proc_rsp_session(p);
    struct sw_stack st;
    bool ahead = false;
    int first_rc = 0;

    fprintf(f, "{\"version\": 1, \"arch\": ");
    json_str(f, p->arch->name);
    fprintf(f, ", \"target\": ");
    json_str(f, o->target);
    fprintf(f, ", \"threads\": [");
    sw_stack_init(&st);
    for (size_t i = 0; i < n; i++) {
        char label[64];
        uint64_t rt0 = s ? rsp_session_stats(s)->round_trips : 0;
        uint64_t pk0 = s ? rsp_session_stats(s)->packets_sent : 0;
        if (!ahead && tids[i] != p->default_tid && n - i >= 2) {
            ahead = true;
            sw_walker_prefetch(w, tids + i, n - i);
        }
        sw_proc_thread_label(p, tids[i], label, sizeof label);
        int rc = sw_walk_stack(w, tids[i], &st);
        bool stopped = tids[i] == p->default_tid;
        bool link_failed = rc < 0 || st.end == SW_END_LINK;
        if (link_failed && first_rc == 0) {
            first_rc = rc < 0 ? rc : SW_ECONN;
            if (err) {
                err->code = first_rc;
                snprintf(err->msg, sizeof err->msg, "thread %s: %s", label, sw_walker_errmsg(w));
            }
        }
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
            frame_json(f, w, &st.frames[k]);
        }
        uint64_t rt1 = s ? rsp_session_stats(s)->round_trips : 0;
        uint64_t pk1 = s ? rsp_session_stats(s)->packets_sent : 0;
        fprintf(f, "], \"stats\": {\"round_trips\": %" PRIu64 ", \"packets\": %" PRIu64 "}}",
                rt1 - rt0, pk1 - pk0);
    }
    sw_stack_fini(&st);
    fputs("\n], \"stats\": ", f);
    if (s && o->stats)
        json_stats(f, rsp_session_stats(s), now_us() - o->start_us);
    else
        fputs("null", f);
    fputs("}\n", f);
    if (ferror(f))
        return SW_EIO;
    return first_rc;
}
