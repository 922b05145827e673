/* tests/unit/rsp/test_prefetch.c -- the connect's '?' with the first stop's objects
 * (rsp/prefetch.c).
 *
 * On a gdbserver-like stub (no-ack mode, multiprocess, qXfer:threads) the
 * session asks for target.xml, the library list, auxv and the thread list in
 * the write that carries '?', and answers the same requests from those
 * replies later in the stop.  Scripted stubs (tests/tools/fake_transport.h)
 * check what goes on the wire: one round trip at connect, none afterwards,
 * the live request again after a resume, a long object continued on the
 * wire, refusals judged as if they had come live, the links and settings
 * that get no prefetch, and a stub that hangs up in the middle.  A later
 * stop's first write (rsp_stop_fetch): the thread list by qfThreadInfo and
 * qsThreadInfo, a thread that came or went since, a stub that refuses them;
 * ranges that follow each other read with one 'm', each alone when refused;
 * qXfer:threads for a front end that reads the list so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/session.h"
#include "rspwalk/rsp.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
/* PacketSize 0x108: qXfer chunks of 0xf8 bytes. */
#define GDBSERVER_FEATURES                                                                         \
    "PacketSize=108;QStartNoAckMode+;multiprocess+;vContSupported+;qXfer:features:read+;"          \
    "qXfer:threads:read+;qXfer:libraries-svr4:read+;qXfer:auxv:read+"
#define XML                                                                                        \
    "<?xml version=\"1.0\"?><target><architecture>i386:x86-64</architecture>"                      \
    "<feature name=\"org.gnu.gdb.i386.core\"><reg name=\"rax\" bitsize=\"64\"/>"                   \
    "<reg name=\"rip\" bitsize=\"64\" regnum=\"16\"/></feature></target>"
#define STOP    "T05thread:p1f.1f;"
#define THREADS "<threads><thread id=\"p1f.1f\"/><thread id=\"p1f.20\"/></threads>"
#define LIBS    "<library-list-svr4 version=\"1.0\"/>"
#define AUXV    "\\x09\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x40\\x10\\x40\\x00\\x00\\x00\\x00\\x00"

/* The connect up to QStartNoAckMode's OK. */
#define HEAD QSUP "<- " GDBSERVER_FEATURES "\n-> QStartNoAckMode\n<- OK\n"
/* The prefetching write and its replies, LIBS_REPLY and AUXV_REPLY as given. */
#define PREFETCH(libs_reply, auxv_reply)                                                           \
    "-> ?\n-> qXfer:features:read:target.xml:0,f8\n-> qXfer:libraries-svr4:read::0,f8\n"           \
    "-> qXfer:auxv:read::0,f8\n-> qXfer:threads:read::0,f8\n"                                      \
    "<- " STOP "\n<- l" XML "\n<- " libs_reply "\n<- " auxv_reply "\n<- l" THREADS "\n"

struct fixture {
    struct fake_script *fs;
    struct rsp_session *s;
    struct sw_errbuf err;
    int rc;
};

static int
open_cfg(struct fixture *f, const char *text, const struct rsp_session_config *cfg)
{
    memset(f, 0, sizeof *f);
    f->fs = fake_script_parse(text);
    assert_non_null(f->fs);
    f->rc = rsp_session_connect(fake_transport_new(f->fs), cfg, &f->s, &f->err);
    return f->rc;
}

static int
open_text(struct fixture *f, const char *text)
{
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    return open_cfg(f, text, &cfg);
}

static void
finish(struct fixture *f)
{
    fake_script_finish(f->s, f->fs, true);
}

/* The threads of the connect's stop (taken from its prefetched list). */
static size_t
rsp_threads_count_check(struct fixture *f)
{
    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(f->s, &ids, &n), 0);
    free(ids);
    return n;
}

