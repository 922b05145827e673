/* tests/integration/pd_drive.c -- drives ProcDebug and a walker set for run-qemu-procdebug.sh.
 *
 *   pd_drive debug SPEC EXE SYSROOT TIMEOUT_MS
 *     one target (pd_guest.c) over SPEC: resume, take in its own stop (raise), walk, resume,
 *     pause it while it sleeps (the interrupt), walk, resume, see the exit, read after it.
 *     When the pause fails (QEMU user ignores the interrupt) it says so and waits up to 20 s
 *     for a stop from elsewhere: the script then sends SIGINT to the qemu process.
 *   pd_drive set SPEC EXE SYSROOT [SPEC EXE SYSROOT]...
 *     one link per target, each its own walker, gathered in one walker set
 *     (sw_walker_set_create/add): each target resumed to its own stop, every thread of every
 *     walker walked by sw_walker_set_walk_all, then all detached, left running.
 *   pd_drive run SPEC EXE NAPS
 *     extended remote (gdbserver --multi): two processes started with vRun ("EXE NAPS x":
 *     no raise), each walked at its entry over the one link, then each detached (D;PID).
 * Prints one line per step for the script to check; exit 0 unless a step that must work
 * failed.  Test-only: built by the script against build/release/librspwalk.a.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rspwalk/rspwalk.h>
#include <rspwalk/walker_set.h>

#define WAIT_MS 20000

static void
print_walk(struct sw_walker *w, const char *label, sw_tid tid, int rc, const struct sw_stack *st)
{
    printf("walk %s %llu:", label, (unsigned long long)tid);
    if (rc < 0) {
        printf(" failed: %s\n", sw_walker_errmsg(w));
        return;
    }
    for (size_t k = 0; k < st->n; k++) {
        struct sw_symbol sym;
        printf(" %s", sw_frame_symbol(w, &st->frames[k], &sym) == 0 ? sym.name : "??");
    }
    printf(" (%s)\n", sw_walk_end_name(st->end));
}

static void
walk_one(struct sw_walker *w, const char *label, sw_tid tid)
{
    struct sw_stack st;
    sw_stack_init(&st);
    int rc = sw_walk_stack(w, tid, &st);
    print_walk(w, label, tid, rc, &st);
    sw_stack_fini(&st);
}

/* Poll the notification descriptor up to MS ms for an event: 0 after a
 * stop, SW_EEXITED after an exit, SW_ETIMEDOUT when none came. */
static int
wait_event(struct sw_proc *p, int ms)
{
    const struct sw_procdebug_ops *dbg = p->debug;
    for (int waited = 0; waited < ms; waited += 50) {
        struct pollfd pfd = { .fd = dbg->notification_fd(p), .events = POLLIN };
        if (pfd.fd < 0)
            return SW_EIO;
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        int rc = dbg->handle_debug_event(p, false);
        if (rc != SW_ETIMEDOUT)
            return rc;
    }
    return SW_ETIMEDOUT;
}

static int
stop_signal(struct sw_proc *p)
{
    const struct rsp_stop *st = rsp_last_stop(sw_proc_rsp_session(p));
    return st != NULL ? st->signal : -1;
}

static int
open_walker(const char *spec, const char *exe, const char *sysroot, int timeout_ms,
            struct sw_walker **out)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_proc *p;
    struct sw_errbuf err = { 0 };
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = timeout_ms;
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = exe;
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.exe = exe;
    wcfg.sysroot = sysroot;
    if (rsp_session_open(spec, &scfg, &s, &err) < 0 || sw_proc_rsp_new(s, &pcfg, &p, &err) < 0 ||
        sw_walker_new(p, &wcfg, out, &err) < 0) {
        printf("open %s: %s\n", spec, err.msg);
        return -1;
    }
    printf("connected %s: arch %s\n", spec, sw_walker_proc(*out)->arch->name);
    return 0;
}

