/* docs/examples/nonstop.c -- pause one thread, walk it while the others run, resume it.
 *
 *   cc -o nonstop nonstop.c $(pkg-config --cflags --libs --static rspwalk)
 *   gdbserver 127.0.0.1:2345 ./prog &
 *   ./nonstop 127.0.0.1:2345 ./prog [--hold]
 *
 * Opens the link in non-stop mode (gdbserver offers it; QEMU does not),
 * lets every thread run, takes in the stops that come by themselves, then
 * pauses each running thread in turn, walks it and resumes it, printing
 * which threads run meanwhile.  At the end it resumes everything and waits
 * for the exit, or detaches leaving the target running.  --hold waits for a
 * line on stdin before each resume, so that someone (tests/integration/
 * run-nonstop.sh) can look at the target while the thread is paused.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rspwalk/rspwalk.h>

#define MAX_THREADS 256

static void
print_stack(struct sw_walker *w, sw_tid tid)
{
    struct sw_stack st;
    sw_stack_init(&st);
    if (sw_walk_stack(w, tid, &st) < 0) {
        printf("walk %llu failed: %s\n", (unsigned long long)tid, sw_walker_errmsg(w));
    } else {
        printf("walk %llu (%s):", (unsigned long long)tid, sw_walk_end_name(st.end));
        for (size_t k = 0; k < st.n; k++) {
            struct sw_symbol sym;
            printf(" %s", sw_frame_symbol(w, &st.frames[k], &sym) == 0 ? sym.name : "??");
        }
        printf("\n");
    }
    sw_stack_fini(&st);
}

/* Take in every event that comes within MS milliseconds; 1 after an exit. */
static int
take_events(struct sw_proc *p, struct sw_walker *w, int ms)
{
    const struct sw_procdebug_ops *dbg = p->debug;
    for (int waited = 0; waited < ms; waited += 100) {
        struct pollfd pfd = { .fd = dbg->notification_fd(p), .events = POLLIN };
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        int rc = dbg->handle_debug_event(p, false);
        if (dbg->is_terminated(p)) {
            printf("exited: %s\n", sw_proc_errmsg(p));
            return 1;
        }
        if (rc == 0) {
            printf("stopped: thread %llu\n", (unsigned long long)p->default_tid);
            print_stack(w, p->default_tid);
        }
    }
    return 0;
}

/* One line: each thread and whether it runs. */
static void
print_states(struct sw_proc *p, const sw_tid *tids, size_t n)
{
    printf("states:");
    for (size_t i = 0; i < n; i++)
        printf(" %llu=%s", (unsigned long long)tids[i],
               sw_proc_rsp_thread_stopped(p, tids[i]) ? "stopped" : "running");
    printf("\n");
}

int
main(int argc, char **argv)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_errbuf err;
    static sw_tid tids[MAX_THREADS];
    size_t n;

    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--hold") != 0)) {
        fprintf(stderr, "usage: nonstop HOST:PORT EXECUTABLE [--hold]\n");
        return 2;
    }
    bool hold = argc == 4;
    rsp_session_config_init(&scfg);
    scfg.non_stop = true;
    if (rsp_session_open(argv[1], &scfg, &s, &err) < 0) {
        fprintf(stderr, "nonstop: %s\n", err.msg);
        return 1;
    }
    if (!rsp_non_stop(s)) {
        fprintf(stderr, "nonstop: %s: the stub has no non-stop mode\n", argv[1]);
        rsp_session_close(s);
        return 1;
    }
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = argv[2];
    pcfg.strict_threads = true;
    if (sw_proc_rsp_new(s, &pcfg, &p, &err) < 0) {
        fprintf(stderr, "nonstop: %s\n", err.msg);
        return 1;
    }
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.exe = argv[2];
    wcfg.sysroot = "/";
    if (sw_walker_new(p, &wcfg, &w, &err) < 0) {
        fprintf(stderr, "nonstop: %s\n", err.msg);
        return 1;
    }
    const struct sw_procdebug_ops *dbg = p->debug;
    int status = 1;

    if (dbg->resume(p, SW_TID_DEFAULT, 0) < 0)
        goto fail;
    printf("resumed all\n");
    if (take_events(p, w, 1000))
        goto done;

    if (sw_proc_threads(p, tids, MAX_THREADS, &n) < 0)
        goto fail;
    n = n < MAX_THREADS ? n : MAX_THREADS;
    print_states(p, tids, n);
    for (size_t i = 0; i < n; i++) {
        if (sw_proc_rsp_thread_stopped(p, tids[i]))
            continue; /* stopped by itself: walked above */
        if (dbg->pause(p, tids[i]) < 0)
            goto fail;
        printf("paused %llu\n", (unsigned long long)tids[i]);
        print_states(p, tids, n);
        print_stack(w, tids[i]);
        fflush(stdout);
        if (hold) {
            char line[16];
            if (fgets(line, sizeof line, stdin) == NULL)
                break;
        }
        if (dbg->resume(p, tids[i], 0) < 0)
            goto fail;
        printf("resumed %llu\n", (unsigned long long)tids[i]);
        fflush(stdout);
    }
    /* Everything runs on; a thread that stopped by itself (a breakpoint, a
     * raise) is resumed without its signal. */
    if (dbg->resume(p, SW_TID_DEFAULT, 0) < 0)
        goto fail;
    printf("resumed all\n");
    if (take_events(p, w, 2000))
        goto done;
    if (dbg->detach(p, false) < 0)
        goto fail;
    printf("detached, target running\n");
done:
    status = 0;
fail:
    if (status != 0)
        fprintf(stderr, "nonstop: %s\n", sw_proc_errmsg(p));
    fflush(stdout);
    sw_walker_free(w);
    return status;
}
