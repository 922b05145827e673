/* tests/unit/rsp/test_nonstop.c -- non-stop mode and ProcDebug's thread control on scripted stubs.
 *
 * The session half (rsp/nonstop.c): QNonStop:1 only when asked and offered,
 * '?' drained with vStopped, %Stop notifications queued whatever we wait
 * for and acknowledged with vStopped at the next wait, vCont answered OK,
 * vCont;t, the stopped-thread set.  The ProcDebug half (targets/
 * rsp_debug.c): pause of one thread (non-stop: vCont;t; all-stop strict:
 * refused without a packet), reads of a running thread refused, several
 * stops taken in by one handle_debug_event, detach leaving every thread
 * stopped, a thread that exits while it is paused found gone ('T').  The event descriptor
 * (rsp/event_fd.c) readable for stops read ahead or queued.  Transcripts follow what gdbserver 13.1
 * sent (rsp/nonstop.c).
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "rsp/session.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
#define FEATS "PacketSize=1000;QStartNoAckMode+;multiprocess+;vContSupported+"
/* Non-stop connect: threads p1f.1f and p1f.20 stopped (the second told to vStopped). */
#define NS_HEAD                                                                                    \
    QSUP "<- " FEATS ";QNonStop+\n-> QStartNoAckMode\n<- OK\n-> QNonStop:1\n<- OK\n"               \
         "-> ?\n<- T05thread:p1f.1f;\n-> vStopped\n<- T00thread:p1f.20;\n-> vStopped\n<- OK\n"     \
         "-> Hgp1f.1f\n<- OK\n"

static const struct rsp_thread_id T1F = { 0x1f, 0x1f }, T20 = { 0x1f, 0x20 }, T21 = { 0x1f, 0x21 };

struct fx {
    struct fake_script *fs;
    struct rsp_session *s;
    struct sw_errbuf err;
};

static int
open_ns(struct fx *f, const char *text, bool non_stop)
{
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.non_stop = non_stop;
    memset(f, 0, sizeof *f);
    f->fs = fake_script_parse(text);
    assert_non_null(f->fs);
    int rc = rsp_session_connect(fake_transport_new(f->fs), &cfg, &f->s, &f->err);
    if (rc < 0)
        print_message("connect: %s (%s)\n", f->err.msg, fake_script_error(f->fs));
    return rc;
}

static void
finish(struct fx *f)
{
    fake_script_finish(f->s, f->fs, true);
}

/* ---- the session ---------------------------------------------------------- */

static void
test_nonstop_connect_enters_non_stop_and_drains_halt_reasons(void **state)
{
    (void)state;
    struct fx f;
    assert_int_equal(open_ns(&f, NS_HEAD, true), 0);
    assert_true(rsp_non_stop(f.s));
    assert_true(rsp_has_feature(f.s, RSP_FEAT_NON_STOP));
    assert_true(rsp_thread_stopped(f.s, T1F));
    assert_true(rsp_thread_stopped(f.s, T20));
    assert_false(rsp_thread_stopped(f.s, T21));
    assert_int_equal(rsp_last_stop(f.s)->thread.tid, 0x1f);
    assert_int_equal(rsp_stops_pending(f.s), 0); /* the state at connect, not events */
    finish(&f);
}

static void
test_nonstop_not_asked_or_not_offered_stays_all_stop(void **state)
{
    (void)state;
    struct fx f;
    /* Offered but not asked: no QNonStop:1. */
    assert_int_equal(open_ns(&f,
                             QSUP "<- " FEATS ";QNonStop+\n-> QStartNoAckMode\n<- OK\n"
                                  "-> ?\n<- T05thread:p1f.1f;\n",
                             false),
                     0);
    assert_false(rsp_non_stop(f.s));
    assert_true(rsp_thread_stopped(f.s, T21)); /* all-stop: every thread */
    assert_int_equal(rsp_stop_thread(f.s, T20), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "all-stop mode");
    finish(&f);
    /* Asked but not offered (QEMU): no QNonStop:1 either. */
    assert_int_equal(open_ns(&f, QSUP "<- PacketSize=1000\n-> ?\n<- T05thread:01;\n", true), 0);
    assert_false(rsp_non_stop(f.s));
    finish(&f);
    /* Asked, offered and refused: all-stop. */
    assert_int_equal(open_ns(&f,
                             QSUP "<- " FEATS ";QNonStop+\n-> QStartNoAckMode\n<- OK\n"
                                  "-> QNonStop:1\n<- E01\n-> ?\n<- T05thread:p1f.1f;\n",
                             true),
                     0);
    assert_false(rsp_non_stop(f.s));
    finish(&f);
}

