/* cli/sample.c -- rspwalk --sample SECONDS[@HZ|@max]: a profile of the running target.
 *
 * The library samples (sw_sample_run) into a merged tree, a task a thread;
 * this file parses the option, draws the progress line on a terminal and writes
 * the tree: folded, speedscope, dot, or JSON with the run's counters.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* The default rate, as py-spy's. */
#define CLI_SAMPLE_HZ 100

int
cli_parse_sample(const char *arg, struct cli_opts *o)
{
    char *e;
    double sec = strtod(arg, &e), hz = CLI_SAMPLE_HZ;
    if (e == arg || !(sec > 0) || sec > 86400 || (*e != '\0' && *e != '@')) {
        fprintf(stderr, "rspwalk: --sample: '%s' is not SECONDS[@HZ|@max] (0 < SECONDS <= 86400)\n",
                arg);
        return -1;
    }
    if (*e == '@') {
        const char *r = e + 1;
        if (strcmp(r, "max") == 0) {
            hz = 0;
        } else {
            hz = strtod(r, &e);
            if (e == r || *e != '\0' || !(hz > 0) || hz > 1000000) {
                fprintf(stderr,
                        "rspwalk: --sample: rate '%s' is not a number of samples a second "
                        "(0 < HZ <= 1000000) or 'max'\n",
                        r);
                return -1;
            }
        }
    }
    o->sample_seconds = sec;
    o->sample_hz = hz;
    return 0;
}

static void
progress_line(void *arg, const struct sw_sample_stats *st)
{
    const struct cli_opts *o = arg;
    double s = (double)st->elapsed_us / 1e6;
    fprintf(stderr,
            "\rrspwalk: sampling %.1f/%.0f s: %" PRIu64 " samples (%.0f/s), %.1f round trips "
            "a sample ",
            s, o->sample_seconds, st->samples, s > 0 ? (double)st->samples / s : 0.0,
            st->samples ? (double)st->round_trips / (double)st->samples : 0.0);
    fflush(stderr);
}

static void
json_stats(FILE *f, const struct cli_opts *o, const struct sw_sample_stats *st,
           const struct rsp_stats *rs)
{
    double s = (double)st->elapsed_us / 1e6;
    fprintf(
        f,
        ",\n \"samples\": %" PRIu64 ", \"seconds\": %.6f,\n \"stats\": {\"hz\": %.3f, "
        "\"rate\": %.3f, \"stop\": \"%s\", \"round_trips\": %" PRIu64
        ", \"round_trips_per_sample\": %.3f, \"walks\": %" PRIu64 ", \"walks_bottom\": %" PRIu64
        ", \"walks_reused\": %" PRIu64 ", \"walks_failed\": %" PRIu64
        ", \"threads_running\": %" PRIu64 ", \"stops_failed\": %" PRIu64
        ", \"late_ticks\": %" PRIu64 ", \"resyncs\": %" PRIu64 ", \"signals_delivered\": %" PRIu64
        ", \"stopped_us\": %" PRIu64 ", \"elapsed_us\": %" PRIu64,
        st->samples, s, o->sample_hz, s > 0 ? (double)st->samples / s : 0.0,
        sw_sample_stop_name(st->stop), st->round_trips,
        st->samples ? (double)st->round_trips / (double)st->samples : 0.0, st->walks,
        st->walks_bottom, st->walks_reused, st->walks_failed, st->threads_running, st->stops_failed,
        st->late_ticks, st->resyncs, st->signals_delivered, st->stopped_us, st->elapsed_us);
    if (rs != NULL)
        fprintf(f,
                ", \"packets_sent\": %" PRIu64 ", \"packets_received\": %" PRIu64
                ", \"bytes_sent\": %" PRIu64 ", \"bytes_received\": %" PRIu64
                ", \"interrupts\": %" PRIu64 ", \"retransmits\": %" PRIu64,
                rs->packets_sent, rs->packets_received, rs->bytes_sent, rs->bytes_received,
                rs->interrupts, rs->retransmits);
    fputs("}", f);
}

static void
text_summary(FILE *f, const struct cli_opts *o, const struct sw_sample_stats *st)
{
    double s = (double)st->elapsed_us / 1e6;
    fprintf(f,
            "%" PRIu64 " samples in %.3f s (%.1f/s, asked %s%.0f), stop by %s; %.2f round trips "
            "a sample; %" PRIu64 " walks, %" PRIu64 " to the bottom (%" PRIu64 " taken again: "
            "registers and stack unchanged), %" PRIu64 " failed; %" PRIu64
            " running threads not walked; %" PRIu64 " stops missed; %" PRIu64
            " times QEMU's stub brought back in step; %" PRIu64
            " signals delivered to the program\n",
            st->samples, s, s > 0 ? (double)st->samples / s : 0.0, o->sample_hz > 0 ? "" : "max ",
            o->sample_hz, sw_sample_stop_name(st->stop),
            st->samples ? (double)st->round_trips / (double)st->samples : 0.0, st->walks,
            st->walks_bottom, st->walks_reused, st->walks_failed, st->threads_running,
            st->stops_failed, st->resyncs, st->signals_delivered);
}

int
cli_run_sample(const struct cli_opts *o, struct sw_walker *w)
{
    struct sw_tree *t = NULL;
    struct sw_sample_stats st;
    struct sw_errbuf err = { 0 };
    bool tty = isatty(STDERR_FILENO) == 1;
    int status = 0;

    if (sw_tree_new(&t) < 0) {
        fprintf(stderr, "rspwalk: sampling: out of memory\n");
        return -1;
    }
    struct sw_sample_config cfg = { .seconds = o->sample_seconds,
                                    .hz = o->sample_hz,
                                    .tree = t,
                                    .target = o->target,
                                    .progress = tty ? progress_line : NULL,
                                    .arg = (void *)o };
    int rc = sw_sample_run(w, &cfg, &st, &err);
    if (tty)
        fputs("\r\033[K", stderr);
    if (rc < 0) {
        /* The samples taken before the failure are still written. */
        cli_error("sampling %s: %s", o->target, err.msg);
        status = -1;
    }
    struct rsp_session *s = sw_proc_rsp_session(sw_walker_proc(w));
    switch (o->format) {
    case CLI_FOLDED:
        rc = sw_tree_write(t, SW_TREE_FOLDED, stdout);
        break;
    case CLI_DOT:
        rc = sw_tree_write(t, SW_TREE_DOT, stdout);
        break;
    case CLI_SPEEDSCOPE:
        rc = sw_tree_write_speedscope(t, o->target, stdout);
        if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
            rc = SW_EIO;
        break;
    case CLI_JSON:
    case CLI_TREE:
        fputc('{', stdout);
        rc = sw_tree_write_json_members(t, stdout);
        json_stats(stdout, o, &st, s ? rsp_session_stats(s) : NULL);
        fputs("}\n", stdout);
        if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
            rc = SW_EIO;
        break;
    case CLI_TEXT:
        text_summary(stdout, o, &st);
        rc = sw_tree_write(t, SW_TREE_FOLDED, stdout);
        break;
    }
    if (rc < 0) {
        fprintf(stderr, "rspwalk: writing the profile: %s\n", sw_strerror(rc));
        status = -1;
    }
    if (o->stats)
        text_summary(stderr, o, &st);
    sw_tree_free(t);
    return status;
}