static void
test_prefetch_connect_asks_every_object_with_the_stop_in_one_round_trip(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, HEAD PREFETCH("l" LIBS, "l" AUXV)), 0);
    const struct rsp_stats *st = rsp_session_stats(f.s);
    assert_int_equal(st->round_trips, 3); /* qSupported, QStartNoAckMode, the prefetch */
    assert_int_equal(st->packets_sent, 7);
    assert_int_equal(st->cached_replies, 1); /* target.xml, taken by the connect */
    assert_non_null(rsp_session_tdesc(f.s));
    const struct rsp_stop *stop = rsp_last_stop(f.s);
    assert_non_null(stop);
    assert_int_equal(stop->thread.tid, 0x1f);
    assert_true(fake_script_done(f.fs));

    /* Every object of the stop, and again: no packet, no round trip. */
    for (int round = 0; round < 2; round++) {
        struct rsp_thread_id *ids;
        size_t n;
        assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(ids[1].tid, 0x20);
        free(ids);
        char *data;
        size_t len;
        assert_int_equal(rsp_xfer_read(f.s, "libraries-svr4", "", &data, &len), 0);
        assert_string_equal(data, LIBS);
        free(data);
        assert_int_equal(rsp_xfer_read(f.s, "auxv", "", &data, &len), 0);
        assert_int_equal(len, 16);
        assert_int_equal((unsigned char)data[0], 9);
        assert_int_equal((unsigned char)data[9], 0x10); /* escaped in the reply, not here */
        free(data);
    }
    assert_int_equal(st->round_trips, 3);
    assert_int_equal(st->packets_sent, 7);
    assert_int_equal(st->cached_replies, 7);
    assert_int_equal(st->by_kind[RSP_PKT_XFER_THREADS], 1);
    finish(&f);
}

static void
test_prefetch_resume_drops_the_replies(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(
        open_text(
            &f, HEAD PREFETCH("l" LIBS,
                              "l" AUXV) "-> vCont?\n<- vCont;c;C;t;s;S;r\n-> vCont;c\n<- " STOP "\n"
                                        "-> qXfer:auxv:read::0,f8\n<- l" AUXV "\n"),
        0);
    struct rsp_stop stop;
    assert_int_equal(rsp_resume(f.s, (struct rsp_thread_id){ 0, 0 }, false, 0), 0);
    assert_int_equal(rsp_wait_stop(f.s, 200, &stop), 0);
    char *data;
    size_t len;
    assert_int_equal(rsp_xfer_read(f.s, "auxv", "", &data, &len), 0); /* from the wire */
    assert_int_equal(len, 16);
    free(data);
    assert_int_equal(rsp_session_stats(f.s)->cached_replies, 1);
    finish(&f);
}

static void
test_prefetch_long_object_goes_on_from_the_first_chunk(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, HEAD PREFETCH("m<library-list-svr4",
                                                 "l" AUXV) "-> qXfer:libraries-svr4:read::12,f8\n"
                                                           "<- l version=\"1.0\"/>\n"),
                     0);
    char *data;
    size_t len;
    if (rsp_xfer_read(f.s, "libraries-svr4", "", &data, &len) != 0)
        fail_msg("%s / %s", rsp_session_errmsg(f.s), fake_script_error(f.fs));
    assert_string_equal(data, LIBS);
    free(data);
    assert_int_equal(rsp_session_stats(f.s)->round_trips, 4);
    finish(&f);
}

static void
test_prefetch_refusals_count_as_if_they_came_live(void **state)
{
    (void)state;
    struct fixture f;
    /* An empty reply (no library list) and an error (no auxv). */
    assert_int_equal(open_text(&f, HEAD PREFETCH("", "E01")), 0);
    char *data;
    size_t len;
    assert_int_equal(rsp_xfer_read(f.s, "libraries-svr4", "", &data, &len), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "qXfer:libraries-svr4:read::0,f8");
    /* Remembered as unsupported: refused again without a packet. */
    assert_int_equal(rsp_xfer_read(f.s, "libraries-svr4", "", &data, &len), SW_EUNSUP);
    assert_int_equal(rsp_xfer_read(f.s, "auxv", "", &data, &len), SW_ESTUB);
    assert_contains(rsp_session_errmsg(f.s), "stub replied E01");
    assert_int_equal(rsp_session_stats(f.s)->round_trips, 3);
    finish(&f);
}

