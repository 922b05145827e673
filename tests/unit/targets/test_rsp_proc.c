/* tests/unit/targets/test_rsp_proc.c -- the RSP ProcessState on scripted stubs.
 *
 * Each test writes the transcript the backend must produce (tests/tools/
 * fake_transport.h): which packets a register or memory read costs, what the
 * per-stop caches save, what a resume drops, how passed signals and exits
 * are handled.  The stub offers PacketSize=108 (264), so memory windows are
 * 128 bytes and qXfer chunks 0xf8; with qXfer:threads offered in no-ack mode
 * (a gdbserver) 'Hg' and 'g' go in one write.
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
#include "targets/targets_internal.h"
#include "rsp/session.h"
#include "tests/tools/fake_transport.h"

#define RIP 0x401136u
#define RSP 0x7ffe0000e000ULL
#define RBP 0x7ffe0000e010ULL

static const char tdesc_xml[] =
    "<?xml version=\"1.0\"?><target><architecture>i386:x86-64</architecture>"
    "<feature name=\"org.gnu.gdb.i386.core\">"
    "<reg name=\"rax\" bitsize=\"64\"/><reg name=\"rbx\" bitsize=\"64\"/>"
    "<reg name=\"rcx\" bitsize=\"64\"/><reg name=\"rdx\" bitsize=\"64\"/>"
    "<reg name=\"rsi\" bitsize=\"64\"/><reg name=\"rdi\" bitsize=\"64\"/>"
    "<reg name=\"rbp\" bitsize=\"64\"/><reg name=\"rsp\" bitsize=\"64\"/>"
    "<reg name=\"r8\" bitsize=\"64\"/><reg name=\"r9\" bitsize=\"64\"/>"
    "<reg name=\"r10\" bitsize=\"64\"/><reg name=\"r11\" bitsize=\"64\"/>"
    "<reg name=\"r12\" bitsize=\"64\"/><reg name=\"r13\" bitsize=\"64\"/>"
    "<reg name=\"r14\" bitsize=\"64\"/><reg name=\"r15\" bitsize=\"64\"/>"
    "<reg name=\"rip\" bitsize=\"64\"/><reg name=\"eflags\" bitsize=\"32\"/>"
    "</feature></target>";

/* VAL as SIZE little-endian bytes in hex. */
static void
hex_le(char *out, uint64_t val, int size)
{
    for (int i = 0; i < size; i++)
        sprintf(out + 2 * i, "%02x", (unsigned)(val >> (8 * i)) & 0xff);
}

/* The stop reply of the connect: rbp, rsp, rip expedited. */
static void
stop_reply(char *out, int sig)
{
    char a[17], b[17], c[17];
    hex_le(a, RBP, 8);
    hex_le(b, RSP, 8);
    hex_le(c, RIP, 8);
    sprintf(out, "T%02x06:%s;07:%s;10:%s;thread:p10.10;core:0;", sig, a, b, c);
}

/* The script up to the end of the connect sequence. */
static char *
script_head(const char *features)
{
    char *s = malloc(64 * 1024);
    char stop[200];
    stop_reply(stop, 5);
    sprintf(s,
            "-> qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;"
            "xmlRegisters=i386\n"
            "<- PacketSize=108;QStartNoAckMode+;multiprocess+;qXfer:features:read+;%s\n"
            "-> QStartNoAckMode\n<- OK\n-> ?\n<- %s\n"
            "-> qXfer:features:read:target.xml:0,f8\n<- l%s\n",
            features, stop, tdesc_xml);
    return s;
}

/* A 'g' reply: rax..r15 = 0x1000 + regnum, rip, eflags. */
static void
g_reply(char *out)
{
    char *p = out;
    for (int i = 0; i < 16; i++, p += 16)
        hex_le(p, 0x1000u + (unsigned)i, 8);
    hex_le(p, RIP, 8);
    p += 16;
    hex_le(p, 0x246, 4);
    p[8] = '\0';
}

/* 128 bytes at ADDR, byte i = (addr + i) & 0xff. */
static void
m_reply(char *out, uint64_t addr)
{
    for (int i = 0; i < 128; i++)
        sprintf(out + 2 * i, "%02x", (unsigned)((addr + (uint64_t)i) & 0xff));
}

struct rp_fixture {
    struct fake_script *fs;
    struct sw_proc *p;
    char *text;
};

static void
rp_open(struct rp_fixture *fx, char *text, const struct sw_rsp_config *cfg, int want_rc)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_errbuf err = { 0 };
    fx->text = text;
    fx->fs = fake_script_parse(text);
    assert_non_null(fx->fs);
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = 200;
    scfg.no_prefetch = true; /* these scripts ask one object at a time: test_prefetch.c */
    assert_int_equal(rsp_session_connect(fake_transport_new(fx->fs), &scfg, &s, &err), 0);
    fx->p = NULL;
    int rc = sw_proc_rsp_new(s, cfg, &fx->p, &err);
    if (rc != want_rc)
        fail_msg("sw_proc_rsp_new: %d (%s), want %d", rc, err.msg, want_rc);
    if (rc < 0)
        fx->p = NULL;
}