static void
test_nonstop_all_running_at_connect_selects_a_listed_thread(void **state)
{
    (void)state;
    struct fx f;
    assert_int_equal(open_ns(&f,
                             QSUP "<- PacketSize=1000;QStartNoAckMode+;multiprocess+;QNonStop+;"
                                  "qXfer:threads:read+\n-> QStartNoAckMode\n<- OK\n"
                                  "-> QNonStop:1\n<- OK\n-> ?\n<- OK\n"
                                  "-> qXfer:threads:read::0,ff0\n"
                                  "<- l<threads><thread id=\"p1f.1f\"/></threads>\n"
                                  "-> Hgp1f.1f\n<- OK\n",
                             true),
                     0);
    assert_false(rsp_thread_stopped(f.s, T1F));
    assert_null(rsp_last_stop(f.s));
    finish(&f);
}

static void
test_nonstop_resume_waits_for_ok_and_stops_come_as_notifications(void **state)
{
    (void)state;
    struct fx f;
    struct rsp_stop st;
    assert_int_equal(open_ns(&f,
                             NS_HEAD "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c\n<- OK\n"
                                     "<! silence\n"
                                     "<% Stop:T05thread:p1f.20;\n"
                                     "-> vStopped\n<- T13thread:p1f.21;\n-> vStopped\n<- OK\n"
                                     "<! silence\n",
                             true),
                     0);
    assert_int_equal(rsp_resume(f.s, T1F, false, 0), 0);
    assert_false(rsp_thread_stopped(f.s, T1F));
    assert_false(rsp_thread_stopped(f.s, T20));
    /* Nothing yet: a poll says so without waiting. */
    assert_int_equal(rsp_wait_stop(f.s, 0, &st), SW_ETIMEDOUT);
    assert_contains(rsp_session_errmsg(f.s), "none yet");
    /* The notification, acknowledged; the stub's queue drained with it. */
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), 0);
    assert_int_equal(st.signal, 5);
    assert_int_equal(st.thread.tid, 0x20);
    assert_int_equal(rsp_stops_pending(f.s), 1);
    assert_true(rsp_thread_stopped(f.s, T21)); /* known from the drain already */
    assert_false(rsp_thread_stopped(f.s, T1F));
    assert_int_equal(rsp_wait_stop(f.s, 0, &st), 0); /* without reading the link */
    assert_int_equal(st.signal, 0x13);
    assert_int_equal(st.thread.tid, 0x21);
    assert_int_equal(rsp_last_stop(f.s)->thread.tid, 0x21);
    assert_int_equal(rsp_stops_pending(f.s), 0);
    assert_int_equal(rsp_wait_stop(f.s, 0, &st), SW_ETIMEDOUT);
    assert_int_equal(rsp_session_stats(f.s)->notifications, 1);
    finish(&f);
}

static void
test_nonstop_notification_during_a_request_is_acked_at_the_next_wait(void **state)
{
    (void)state;
    struct fx f;
    struct rsp_stop st;
    uint8_t buf[4];
    /* The %Stop comes between 'm' and its reply: the reply is the m's, and
     * vStopped goes out only when the caller waits. */
    assert_int_equal(open_ns(&f,
                             NS_HEAD "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c:p1f.20\n<- OK\n"
                                     "-> m1000,4\n<% Stop:T05thread:p1f.20;\n<- 01020304\n"
                                     "-> vStopped\n<- OK\n",
                             true),
                     0);
    assert_int_equal(rsp_resume(f.s, T20, true, 0), 0);
    assert_false(rsp_thread_stopped(f.s, T20));
    assert_true(rsp_thread_stopped(f.s, T1F)); /* resumed one only */
    assert_int_equal(rsp_mem_read(f.s, 0x1000, buf, 4), 0);
    assert_int_equal(buf[3], 4);
    assert_int_equal(rsp_stops_pending(f.s), 2); /* queued, and the stub may have more */
    assert_true(rsp_thread_stopped(f.s, T20));
    assert_int_equal(rsp_wait_stop(f.s, 0, &st), 0);
    assert_int_equal(st.thread.tid, 0x20);
    finish(&f);
}

