/* tests/integration/server_spin.c -- a program that runs until it is killed: four threads,
 * each asleep in nanosleep under a short chain of its own functions.
 *
 * The running target of the server tests and of make bench (scripts/bench_server.py):
 * rspwalkd interrupts it, walks it and resumes it.  The threads sleep for an hour at a time,
 * so hundreds of copies cost no CPU.  Built by the tests (srvlib.py), not a fixture.
 */
#include <pthread.h>
#include <time.h>

#define SPIN_FN __attribute__((noinline, noipa))

volatile int g_sink;

SPIN_FN static void
nap(void)
{
    struct timespec ts = { .tv_sec = 3600, .tv_nsec = 0 };

    for (;;)
        g_sink = nanosleep(&ts, NULL);
}

SPIN_FN static void
worker_inner(void)
{
    nap();
    g_sink++;
}

SPIN_FN static void *
worker_main(void *arg)
{
    (void)arg;
    worker_inner();
    return NULL;
}

SPIN_FN static void
main_inner(void)
{
    nap();
    g_sink++;
}

SPIN_FN static void
main_outer(void)
{
    main_inner();
    g_sink++;
}

int
main(void)
{
    pthread_t tids[3];

    for (int i = 0; i < 3; i++)
        if (pthread_create(&tids[i], NULL, worker_main, NULL) != 0)
            return 2;
    main_outer();
    return 0;
}