static void
rp_close(struct rp_fixture *fx)
{
    const char *e = fake_script_error(fx->fs);
    if (e[0])
        fail_msg("transcript: %s", e);
    sw_proc_free(fx->p);
    fake_script_free(fx->fs);
    free(fx->text);
}

static void
test_rsp_proc_stop_registers_cost_no_packet_and_g_once_per_thread(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    char g[400];
    g_reply(g);
    strcat(t, "-> Hgp10.10\n<- OK\n-> g\n<- ");
    strcat(t, g);
    strcat(t, "\n");
    rp_open(&fx, t, NULL, 0);
    assert_ptr_equal(fx.p->arch, &arch_x86_64);
    assert_int_equal(fx.p->default_tid, 0x10);
    assert_int_equal(fx.p->pid, 0x10);

    sw_word v;
    assert_int_equal(fx.p->ops->read_reg(fx.p, SW_TID_DEFAULT, 16, &v), 0);
    assert_int_equal(v, RIP);
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x10, 7, &v), 0);
    assert_int_equal(v, RSP);
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x10, 6, &v), 0);
    assert_int_equal(v, RBP);
    assert_false(fake_script_done(fx.fs));                       /* no 'g' yet */
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x10, 3, &v), 0); /* rbx: regnum 1 */
    assert_int_equal(v, 0x1001);
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x10, 12, &v), 0); /* r12, from the same 'g' */
    assert_int_equal(v, 0x100c);
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x10, 49, &v), 0); /* eflags */
    assert_int_equal(v, 0x246);
    assert_true(fake_script_done(fx.fs));
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x10, 17, &v), SW_ENOREG); /* xmm0: not described */
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "DWARF 17"));
    rp_close(&fx);
}

static void
test_rsp_proc_memory_is_read_in_cached_aligned_blocks(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    char m[300];
    m_reply(m, 0x7ffe0000e000ULL);
    strcat(t, "-> m7ffe0000e000,80\n<- ");
    strcat(t, m);
    strcat(t, "\n");
    rp_open(&fx, t, NULL, 0);

    uint8_t buf[16];
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x7ffe0000e010ULL, buf, 8), 0);
    assert_int_equal(buf[0], 0x10);
    assert_true(fake_script_done(fx.fs));
    /* The rest of the block costs nothing. */
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x7ffe0000e070ULL, buf, 16), 0);
    assert_int_equal(buf[15], 0x7f);
    sw_word w;
    assert_int_equal(sw_proc_read_word(fx.p, 0x7ffe0000e000ULL, &w), 0);
    assert_int_equal(w, 0x0706050403020100ULL);
    rp_close(&fx);
}

static void
test_rsp_proc_refused_block_is_halved_then_read_exactly(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    char m[300];
    m_reply(m, 0x2000);
    m[128] = '\0'; /* 64 bytes */
    strcat(t, "-> m2000,80\n<- E01\n-> m2000,40\n<- ");
    strcat(t, m);
    strcat(t, "\n-> m3080,80\n<- E01\n-> m3080,40\n<- E01\n-> m3088,8\n<- E01\n");
    rp_open(&fx, t, NULL, 0);

    uint8_t buf[8];
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x2008, buf, 8), 0);
    assert_int_equal(buf[0], 0x08);
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x3088, buf, 8), SW_EMEM);
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "3088"));
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_resume_drops_caches_and_passes_signals(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("QPassSignals+;vContSupported+");
    char m[300], stop_usr1[200], stop_trap[200];
    m_reply(m, 0x5000);
    stop_reply(stop_usr1, 0x1e);
    stop_reply(stop_trap, 5);
    sprintf(t + strlen(t),
            "-> m5000,80\n<- %s\n"
            "-> QPassSignals:1e\n<- OK\n"
            "-> vCont?\n<- vCont;c;C;t;s;S;r\n"
            "-> vCont;c\n<- %s\n"
            "-> vCont;C1e:p10.10;c\n<- %s\n"
            "-> m5000,80\n<- %s\n",
            m, stop_usr1, stop_trap, m);
    rp_open(&fx, t, NULL, 0);

    uint8_t buf[8];
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x5000, buf, 8), 0);
    const int pass[] = { 0x1e };
    assert_int_equal(sw_proc_rsp_set_pass(fx.p, pass, 1), 0);
    assert_int_equal(fx.p->debug->resume(fx.p, SW_TID_DEFAULT, 0), 0);
    /* SIGUSR1 is handed back to the thread; the wait ends at the SIGTRAP. */
    assert_int_equal(fx.p->debug->handle_debug_event(fx.p, true), 0);
    assert_false(fx.p->debug->is_terminated(fx.p));
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x5000, buf, 8), 0); /* read again */
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_exit_is_reported_and_reads_fail(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("vContSupported+");
    strcat(t, "-> vCont?\n<- vCont;c;C;s;S\n-> vCont;c\n<- W03;process:10\n");
    rp_open(&fx, t, NULL, 0);
    assert_int_equal(fx.p->debug->resume(fx.p, SW_TID_DEFAULT, 0), 0);
    assert_int_equal(fx.p->debug->handle_debug_event(fx.p, true), SW_EEXITED);
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "exited with status 3"));
    assert_true(fx.p->debug->is_terminated(fx.p));
    sw_word v;
    assert_int_equal(fx.p->ops->read_reg(fx.p, SW_TID_DEFAULT, 16, &v), SW_EEXITED);
    uint8_t b;
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x1000, &b, 1), SW_EEXITED);
    rp_close(&fx);
}