static void
test_nonstop_stop_thread_interrupt_and_exit(void **state)
{
    (void)state;
    struct fx f;
    struct rsp_stop st;
    assert_int_equal(open_ns(&f,
                             NS_HEAD "-> vCont;t:p1f.21\n<- OK\n"
                                     "-> vCont;t:-1\n<- OK\n"
                                     "-> vCont;t:p1f.22\n<- E01\n"
                                     "-> vCont;t:p1f.23\n<- T05\n"
                                     "<% Stop:W00;process:1f\n-> vStopped\n<- OK\n",
                             true),
                     0);
    assert_int_equal(rsp_stop_thread(f.s, T21), 0);
    assert_int_equal(rsp_interrupt(f.s), 0); /* every thread, not 0x03 */
    assert_int_equal(rsp_stop_thread(f.s, (struct rsp_thread_id){ 0x1f, 0x22 }), SW_ESTUB);
    assert_int_equal(rsp_stop_thread(f.s, (struct rsp_thread_id){ 0x1f, 0x23 }), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "expected OK");
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), 0);
    assert_int_equal(st.kind, RSP_STOP_EXITED);
    assert_false(rsp_thread_stopped(f.s, T1F)); /* gone with the process */
    assert_false(rsp_thread_stopped(f.s, T20));
    finish(&f);
}

static void
test_nonstop_threads_stopped_and_resumed_with_one_vcont(void **state)
{
    (void)state;
    struct fx f;
    static const struct rsp_thread_id T22 = { 0x1f, 0x22 };
    const struct rsp_thread_id stop2[] = { T21, T22 }, both[] = { T1F, T20 };
    const int sigs[] = { 0, 15 };
    assert_int_equal(open_ns(&f,
                             NS_HEAD "-> vCont;t:p1f.21;t:p1f.22\n<- OK\n"
                                     "-> vCont;c:p1f.1f;C0f:p1f.20\n<- OK\n"
                                     "-> vCont;t:p1f.21\n<- E01\n"
                                     "-> vCont;c:p1f.1f;c:p1f.20\n<- T05\n",
                             true),
                     0);
    assert_int_equal(rsp_stop_threads(f.s, stop2, 2), 0);
    assert_true(rsp_thread_stopped(f.s, T1F));
    assert_int_equal(rsp_resume_threads(f.s, both, sigs, 2), 0);
    assert_false(rsp_thread_stopped(f.s, T1F));
    assert_false(rsp_thread_stopped(f.s, T20));
    assert_int_equal(rsp_stop_threads(f.s, stop2, 1), SW_ESTUB);
    assert_int_equal(rsp_resume_threads(f.s, both, NULL, 2), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "expected OK");
    assert_int_equal(rsp_stop_threads(f.s, stop2, 0), 0); /* nothing to send */
    finish(&f);
}

static void
test_nonstop_thread_alive_answers(void **state)
{
    (void)state;
    struct fx f;
    assert_int_equal(open_ns(&f,
                             NS_HEAD "-> Tp1f.20\n<- OK\n-> Tp1f.21\n<- E01\n-> Tp1f.21\n<- XY\n"
                                     "-> Tp1f.21\n<- \n",
                             true),
                     0);
    assert_int_equal(rsp_thread_alive(f.s, T20), 1);
    assert_int_equal(rsp_thread_alive(f.s, T21), 0);
    assert_int_equal(rsp_thread_alive(f.s, T21), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "reply to 'Tp1f.21': expected OK, got 'XY'");
    /* A stub without the packet cannot tell: alive, and it is not asked again. */
    assert_int_equal(rsp_thread_alive(f.s, T21), 1);
    assert_int_equal(rsp_thread_alive(f.s, T20), 1);
    finish(&f);
}