/* Each link or setting without the prefetch: '?' alone, then target.xml. */
static void
test_prefetch_off_where_not_wanted(void **state)
{
    (void)state;
    static const char one_by_one[] = "-> ?\n<- " STOP "\n"
                                     "-> qXfer:features:read:target.xml:0,f8\n<- l" XML "\n";
    struct rsp_session_config cfg;
    struct fixture f;

    /* Asked not to. */
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.no_prefetch = true;
    assert_int_equal(open_cfg(&f,
                              HEAD "-> ?\n<- " STOP "\n"
                                   "-> qXfer:features:read:target.xml:0,f8\n<- l" XML "\n",
                              &cfg),
                     0);
    finish(&f);
    /* No caches. */
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.no_cache = true;
    char text[2048];
    snprintf(text, sizeof text, "%s%s", HEAD, one_by_one);
    assert_int_equal(open_cfg(&f, text, &cfg), 0);
    finish(&f);
    /* Ack mode (no QStartNoAckMode offered): no pipelining at all. */
    snprintf(text, sizeof text,
             "%s<- PacketSize=108;multiprocess+;qXfer:features:read+;qXfer:threads:read+;"
             "qXfer:auxv:read+\n%s",
             QSUP, one_by_one);
    assert_int_equal(open_text(&f, text), 0);
    finish(&f);
    /* A stub not known to serve its input in order (no multiprocess). */
    snprintf(text, sizeof text,
             "%s<- PacketSize=108;QStartNoAckMode+;qXfer:features:read+;qXfer:auxv:read+\n"
             "-> QStartNoAckMode\n<- OK\n%s",
             QSUP, one_by_one);
    assert_int_equal(open_text(&f, text), 0);
    finish(&f);
}

static void
test_prefetch_objects_not_offered_are_not_asked_for(void **state)
{
    (void)state;
    struct fixture f;
    assert_int_equal(open_text(&f, QSUP "<- PacketSize=108;QStartNoAckMode+;multiprocess+;"
                                        "qXfer:features:read+;qXfer:threads:read+\n"
                                        "-> QStartNoAckMode\n<- OK\n"
                                        "-> ?\n-> qXfer:features:read:target.xml:0,f8\n"
                                        "-> qXfer:threads:read::0,f8\n"
                                        "<- " STOP "\n<- l" XML "\n<- l" THREADS "\n"),
                     0);
    char *data;
    size_t len;
    assert_int_equal(rsp_xfer_read(f.s, "auxv", "", &data, &len), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "not offered");
    finish(&f);
}

static void
test_prefetch_failures_fail_the_connect_with_their_cause(void **state)
{
    (void)state;
    struct fixture f;
    /* The stub hangs up after the stop reply: the connect fails, naming the packet. */
    assert_int_equal(open_text(&f, HEAD "-> ?\n-> qXfer:features:read:target.xml:0,f8\n"
                                        "-> qXfer:libraries-svr4:read::0,f8\n"
                                        "-> qXfer:auxv:read::0,f8\n-> qXfer:threads:read::0,f8\n"
                                        "<- " STOP "\n<! hangup\n"),
                     SW_ECONN);
    assert_contains(f.err.msg, "qXfer:features:read:target.xml");
    assert_string_equal(fake_script_error(f.fs), "");
    fake_script_free(f.fs);
    /* A stop reply that does not parse is the connect's failure, as without the prefetch. */
    assert_int_equal(open_text(&f, HEAD "-> ?\n-> qXfer:features:read:target.xml:0,f8\n"
                                        "-> qXfer:libraries-svr4:read::0,f8\n"
                                        "-> qXfer:auxv:read::0,f8\n-> qXfer:threads:read::0,f8\n"
                                        "<- T5\n<- l" XML "\n<- l" LIBS "\n<- l" AUXV
                                        "\n<- l" THREADS "\n"),
                     SW_EPROTO);
    assert_contains(f.err.msg, "reply to '?'");
    assert_string_equal(fake_script_error(f.fs), "");
    fake_script_free(f.fs);
}

/* ---- a later stop's first write (rsp_stop_fetch) ---- */

/* The connect, a resume and the next stop: the last list had 2 threads. */
#define TO_NEXT_STOP                                                                               \
    HEAD PREFETCH("l" LIBS, "l" AUXV) "-> vCont?\n<- vCont;c;C;t;s;S;r\n-> vCont;c\n<- " STOP "\n"