static void
test_rsp_proc_threads_modules_auxv_and_exec_file(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head(
        "qXfer:threads:read+;qXfer:libraries-svr4:read+;qXfer:auxv:read+;qXfer:exec-file:read+");
    strcat(t,
           "-> qXfer:threads:read::0,f8\n"
           "<- l<threads><thread id=\"p10.10\"/><thread id=\"p10.11\"/></threads>\n"
           "-> qXfer:libraries-svr4:read::0,f8\n"
           "<- l<library-list-svr4 version=\"1.0\"><library name=\"/lib/libc.so.6\" "
           "lm=\"0x10\" l_addr=\"0x7f0000000000\" l_ld=\"0x7f0000001000\"/>"
           "</library-list-svr4>\n"
           "-> qXfer:auxv:read::0,f8\n"
           "<- l\\x09\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x40\\x10\\x40\\x00\\x00\\x00\\x00\\x00\n"
           "-> qXfer:exec-file:read:10:0,f8\n<- l/tmp/prog\n");
    rp_open(&fx, t, NULL, 0);

    sw_tid tids[4];
    size_t n;
    char label[32];
    assert_int_equal(sw_proc_threads(fx.p, tids, 4, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(tids[1], 0x11);
    assert_int_equal(sw_proc_thread_label(fx.p, tids[1], label, sizeof label), 0);
    assert_string_equal(label, "p10.11");
    assert_int_equal(tgt_rsp_thread_check(fx.p, 0x11), 0);
    assert_int_equal(tgt_rsp_thread_check(fx.p, 0x99), SW_ENOENT);

    struct sw_modinfo *mods;
    assert_int_equal(fx.p->ops->modules(fx.p, &mods, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(mods[0].name, "/lib/libc.so.6");
    assert_int_equal(mods[0].l_addr, 0x7f0000000000ULL);
    sw_modinfo_free(mods, n);

    uint8_t *auxv;
    size_t len;
    assert_int_equal(fx.p->ops->auxv(fx.p, &auxv, &len), 0);
    assert_int_equal(len, 16);
    assert_int_equal(arch_load(&arch_x86_64, auxv + 8, 8), 0x401040);
    free(auxv);

    char *path;
    assert_int_equal(fx.p->ops->exec_path(fx.p, &path), 0);
    assert_string_equal(path, "/tmp/prog");
    free(path);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_without_library_list_says_unsupported(void **state)
{
    (void)state;
    struct rp_fixture fx;
    rp_open(&fx, script_head(""), NULL, 0);
    struct sw_modinfo *mods;
    size_t n;
    assert_int_equal(fx.p->ops->modules(fx.p, &mods, &n), SW_EUNSUP);
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "libraries-svr4"));
    uint8_t *auxv;
    assert_int_equal(fx.p->ops->auxv(fx.p, &auxv, &n), SW_EUNSUP);
    rp_close(&fx);
}

static void
test_rsp_proc_dead_link_is_a_link_error(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    strcat(t, "-> m9000,80\n<! hangup\n");
    rp_open(&fx, t, NULL, 0);
    uint8_t b[8];
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x9000, b, 8), SW_ECONN);
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "m9000"));
    rp_close(&fx);
}

static void
test_rsp_proc_unknown_architecture_without_exe_is_refused(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    char *arch = strstr(t, "i386:x86-64");
    memcpy(arch, "m68k:fancy!", 11);
    rp_open(&fx, t, NULL, SW_ENOARCH);
    fake_script_free(fx.fs);
    free(fx.text);
}

static void
test_rsp_proc_no_cache_reads_every_time(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    strcat(t, "-> m6000,8\n<- 0001020304050607\n-> m6000,8\n<- 0001020304050607\n");
    struct sw_rsp_config cfg = { .no_cache = true };
    rp_open(&fx, t, &cfg, 0);
    uint8_t b[8];
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x6000, b, 8), 0);
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x6000, b, 8), 0);
    assert_int_equal(b[7], 7);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