static int
run_debug(const char *spec, const char *exe, const char *sysroot, int timeout_ms)
{
    struct sw_walker *w;
    if (open_walker(spec, exe, sysroot, timeout_ms, &w) < 0)
        return 1;
    struct sw_proc *p = sw_walker_proc(w);
    const struct sw_procdebug_ops *dbg = p->debug;
    int rc, status = 1;

    /* 1. continue to the target's own stop. */
    if ((rc = dbg->resume(p, SW_TID_DEFAULT, 0)) < 0)
        goto fail;
    if ((rc = wait_event(p, WAIT_MS)) < 0)
        goto fail;
    printf("stopped: signal %d\n", stop_signal(p));
    walk_one(w, "raise", p->default_tid);
    /* 2. continue (without the SIGTRAP), interrupt while it sleeps. */
    if ((rc = dbg->resume(p, SW_TID_DEFAULT, 0)) < 0)
        goto fail;
    printf("resumed\n");
    rc = wait_event(p, 300);
    if (rc != SW_ETIMEDOUT) {
        printf("unexpected event while running: %d %s\n", rc, sw_proc_errmsg(p));
        goto out;
    }
    rc = dbg->pause(p, SW_TID_DEFAULT);
    if (rc == 0) {
        printf("pause: ok, signal %d\n", stop_signal(p));
    } else {
        printf("pause: failed: %s: %s\n", sw_errname(rc), sw_proc_errmsg(p));
        printf("waiting for a stop\n");
        fflush(stdout);
        if ((rc = wait_event(p, WAIT_MS)) < 0)
            goto fail;
        printf("stopped: signal %d\n", stop_signal(p));
    }
    walk_one(w, "paused", p->default_tid);
    /* 3. continue to the exit. */
    if ((rc = dbg->resume(p, SW_TID_DEFAULT, 0)) < 0)
        goto fail;
    printf("resumed\n");
    rc = wait_event(p, WAIT_MS);
    if (rc != SW_EEXITED || !dbg->is_terminated(p)) {
        printf("no exit: %d %s\n", rc, sw_proc_errmsg(p));
        goto out;
    }
    printf("exited: %s\n", sw_proc_errmsg(p));
    sw_word v;
    rc = p->ops->read_reg(p, SW_TID_DEFAULT, (unsigned)p->arch->dw_pc, &v);
    printf("read after the exit: %s\n", sw_errname(rc));
    status = 0;
    goto out;
fail:
    printf("failed: %s: %s\n", sw_errname(rc), sw_proc_errmsg(p));
out:
    fflush(stdout);
    sw_walker_free(w);
    return status;
}

struct set_print {
    struct sw_walker_set *set;
};

static bool
print_set_walk(void *arg, size_t i, sw_tid tid, int rc, const struct sw_stack *st)
{
    struct set_print *sp = arg;
    struct sw_walker *w = sw_walker_set_walker(sp->set, i);
    char label[64];
    snprintf(label, sizeof label, "%zu/%s", i, sw_walker_proc(w)->arch->name);
    print_walk(w, label, tid, rc, st);
    return false;
}

static int
run_set(char **args, int n)
{
    struct sw_walker_set *set;
    struct sw_errbuf err = { 0 };
    int status = 1;
    if (sw_walker_set_create(&set, &err) < 0) {
        printf("set: %s\n", err.msg);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        struct sw_walker *w;
        if (open_walker(args[3 * i], args[3 * i + 1], args[3 * i + 2], 5000, &w) < 0)
            goto out;
        if (sw_walker_set_add(set, w) < 0) {
            printf("add: %s\n", sw_walker_set_errmsg(set));
            sw_walker_free(w);
            goto out;
        }
    }
    /* Each target on to its own stop (one link each: they run together). */
    for (size_t i = 0; i < sw_walker_set_count(set); i++) {
        struct sw_proc *p = sw_walker_proc(sw_walker_set_walker(set, i));
        if (p->debug->resume(p, SW_TID_DEFAULT, 0) < 0) {
            printf("resume %zu: %s\n", i, sw_proc_errmsg(p));
            goto out;
        }
    }
    for (size_t i = 0; i < sw_walker_set_count(set); i++) {
        struct sw_proc *p = sw_walker_proc(sw_walker_set_walker(set, i));
        int rc = wait_event(p, WAIT_MS);
        if (rc < 0) {
            printf("stop %zu: %s: %s\n", i, sw_errname(rc), sw_proc_errmsg(p));
            goto out;
        }
        printf("stopped %zu: signal %d\n", i, stop_signal(p));
    }
    struct set_print sp = { set };
    int rc = sw_walker_set_walk_all(set, print_set_walk, &sp);
    printf("walk_all: %s\n", rc == 0 ? "ok" : sw_walker_set_errmsg(set));
    if (sw_walker_set_detach(set) < 0) {
        printf("detach: %s\n", sw_walker_set_errmsg(set));
        goto out;
    }
    printf("detached %zu\n", sw_walker_set_count(set));
    status = rc == 0 ? 0 : 1;
out:
    fflush(stdout);
    sw_walker_set_free(set);
    return status;
}

