/* tests/unit/util/test_hex.c -- sw_hex_decode and sw_hex_encode, as the RSP spells bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/util.h"

/* Every byte value both ways, in lower and upper case digits. */
static void
test_hex_round_trip(void **state)
{
    (void)state;
    uint8_t in[256], out[256];
    char hex[513];
    for (int i = 0; i < 256; i++)
        in[i] = (uint8_t)i;
    sw_hex_encode(in, sizeof in, hex);
    hex[512] = '\0';
    assert_int_equal(sw_hex_decode(hex, sizeof in, out), 0);
    assert_memory_equal(in, out, sizeof in);
    for (int i = 0; i < 512; i++)
        if (hex[i] >= 'a' && hex[i] <= 'f')
            hex[i] = (char)(hex[i] - 'a' + 'A');
    memset(out, 0, sizeof out);
    assert_int_equal(sw_hex_decode(hex, sizeof in, out), 0);
    assert_memory_equal(in, out, sizeof in);
}

/* A non-digit anywhere, in either half of a byte, fails the whole decode. */
static void
test_hex_bad_digit(void **state)
{
    (void)state;
    static const char bad[] = { 'g', 'G', 'x', ' ', '\0', '/', ':', '@', '`', '*', '#', '\xff' };
    uint8_t out[4];
    for (size_t b = 0; b < sizeof bad; b++) {
        for (int pos = 0; pos < 8; pos++) {
            char hex[9] = "0a1B2c3D";
            hex[pos] = bad[b];
            assert_int_equal(sw_hex_decode(hex, 4, out), -1);
        }
    }
    assert_int_equal(sw_hex_decode("", 0, out), 0);
    assert_int_equal(sw_hex_val('f'), 15);
    assert_int_equal(sw_hex_val('G'), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hex_round_trip),
        cmocka_unit_test(test_hex_bad_digit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