/* Stats of the session under FX: what each read costs. */
static const struct rsp_stats *
rp_stats(struct rp_fixture *fx)
{
    return rsp_session_stats(sw_proc_rsp_session(fx->p));
}

static void
test_rsp_proc_other_thread_costs_one_pipelined_round_trip(void **state)
{
    (void)state;
    struct rp_fixture fx;
    /* qXfer:threads + multiprocess in no-ack mode: a gdbserver, which takes
     * 'Hg' and 'g' in one write. */
    char *t = script_head("qXfer:threads:read+");
    char g[400];
    g_reply(g);
    strcat(t, "-> Hgp10.11\n<- OK\n-> g\n<- ");
    strcat(t, g);
    strcat(t, "\n");
    rp_open(&fx, t, NULL, 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;

    sw_word v;
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x10, 16, &v), 0); /* expedited */
    assert_int_equal(rp_stats(&fx)->round_trips, rt0);
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x11, 3, &v), 0);
    assert_int_equal(v, 0x1001);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 1);       /* Hg and g: one round trip */
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x11, 7, &v), 0); /* rsp, same 'g' */
    assert_int_equal(v, 0x1007);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 1);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_read_past_a_window_costs_one_more_window(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    char m1[300], m2[300];
    m_reply(m1, 0x7ffe0000e000ULL);
    m_reply(m2, 0x7ffe0000e080ULL);
    sprintf(t + strlen(t), "-> m7ffe0000e000,80\n<- %s\n-> m7ffe0000e080,80\n<- %s\n", m1, m2);
    rp_open(&fx, t, NULL, 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;

    uint8_t buf[8];
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x7ffe0000e010ULL, buf, 8), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 1);
    /* Across the window's end: one read of the next window, then both serve it. */
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x7ffe0000e07cULL, buf, 8), 0);
    assert_int_equal(buf[0], 0x7c);
    assert_int_equal(buf[7], 0x83);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 2);
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x7ffe0000e0f8ULL, buf, 8), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 2);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_stop_read_is_read_exactly(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    char m[300];
    m_reply(m, 0x2ff0);
    m[32] = '\0'; /* 16 bytes */
    /* A link-map entry 16 bytes below a mapping's end: its exact bytes, not
     * a window the stub would refuse. */
    sprintf(t + strlen(t), "-> m2ff0,10\n<- %s\n", m);
    rp_open(&fx, t, NULL, 0);
    struct sw_mem_req r = { .addr = 0x2ff0, .len = 16 };
    assert_int_equal(sw_proc_stop_reads(fx.p, &r, 1), 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;
    uint8_t buf[8];
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x2ff8, buf, 8), 0);
    assert_int_equal(buf[0], 0xf8);
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x2ff0, buf, 8), 0); /* kept */
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 1);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_window_stops_at_the_main_stack_end(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("qXfer:auxv:read+");
    char m[300];
    m_reply(m, 0x7ffe0000efc0ULL);
    m[128] = '\0'; /* 64 bytes */
    /* AT_EXECFN (31) = 0x7ffe0000e0f0: the main stack ends at 0x7ffe0000f000. */
    sprintf(t + strlen(t),
            "-> qXfer:auxv:read::0,f8\n"
            "<- l\\x1f\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
            "\\xf0\\xe0\\x00\\x00\\xfe\\x7f\\x00\\x00\n"
            "-> m7ffe0000efc0,40\n<- %s\n",
            m);
    rp_open(&fx, t, NULL, 0);
    uint8_t *auxv;
    size_t len;
    assert_int_equal(fx.p->ops->auxv(fx.p, &auxv, &len), 0);
    free(auxv);
    uint8_t buf[8];
    /* A 128-byte window would cross the end: 64 bytes, no refused read. */
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x7ffe0000efc8ULL, buf, 8), 0);
    assert_int_equal(buf[0], 0xc8);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_batch_is_one_round_trip_and_carries_the_stopped_threads_window(void **state)
{
    (void)state;
    struct rp_fixture fx;
    /* A gdbserver (pipelined): both ranges and the stopped thread's first
     * stack window (SP expedited) in one write. */
    char *t = script_head("qXfer:threads:read+");
    char m[300];
    m_reply(m, RSP);
    sprintf(t + strlen(t),
            "-> m401000,8\n<- 0001020304050607\n-> m402000,4\n<- E01\n"
            "-> m7ffe0000e000,80\n<- %s\n",
            m);
    rp_open(&fx, t, NULL, 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;

    uint8_t a[8], b[4];
    struct sw_mem_req reqs[2] = { { 0x401000, 8, a, 1 }, { 0x402000, 4, b, 1 } };
    assert_int_equal(sw_proc_read_mem_batch(fx.p, reqs, 2), 0);
    assert_int_equal(reqs[0].rc, 0);
    assert_int_equal(a[7], 7);
    assert_int_equal(reqs[1].rc, SW_EMEM);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 1);
    assert_true(fake_script_done(fx.fs));
    /* The walk of the stopped thread, and the ranges again: no packet. */
    uint8_t buf[16];
    assert_int_equal(fx.p->ops->read_mem(fx.p, RSP + 0x10, buf, 16), 0);
    assert_int_equal(buf[0], 0x10);
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x401004, buf, 4), 0);
    assert_int_equal(buf[0], 4);
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x402000, buf, 4), SW_EMEM);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 1);
    rp_close(&fx);
}

