/* tests/unit/rsp/test_stop.c -- parsing stop replies (rsp_stop_parse, pure).
 *
 * The replies are the ones measured on gdbserver 13.1 and QEMU 7.2
 * (gdb manual, "Stop Reply Packets") plus the W/X/S/N forms and malformed input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "rsp/codec.h"
#include "rspwalk/errors.h"
#include "rspwalk/rsp.h"

static int
parse(const char *s, struct rsp_stop *st, struct sw_errbuf *err)
{
    return rsp_stop_parse(s, strlen(s), st, err);
}

static void
test_stop_gdbserver_t_with_rle_expedited_registers(void **state)
{
    (void)state;
    /* The wire form; the codec expands the run-lengths before parsing. */
    const char *wire = "T0506:0*,;07:d0e6f*\"7f0* ;10:704bfef7ff7f0* ;thread:p32f4.32f4;core:1;";
    uint8_t buf[256];
    long n = rsp_rle_expand((const uint8_t *)wire, strlen(wire), buf, sizeof buf);
    assert_true(n > 0);
    struct rsp_stop st;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(rsp_stop_parse((const char *)buf, (size_t)n, &st, &err), 0);
    assert_int_equal(st.kind, RSP_STOP_SIGNAL);
    assert_int_equal(st.signal, 5);
    assert_true(st.has_thread);
    assert_int_equal(st.thread.pid, 0x32f4);
    assert_int_equal(st.thread.tid, 0x32f4);
    assert_int_equal(st.core, 1);
    assert_int_equal(st.nexpedited, 3);
    assert_int_equal(st.expedited[0].regnum, 6);
    assert_int_equal(st.expedited[0].len, 8);
    assert_memory_equal(st.expedited[0].bytes, "\0\0\0\0\0\0\0\0", 8);
    assert_int_equal(st.expedited[1].regnum, 7);
    assert_memory_equal(st.expedited[1].bytes, "\xd0\xe6\xff\xff\xff\x7f\0\0", 8);
    assert_int_equal(st.expedited[2].regnum, 0x10);
    assert_memory_equal(st.expedited[2].bytes, "\x70\x4b\xfe\xf7\xff\x7f\0\0", 8);
    assert_false(st.swbreak);
}

static void
test_stop_qemu_t_with_padded_thread_and_no_registers(void **state)
{
    (void)state;
    struct rsp_stop st;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(parse("T05thread:p01.2b67;", &st, &err), 0);
    assert_int_equal(st.signal, 5);
    assert_int_equal(st.thread.pid, 1);
    assert_int_equal(st.thread.tid, 0x2b67);
    assert_int_equal(st.nexpedited, 0);
    assert_int_equal(st.core, -1);
}

static void
test_stop_reasons_and_unknown_keys_are_handled(void **state)
{
    (void)state;
    struct rsp_stop st;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(parse("T05swbreak:;hwbreak:;library:;watch:7ffe10;syscall_entry:3c;"
                           "fork:p2.2;exec:2f62696e;thread:2a;create:;",
                           &st, &err),
                     0);
    assert_true(st.swbreak);
    assert_true(st.hwbreak);
    assert_true(st.library);
    assert_int_equal(st.thread.pid, 0);
    assert_int_equal(st.thread.tid, 0x2a);
    assert_int_equal(st.nexpedited, 0);
}

static void
test_stop_unavailable_and_oversized_registers_are_not_kept(void **state)
{
    (void)state;
    struct rsp_stop st;
    struct sw_errbuf err = { 0, "" };
    char big[200];
    memset(big, 0, sizeof big);
    strcpy(big, "T0501:xxxxxxxx;02:");
    memset(big + strlen(big), 'a', 130); /* 65 bytes: too many for a row */
    strcat(big, ";03:1122;");
    assert_int_equal(parse(big, &st, &err), 0);
    assert_int_equal(st.nexpedited, 1);
    assert_int_equal(st.expedited[0].regnum, 3);
    assert_int_equal(st.expedited[0].len, 2);
}

static void
test_stop_exit_kill_signal_and_no_resumed_forms(void **state)
{
    (void)state;
    struct rsp_stop st;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(parse("W00", &st, &err), 0);
    assert_int_equal(st.kind, RSP_STOP_EXITED);
    assert_int_equal(st.code, 0);
    assert_false(st.has_thread);
    assert_int_equal(parse("W2a;process:1f", &st, &err), 0);
    assert_int_equal(st.code, 42);
    assert_true(st.has_thread);
    assert_int_equal(st.thread.pid, 0x1f);
    assert_int_equal(parse("X09", &st, &err), 0);
    assert_int_equal(st.kind, RSP_STOP_KILLED);
    assert_int_equal(st.signal, 9);
    assert_int_equal(parse("S02", &st, &err), 0);
    assert_int_equal(st.kind, RSP_STOP_SIGNAL);
    assert_int_equal(st.signal, 2);
    assert_int_equal(parse("N", &st, &err), 0);
    assert_int_equal(st.kind, RSP_STOP_NO_RESUMED);
}

static void
test_stop_garbage_is_eproto_with_offset(void **state)
{
    (void)state;
    struct rsp_stop st;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(parse("Q05", &st, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "stop reply: cannot parse at offset 0"));
    assert_int_equal(parse("T5", &st, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "offset 1"));
    assert_int_equal(parse("T05thread:pzz;", &st, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "offset 11"));
    assert_int_equal(parse("T0506:123;", &st, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "offset 3"));
    assert_int_equal(parse("S05extra", &st, &err), SW_EPROTO);
    assert_int_equal(parse("Wzz", &st, &err), SW_EPROTO);
    assert_int_equal(parse("T05novalue", &st, &err), SW_EPROTO);
    assert_int_equal(parse("O48656c6c6f", &st, &err), SW_EPROTO);
    assert_int_equal(rsp_stop_parse("", 0, &st, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "empty"));
    assert_int_equal(st.kind, RSP_STOP_NONE);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_gdbserver_t_with_rle_expedited_registers),
        cmocka_unit_test(test_stop_qemu_t_with_padded_thread_and_no_registers),
        cmocka_unit_test(test_stop_reasons_and_unknown_keys_are_handled),
        cmocka_unit_test(test_stop_unavailable_and_oversized_registers_are_not_kept),
        cmocka_unit_test(test_stop_exit_kill_signal_and_no_resumed_forms),
        cmocka_unit_test(test_stop_garbage_is_eproto_with_offset),
    };
    return cmocka_run_group_tests_name("stop", tests, NULL, NULL);
}