static void
test_nonstop_threads_split_over_packets_the_stub_takes(void **state)
{
    (void)state;
    struct fx f;
    struct rsp_thread_id ids[7];
    for (int i = 0; i < 7; i++)
        ids[i] = (struct rsp_thread_id){ 0x1f, 0x21 + i };
    /* PacketSize 0x40: at most 56 bytes a vCont here, five actions. */
    assert_int_equal(
        open_ns(&f,
                QSUP "<- PacketSize=40;QStartNoAckMode+;multiprocess+;vContSupported+;QNonStop+\n"
                     "-> QStartNoAckMode\n<- OK\n-> QNonStop:1\n<- OK\n"
                     "-> ?\n<- T05thread:p1f.1f;\n-> vStopped\n<- OK\n-> Hgp1f.1f\n<- OK\n"
                     "-> vCont;t:p1f.21;t:p1f.22;t:p1f.23;t:p1f.24;t:p1f.25\n<- OK\n"
                     "-> vCont;t:p1f.26;t:p1f.27\n<- OK\n",
                true),
        0);
    int rc = rsp_stop_threads(f.s, ids, 7);
    if (rc != 0)
        print_message("%s (%s)\n", rsp_session_errmsg(f.s), fake_script_error(f.fs));
    assert_int_equal(rc, 0);
    finish(&f);
}

static void
test_allstop_has_no_thread_sets(void **state)
{
    (void)state;
    struct fx f;
    assert_int_equal(
        open_ns(&f, QSUP "<- " FEATS "\n-> QStartNoAckMode\n<- OK\n-> ?\n<- S05\n", false), 0);
    assert_int_equal(rsp_stop_threads(f.s, &T1F, 1), SW_EUNSUP);
    assert_int_equal(rsp_resume_threads(f.s, &T1F, NULL, 1), SW_EUNSUP);
    finish(&f);
}

static void
test_nonstop_bad_notifications_and_replies(void **state)
{
    (void)state;
    struct fx f;
    struct rsp_stop st;
    /* A corrupt %Stop is dropped but still acknowledged; another kind of
     * notification is ignored; a vStopped reply that is no stop is EPROTO. */
    assert_int_equal(open_ns(&f,
                             NS_HEAD "<% oocd_keepalive:01\n<% Stop:Zgarbage\n"
                                     "-> vStopped\n<- T05thread:p1f.21;\n-> vStopped\n<- Q\n",
                             true),
                     0);
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "reply to 'vStopped'");
    assert_int_equal(rsp_session_stats(f.s)->notifications, 2);
    finish(&f);
    /* vCont answered with something else than OK. */
    assert_int_equal(
        open_ns(&f, NS_HEAD "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c\n<- T05\n", true), 0);
    assert_int_equal(rsp_resume(f.s, T1F, false, 0), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "expected OK (non-stop)");
    finish(&f);
    /* vAttach is refused on a non-stop link, without a packet. */
    assert_int_equal(open_ns(&f, NS_HEAD, true), 0);
    assert_int_equal(rsp_attach(f.s, 42, NULL), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "non-stop link");
    finish(&f);
}

/* ---- all-stop: the interrupt QEMU user answers late ------------------------------ */