/* 'Hg' and 'g' of thread p1f.20 (rax and rip: 16 bytes). */
#define HG_G    "-> Hgp1f.20\n-> g\n"
#define G_REPLY "<- OK\n<- 0100000000000000f0debc9a78563412\n"

/* Resume, take the next stop, fetch it with p1f.20's registers and the K
 * ranges R; the round trips before the fetch. */
static uint64_t
next_stop_fetch_ranges(struct fixture *f, struct rsp_mem_range *r, size_t k)
{
    struct rsp_stop stop;
    assert_int_equal(rsp_threads_count_check(f), 2);
    assert_int_equal(rsp_resume(f->s, (struct rsp_thread_id){ 0, 0 }, false, 0), 0);
    assert_int_equal(rsp_wait_stop(f->s, 200, &stop), 0);
    struct rsp_thread_id id = { 0x1f, 0x20 };
    uint64_t rt = rsp_session_stats(f->s)->round_trips;
    if (rsp_stop_fetch(f->s, &id, 1, r, k) != 0)
        fail_msg("%s / %s", rsp_session_errmsg(f->s), fake_script_error(f->fs));
    return rt;
}

static uint64_t
next_stop_fetch(struct fixture *f)
{
    return next_stop_fetch_ranges(f, NULL, 0);
}

/* A stop's list after one of 2 threads: qfThreadInfo, a qsThreadInfo a
 * thread and 2 spares. */
#define LIST2                                                                                      \
    "-> qfThreadInfo\n-> qsThreadInfo\n-> qsThreadInfo\n-> qsThreadInfo\n-> qsThreadInfo\n"
#define QS3 "-> qsThreadInfo\n-> qsThreadInfo\n-> qsThreadInfo\n"

static void
test_stop_fetch_lists_threads_with_qfthreadinfo_one_reply_each(void **state)
{
    (void)state;
    struct fixture f;
    /* Unchanged: the "l" after the second thread says none came (the spares
     * get "l" again); one round trip with the registers. */
    assert_int_equal(open_text(&f, TO_NEXT_STOP LIST2 HG_G "<- mp1f.1f\n<- mp1f.20\n<- l\n<- l\n"
                                                           "<- l\n" G_REPLY),
                     0);
    uint64_t rt0 = next_stop_fetch(&f);
    assert_int_equal(rsp_session_stats(f.s)->round_trips - rt0, 1);
    for (int round = 0; round < 2; round++) {
        struct rsp_thread_id *ids;
        size_t n;
        assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(ids[0].tid, 0x1f);
        assert_int_equal(ids[1].tid, 0x20);
        free(ids);
    }
    assert_int_equal(rsp_session_stats(f.s)->round_trips - rt0, 1);
    assert_true(fake_script_done(f.fs));
    finish(&f);
}

static void
test_stop_fetch_finds_threads_created_since_the_last_stop(void **state)
{
    (void)state;
    struct fixture f;
    /* One new thread: a spare names it, in the same write. */
    assert_int_equal(open_text(&f, TO_NEXT_STOP LIST2 HG_G "<- mp1f.1f\n<- mp1f.20\n<- mp1f.21\n"
                                                           "<- l\n<- l\n" G_REPLY),
                     0);
    uint64_t rt0 = next_stop_fetch(&f);
    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(ids[2].tid, 0x21);
    free(ids);
    assert_int_equal(rsp_session_stats(f.s)->round_trips - rt0, 1);
    assert_true(fake_script_done(f.fs));
    finish(&f);

    /* Four: the replies end without "l", and rsp_threads asks on from there
     * (one more round trip), once for the stop; the next stop asks for 6
     * threads and 2 spares. */
    assert_int_equal(open_text(&f, TO_NEXT_STOP LIST2 HG_G
                               "<- mp1f.1f\n<- mp1f.20\n<- mp1f.21\n<- mp1f.22\n"
                               "<- mp1f.23\n" G_REPLY "-> qsThreadInfo\n"
                               "<- mp1f.24\n-> qsThreadInfo\n<- l\n"
                               "-> vCont;c\n<- " STOP "\n" LIST2 QS3 "-> qsThreadInfo\n" HG_G
                               "<- mp1f.1f\n<- l\n<- l\n"
                               "<- l\n<- l\n<- l\n<- l\n<- l\n<- l\n" G_REPLY),
                     0);
    rt0 = next_stop_fetch(&f);
    for (int round = 0; round < 2; round++) {
        assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
        assert_int_equal(n, 6);
        assert_int_equal(ids[5].tid, 0x24);
        free(ids);
    }
    assert_int_equal(rsp_session_stats(f.s)->round_trips - rt0, 3);
    struct rsp_stop stop;
    assert_int_equal(rsp_resume(f.s, (struct rsp_thread_id){ 0, 0 }, false, 0), 0);
    assert_int_equal(rsp_wait_stop(f.s, 200, &stop), 0);
    struct rsp_thread_id id = { 0x1f, 0x20 };
    assert_int_equal(rsp_stop_fetch(f.s, &id, 1, NULL, 0), 0);
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_int_equal(n, 1);
    free(ids);
    assert_true(fake_script_done(f.fs));
    finish(&f);
}

