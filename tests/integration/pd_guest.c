/* tests/integration/pd_guest.c -- the target of run-qemu-procdebug.sh and run-multi.sh's vRun.
 *
 * main -> a -> b -> c, and c raises SIGTRAP (the stop a debugger takes in; resumed without
 * the signal it returns; skipped when a second argument is given, for run-multi.sh's vRun);
 * then main -> nap_outer -> nap_inner sleeps ARGV[1] (default 40) times 50 ms in nanosleep
 * (a running target to interrupt) and exits 0.  Built for each
 * architecture by the script, -O0 with frame pointers; every function noinline+noipa and
 * called in a non-tail position, as in fixtures/src/fixture.c.
 */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#define FN __attribute__((noinline, noipa))

volatile int g_sink;

FN int
c(int x)
{
    raise(SIGTRAP);
    return x + 1;
}

FN int
b(int x)
{
    g_sink = c(x + 1);
    return g_sink + 1;
}

FN int
a(int x)
{
    g_sink = b(x + 1);
    return g_sink + 1;
}

FN int
nap_inner(int n)
{
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    for (int i = 0; i < n; i++)
        g_sink = nanosleep(&ts, NULL);
    return n;
}

FN int
nap_outer(int n)
{
    g_sink = nap_inner(n);
    return g_sink + 1;
}

int
main(int argc, char **argv)
{
    if (argc <= 2)
        g_sink = a(1);
    g_sink = nap_outer(argc > 1 ? atoi(argv[1]) : 40);
    return 0;
}