static void
test_allstop_late_answer_to_the_interrupt_is_dropped_once(void **state)
{
    (void)state;
    struct fx f;
    struct rsp_stop st;
    const uint8_t *regs;
    size_t len;
    /* QEMU 7.2 user (PacketSize=1000, ack mode): the 0x03 is ignored while
     * the guest runs; a SIGINT stops it; then the stub answers the 0x03 with
     * a second T02, which comes in place of the reply to 'g'. */
    assert_int_equal(open_ns(&f,
                             QSUP "<- PacketSize=1000;vContSupported+\n-> ?\n<- T05thread:01;\n"
                                  "-> vCont?\n<- vCont;c;C;s;S\n-> vCont;c\n-! interrupt\n"
                                  "<! silence\n<- T02thread:01;\n"
                                  "-> g\n<- T02thread:01;\n<- 00112233\n"
                                  "-> vCont;c\n<- W00\n",
                             false),
                     0);
    assert_int_equal(rsp_resume(f.s, (struct rsp_thread_id){ 0, 0 }, false, 0), 0);
    assert_int_equal(rsp_interrupt(f.s), 0);
    assert_int_equal(rsp_wait_stop(f.s, 50, &st), SW_ETIMEDOUT);
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), 0);
    assert_int_equal(st.signal, 2);
    assert_int_equal(rsp_regs_read(f.s, (struct rsp_thread_id){ 0, 1 }, &regs, &len), 0);
    assert_int_equal(len, 4);
    assert_int_equal(regs[3], 0x33);
    assert_int_equal(rsp_resume(f.s, (struct rsp_thread_id){ 0, 0 }, false, 0), 0);
    assert_int_equal(rsp_wait_stop(f.s, -1, &st), 0);
    assert_int_equal(st.kind, RSP_STOP_EXITED);
    finish(&f);
    /* Without an interrupt outstanding, a stop reply in place of 'g's reply
     * is no register data either: set aside as a stray stop, and the reply
     * read next. */
    assert_int_equal(open_ns(&f,
                             QSUP "<- PacketSize=1000;vContSupported+\n-> ?\n<- T05thread:01;\n"
                                  "-> g\n<- T02thread:01;\n<- 00112233\n",
                             false),
                     0);
    assert_int_equal(rsp_regs_read(f.s, (struct rsp_thread_id){ 0, 1 }, &regs, &len), 0);
    assert_int_equal(len, 4);
    assert_int_equal(rsp_session_stats(f.s)->stray_stops, 1);
    finish(&f);
}

/* ---- the event descriptor ---------------------------------------------------- */

static int
readable(int fd)
{
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    return poll(&pfd, 1, 0);
}

static void
test_event_fd_is_readable_for_a_stop_read_ahead_with_an_ack(void **state)
{
    (void)state;
    struct fx f;
    struct rsp_stop st;
    /* Ack mode: '+' and the stop reply come in one read (a target that stops
     * at once).  The socket has nothing more to say; the event fd must. */
    assert_int_equal(open_ns(&f,
                             QSUP "<- PacketSize=1000;vContSupported+\n-> ?\n<- S05\n"
                                  "-> vCont?\n<- vCont;c;C;s;S\n-> vCont;c\n<- W00\n",
                             false),
                     0);
    int fd = rsp_session_event_fd(f.s);
    assert_true(fd >= 0);
    assert_int_equal(rsp_session_event_fd(f.s), fd); /* made once */
    assert_int_equal(readable(fd), 0);
    assert_int_equal(rsp_resume(f.s, (struct rsp_thread_id){ 0, 0 }, false, 0), 0);
    assert_int_equal(readable(fd), 1);
    assert_int_equal(rsp_wait_stop(f.s, 0, &st), 0);
    assert_int_equal(st.kind, RSP_STOP_EXITED);
    assert_int_equal(readable(fd), 0);
    finish(&f);
}

static void
test_event_fd_stays_readable_while_stops_are_queued(void **state)
{
    (void)state;
    struct fx f;
    struct rsp_stop st;
    uint8_t b;
    assert_int_equal(open_ns(&f,
                             NS_HEAD "-> m1000,1\n<% Stop:T05thread:p1f.21;\n<- 01\n"
                                     "-> vStopped\n<- T05thread:p1f.22;\n-> vStopped\n<- OK\n",
                             true),
                     0);
    int fd = rsp_session_event_fd(f.s);
    assert_int_equal(rsp_mem_read(f.s, 0x1000, &b, 1), 0);
    assert_int_equal(readable(fd), 1); /* the %Stop queued during the read */
    assert_int_equal(rsp_wait_stop(f.s, 0, &st), 0);
    assert_int_equal(readable(fd), 1); /* the second, from the drain */
    assert_int_equal(rsp_wait_stop(f.s, 0, &st), 0);
    assert_int_equal(st.thread.tid, 0x22);
    assert_int_equal(readable(fd), 0);
    finish(&f);
}

/* ---- ProcDebug -------------------------------------------------------------- */

static const char tdesc[] =
    "<?xml version=\"1.0\"?><target><architecture>i386:x86-64</architecture>"
    "<feature name=\"org.gnu.gdb.i386.core\"><reg name=\"rbp\" bitsize=\"64\" regnum=\"6\"/>"
    "<reg name=\"rsp\" bitsize=\"64\"/><reg name=\"rip\" bitsize=\"64\" regnum=\"16\"/>"
    "</feature></target>";

