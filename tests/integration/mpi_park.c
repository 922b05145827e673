/* tests/integration/mpi_park.c -- N processes parked in 4 known call chains (run-mpi.sh).
 *
 * `mpi_park N` forks N children; child I parks in state I % 4, a chain of
 * noinline functions ending in pause(), and stays there across attaches
 * and detaches.  The parent prints the children's pids, one a line, then
 * waits; a child dies with its parent (PR_SET_PDEATHSIG).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#define FN __attribute__((noinline, noipa))

volatile int g_sink;

FN static void
park(void)
{
    for (;;)
        pause();
}

FN static void
s0_leaf(void)
{
    park();
    g_sink++;
}
FN static void
s0_a(void)
{
    s0_leaf();
    g_sink++;
}

FN static void
s1_leaf(void)
{
    park();
    g_sink++;
}
FN static void
s1_b(void)
{
    s1_leaf();
    g_sink++;
}
FN static void
s1_a(void)
{
    s1_b();
    g_sink++;
}

FN static void
s2_leaf(void)
{
    park();
    g_sink++;
}

FN static void
s3_leaf(void)
{
    park();
    g_sink++;
}
FN static void
s3_c(void)
{
    s3_leaf();
    g_sink++;
}
FN static void
s3_b(void)
{
    s3_c();
    g_sink++;
}
FN static void
s3_a(void)
{
    s3_b();
    g_sink++;
}

int
main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    pid_t parent = getpid();
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0) {
            perror("mpi_park: fork");
            return 1;
        }
        if (p == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(1);
            switch (i % 4) {
            case 0:
                s0_a();
                break;
            case 1:
                s1_a();
                break;
            case 2:
                s2_leaf();
                break;
            default:
                s3_a();
                break;
            }
            _exit(0);
        }
        printf("%d\n", (int)p);
    }
    fflush(stdout);
    for (;;)
        pause();
}
