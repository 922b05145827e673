/* tests/unit/door/test_lldb.c -- the RSP door's lldb packets without a target (door/lldb.c).
 *
 * jThreadsInfo and qThreadStopInfo made from a fake stop (a three-register description,
 * two threads, three memory ranges), a register's slice of a 'g' reply, and the replies kept
 * for a stop.  The door with real stubs and lldb: tests/integration/run-door-lldb.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* One translation unit with the code tested: door/ is not in the library. */
#include "door/lldb.c"

static char n_rsp[] = "rsp", n_rip[] = "rip", n_xmm0[] = "xmm0";
static char f_core[] = "org.gnu.gdb.i386.core", f_sse[] = "org.gnu.gdb.i386.sse";
static struct rsp_treg fake_regs[] = {
    { .name = n_rsp, .feature = f_core, .regnum = 0, .bitsize = 64, .offset = 0 },
    { .name = n_rip, .feature = f_core, .regnum = 1, .bitsize = 64, .offset = 8 },
    { .name = n_xmm0, .feature = f_sse, .regnum = 2, .bitsize = 128, .offset = 16 },
};
static struct rsp_tdesc fake_tdesc = { .regs = fake_regs, .nregs = 3, .g_size = 32 };

/* rsp 0x1000 and 0x2008, rip 0x4000 and 0x4100 (little-endian hex). */
static const char ghex1[] = "0010000000000000"
                            "0040000000000000"
                            "00000000000000000000000000000000";
static const char ghex2[] = "0820000000000000"
                            "0041000000000000"
                            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
static const uint8_t bytes_a[4] = { 0xde, 0xad, 0xbe, 0xef };
static const uint8_t bytes_b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t bytes_c[8] = { 9, 10, 11, 12, 13, 14, 15, 16 };

static struct rsp_stop fake_stop;
static struct door_lldb_thread fake_threads[] = { { .tid = 17, .regs_hex = ghex1 },
                                                  { .tid = 18, .regs_hex = ghex2 } };
/* A run of two adjacent ranges around thread 18's SP, one range around thread 17's. */
static struct door_lldb_range fake_mem[] = {
    { .addr = 0x2000, .len = 8, .data = bytes_b },
    { .addr = 0x2008, .len = 8, .data = bytes_c },
    { .addr = 0x1000, .len = 4, .data = bytes_a },
};

static struct door_lldb_stop
fake(void)
{
    fake_stop = (struct rsp_stop){ .kind = RSP_STOP_SIGNAL,
                                   .signal = 5,
                                   .has_thread = true,
                                   .thread = { .pid = 0x10, .tid = 17 },
                                   .swbreak = true };
    return (struct door_lldb_stop){ .tdesc = &fake_tdesc,
                                    .stop = &fake_stop,
                                    .threads = fake_threads,
                                    .nthreads = 2,
                                    .mem = fake_mem,
                                    .nmem = 3,
                                    .multiprocess = true };
}

/* The reply with the binary escapes undone. */
static char *
unescape(const char *p, size_t n)
{
    char *u = malloc(n + 1);
    size_t k = 0;
    assert_non_null(u);
    for (size_t i = 0; i < n; i++)
        u[k++] = p[i] == '}' ? (char)(p[++i] ^ 0x20) : p[i];
    u[k] = '\0';
    return u;
}

static void
test_reg_hex_slices_by_layout_and_refuses_unavailable(void **state)
{
    (void)state;
    const char *p;
    size_t n;
    assert_true(door_lldb_reg_hex(&fake_tdesc, ghex1, 1, &p, &n));
    assert_int_equal(n, 16);
    assert_memory_equal(p, "0040000000000000", 16);
    assert_true(door_lldb_reg_hex(&fake_tdesc, ghex1, 2, &p, &n));
    assert_int_equal(n, 32);
    assert_false(door_lldb_reg_hex(&fake_tdesc, ghex2, 2, &p, &n));  /* 'x': unavailable */
    assert_false(door_lldb_reg_hex(&fake_tdesc, ghex1, 9, &p, &n));  /* no such register */
    assert_false(door_lldb_reg_hex(&fake_tdesc, "0010", 1, &p, &n)); /* 'g' too short */
    assert_false(door_lldb_reg_hex(NULL, ghex1, 1, &p, &n));
}