static void
test_rsp_proc_batch_warms_the_window_of_a_range_without_a_buffer(void **state)
{
    (void)state;
    struct rp_fixture fx;
    /* A range with no buffer (the vDSO's image, read right after the batch)
     * is fetched as the window a read there would fetch, in the same write;
     * a second one inside that window, or one the cache holds, adds nothing. */
    char *t = script_head("qXfer:threads:read+");
    char m1[300], m2[300];
    m_reply(m1, 0x7ff000);
    m_reply(m2, RSP);
    sprintf(t + strlen(t),
            "-> m401000,8\n<- 0001020304050607\n-> m7ff000,80\n<- %s\n"
            "-> m7ffe0000e000,80\n<- %s\n",
            m1, m2);
    rp_open(&fx, t, NULL, 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;

    uint8_t a[8];
    struct sw_mem_req reqs[3] = { { 0x401000, 8, a, 1 },
                                  { 0x7ff010, 1, NULL, 1 },
                                  { 0x7ff040, 4, NULL, 1 } };
    assert_int_equal(sw_proc_read_mem_batch(fx.p, reqs, 3), 0);
    assert_int_equal(reqs[0].rc, 0);
    assert_int_equal(reqs[1].rc, 0);
    assert_int_equal(reqs[2].rc, 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 1);
    assert_true(fake_script_done(fx.fs));
    uint8_t buf[64];
    assert_int_equal(fx.p->ops->read_mem(fx.p, 0x7ff000, buf, 64), 0); /* the image, cached */
    assert_int_equal(buf[63], 0x3f);
    /* Again: everything cached, nothing sent. */
    assert_int_equal(sw_proc_read_mem_batch(fx.p, reqs + 1, 1), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 1);
    rp_close(&fx);

    /* Without the cache a range without a buffer reads nothing. */
    t = script_head("qXfer:threads:read+");
    strcat(t, "-> m401000,8\n<- 0001020304050607\n");
    rp_open(&fx, t, &(struct sw_rsp_config){ .no_cache = true }, 0);
    assert_int_equal(sw_proc_read_mem_batch(fx.p, reqs, 3), 0);
    assert_int_equal(reqs[1].rc, 0);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_batch_without_pipelining_reads_one_range_after_the_other(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("");
    /* A short reply is finished with a read of its own. */
    strcat(t, "-> m401000,8\n<- 00010203\n-> m402000,4\n<- 0a0b0c0d\n"
              "-> m401000,8\n<- 00010203\n-> m401004,4\n<- 04050607\n");
    rp_open(&fx, t, NULL, 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;

    uint8_t a[8], b[4];
    struct sw_mem_req reqs[2] = { { 0x401000, 8, a, 1 }, { 0x402000, 4, b, 1 } };
    assert_int_equal(sw_proc_read_mem_batch(fx.p, reqs, 2), 0);
    assert_int_equal(reqs[0].rc, 0);
    assert_int_equal(a[7], 7);
    assert_int_equal(reqs[1].rc, 0);
    assert_int_equal(b[3], 0x0d);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 4);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_batch_on_a_dead_link_is_a_link_error(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("qXfer:threads:read+");
    strcat(t, "-> m401000,8\n-> m7ffe0000e000,80\n<! hangup\n");
    rp_open(&fx, t, NULL, 0);
    uint8_t a[8];
    struct sw_mem_req req = { 0x401000, 8, a, 1 };
    int rc = sw_proc_read_mem_batch(fx.p, &req, 1);
    assert_true(rc == SW_ECONN);
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "m401000,8"));
    rp_close(&fx);
}

/* Prefetching the threads walked next (sw_proc_prefetch_threads). */

/* Stacks of threads 0x11, 0x12, 0x13: one 128-byte window each. */
#define SP11 0x7ffd00001000ULL
#define SP12 0x7ffd00002000ULL
#define SP13 0x7ffd00003000ULL

/* A 'g' reply as g_reply's, with rsp (regnum 7) = SP. */
static void
g_reply_sp(char *out, uint64_t sp)
{
    g_reply(out);
    char v[17];
    hex_le(v, sp, 8);
    memcpy(out + 7 * 16, v, 16);
}

/* The walk's start for TID: PC and SP, then the word at SP, at no cost. */
static void
walk_start_is_free(struct rp_fixture *fx, sw_tid tid, uint64_t sp)
{
    uint64_t rt0 = rp_stats(fx)->round_trips;
    sw_word v;
    assert_int_equal(fx->p->ops->read_reg(fx->p, tid, 16, &v), 0);
    assert_int_equal(v, RIP);
    assert_int_equal(fx->p->ops->read_reg(fx->p, tid, 7, &v), 0);
    assert_int_equal(v, sp);
    assert_int_equal(sw_proc_read_word(fx->p, sp + 8, &v), 0);
    assert_int_equal(v & 0xff, (sp + 8) & 0xff);
    assert_int_equal(rp_stats(fx)->round_trips, rt0);
}

static void
test_rsp_proc_prefetch_reads_three_threads_in_two_round_trips(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("qXfer:threads:read+");
    char g1[400], g2[400], g3[400], m0[300], m1[300], m2[300], m3[300];
    g_reply_sp(g1, SP11);
    g_reply_sp(g2, SP12);
    g_reply_sp(g3, SP13);
    m_reply(m0, RSP);
    m_reply(m1, SP11);
    m_reply(m2, SP12);
    m_reply(m3, SP13);
    /* The stopped thread (0x10) among them: its SP came with the stop, so
     * no 'g' for it, and its window goes with the others'. */
    sprintf(t + strlen(t),
            "-> Hgp10.11\n-> g\n-> Hgp10.12\n-> g\n-> Hgp10.13\n-> g\n"
            "<- OK\n<- %s\n<- OK\n<- %s\n<- OK\n<- %s\n"
            "-> m7ffe0000e000,80\n-> m7ffd00001000,80\n-> m7ffd00002000,80\n"
            "-> m7ffd00003000,80\n<- %s\n<- %s\n<- %s\n<- %s\n",
            g1, g2, g3, m0, m1, m2, m3);
    rp_open(&fx, t, NULL, 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;

    const sw_tid tids[] = { 0x10, 0x11, 0x12, 0x13 };
    assert_int_equal(sw_proc_prefetch_threads(fx.p, tids, 4), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 2);
    assert_true(fake_script_done(fx.fs));
    /* The walks then start at no cost, and a second prefetch sends nothing. */
    walk_start_is_free(&fx, 0x10, RSP);
    walk_start_is_free(&fx, 0x11, SP11);
    walk_start_is_free(&fx, 0x12, SP12);
    walk_start_is_free(&fx, 0x13, SP13);
    sw_word v;
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x12, 3, &v), 0); /* rbx, same 'g' */
    assert_int_equal(v, 0x1001);
    assert_int_equal(sw_proc_prefetch_threads(fx.p, tids, 4), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 2);
    rp_close(&fx);
}

