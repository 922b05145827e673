/* tests/unit/rsp/test_symbols.c -- qSymbol look-ups and the memory map over scripted transcripts.
 *
 * As OpenOCD serves them (src/server/gdb_server.c, src/rtos/rtos.c): the stub asks for one
 * name after the other until OK, once per session; the memory map (qXfer:memory-map) is read
 * at the first 'm' and every read outside its regions fails without a packet.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "rspwalk/errors.h"
#include "rspwalk/rsp.h"
#include "rsp/session.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
/* OpenOCD 0.12's qSupported, less the features it fills from the target; '?' is S05. */
#define PROLOGUE                                                                                   \
    QSUP "<- PacketSize=4000;qXfer:memory-map:read+;qXfer:threads:read+;QStartNoAckMode+;"         \
         "vContSupported+\n-> QStartNoAckMode\n<- OK\n-> ?\n<- S05\n"
#define TCB_HEX "707843757272656e74544342"
#define FOO_HEX "78466f6f"
#define MAP_REQ "-> qXfer:memory-map:read::0,3ff0\n"

struct fixture {
    struct fake_script *fs;
    struct rsp_session *s;
};

static void
open_text(struct fixture *f, const char *text)
{
    struct rsp_session_config cfg;
    struct sw_errbuf err;
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    f->fs = fake_script_parse(text);
    assert_non_null(f->fs);
    assert_int_equal(rsp_session_connect(fake_transport_new(f->fs), &cfg, &f->s, &err), 0);
}

static void
finish(struct fixture *f)
{
    fake_script_finish(f->s, f->fs, true);
}

/* pxCurrentTCB is at 0x20001008; nothing else is known. */
static int
lookup(void *arg, const char *name, uint64_t *addr)
{
    int *calls = arg;
    (*calls)++;
    if (strcmp(name, "pxCurrentTCB") != 0)
        return 0;
    *addr = 0x20001008;
    return 1;
}

static void
test_qsymbol_answers_each_name_until_ok_once_per_session(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> qSymbol::\n<- qSymbol:" TCB_HEX "\n"
                           "-> qSymbol:20001008:" TCB_HEX "\n<- qSymbol:" FOO_HEX "\n"
                           "-> qSymbol::" FOO_HEX "\n<- OK\n");
    int calls = 0;
    size_t asked = 99;
    assert_int_equal(rsp_qsymbol_serve(f.s, lookup, &calls, &asked), 0);
    assert_int_equal(asked, 2);
    assert_int_equal(calls, 2);
    /* Once per session: no packet the second time. */
    assert_int_equal(rsp_qsymbol_serve(f.s, lookup, &calls, &asked), 0);
    assert_int_equal(asked, 0);
    finish(&f);
}

static void
test_qsymbol_without_support_asks_nothing(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> qSymbol::\n<- \n");
    int calls = 0;
    size_t asked = 99;
    assert_int_equal(rsp_qsymbol_serve(f.s, lookup, &calls, &asked), 0);
    assert_int_equal(asked, 0);
    assert_int_equal(calls, 0);
    finish(&f);
}

static void
test_qsymbol_refuses_a_request_that_is_no_name(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> qSymbol::\n<- qSymbol:zz\n");
    int calls = 0;
    assert_int_equal(rsp_qsymbol_serve(f.s, lookup, &calls, NULL), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "not hex");
    assert_int_equal(calls, 0);
    finish(&f);
}

static void
test_memory_map_bounds_reads(void **state)
{
    (void)state;
    struct fixture f;
    /* pyOCD-like: code at 0 and RAM at 0x20000000, 4 KiB each; a third region right after
     * the RAM: a read across that border is one read. */
    open_text(&f, PROLOGUE MAP_REQ
              "<- l<memory-map><memory type=\"flash\" start=\"0x0\" length=\"0x1000\">"
              "<property name=\"blocksize\">0x400</property></memory>"
              "<memory type='ram' start='0x20001000' length='0x100'/>"
              "<memory type=\"ram\" start=\"0x20000000\" length=\"0x1000\"/></memory-map>\n"
              "-> m20000ff8,10\n<- 00112233445566778899aabbccddeeff\n"
              "-> mffc,4\n<- 01020304\n");
    uint8_t buf[16];
    assert_int_equal(rsp_mem_read(f.s, 0x20000ff8, buf, 16), 0);
    assert_int_equal(rsp_mem_read(f.s, 0xffc, buf, 4), 0);
    /* No packet for these: outside, and running past the code's end. */
    assert_int_equal(rsp_mem_read(f.s, 0x30000000, buf, 4), SW_EMEM);
    assert_contains(rsp_session_errmsg(f.s), "outside the stub's memory map");
    assert_int_equal(rsp_mem_read(f.s, 0xffc, buf, 8), SW_EMEM);
    assert_int_equal(rsp_mem_read(f.s, 0x200010fc, buf, 8), SW_EMEM);
    const struct rsp_mem_region *m;
    size_t n;
    assert_int_equal(rsp_memory_map(f.s, &m, &n), 0);
    assert_int_equal(n, 3);
    assert_true(m[0].flash);
    assert_int_equal(m[1].start, 0x20000000);
    assert_int_equal(m[2].start, 0x20001000);
    finish(&f);
}

static void
test_memory_map_batch_and_a_map_that_cannot_be_parsed(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE MAP_REQ
              "<- l<memory-map><memory type=\"ram\" start=\"0x20000000\" length=\"0x1000\"/>"
              "</memory-map>\n-> m20000000,4\n<- aabbccdd\n");
    uint8_t a[4], b[4];
    struct rsp_mem_range r[2] = { { 0x40000000, 4, a, 0 }, { 0x20000000, 4, b, 0 } };
    assert_int_equal(rsp_mem_read_batch(f.s, r, 2), 0);
    assert_int_equal(r[0].rc, SW_EMEM);
    assert_int_equal(r[1].rc, 0);
    assert_memory_equal(b, "\xaa\xbb\xcc\xdd", 4);
    finish(&f);

    /* A region without a length: no map at all, every read goes to the stub. */
    open_text(&f, PROLOGUE MAP_REQ "<- l<memory-map><memory type=\"ram\" start=\"0x0\"/>"
                                   "</memory-map>\n-> m40000000,4\n<- 01020304\n");
    assert_int_equal(rsp_mem_read(f.s, 0x40000000, a, 4), 0);
    finish(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qsymbol_answers_each_name_until_ok_once_per_session),
        cmocka_unit_test(test_qsymbol_without_support_asks_nothing),
        cmocka_unit_test(test_qsymbol_refuses_a_request_that_is_no_name),
        cmocka_unit_test(test_memory_map_bounds_reads),
        cmocka_unit_test(test_memory_map_batch_and_a_map_that_cannot_be_parsed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