struct pfx {
    struct fake_script *fs;
    struct sw_proc *p;
    char text[8192];
};

/* A process over a scripted stub (NON_STOP: the NS_HEAD connect) whose
 * lines after the connect are REST. */
static void
proc_open(struct pfx *f, bool non_stop, bool strict, const char *rest)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_errbuf err = { 0 };
    snprintf(f->text, sizeof f->text, "%s-> qXfer:features:read:target.xml:0,ff0\n<- l%s\n%s",
             non_stop ? QSUP "<- " FEATS ";QNonStop+;qXfer:features:read+\n"
                             "-> QStartNoAckMode\n<- OK\n-> QNonStop:1\n<- OK\n"
                             "-> ?\n<- T05thread:p1f.1f;\n-> vStopped\n<- T00thread:p1f.20;\n"
                             "-> vStopped\n<- OK\n-> Hgp1f.1f\n<- OK\n"
                      : QSUP "<- " FEATS ";qXfer:features:read+\n-> QStartNoAckMode\n<- OK\n"
                             "-> ?\n<- T05thread:p1f.1f;\n",
             tdesc, rest);
    f->fs = fake_script_parse(f->text);
    assert_non_null(f->fs);
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = 200;
    scfg.non_stop = non_stop;
    if (rsp_session_connect(fake_transport_new(f->fs), &scfg, &s, &err) < 0)
        fail_msg("connect: %s (%s)", err.msg, fake_script_error(f->fs));
    struct sw_rsp_config cfg = { .strict_threads = strict };
    if (sw_proc_rsp_new(s, &cfg, &f->p, &err) < 0)
        fail_msg("sw_proc_rsp_new: %s", err.msg);
}

static void
proc_close(struct pfx *f)
{
    const char *e = fake_script_error(f->fs);
    if (e[0])
        fail_msg("transcript: %s", e);
    assert_true(fake_script_done(f->fs));
    sw_proc_free(f->p);
    fake_script_free(f->fs);
}

static void
test_procdebug_all_stop_pause_of_one_thread_is_all_or_refused(void **state)
{
    (void)state;
    struct pfx f;
    /* Strict: refused, nothing sent. */
    proc_open(&f, false, true, "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c\n");
    assert_false(sw_proc_rsp_non_stop(f.p));
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_false(sw_proc_rsp_thread_stopped(f.p, 0x20));
    assert_int_equal(f.p->debug->pause(f.p, 0x20), SW_EUNSUP);
    assert_contains(sw_proc_errmsg(f.p), "all-stop mode, where every thread stops");
    proc_close(&f);
    /* Not strict: the interrupt, which stops every thread. */
    proc_open(&f, false, false,
              "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c\n-! interrupt\n<- T02thread:p1f.1f;\n");
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(f.p->debug->pause(f.p, 0x20), 0);
    assert_true(sw_proc_rsp_thread_stopped(f.p, 0x20));
    assert_int_equal(f.p->default_tid, 0x1f); /* the thread the stub named */
    proc_close(&f);
}

static void
test_procdebug_non_stop_pause_walk_resume_one_thread(void **state)
{
    (void)state;
    struct pfx f;
    sw_word v;
    proc_open(&f, true, true,
              "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c:p1f.20\n<- OK\n"
              "-> vCont;t:p1f.20\n<- OK\n"
              "<% Stop:T0006:1000000000000000;07:0010000000000000;10:3412000000000000;"
              "thread:p1f.20;\n"
              "-> vStopped\n<- OK\n"
              "-> vCont;c:p1f.20\n<- OK\n");
    assert_true(sw_proc_rsp_non_stop(f.p));
    assert_true(sw_proc_rsp_thread_stopped(f.p, 0x20));
    assert_int_equal(f.p->debug->resume(f.p, 0x20, 0), 0);
    assert_false(sw_proc_rsp_thread_stopped(f.p, 0x20));
    assert_true(sw_proc_rsp_thread_stopped(f.p, 0x1f));
    /* A running thread's registers are refused (gdbserver would answer 'x's). */
    assert_int_equal(f.p->ops->read_reg(f.p, 0x20, 16, &v), SW_EINVAL);
    assert_contains(sw_proc_errmsg(f.p), "thread 32 is running (non-stop mode)");
    uint64_t gen = f.p->stop_gen;
    assert_int_equal(f.p->debug->pause(f.p, 0x20), 0);
    assert_int_equal(f.p->default_tid, 0x20);
    assert_true(f.p->stop_gen > gen);
    /* Its registers came with the stop: no packet. */
    assert_int_equal(f.p->ops->read_reg(f.p, 0x20, 16, &v), 0);
    assert_int_equal(v, 0x1234);
    assert_int_equal(f.p->debug->pause(f.p, 0x20), 0); /* stopped already: nothing sent */
    assert_int_equal(f.p->debug->resume(f.p, 0x20, 0), 0);
    proc_close(&f);
}

