/* util/alloc.c -- every allocation of the library, with a failure hook for tests.
 *
 * The allocation-failure sweep (tests/unit/util/test_allocfail.c) makes the Nth
 * allocation fail and checks that the caller returns SW_ENOMEM and leaks nothing.
 * Safe from any thread.
 */
#include "util/util.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Atomic: walkers in several threads allocate at once.  Relaxed: the count
 * orders nothing else. */
static atomic_ulong alloc_count;
static atomic_ulong alloc_fail_at;

static bool
alloc_should_fail(void)
{
    unsigned long n = atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed) + 1;
    unsigned long at = atomic_load_explicit(&alloc_fail_at, memory_order_relaxed);
    return at != 0 && n == at;
}

void
sw_test_fail_alloc_at(unsigned long n)
{
    atomic_store_explicit(&alloc_count, 0, memory_order_relaxed);
    atomic_store_explicit(&alloc_fail_at, n, memory_order_relaxed);
}

unsigned long
sw_test_alloc_count(void)
{
    return atomic_load_explicit(&alloc_count, memory_order_relaxed);
}

void *
sw_malloc(size_t n)
{
    if (alloc_should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *
sw_calloc(size_t n, size_t size)
{
    if (alloc_should_fail())
        return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void *
sw_realloc(void *p, size_t n)
{
    if (alloc_should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void *
sw_grow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap && p != NULL)
        return p;
    size_t n = *cap ? *cap : first ? first : 1;
    while (n < need && n <= SIZE_MAX / 2)
        n *= 2;
    if (n < need || (size != 0 && n > SIZE_MAX / size))
        return NULL;
    void *np = sw_realloc(p, n * size);
    if (np != NULL)
        *cap = n;
    return np;
}

char *
sw_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = sw_malloc(len + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *
sw_strdup(const char *s)
{
    return sw_strndup(s, strlen(s));
}

void
sw_free(void *p)
{
    free(p);
}
