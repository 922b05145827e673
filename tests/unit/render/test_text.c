/* tests/unit/render/test_text.c -- names from the target escaped for a line of text.
 *
 * sw_text_escape and sw_text_fputs against names a hostile stub would send:
 * newlines and terminal escapes, invalid and overlong UTF-8, C1 controls,
 * bidirectional overrides, and ';' for folded stacks.  Valid UTF-8 stays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"

static void
expect_escaped(const char *in, unsigned flags, const char *want)
{
    char *got = sw_text_escape(in, flags);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void
test_text_plain_names_are_unchanged(void **state)
{
    (void)state;
    expect_escaped("main", 0, "main");
    expect_escaped("/lib/x86_64-linux-gnu/libc.so.6", 0, "/lib/x86_64-linux-gnu/libc.so.6");
    expect_escaped("Square::area() const", 0, "Square::area() const");
    expect_escaped("", 0, "");
}

static void
test_text_newline_and_escape_cannot_start_a_line(void **state)
{
    (void)state;
    expect_escaped("evil\x1b[2J\n#1  0x0 in forged ()", 0, "evil\\x1b[2J\\x0a#1  0x0 in forged ()");
    expect_escaped("a\rb\tc\x7f", 0, "a\\x0db\\x09c\\x7f");
}

static void
test_text_backslash_is_doubled_so_escapes_are_unambiguous(void **state)
{
    (void)state;
    expect_escaped("a\\x1b", 0, "a\\\\x1b");
    /* Text already in C's escape syntax keeps its backslashes. */
    expect_escaped("'\\n' \"x\x1b\"", SW_TEXT_KEEP_BACKSLASH, "'\\n' \"x\\x1b\"");
}

static void
test_text_invalid_utf8_bytes_become_hex(void **state)
{
    (void)state;
    expect_escaped("x\xff", 0, "x\\xff");
    expect_escaped("\xc0\xaf", 0, "\\xc0\\xaf");          /* overlong '/' */
    expect_escaped("\xed\xa0\x80", 0, "\\xed\\xa0\\x80"); /* a surrogate */
    expect_escaped("\xe2\x82", 0, "\\xe2\\x82");          /* cut short at the end */
}

static void
test_text_valid_utf8_is_kept(void **state)
{
    (void)state;
    expect_escaped("caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x99\x82", 0,
                   "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x99\x82");
}

static void
test_text_c1_controls_and_bidi_overrides_are_escaped(void **state)
{
    (void)state;
    expect_escaped("a\xc2\x9b"
                   "31m",
                   0, "a\\xc2\\x9b31m");                      /* CSI as U+009B */
    expect_escaped("x\xe2\x80\xaey", 0, "x\\xe2\\x80\\xaey"); /* U+202E */
    expect_escaped("x\xe2\x81\xa6y", 0, "x\\xe2\\x81\\xa6y"); /* U+2066 */
    expect_escaped("x\xe2\x80\xa8y", 0, "x\\xe2\\x80\\xa8y"); /* U+2028 */
    expect_escaped("x\xe2\x80\x94y", 0, "x\xe2\x80\x94y");    /* an em dash stays */
}

static void
test_text_semicolon_escaped_only_when_asked(void **state)
{
    (void)state;
    expect_escaped("a;b", 0, "a;b");
    expect_escaped("a;b", SW_TEXT_ESCAPE_SEMICOLON, "a\\x3bb");
}

static void
test_text_fputs_writes_what_escape_returns(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    sw_text_fputs(f, "m\n\xff;", SW_TEXT_ESCAPE_SEMICOLON);
    sw_text_fputs(f, NULL, 0);
    fclose(f);
    assert_string_equal(buf, "m\\x0a\\xff\\x3b(null)");
    free(buf);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_plain_names_are_unchanged),
        cmocka_unit_test(test_text_newline_and_escape_cannot_start_a_line),
        cmocka_unit_test(test_text_backslash_is_doubled_so_escapes_are_unambiguous),
        cmocka_unit_test(test_text_invalid_utf8_bytes_become_hex),
        cmocka_unit_test(test_text_valid_utf8_is_kept),
        cmocka_unit_test(test_text_c1_controls_and_bidi_overrides_are_escaped),
        cmocka_unit_test(test_text_semicolon_escaped_only_when_asked),
        cmocka_unit_test(test_text_fputs_writes_what_escape_returns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