static void
test_procdebug_non_stop_events_are_taken_in_together(void **state)
{
    (void)state;
    struct pfx f;
    proc_open(&f, true, false,
              "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c\n<- OK\n"
              "<% Stop:T05thread:p1f.20;\n-> vStopped\n<- T0bthread:p1f.1f;\n-> vStopped\n<- OK\n");
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(f.p->debug->handle_debug_event(f.p, true), 0);
    assert_int_equal(f.p->default_tid, 0x20); /* the first */
    assert_true(sw_proc_rsp_thread_stopped(f.p, 0x1f));
    assert_true(sw_proc_rsp_thread_stopped(f.p, 0x20));
    assert_int_equal(rsp_stops_pending(sw_proc_rsp_session(f.p)), 0);
    proc_close(&f);
}

static void
test_procdebug_non_stop_pause_all_and_detach_leaving_stopped(void **state)
{
    (void)state;
    struct pfx f;
    proc_open(&f, true, false,
              "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c\n<- OK\n"
              "-> qfThreadInfo\n<- mp1f.1f,p1f.20\n-> qsThreadInfo\n<- l\n"
              "-> vCont;t:p1f.-1\n<- OK\n"
              "<% Stop:T00thread:p1f.20;\n-> vStopped\n<- T00thread:p1f.1f;\n-> vStopped\n<- OK\n"
              "-> vCont;c:p1f.1f\n<- OK\n"
              "-> qfThreadInfo\n<- mp1f.1f,p1f.20\n-> qsThreadInfo\n<- l\n"
              "-> vCont;t:p1f.-1\n<- OK\n"
              "<% Stop:T00thread:p1f.1f;\n-> vStopped\n<- OK\n");
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(f.p->debug->pause(f.p, SW_TID_DEFAULT), 0);
    assert_true(sw_proc_rsp_thread_stopped(f.p, 0x1f));
    assert_true(sw_proc_rsp_thread_stopped(f.p, 0x20));
    assert_int_equal(f.p->debug->resume(f.p, 0x1f, 0), 0);
    /* Leaving it stopped: the one running thread is stopped first. */
    assert_int_equal(f.p->debug->detach(f.p, true), 0);
    assert_true(sw_proc_rsp_thread_stopped(f.p, 0x1f));
    proc_close(&f);
}

/* Thread TID of P is stopped (or not) and gone (or not). */
static void
expect_thread(struct sw_proc *p, sw_tid tid, bool stopped, bool gone)
{
    assert_int_equal(sw_proc_rsp_thread_stopped(p, tid), stopped);
    assert_int_equal(sw_proc_rsp_thread_gone(p, tid), gone);
}

/* gdbserver reports no exit of a thread asked to stop but, when no thread is
 * left running, an "N" stop: the threads not stopped are asked after then,
 * and one the stub no longer knows is gone, not waited for. */
static void
test_procdebug_non_stop_pause_finds_a_thread_gone_after_no_resumed(void **state)
{
    (void)state;
    struct pfx f;
    const sw_tid both[] = { 0x1f, 0x20 };
    proc_open(&f, true, false,
              "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c\n<- OK\n"
              "-> vCont;t:p1f.1f;t:p1f.20\n<- OK\n"
              "<% Stop:T00thread:p1f.1f;\n-> vStopped\n<- N\n-> vStopped\n<- OK\n"
              "-> Tp1f.20\n<- E01\n");
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(sw_proc_rsp_pause_threads(f.p, both, 2), 0);
    expect_thread(f.p, 0x1f, true, false);
    expect_thread(f.p, 0x20, false, true);
    proc_close(&f);
}