static int
run_vrun(const char *spec, const char *exe, const char *naps)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_errbuf err = { 0 };
    struct sw_walker *w[2] = { NULL, NULL };
    int64_t pid[2] = { 0, 0 };
    int status = 1;
    rsp_session_config_init(&scfg);
    if (rsp_session_open(spec, &scfg, &s, &err) < 0) {
        printf("open %s: %s\n", spec, err.msg);
        return 1;
    }
    if (rsp_extended_mode(s) < 0) {
        printf("extended mode: %s\n", rsp_session_errmsg(s));
        goto out;
    }
    const char *const args[] = { exe, naps, "x" };
    for (int k = 0; k < 2; k++) {
        struct rsp_stop st;
        if (rsp_run(s, args, 3, &st) < 0) {
            printf("vRun: %s\n", rsp_session_errmsg(s));
            goto out;
        }
        pid[k] = st.thread.pid;
        printf("started %lld\n", (long long)pid[k]);
    }
    for (int k = 0; k < 2; k++) {
        struct sw_rsp_config pcfg;
        sw_rsp_config_init(&pcfg);
        pcfg.exe = exe;
        struct sw_walker_config wcfg;
        sw_walker_config_init(&wcfg);
        wcfg.exe = exe;
        wcfg.sysroot = "/";
        struct sw_proc *p;
        if (sw_proc_rsp_new_shared(s, pid[k], &pcfg, &p, &err) < 0 ||
            sw_walker_new(p, &wcfg, &w[k], &err) < 0) {
            printf("process %lld: %s\n", (long long)pid[k], err.msg);
            goto out;
        }
        char label[32];
        snprintf(label, sizeof label, "run-%lld", (long long)pid[k]);
        walk_one(w[k], label, sw_walker_proc(w[k])->default_tid);
    }
    for (int k = 0; k < 2; k++) {
        struct sw_proc *p = sw_walker_proc(w[k]);
        if (p->debug->detach(p, false) < 0) {
            printf("detach %lld: %s\n", (long long)pid[k], sw_proc_errmsg(p));
            goto out;
        }
        printf("detached %lld\n", (long long)pid[k]);
    }
    status = 0;
out:
    fflush(stdout);
    sw_walker_free(w[0]); /* before the session they borrow */
    sw_walker_free(w[1]);
    rsp_session_close(s);
    return status;
}

int
main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 6 && strcmp(argv[1], "debug") == 0)
        return run_debug(argv[2], argv[3], argv[4], atoi(argv[5]));
    if (argc == 5 && strcmp(argv[1], "run") == 0)
        return run_vrun(argv[2], argv[3], argv[4]);
    if (argc >= 5 && (argc - 2) % 3 == 0 && strcmp(argv[1], "set") == 0)
        return run_set(argv + 2, (argc - 2) / 3);
    fprintf(stderr, "usage: pd_drive debug SPEC EXE SYSROOT TIMEOUT_MS\n"
                    "       pd_drive set SPEC EXE SYSROOT [SPEC EXE SYSROOT]...\n"
                    "       pd_drive run SPEC EXE NAPS\n");
    return 2;
}
