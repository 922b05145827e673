/* tests/unit/rsp/test_cursor.c -- the sticky-error reply cursor.
 *
 * Hex numbers, literals, key:value pairs and the one-failure-sticks rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "rsp/cursor.h"

static void
cur(struct rsp_cur *c, const char *s)
{
    rsp_cur_init(c, "test", s, strlen(s));
}

static void
test_cursor_hex_reads_up_to_max_digits(void **state)
{
    (void)state;
    struct rsp_cur c;
    cur(&c, "0506:ff");
    assert_int_equal(rsp_cur_hex(&c, 2), 5);
    assert_int_equal(rsp_cur_hex(&c, 2), 6);
    assert_true(rsp_cur_lit(&c, ':'));
    assert_int_equal(rsp_cur_hex(&c, 16), 0xff);
    assert_true(rsp_cur_eof(&c));
    assert_false(c.failed);
    assert_int_equal(rsp_cur_offset(&c), 7);
}

static void
test_cursor_hex_without_digits_fails_and_sticks(void **state)
{
    (void)state;
    struct rsp_cur c;
    cur(&c, "zz12");
    assert_int_equal(rsp_cur_hex(&c, 4), 0);
    assert_true(c.failed);
    assert_int_equal(rsp_cur_offset(&c), 0);
    /* later reads do nothing */
    assert_false(rsp_cur_accept(&c, 'z'));
    assert_false(rsp_cur_lit(&c, 'z'));
    assert_int_equal(rsp_cur_offset(&c), 0);
}

static void
test_cursor_hex_overflow_past_64_bits_fails(void **state)
{
    (void)state;
    struct rsp_cur c;
    cur(&c, "00000000ffffffffffffffff");
    assert_int_equal(rsp_cur_hex(&c, 64), UINT64_MAX);
    assert_false(c.failed);
    cur(&c, "1ffffffffffffffff");
    rsp_cur_hex(&c, 64);
    assert_true(c.failed);
}

static void
test_cursor_signed_hex_reads_minus_one(void **state)
{
    (void)state;
    struct rsp_cur c;
    cur(&c, "-1.2a");
    assert_int_equal(rsp_cur_shex(&c, 16), -1);
    assert_true(rsp_cur_lit(&c, '.'));
    assert_int_equal(rsp_cur_shex(&c, 16), 0x2a);
    assert_false(c.failed);
    cur(&c, "-");
    rsp_cur_shex(&c, 16);
    assert_true(c.failed);
}

static void
test_cursor_kv_splits_pairs_and_skips_valueless_keys(void **state)
{
    (void)state;
    struct rsp_cur c;
    struct rsp_span k, v;
    cur(&c, "thread:p1.2;swbreak:;odd;core:1");
    assert_true(rsp_cur_kv(&c, &k, &v));
    assert_true(rsp_span_eq(k, "thread"));
    assert_true(rsp_span_eq(v, "p1.2"));
    assert_true(rsp_cur_kv(&c, &k, &v));
    assert_true(rsp_span_eq(k, "swbreak"));
    assert_int_equal(v.len, 0);
    assert_true(rsp_cur_kv(&c, &k, &v));
    assert_true(rsp_span_eq(k, "odd"));
    assert_true(rsp_cur_kv(&c, &k, &v));
    assert_true(rsp_span_eq(k, "core"));
    assert_true(rsp_span_eq(v, "1"));
    assert_true(rsp_cur_eof(&c));
    cur(&c, "novalue");
    assert_false(rsp_cur_kv(&c, &k, &v));
    assert_true(c.failed);
}

static void
test_cursor_bytes_decodes_hex_pairs_and_fails_short(void **state)
{
    (void)state;
    struct rsp_cur c;
    uint8_t b[4];
    cur(&c, "deadbeef");
    assert_true(rsp_cur_bytes(&c, b, 4));
    assert_memory_equal(b, "\xde\xad\xbe\xef", 4);
    cur(&c, "dead");
    assert_false(rsp_cur_bytes(&c, b, 4));
    assert_true(c.failed);
    cur(&c, "xxad");
    assert_false(rsp_cur_bytes(&c, b, 2));
}

static void
test_cursor_until_rest_and_accept_str(void **state)
{
    (void)state;
    struct rsp_cur c;
    cur(&c, "qXfer:features:read+;PacketSize=47ff");
    assert_false(rsp_cur_accept_str(&c, "qXfer:x"));
    assert_true(rsp_cur_accept_str(&c, "qXfer:"));
    struct rsp_span s = rsp_cur_until(&c, ';');
    assert_true(rsp_span_eq(s, "features:read+"));
    assert_true(rsp_cur_accept(&c, ';'));
    s = rsp_cur_rest(&c);
    assert_true(rsp_span_eq(s, "PacketSize=47ff"));
    assert_true(rsp_cur_eof(&c));
    rsp_cur_fail(&c);
    assert_true(c.failed);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cursor_hex_reads_up_to_max_digits),
        cmocka_unit_test(test_cursor_hex_without_digits_fails_and_sticks),
        cmocka_unit_test(test_cursor_hex_overflow_past_64_bits_fails),
        cmocka_unit_test(test_cursor_signed_hex_reads_minus_one),
        cmocka_unit_test(test_cursor_kv_splits_pairs_and_skips_valueless_keys),
        cmocka_unit_test(test_cursor_bytes_decodes_hex_pairs_and_fails_short),
        cmocka_unit_test(test_cursor_until_rest_and_accept_str),
    };
    return cmocka_run_group_tests_name("cursor", tests, NULL, NULL);
}