static void
test_stop_fetch_thread_gone_and_list_refused(void **state)
{
    (void)state;
    struct fixture f;
    /* p1f.20 exited: the list ends early (gdbserver repeats "l"), and its
     * 'Hg' fails; the list has one thread, no packet more. */
    assert_int_equal(open_text(&f, TO_NEXT_STOP LIST2 HG_G "<- mp1f.1f\n<- l\n<- l\n<- l\n<- l\n"
                                                           "<- E01\n"
                                                           "<- 0100000000000000f0debc9a78563412\n"),
                     0);
    next_stop_fetch(&f);
    struct rsp_thread_id *ids;
    size_t n;
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0].tid, 0x1f);
    free(ids);
    assert_true(fake_script_done(f.fs));
    finish(&f);

    /* A stub that refuses qfThreadInfo: the list is asked as before. */
    assert_int_equal(open_text(&f, TO_NEXT_STOP LIST2 HG_G
                               "<- \n<- \n<- \n<- \n<- \n" G_REPLY
                               "-> qXfer:threads:read::0,f8\n<- l" THREADS "\n"),
                     0);
    next_stop_fetch(&f);
    assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
    assert_int_equal(n, 2);
    free(ids);
    assert_true(fake_script_done(f.fs));
    finish(&f);
}

static void
test_stop_fetch_reads_ranges_that_follow_each_other_in_one_m(void **state)
{
    (void)state;
    struct fixture f;
    /* 16 bytes at 0x1000 and 8 at 0x1010: one 'm'; 4 at 0x2000 alone.  At
     * the second stop the shared 'm' is refused (the lower range is not
     * mapped): each range asked alone, the upper one read. */
    assert_int_equal(open_text(&f, TO_NEXT_STOP LIST2 HG_G
                               "-> m1000,18\n-> m2000,4\n<- mp1f.1f\n<- mp1f.20\n<- l\n<- l\n"
                               "<- l\n" G_REPLY
                               "<- 000102030405060708090a0b0c0d0e0f1011121314151617\n"
                               "<- aabbccdd\n"
                               "-> vCont;c\n<- " STOP "\n" LIST2 HG_G
                               "-> m1000,18\n-> m2000,4\n<- mp1f.1f\n<- mp1f.20\n<- l\n<- l\n"
                               "<- l\n" G_REPLY "<- E01\n<- aabbccdd\n"
                               "-> m1000,10\n-> m1010,8\n<- E01\n<- 1011121314151617\n"),
                     0);
    uint8_t a[16], b[8], c[4];
    struct rsp_mem_range r[3] = { { 0x1000, 16, a, 1 }, { 0x1010, 8, b, 1 }, { 0x2000, 4, c, 1 } };
    uint64_t rt0 = next_stop_fetch_ranges(&f, r, 3);
    assert_int_equal(rsp_session_stats(f.s)->round_trips - rt0, 1);
    assert_int_equal(r[0].rc, 0);
    assert_int_equal(r[1].rc, 0);
    assert_int_equal(r[2].rc, 0);
    assert_int_equal(a[15], 0x0f);
    assert_int_equal(b[0], 0x10);
    assert_int_equal(b[7], 0x17);
    assert_int_equal(c[3], 0xdd);

    struct rsp_stop stop;
    assert_int_equal(rsp_resume(f.s, (struct rsp_thread_id){ 0, 0 }, false, 0), 0);
    assert_int_equal(rsp_wait_stop(f.s, 200, &stop), 0);
    memset(b, 0, sizeof b);
    struct rsp_thread_id id = { 0x1f, 0x20 };
    rt0 = rsp_session_stats(f.s)->round_trips;
    if (rsp_stop_fetch(f.s, &id, 1, r, 3) != 0)
        fail_msg("%s / %s", rsp_session_errmsg(f.s), fake_script_error(f.fs));
    assert_int_equal(rsp_session_stats(f.s)->round_trips - rt0, 2);
    assert_int_equal(r[0].rc, SW_EMEM);
    assert_int_equal(r[1].rc, 0);
    assert_int_equal(b[7], 0x17);
    assert_int_equal(r[2].rc, 0);
    assert_true(fake_script_done(f.fs));
    finish(&f);
}