static void
test_rsp_proc_prefetch_leaves_a_gone_thread_and_a_refused_window_to_the_walk(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char *t = script_head("qXfer:threads:read+");
    char g1[400], g3[400], m0[300], m1[300], m3[300];
    g_reply_sp(g1, SP11);
    g_reply_sp(g3, SP13);
    m_reply(m0, RSP);
    m_reply(m1, SP11);
    m_reply(m3, SP13);
    m3[128] = '\0'; /* 64 bytes */
    /* 0x12 is gone: its 'Hg' is refused and the 'g' after it reads 0x11
     * (the thread gdbserver keeps), which must not pass for 0x12's.  The
     * window of 0x13 is refused: not kept, its walk reads it as usual. */
    sprintf(t + strlen(t),
            "-> Hgp10.11\n-> g\n-> Hgp10.12\n-> g\n-> Hgp10.13\n-> g\n"
            "<- OK\n<- %s\n<- E01\n<- %s\n<- OK\n<- %s\n"
            "-> m7ffd00001000,80\n-> m7ffd00003000,80\n-> m7ffe0000e000,80\n"
            "<- %s\n<- E01\n<- %s\n"
            /* later, the walks */
            "-> Hgp10.12\n-> g\n<- E01\n<- %s\n"
            "-> m7ffd00003000,80\n<- E01\n-> m7ffd00003000,40\n<- %s\n",
            g1, g1, g3, m1, m0, g3, m3);
    rp_open(&fx, t, NULL, 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;

    const sw_tid tids[] = { 0x11, 0x12, 0x13 };
    assert_int_equal(sw_proc_prefetch_threads(fx.p, tids, 3), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 2);
    walk_start_is_free(&fx, 0x11, SP11);
    sw_word v;
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x13, 7, &v), 0);
    assert_int_equal(v, SP13);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 2);
    /* 0x12's registers go to the wire and fail as without the prefetch. */
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x12, 7, &v), SW_ENOENT);
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "selecting thread p10.12: stub replied E01"));
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 3);
    /* 0x13's stack: read (and halved) as without the prefetch. */
    assert_int_equal(sw_proc_read_word(fx.p, SP13 + 8, &v), 0);
    assert_int_equal(v & 0xff, (SP13 + 8) & 0xff);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 5);
    assert_true(fake_script_done(fx.fs));
    rp_close(&fx);
}