/* Without "N" (another thread still runs): asked after once the stop is
 * late (20 ms); alive, it is waited for; gone, ProcDebug's pause says so. */
static void
test_procdebug_non_stop_pause_asks_after_a_late_thread(void **state)
{
    (void)state;
    struct pfx f;
    const sw_tid one[] = { 0x20 };
    proc_open(&f, true, false,
              "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c\n<- OK\n"
              "-> vCont;t:p1f.20\n<- OK\n<! silence 25\n-> Tp1f.20\n<- OK\n"
              "<% Stop:T00thread:p1f.20;\n-> vStopped\n<- OK\n"
              "-> vCont;c:p1f.20\n<- OK\n"
              "-> vCont;t:p1f.20\n<- OK\n<! silence 25\n-> Tp1f.20\n<- E01\n");
    assert_int_equal(f.p->debug->resume(f.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(sw_proc_rsp_pause_threads(f.p, one, 1), 0);
    expect_thread(f.p, 0x20, true, false);
    assert_int_equal(f.p->debug->resume(f.p, 0x20, 0), 0);
    assert_int_equal(f.p->debug->pause(f.p, 0x20), SW_ENOENT);
    assert_contains(sw_proc_errmsg(f.p), "pausing thread 32: it has exited");
    expect_thread(f.p, 0x20, false, true);
    proc_close(&f);
}

static void
test_procdebug_non_stop_pause_that_never_stops_times_out(void **state)
{
    (void)state;
    struct pfx f;
    proc_open(&f, true, false,
              "-> vCont?\n<- vCont;c;C;t;s;S\n-> vCont;c:p1f.20\n<- OK\n"
              "-> vCont;t:p1f.20\n<- OK\n<! hangup\n");
    assert_int_equal(f.p->debug->resume(f.p, 0x20, 0), 0);
    assert_int_equal(f.p->debug->pause(f.p, 0x20), SW_ECONN);
    proc_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nonstop_connect_enters_non_stop_and_drains_halt_reasons),
        cmocka_unit_test(test_nonstop_not_asked_or_not_offered_stays_all_stop),
        cmocka_unit_test(test_nonstop_all_running_at_connect_selects_a_listed_thread),
        cmocka_unit_test(test_nonstop_resume_waits_for_ok_and_stops_come_as_notifications),
        cmocka_unit_test(test_nonstop_notification_during_a_request_is_acked_at_the_next_wait),
        cmocka_unit_test(test_nonstop_stop_thread_interrupt_and_exit),
        cmocka_unit_test(test_nonstop_bad_notifications_and_replies),
        cmocka_unit_test(test_allstop_late_answer_to_the_interrupt_is_dropped_once),
        cmocka_unit_test(test_event_fd_is_readable_for_a_stop_read_ahead_with_an_ack),
        cmocka_unit_test(test_event_fd_stays_readable_while_stops_are_queued),
        cmocka_unit_test(test_procdebug_all_stop_pause_of_one_thread_is_all_or_refused),
        cmocka_unit_test(test_procdebug_non_stop_pause_walk_resume_one_thread),
        cmocka_unit_test(test_nonstop_threads_stopped_and_resumed_with_one_vcont),
        cmocka_unit_test(test_nonstop_threads_split_over_packets_the_stub_takes),
        cmocka_unit_test(test_nonstop_thread_alive_answers),
        cmocka_unit_test(test_allstop_has_no_thread_sets),
        cmocka_unit_test(test_procdebug_non_stop_events_are_taken_in_together),
        cmocka_unit_test(test_procdebug_non_stop_pause_all_and_detach_leaving_stopped),
        cmocka_unit_test(test_procdebug_non_stop_pause_finds_a_thread_gone_after_no_resumed),
        cmocka_unit_test(test_procdebug_non_stop_pause_asks_after_a_late_thread),
        cmocka_unit_test(test_procdebug_non_stop_pause_that_never_stops_times_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
