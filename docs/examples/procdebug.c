/* docs/examples/procdebug.c -- an event loop over ProcDebug, with poll().
 *
 *   cc -o procdebug procdebug.c $(pkg-config --cflags --libs --static rspwalk)
 *   ./procdebug 127.0.0.1:2345 /path/to/prog [SECONDS]
 *
 * Resumes the target, waits on the notification descriptor for its next stop
 * or exit (pausing it when SECONDS pass without one), walks the thread that
 * stopped and detaches leaving the target running.  Built and run against a
 * real gdbserver by `make check-docs` (tests/docs/run-examples).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include <rspwalk/rspwalk.h>

static void
print_stack(struct sw_walker *w, sw_tid tid)
{
    struct sw_stack st;
    sw_stack_init(&st);
    if (sw_walk_stack(w, tid, &st) < 0) {
        fprintf(stderr, "procdebug: %s\n", sw_walker_errmsg(w));
    } else {
        printf("thread %llu (%s):", (unsigned long long)tid, sw_walk_end_name(st.end));
        for (size_t k = 0; k < st.n; k++) {
            struct sw_symbol sym;
            printf(" %s", sw_frame_symbol(w, &st.frames[k], &sym) == 0 ? sym.name : "??");
        }
        printf("\n");
    }
    sw_stack_fini(&st);
}

int
main(int argc, char **argv)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_errbuf err;

    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: procdebug HOST:PORT EXECUTABLE [SECONDS]\n");
        return 2;
    }
    int seconds = argc == 4 ? atoi(argv[3]) : 10;
    rsp_session_config_init(&scfg);
    if (rsp_session_open(argv[1], &scfg, &s, &err) < 0) {
        fprintf(stderr, "procdebug: %s\n", err.msg);
        return 1;
    }
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = argv[2];
    if (sw_proc_rsp_new(s, &pcfg, &p, &err) < 0) {
        fprintf(stderr, "procdebug: %s\n", err.msg);
        return 1;
    }
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.exe = argv[2];
    wcfg.sysroot = "/";
    if (sw_walker_new(p, &wcfg, &w, &err) < 0) { /* takes P over; P stays valid while W lives */
        fprintf(stderr, "procdebug: %s\n", err.msg);
        return 1;
    }
    const struct sw_procdebug_ops *dbg = p->debug; /* NULL: a backend without ProcDebug */
    if (dbg == NULL) {
        fprintf(stderr, "procdebug: the target cannot be resumed\n");
        sw_walker_free(w);
        return 1;
    }

    /* Every thread runs; the stub answers with a stop reply when one stops. */
    if (dbg->resume(p, SW_TID_DEFAULT, 0) < 0) {
        fprintf(stderr, "procdebug: %s\n", sw_proc_errmsg(p));
        sw_walker_free(w);
        return 1;
    }
    printf("resumed\n");
    fflush(stdout);

    int rc = SW_ETIMEDOUT;
    for (int waited = 0; rc == SW_ETIMEDOUT && waited < seconds; waited++) {
        struct pollfd pfd = { .fd = dbg->notification_fd(p), .events = POLLIN };
        int ready = poll(&pfd, 1, 1000);
        if (ready < 0) {
            perror("procdebug: poll");
            break;
        }
        if (ready == 0)
            continue; /* nothing yet: here a tool would do its other work */
        /* Readable: a stop reply may be pending.  SW_ETIMEDOUT means the
         * bytes were not a whole event yet (poll again). */
        rc = dbg->handle_debug_event(p, false);
    }
    if (rc == SW_ETIMEDOUT) {
        /* No event within SECONDS: stop it ourselves (interrupt, then wait). */
        rc = dbg->pause(p, SW_TID_DEFAULT);
        if (rc == 0)
            printf("paused after %d s\n", seconds);
    }
    if (dbg->is_terminated(p)) {
        printf("exited: %s\n", sw_proc_errmsg(p));
        sw_walker_free(w);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "procdebug: %s\n", sw_proc_errmsg(p));
        sw_walker_free(w);
        return 1;
    }
    printf("stopped\n");
    /* The walk reads the library list again: the target ran since the last. */
    print_stack(w, p->default_tid);

    /* Let it go on (LEAVE_STOPPED true would keep it stopped for a debugger). */
    if (dbg->detach(p, false) < 0)
        fprintf(stderr, "procdebug: %s\n", sw_proc_errmsg(p));
    else
        printf("detached, target running\n");
    sw_walker_free(w);
    return 0;
}