static void
test_rsp_proc_prefetch_sends_nothing_without_pipelining_or_cache(void **state)
{
    (void)state;
    struct rp_fixture fx;
    const sw_tid tids[] = { 0x11, 0x12, 0x13 };
    /* Not a gdbserver (no qXfer:threads): the fake fails on any packet. */
    rp_open(&fx, script_head(""), NULL, 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;
    assert_int_equal(sw_proc_prefetch_threads(fx.p, tids, 3), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0);
    rp_close(&fx);
    /* A gdbserver, with the caches off. */
    rp_open(&fx, script_head("qXfer:threads:read+"), &(struct sw_rsp_config){ .no_cache = true },
            0);
    rt0 = rp_stats(&fx)->round_trips;
    assert_int_equal(sw_proc_prefetch_threads(fx.p, tids, 3), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0);
    rp_close(&fx);
}

static void
test_rsp_proc_prefetch_on_a_dead_link_is_a_link_error(void **state)
{
    (void)state;
    struct rp_fixture fx;
    const sw_tid tids[] = { 0x11, 0x12 };
    /* The link dies in the registers' batch... */
    char *t = script_head("qXfer:threads:read+");
    strcat(t, "-> Hgp10.11\n-> g\n-> Hgp10.12\n-> g\n<- OK\n<! hangup\n");
    rp_open(&fx, t, NULL, 0);
    assert_int_equal(sw_proc_prefetch_threads(fx.p, tids, 2), SW_ECONN);
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "reading the registers of 2 threads"));
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "'g'"));
    rp_close(&fx);
    /* ...or in the windows' batch. */
    char g1[400], g2[400];
    g_reply_sp(g1, SP11);
    g_reply_sp(g2, SP12);
    t = script_head("qXfer:threads:read+");
    sprintf(t + strlen(t),
            "-> Hgp10.11\n-> g\n-> Hgp10.12\n-> g\n<- OK\n<- %s\n<- OK\n<- %s\n"
            "-> m7ffd00001000,80\n-> m7ffd00002000,80\n-> m7ffe0000e000,80\n<! hangup\n",
            g1, g2);
    rp_open(&fx, t, NULL, 0);
    assert_int_equal(sw_proc_prefetch_threads(fx.p, tids, 2), SW_ECONN);
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "reading the stacks of 2 threads"));
    assert_non_null(strstr(sw_proc_errmsg(fx.p), "m7ffd00001000,80"));
    rp_close(&fx);
}

/* One process (0x10) of several on the link: sw_proc_rsp_new_shared over the
 * session of TEXT.  Close with rp_close_shared. */
static struct rsp_session *
rp_open_shared(struct rp_fixture *fx, char *text)
{
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_errbuf err = { 0 };
    fx->text = text;
    fx->fs = fake_script_parse(text);
    assert_non_null(fx->fs);
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = 200;
    scfg.no_prefetch = true;
    assert_int_equal(rsp_session_connect(fake_transport_new(fx->fs), &scfg, &s, &err), 0);
    if (sw_proc_rsp_new_shared(s, 0x10, NULL, &fx->p, &err) != 0)
        fail_msg("sw_proc_rsp_new_shared: %s", err.msg);
    return s;
}

static void
rp_close_shared(struct rp_fixture *fx, struct rsp_session *s)
{
    const char *e = fake_script_error(fx->fs);
    if (e[0])
        fail_msg("transcript: %s", e);
    assert_true(fake_script_done(fx->fs));
    sw_proc_free(fx->p); /* the session is borrowed */
    rsp_session_close(s);
    fake_script_free(fx->fs);
    free(fx->text);
}

