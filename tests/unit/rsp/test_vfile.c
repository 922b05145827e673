/* tests/unit/rsp/test_vfile.c -- Host I/O (vFile) and extended remote over scripted transcripts.
 *
 * The fake stub (tests/tools/fake_transport.c) checks every packet: setfs, open with a
 * hex-encoded path, preads chunked below PacketSize, '}'-escaped attachments, fstat's
 * big-endian size, errno replies naming the path, the once-only probe; then '!', vAttach
 * and D;PID.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/errors.h"
#include "rspwalk/rsp.h"
#include "rsp/session.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
/* PacketSize 0x40: preads of at most 0x30 bytes. */
#define PROLOGUE                                                                                   \
    QSUP "<- PacketSize=40;multiprocess+;vContSupported+;QStartNoAckMode+\n"                       \
         "-> QStartNoAckMode\n<- OK\n-> ?\n<- T05thread:p1f.1f;\n"
#define LIBC_HEX "2f6c69622f6c6962632e736f2e36" /* "/lib/libc.so.6" */

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

static void
test_vfile_open_pread_close_chunks_below_packet_size_and_unescapes(void **state)
{
    (void)state;
    struct fixture f;
    /* 60 bytes: 0x30 then 0xc.  The first chunk carries '}', '#', '$' and '*' escaped. */
    open_text(&f, PROLOGUE "-> vFile:setfs:0\n<- F0\n"
                           "-> vFile:open:" LIBC_HEX ",0,0\n<- F5\n"
                           "-> vFile:pread:5,30,0\n"
                           "<- F30;}]}\\x03}\\x04}\\x0a"
                           "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH\n"
                           "-> vFile:pread:5,c,30\n<- Fc;IJKLMNOPQRST\n"
                           "-> vFile:close:5\n<- F0\n");
    assert_true(rsp_vfile_supported(f.s));
    int fd = -1;
    assert_int_equal(rsp_vfile_open(f.s, "/lib/libc.so.6", RSP_VFILE_O_RDONLY, 0, &fd), 0);
    assert_int_equal(fd, 5);
    char buf[61] = { 0 };
    size_t got = 0;
    assert_int_equal(rsp_vfile_pread(f.s, fd, buf, 60, 0, &got), 0);
    assert_int_equal(got, 60);
    assert_memory_equal(buf, "}#$*0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST", 60);
    assert_int_equal(rsp_vfile_close(f.s, fd), 0);
    finish(&f);
}

static void
test_vfile_pread_stops_at_end_of_file(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> vFile:pread:3,30,10\n<- F4;abcd\n"
                           "-> vFile:pread:3,30,14\n<- F0;\n");
    char buf[0x5c];
    size_t got = 99;
    assert_int_equal(rsp_vfile_pread(f.s, 3, buf, sizeof buf, 0x10, &got), 0);
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "abcd", 4);
    finish(&f);
}

static void
test_vfile_read_all_uses_fstat_size(void **state)
{
    (void)state;
    struct fixture f;
    /* struct stat in File-I/O format: st_size (8 bytes, big-endian) at offset 28 of 64. */
    open_text(&f, PROLOGUE "-> vFile:open:" LIBC_HEX ",0,0\n<- F7\n"
                           "-> vFile:fstat:7\n"
                           "<- F40;\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
                           "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
                           "\\x00\\x00\\x00\\x00"
                           "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x05"
                           "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
                           "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
                           "\\x00\\x00\\x00\\x00\n"
                           "-> vFile:pread:7,5,0\n<- F5;\\x7fELF\\x02\n"
                           "-> vFile:close:7\n<- F0\n");
    uint8_t *data = NULL;
    size_t len = 0;
    assert_int_equal(rsp_vfile_read_all(f.s, "/lib/libc.so.6", 1 << 20, &data, &len), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(data,
                        "\x7f"
                        "ELF\x02",
                        5);
    free(data);
    finish(&f);
}

static void
test_vfile_open_missing_file_is_enoent_naming_the_path(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> vFile:open:2f6e6f7065,0,0\n<- F-1,2\n");
    int fd = -1;
    assert_int_equal(rsp_vfile_open(f.s, "/nope", RSP_VFILE_O_RDONLY, 0, &fd), SW_ENOENT);
    assert_int_equal(fd, -1);
    assert_contains(rsp_session_errmsg(f.s), "'/nope'");
    assert_contains(rsp_session_errmsg(f.s), "ENOENT");
    finish(&f);
}

static void
test_vfile_other_errno_is_estub_naming_the_path(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> vFile:open:" LIBC_HEX ",0,0\n<- F-1,d\n");
    int fd;
    assert_int_equal(rsp_vfile_open(f.s, "/lib/libc.so.6", RSP_VFILE_O_RDONLY, 0, &fd), SW_ESTUB);
    assert_contains(rsp_session_errmsg(f.s), "/lib/libc.so.6");
    assert_contains(rsp_session_errmsg(f.s), "EACCES");
    finish(&f);
}

static void
test_vfile_unsupported_is_probed_once(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> vFile:setfs:0\n<- \n");
    assert_false(rsp_vfile_supported(f.s));
    assert_false(rsp_vfile_supported(f.s)); /* no second packet */
    assert_int_equal(rsp_vfile_setfs(f.s, 0x1f), SW_EUNSUP);
    finish(&f);
}

static void
test_vfile_open_empty_reply_is_eunsup_naming_the_path(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> vFile:open:" LIBC_HEX ",0,0\n<- \n");
    int fd;
    assert_int_equal(rsp_vfile_open(f.s, "/lib/libc.so.6", RSP_VFILE_O_RDONLY, 0, &fd), SW_EUNSUP);
    assert_contains(rsp_session_errmsg(f.s), "/lib/libc.so.6");
    finish(&f);
}

static void
test_vfile_pread_count_mismatch_is_eproto(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> vFile:pread:3,4,0\n<- F4;ab\n");
    char buf[4];
    size_t got;
    assert_int_equal(rsp_vfile_pread(f.s, 3, buf, 4, 0, &got), SW_EPROTO);
    assert_contains(rsp_session_errmsg(f.s), "vFile:pread:3,4,0");
    finish(&f);
}

static void
test_vfile_setfs_is_sent_only_when_the_pid_changes(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> vFile:setfs:1f\n<- F0\n-> vFile:setfs:20\n<- F0\n");
    assert_int_equal(rsp_vfile_setfs(f.s, 0x1f), 0);
    assert_int_equal(rsp_vfile_setfs(f.s, 0x1f), 0);
    assert_int_equal(rsp_vfile_setfs(f.s, 0x20), 0);
    finish(&f);
}

static void
test_extended_attach_two_processes_and_detach_one_by_pid(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> !\n<- OK\n"
                           "-> vAttach;2a\n<- T13thread:p2a.2a;\n"
                           "-> vAttach;2b\n<- T13thread:p2b.2b;\n"
                           "-> Hgp2a.2a\n<- OK\n-> m1000,4\n<- 01020304\n"
                           "-> D;2a\n<- OK\n-> D;2b\n<- OK\n");
    struct rsp_stop st;
    assert_int_equal(rsp_extended_mode(f.s), 0);
    assert_int_equal(rsp_attach(f.s, 0x2a, &st), 0);
    assert_int_equal(st.thread.pid, 0x2a);
    assert_int_equal(rsp_attach(f.s, 0x2b, &st), 0);
    assert_int_equal(rsp_last_stop(f.s)->thread.pid, 0x2b);
    struct rsp_thread_id id = { 0x2a, 0x2a };
    assert_int_equal(rsp_select_thread(f.s, id), 0);
    assert_int_equal(rsp_select_thread(f.s, id), 0); /* no second Hg */
    uint8_t b[4];
    assert_int_equal(rsp_mem_read(f.s, 0x1000, b, 4), 0);
    assert_int_equal(rsp_detach_pid(f.s, 0x2a), 0);
    assert_int_equal(rsp_detach_pid(f.s, 0x2b), 0);
    finish(&f);
}

