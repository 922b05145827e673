/* tests/unit/util/test_grow.c -- sw_grow, the one growth rule of the library's arrays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/util.h"

/* No room: FIRST elements, then doubling, each time the array is full. */
static void
test_grow_doubles(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    for (size_t n = 0; n < 40; n++) {
        int *nv = sw_grow(v, &cap, n + 1, sizeof *nv, 8);
        assert_non_null(nv);
        v = nv;
        v[n] = (int)n;
        assert_int_equal(cap, n < 8 ? 8 : n < 16 ? 16 : n < 32 ? 32 : 64);
    }
    for (size_t n = 0; n < 40; n++)
        assert_int_equal(v[n], (int)n);
    sw_free(v);
}

/* Room already: the same array, the same capacity. */
static void
test_grow_room(void **state)
{
    (void)state;
    size_t cap = 0;
    char *v = sw_grow(NULL, &cap, 3, 1, 4);
    assert_non_null(v);
    assert_int_equal(cap, 4);
    assert_ptr_equal(sw_grow(v, &cap, 4, 1, 4), v);
    assert_int_equal(cap, 4);
    sw_free(v);
}

/* A need past twice the capacity, and FIRST 0. */
static void
test_grow_jumps(void **state)
{
    (void)state;
    size_t cap = 0;
    char *v = sw_grow(NULL, &cap, 100, 1, 0);
    assert_non_null(v);
    assert_int_equal(cap, 128);
    sw_free(v);
}

/* Out of memory or a size that overflows: NULL, the array and capacity kept. */
static void
test_grow_fails(void **state)
{
    (void)state;
    size_t cap = 0;
    long *v = sw_grow(NULL, &cap, 2, sizeof *v, 2);
    assert_non_null(v);
    v[0] = 41;
    v[1] = 42;
    sw_test_fail_alloc_at(1);
    assert_null(sw_grow(v, &cap, 3, sizeof *v, 2));
    sw_test_fail_alloc_at(0);
    assert_int_equal(cap, 2);
    assert_int_equal(v[1], 42);
    assert_null(sw_grow(v, &cap, SIZE_MAX / 4, sizeof *v, 2));
    assert_int_equal(cap, 2);
    sw_free(v);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles),
        cmocka_unit_test(test_grow_room),
        cmocka_unit_test(test_grow_jumps),
        cmocka_unit_test(test_grow_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