static void
test_threads_info_gives_core_registers_and_each_thread_its_stack(void **state)
{
    (void)state;
    struct door_lldb_stop st = fake();
    char *out;
    size_t len;
    assert_int_equal(door_lldb_threads_info(&st, &out, &len), 0);
    assert_null(memchr(out, '#', len));
    assert_null(memchr(out, '$', len));
    char *u = unescape(out, len);
    assert_string_equal(
        u, "[{\"tid\":17,\"signal\":5,\"reason\":\"breakpoint\","
           "\"registers\":{\"0\":\"0010000000000000\",\"1\":\"0040000000000000\"},"
           "\"memory\":[{\"address\":4096,\"bytes\":\"deadbeef\"}]},"
           "{\"tid\":18,\"signal\":0,"
           "\"registers\":{\"0\":\"0820000000000000\",\"1\":\"0041000000000000\"},"
           "\"memory\":[{\"address\":8192,\"bytes\":\"0102030405060708090a0b0c0d0e0f10\"}]}]");
    free(u);
    free(out);
}

static void
test_threads_info_without_description_sends_no_registers(void **state)
{
    (void)state;
    struct door_lldb_stop st = fake();
    st.tdesc = NULL;
    char *out;
    size_t len;
    assert_int_equal(door_lldb_threads_info(&st, &out, &len), 0);
    char *u = unescape(out, len);
    assert_null(strstr(u, "registers"));
    /* No SP known: every chunk goes with the stopped thread. */
    assert_non_null(strstr(u, "{\"tid\":18,\"signal\":0,\"memory\":[]}"));
    free(u);
    free(out);
}

static void
test_thread_stop_info_for_stopped_and_other_and_unknown_threads(void **state)
{
    (void)state;
    struct door_lldb_stop st = fake();
    char *out;
    size_t len;
    assert_int_equal(door_lldb_thread_stop_info(&st, 17, &out, &len), 0);
    assert_string_equal(out, "T05thread:p10.11;swbreak:;00:0010000000000000;01:0040000000000000;");
    free(out);
    assert_int_equal(door_lldb_thread_stop_info(&st, 18, &out, &len), 0);
    assert_string_equal(out, "T00thread:p10.12;00:0820000000000000;01:0041000000000000;");
    free(out);
    assert_int_equal(door_lldb_thread_stop_info(&st, 99, &out, &len), SW_ENOENT);
    st.multiprocess = false; /* a front end without multiprocess+: plain thread ids */
    assert_int_equal(door_lldb_thread_stop_info(&st, 18, &out, &len), 0);
    assert_string_equal(out, "T00thread:12;00:0820000000000000;01:0041000000000000;");
    free(out);
}

static void
test_memo_keeps_read_only_replies_until_cleared(void **state)
{
    (void)state;
    struct door_memo m = { 0 };
    const char *r;
    size_t rl;
    assert_true(door_memo_wanted("qProcessInfo", 12));
    assert_true(door_memo_wanted("qXfer:libraries-svr4:read::0,47fe", 33));
    assert_true(door_memo_wanted("m0,200", 6));
    assert_false(door_memo_wanted("c", 1));
    assert_true(door_memo_wanted("qSymbol::", 9));
    assert_false(door_memo_wanted("Z0,1000,1", 9));
    assert_false(door_memo_get(&m, "qProcessInfo", 12, &r, &rl));
    for (int i = 0; i < 40; i++) { /* past the first allocation */
        char k[32];
        int n = snprintf(k, sizeof k, "m%x,200", i);
        assert_int_equal(door_memo_put(&m, k, (size_t)n, "E01", 3), 0);
    }
    assert_int_equal(door_memo_put(&m, "qProcessInfo", 12, "", 0), 0);
    assert_true(door_memo_get(&m, "qProcessInfo", 12, &r, &rl));
    assert_int_equal(rl, 0);
    assert_true(door_memo_get(&m, "m27,200", 7, &r, &rl));
    assert_int_equal(rl, 3);
    assert_memory_equal(r, "E01", 3);
    door_memo_clear(&m);
    assert_false(door_memo_get(&m, "qProcessInfo", 12, &r, &rl));
    assert_int_equal(door_memo_put(&m, "qOffsets", 8, "Text=0", 6), 0);
    door_memo_fini(&m);
    door_memo_fini(&m); /* twice: a no-op */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reg_hex_slices_by_layout_and_refuses_unavailable),
        cmocka_unit_test(test_threads_info_gives_core_registers_and_each_thread_its_stack),
        cmocka_unit_test(test_threads_info_without_description_sends_no_registers),
        cmocka_unit_test(test_thread_stop_info_for_stopped_and_other_and_unknown_threads),
        cmocka_unit_test(test_memo_keeps_read_only_replies_until_cleared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