static void
test_extended_attach_refused_is_enoent_naming_the_pid(void **state)
{
    (void)state;
    struct fixture f;
    open_text(&f, PROLOGUE "-> vAttach;63\n<- E01\n");
    assert_int_equal(rsp_attach(f.s, 99, NULL), SW_ENOENT);
    assert_contains(rsp_session_errmsg(f.s), "process 99");
    assert_contains(rsp_session_errmsg(f.s), "vAttach;63");
    finish(&f);
}

static void
test_extended_run_hex_encodes_program_and_arguments(void **state)
{
    (void)state;
    struct fixture f;
    static const char *const argv[] = { "/bin/a", "x y", "" };
    open_text(&f, PROLOGUE "-> !\n<- OK\n"
                           "-> vRun;2f62696e2f61;782079;\n<- T05thread:p2c.2c;\n"
                           "-> vRun;2f6e6f\n<- E02\n"
                           "-> vRun;2f62696e2f61\n<- W7f\n");
    struct rsp_stop st;
    assert_int_equal(rsp_run(f.s, argv, 0, &st), SW_EINVAL); /* nothing sent */
    assert_int_equal(rsp_extended_mode(f.s), 0);
    assert_int_equal(rsp_run(f.s, argv, 3, &st), 0);
    assert_int_equal(st.thread.pid, 0x2c);
    assert_int_equal(rsp_last_stop(f.s)->thread.pid, 0x2c);
    static const char *const missing[] = { "/no" };
    assert_int_equal(rsp_run(f.s, missing, 1, NULL), SW_ENOENT);
    assert_contains(rsp_session_errmsg(f.s), "vRun /no: stub replied E02");
    assert_int_equal(rsp_run(f.s, argv, 1, NULL), SW_EEXITED);
    finish(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vfile_open_pread_close_chunks_below_packet_size_and_unescapes),
        cmocka_unit_test(test_vfile_pread_stops_at_end_of_file),
        cmocka_unit_test(test_vfile_read_all_uses_fstat_size),
        cmocka_unit_test(test_vfile_open_missing_file_is_enoent_naming_the_path),
        cmocka_unit_test(test_vfile_other_errno_is_estub_naming_the_path),
        cmocka_unit_test(test_vfile_unsupported_is_probed_once),
        cmocka_unit_test(test_vfile_open_empty_reply_is_eunsup_naming_the_path),
        cmocka_unit_test(test_vfile_pread_count_mismatch_is_eproto),
        cmocka_unit_test(test_vfile_setfs_is_sent_only_when_the_pid_changes),
        cmocka_unit_test(test_extended_attach_two_processes_and_detach_one_by_pid),
        cmocka_unit_test(test_extended_run_hex_encodes_program_and_arguments),
        cmocka_unit_test(test_extended_attach_refused_is_enoent_naming_the_pid),
    };
    return cmocka_run_group_tests_name("vfile", tests, NULL, NULL);
}
