/* docs/examples/walk.c -- walk every thread of a target with librspwalk.
 *
 *   cc -o walk walk.c $(pkg-config --cflags --libs rspwalk) -lelf -ldwarf -lcapstone -lexpat -lz
 *   ./walk 127.0.0.1:2345 /path/to/prog
 *
 * Built and run against a real gdbserver by `make check` (tests/docs/run-examples).
 */
#include <stdio.h>
#include <stdlib.h>

#include <rspwalk/rspwalk.h>

int
main(int argc, char **argv)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_errbuf err;

    if (argc != 3) {
        fprintf(stderr, "usage: walk HOST:PORT EXECUTABLE\n");
        return 2;
    }
    /* The protocol session: connect, qSupported, the target description. */
    rsp_session_config_init(&scfg);
    if (rsp_session_open(argv[1], &scfg, &s, &err) < 0) {
        fprintf(stderr, "walk: %s\n", err.msg);
        return 1;
    }
    /* The ProcessState over it (takes the session over). */
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = argv[2];
    if (sw_proc_rsp_new(s, &pcfg, &p, &err) < 0) {
        fprintf(stderr, "walk: %s\n", err.msg);
        return 1;
    }
    /* The Walker with its default steppers (takes the process over). */
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.exe = argv[2];
    wcfg.sysroot = "/";
    if (sw_walker_new(p, &wcfg, &w, &err) < 0) {
        fprintf(stderr, "walk: %s\n", err.msg);
        return 1;
    }

    sw_tid tids[64];
    size_t n;
    if (sw_threads(w, tids, 64, &n) < 0) {
        fprintf(stderr, "walk: %s\n", sw_walker_errmsg(w));
        sw_walker_free(w);
        return 1;
    }
    /* Every thread is walked next: under gdbserver their registers and
     * stacks are fetched together, two round trips for all of them. */
    if (sw_walker_prefetch(w, tids, n < 64 ? n : 64) < 0)
        fprintf(stderr, "walk: %s\n", sw_walker_errmsg(w));
    struct sw_stack st;
    sw_stack_init(&st);
    for (size_t i = 0; i < n && i < 64; i++) {
        if (sw_walk_stack(w, tids[i], &st) < 0) {
            fprintf(stderr, "walk: %s\n", sw_walker_errmsg(w));
            continue;
        }
        printf("thread %llu (%s):", (unsigned long long)tids[i], sw_walk_end_name(st.end));
        for (size_t k = 0; k < st.n; k++) {
            struct sw_symbol sym;
            printf(" %s", sw_frame_symbol(w, &st.frames[k], &sym) == 0 ? sym.name : "??");
        }
        printf("\n");
    }
    sw_stack_fini(&st);
    sw_walker_free(w); /* frees the process and closes the session; the target stays stopped */
    return 0;
}
