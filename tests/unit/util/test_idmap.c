/* tests/unit/util/test_idmap.c -- the (pid, tid) index of per-thread arrays.
 *
 * 60000 keys put and found, replaced rows, keys that differ in one part
 * only, and a clear; the allocation-failure path leaves the map as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rspwalk/errors.h"
#include "util/idmap.h"

static void
test_idmap_finds_every_one_of_60000_threads(void **state)
{
    (void)state;
    struct sw_idmap m = { 0 };
    size_t row;
    for (size_t i = 0; i < 60000; i++)
        assert_int_equal(sw_idmap_put(&m, 0x4d2, (int64_t)(0x4d2 + i), i), 0);
    assert_int_equal(m.n, 60000);
    for (size_t i = 0; i < 60000; i++) {
        assert_true(sw_idmap_get(&m, 0x4d2, (int64_t)(0x4d2 + i), &row));
        assert_int_equal(row, i);
    }
    assert_false(sw_idmap_get(&m, 0x4d2, 0x4d2 + 60000, &row));
    assert_false(sw_idmap_get(&m, 0x4d3, 0x4d2, &row)); /* same tid, other pid */
    sw_idmap_fini(&m);
    assert_false(sw_idmap_get(&m, 0x4d2, 0x4d2, &row));
}

static void
test_idmap_put_replaces_a_row_and_clear_forgets(void **state)
{
    (void)state;
    struct sw_idmap m = { 0 };
    size_t row;
    assert_int_equal(sw_idmap_put(&m, 1, 2, 5), 0);
    assert_int_equal(sw_idmap_put(&m, 1, 2, 7), 0);
    assert_int_equal(m.n, 1);
    assert_true(sw_idmap_get(&m, 1, 2, &row));
    assert_int_equal(row, 7);
    assert_int_equal(sw_idmap_put(&m, -1, -1, 0), 0); /* negative ids are keys too */
    assert_true(sw_idmap_get(&m, -1, -1, &row));
    sw_idmap_clear(&m);
    assert_false(sw_idmap_get(&m, 1, 2, &row));
    assert_int_equal(sw_idmap_put(&m, 1, 2, 3), 0);
    assert_true(sw_idmap_get(&m, 1, 2, &row));
    assert_int_equal(row, 3);
    sw_idmap_fini(&m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idmap_finds_every_one_of_60000_threads),
        cmocka_unit_test(test_idmap_put_replaces_a_row_and_clear_forgets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