static void
test_rsp_proc_shared_prefetch_reads_windows_through_its_own_process(void **state)
{
    (void)state;
    struct rp_fixture fx;
    char g1[400], g2[400], g3[400], m0[300], m1[300], m2[300], m9[300];
    g_reply_sp(g1, SP11);
    g_reply_sp(g2, SP12);
    g_reply_sp(g3, SP13);
    m_reply(m0, RSP);
    m_reply(m1, SP11);
    m_reply(m2, SP12);
    m_reply(m9, 0x9000);
    /* 0x13's registers first: the stub's general thread is then 0x13.  The
     * batch's own 'Hg's select threads of this process: no other 'Hg' before
     * the windows.  Reads the cache serves need no 'Hg' either; one that
     * goes to the wire selects the process's own thread first. */
    char *t = script_head("qXfer:threads:read+");
    sprintf(t + strlen(t),
            "-> Hgp10.13\n-> g\n<- OK\n<- %s\n"
            "-> Hgp10.11\n-> g\n-> Hgp10.12\n-> g\n<- OK\n<- %s\n<- OK\n<- %s\n"
            "-> m7ffe0000e000,80\n-> m7ffd00001000,80\n-> m7ffd00002000,80\n"
            "<- %s\n<- %s\n<- %s\n"
            "-> Hgp10.10\n<- OK\n-> m9000,80\n<- %s\n",
            g3, g1, g2, m0, m1, m2, m9);
    struct rsp_session *s = rp_open_shared(&fx, t);
    sw_word v;
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x13, 7, &v), 0);
    uint64_t rt0 = rp_stats(&fx)->round_trips;
    const sw_tid tids[] = { 0x10, 0x11, 0x12 };
    assert_int_equal(sw_proc_prefetch_threads(fx.p, tids, 3), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 2);
    walk_start_is_free(&fx, 0x11, SP11);
    walk_start_is_free(&fx, 0x12, SP12);
    assert_int_equal(sw_proc_read_word(fx.p, 0x9008, &v), 0);
    assert_int_equal(rp_stats(&fx)->round_trips, rt0 + 4);
    rp_close_shared(&fx, s);

    /* The only 'Hg' of the batch refused: the stub is still on 0x13, of
     * whichever process; the window (the stopped thread's) goes after the
     * process's own thread is selected. */
    t = script_head("qXfer:threads:read+");
    sprintf(t + strlen(t),
            "-> Hgp10.13\n-> g\n<- OK\n<- %s\n"
            "-> Hgp10.11\n-> g\n<- E01\n<- %s\n"
            "-> Hgp10.10\n<- OK\n-> m7ffe0000e000,80\n<- %s\n",
            g3, g3, m0);
    s = rp_open_shared(&fx, t);
    assert_int_equal(fx.p->ops->read_reg(fx.p, 0x13, 7, &v), 0);
    const sw_tid two[] = { 0x10, 0x11 };
    assert_int_equal(sw_proc_prefetch_threads(fx.p, two, 2), 0);
    walk_start_is_free(&fx, 0x10, RSP);
    rp_close_shared(&fx, s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rsp_proc_stop_registers_cost_no_packet_and_g_once_per_thread),
        cmocka_unit_test(test_rsp_proc_memory_is_read_in_cached_aligned_blocks),
        cmocka_unit_test(test_rsp_proc_refused_block_is_halved_then_read_exactly),
        cmocka_unit_test(test_rsp_proc_resume_drops_caches_and_passes_signals),
        cmocka_unit_test(test_rsp_proc_exit_is_reported_and_reads_fail),
        cmocka_unit_test(test_rsp_proc_threads_modules_auxv_and_exec_file),
        cmocka_unit_test(test_rsp_proc_without_library_list_says_unsupported),
        cmocka_unit_test(test_rsp_proc_dead_link_is_a_link_error),
        cmocka_unit_test(test_rsp_proc_unknown_architecture_without_exe_is_refused),
        cmocka_unit_test(test_rsp_proc_no_cache_reads_every_time),
        cmocka_unit_test(test_rsp_proc_other_thread_costs_one_pipelined_round_trip),
        cmocka_unit_test(test_rsp_proc_read_past_a_window_costs_one_more_window),
        cmocka_unit_test(test_rsp_proc_stop_read_is_read_exactly),
        cmocka_unit_test(test_rsp_proc_window_stops_at_the_main_stack_end),
        cmocka_unit_test(
            test_rsp_proc_batch_is_one_round_trip_and_carries_the_stopped_threads_window),
        cmocka_unit_test(test_rsp_proc_batch_warms_the_window_of_a_range_without_a_buffer),
        cmocka_unit_test(test_rsp_proc_batch_without_pipelining_reads_one_range_after_the_other),
        cmocka_unit_test(test_rsp_proc_batch_on_a_dead_link_is_a_link_error),
        cmocka_unit_test(test_rsp_proc_prefetch_reads_three_threads_in_two_round_trips),
        cmocka_unit_test(
            test_rsp_proc_prefetch_leaves_a_gone_thread_and_a_refused_window_to_the_walk),
        cmocka_unit_test(test_rsp_proc_prefetch_sends_nothing_without_pipelining_or_cache),
        cmocka_unit_test(test_rsp_proc_prefetch_on_a_dead_link_is_a_link_error),
        cmocka_unit_test(test_rsp_proc_shared_prefetch_reads_windows_through_its_own_process),
    };
    return cmocka_run_group_tests_name("rsp_proc", tests, NULL, NULL);
}
