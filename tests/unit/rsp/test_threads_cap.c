/* tests/unit/rsp/test_threads_cap.c -- the cap on thread lists (rsp_session_config.max_threads).
 *
 * A stub may list threads without end: the list is cut at the cap, the
 * first ids kept, rsp_threads_cut set, and nothing more is asked for.
 * Below the cap the list is whole and the flag clear, also after a cut.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/session.h"
#include "rspwalk/rsp.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
#define PROLOGUE_NOACK                                                                             \
    QSUP "<- PacketSize=1000;multiprocess+;vContSupported+;QStartNoAckMode+\n"                     \
         "-> QStartNoAckMode\n<- OK\n-> ?\n<- T05thread:p1f.1f;\n"

struct fixture {
    struct fake_script *fs;
    struct rsp_session *s;
    struct sw_errbuf err;
};

static void
open_capped(struct fixture *f, const char *text, size_t max_threads)
{
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.no_prefetch = true;
    cfg.timeout_ms = 200;
    cfg.max_threads = max_threads;
    memset(f, 0, sizeof *f);
    f->fs = fake_script_parse(text);
    assert_non_null(f->fs);
    assert_int_equal(rsp_session_connect(fake_transport_new(f->fs), &cfg, &f->s, &f->err), 0);
}

static void
test_threads_cap_cuts_a_list_mid_reply_and_asks_no_more(void **state)
{
    (void)state;
    struct fixture f;
    /* No qsThreadInfo after the reply that filled the list: the script ends there. */
    open_capped(&f,
                PROLOGUE_NOACK "-> qfThreadInfo\n<- mp1f.1,p1f.2,p1f.3\n"
                               "-> qsThreadInfo\n<- mp1f.4,p1f.5,p1f.6\n",
                4);
    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(ids[3].tid, 4);
    assert_true(rsp_threads_cut(f.s));
    assert_int_equal(rsp_threads_max(f.s), 4);
    free(ids);
    fake_script_finish(f.s, f.fs, true);
}

static void
test_threads_cap_cuts_the_threads_document(void **state)
{
    (void)state;
    struct fixture f;
    open_capped(&f,
                QSUP "<- PacketSize=1000;multiprocess+;qXfer:threads:read+;QStartNoAckMode+\n"
                     "-> QStartNoAckMode\n<- OK\n-> ?\n<- T05thread:p1f.1f;\n"
                     "-> qXfer:threads:read::0,ff0\n"
                     "<- l<threads><thread id=\"p1f.1\"/><thread id=\"p1f.2\"/>"
                     "<thread id=\"p1f.3\"/></threads>\n",
                2);
    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ids[1].tid, 2);
    assert_true(rsp_threads_cut(f.s));
    free(ids);
    fake_script_finish(f.s, f.fs, true);
}

static void
test_threads_cap_a_whole_list_clears_the_flag(void **state)
{
    (void)state;
    struct fixture f;
    open_capped(&f,
                PROLOGUE_NOACK "-> qfThreadInfo\n<- mp1f.1,p1f.2,p1f.3\n"
                               "-> qfThreadInfo\n<- mp1f.1\n-> qsThreadInfo\n<- l\n",
                2);
    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_true(rsp_threads_cut(f.s));
    free(ids);
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_int_equal(n, 1);
    assert_false(rsp_threads_cut(f.s));
    free(ids);
    fake_script_finish(f.s, f.fs, true);
}

static void
test_threads_cap_default_is_65536(void **state)
{
    (void)state;
    struct fixture f;
    open_capped(&f, PROLOGUE_NOACK, 0);
    assert_int_equal(rsp_threads_max(f.s), 65536);
    assert_false(rsp_threads_cut(f.s));
    fake_script_finish(f.s, f.fs, true);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_cap_cuts_a_list_mid_reply_and_asks_no_more),
        cmocka_unit_test(test_threads_cap_cuts_the_threads_document),
        cmocka_unit_test(test_threads_cap_a_whole_list_clears_the_flag),
        cmocka_unit_test(test_threads_cap_default_is_65536),
    };
    return cmocka_run_group_tests_name("threads_cap", tests, NULL, NULL);
}