static void
test_stop_fetch_lists_with_qxfer_threads_for_a_front_end(void **state)
{
    (void)state;
    struct fixture f;
    /* A front end read qXfer:threads through (the door; answered from the
     * connect's prefetch): the next stop's first write asks for it so. */
    assert_int_equal(open_text(&f, TO_NEXT_STOP "-> qXfer:threads:read::0,f8\n" HG_G "<- l" THREADS
                                                "\n" G_REPLY),
                     0);
    const char *r;
    size_t rl;
    assert_int_equal(rsp_pass_request(f.s, "qXfer:threads:read::0,f8", 24, &r, &rl), 0);
    assert_int_equal(rl, strlen(THREADS) + 1);
    uint64_t rt0 = next_stop_fetch(&f);
    assert_int_equal(rsp_pass_request(f.s, "qXfer:threads:read::0,f8", 24, &r, &rl), 0);
    assert_int_equal(rsp_session_stats(f.s)->round_trips - rt0, 1);
    assert_true(fake_script_done(f.fs));
    finish(&f);
}

static void
test_stop_fetch_list_cut_at_max_threads(void **state)
{
    (void)state;
    struct fixture f;
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.max_threads = 2;
    /* A third thread came, over the cap: the list stops at 2, cut, and no
     * qsThreadInfo goes on. */
    assert_int_equal(open_cfg(&f,
                              TO_NEXT_STOP LIST2 HG_G "<- mp1f.1f\n<- mp1f.20\n<- mp1f.21\n"
                                                      "<- l\n<- l\n" G_REPLY,
                              &cfg),
                     0);
    uint64_t rt0 = next_stop_fetch(&f);
    for (int round = 0; round < 2; round++) {
        struct rsp_thread_id *ids;
        size_t n;
        assert_int_equal(rsp_threads(f.s, &ids, &n), 0);
        assert_int_equal(n, 2);
        assert_true(rsp_threads_cut(f.s));
        free(ids);
    }
    assert_int_equal(rsp_session_stats(f.s)->round_trips - rt0, 1);
    assert_true(fake_script_done(f.fs));
    finish(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefetch_connect_asks_every_object_with_the_stop_in_one_round_trip),
        cmocka_unit_test(test_prefetch_resume_drops_the_replies),
        cmocka_unit_test(test_prefetch_long_object_goes_on_from_the_first_chunk),
        cmocka_unit_test(test_prefetch_refusals_count_as_if_they_came_live),
        cmocka_unit_test(test_prefetch_off_where_not_wanted),
        cmocka_unit_test(test_prefetch_objects_not_offered_are_not_asked_for),
        cmocka_unit_test(test_prefetch_failures_fail_the_connect_with_their_cause),
        cmocka_unit_test(test_stop_fetch_lists_threads_with_qfthreadinfo_one_reply_each),
        cmocka_unit_test(test_stop_fetch_finds_threads_created_since_the_last_stop),
        cmocka_unit_test(test_stop_fetch_thread_gone_and_list_refused),
        cmocka_unit_test(test_stop_fetch_reads_ranges_that_follow_each_other_in_one_m),
        cmocka_unit_test(test_stop_fetch_lists_with_qxfer_threads_for_a_front_end),
        cmocka_unit_test(test_stop_fetch_list_cut_at_max_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
