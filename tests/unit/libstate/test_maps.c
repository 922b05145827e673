/* tests/unit/libstate/test_maps.c -- executable memory from /proc/PID/maps.
 *
 * The parser over real lines and hostile ones (bad numbers, reversed and
 * overlapping ranges, bad perms, no newline, NULs, too many lines), then a
 * library state reading a fake target's map: once per stop at a miss, never
 * for QEMU user mode's pid 1 or with no_maps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "libstate/maps.h"
#include "util/util.h"

static const char node_maps[] =
    "55c0a0000000-55c0a0a00000 r--p 00000000 08:01 1234  /usr/bin/node\n"
    "55c0a0a00000-55c0a2000000 r-xp 00a00000 08:01 1234  /usr/bin/node\n"
    "7f0010000000-7f0010040000 rwxp 00000000 00:00 0 \n"
    "7f0020000000-7f0020100000 r-xp 00000000 00:00 0\n"
    "7f0030000000-7f0030001000 ---p 00000000 00:00 0\n"
    "7ffd0000a000-7ffd0000c000 r-xp 00000000 00:00 0  [vdso]\n";

static void
test_maps_parse_node(void **state)
{
    (void)state;
    struct sw_maps_range *r = NULL;
    size_t n = 0, bad = 9;
    assert_int_equal(sw_maps_parse(node_maps, strlen(node_maps), 100, &r, &n, &bad), 0);
    assert_int_equal(n, 4);
    assert_int_equal(bad, 0);
    assert_true(r[0].start == 0x55c0a0a00000 && r[0].end == 0x55c0a2000000);
    assert_true(r[1].start == 0x7f0010000000);
    assert_true(sw_maps_find(r, n, 0x7f001003ffff));
    assert_false(sw_maps_find(r, n, 0x7f0010040000));
    assert_false(sw_maps_find(r, n, 0x55c0a0000000)); /* not executable */
    assert_false(sw_maps_find(r, n, 0x7f0030000000));
    assert_true(sw_maps_find(r, n, 0x7ffd0000b000));
    sw_free(r);
}

static void
test_maps_parse_hostile(void **state)
{
    (void)state;
    static const char text[] = "zz-10 r-xp 0 0:0 0\n"                       /* not hex */
                               "1000 r-xp 0 0:0 0\n"                        /* no '-' */
                               "2000-1000 r-xp 0 0:0 0\n"                   /* reversed */
                               "1000-1000 r-xp 0 0:0 0\n"                   /* empty */
                               "10000000000000000-20000000000000000 r-xp\n" /* 17 digits */
                               "1000-2000 rwxq 0 0:0 0\n"                   /* bad perms */
                               "1000-2000 r-x\n"                            /* short */
                               "1000-2000\n"                                /* nothing after */
                               "-2000 r-xp\n"                               /* no start */
                               "\n"
                               "a000-b000 r-xp 0 0:0 0\n" /* kept */
                               "a800-c000 r-xp 0 0:0 0\n" /* overlaps: dropped */
                               "3000-4000 r-xp";          /* no newline: kept */
    struct sw_maps_range *r = NULL;
    size_t n = 0, bad = 0;
    assert_int_equal(sw_maps_parse(text, sizeof text - 1, 100, &r, &n, &bad), 0);
    assert_int_equal(n, 2);
    assert_int_equal(bad, 10);
    assert_true(r[0].start == 0x3000 && r[0].end == 0x4000);
    assert_true(r[1].start == 0xa000 && r[1].end == 0xb000);
    sw_free(r);

    /* NULs inside a line, and the line cap */
    static const char nul[] = "1000-2000 r\0xp 0\n5000-6000 r-xp\n7000-8000 r-xp\n";
    assert_int_equal(sw_maps_parse(nul, sizeof nul - 1, 2, &r, &n, &bad), 0);
    assert_int_equal(n, 1);
    assert_int_equal(bad, 1);
    assert_true(r[0].start == 0x5000);
    sw_free(r);

    /* nothing at all */
    assert_int_equal(sw_maps_parse("", 0, 100, &r, &n, &bad), 0);
    assert_int_equal(n, 0);
    assert_null(r);
}

/* A host file holding TEXT, served as the target's /proc/PID/maps. */
static void
serve_maps(struct sw_proc *p, const char *text, char *tmp, size_t len)
{
    snprintf(tmp, len, "/tmp/rspwalk-test-maps.XXXXXX");
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char path[64];
    snprintf(path, sizeof path, "/proc/%lld/maps", (long long)p->pid);
    fake_proc_add_file(p, path, tmp);
}

static void
test_maps_read_once_per_stop(void **state)
{
    (void)state;
    char tmp[64];
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    p->pid = 4242;
    serve_maps(p, node_maps, tmp, sizeof tmp);
    struct sw_libstate *ls = NULL;
    assert_int_equal(sw_libstate_new(p, NULL, &ls), 0);

    assert_int_equal(sw_libstate_exec_at(ls, 0x7f0020000010), 0);
    assert_int_equal(sw_libstate_maps_reads(ls), 1);
    assert_int_equal(sw_libstate_exec_at(ls, 0x7f0020000020), 0); /* a hit: no read */
    assert_int_equal(sw_libstate_exec_at(ls, 0x1000), SW_ENOENT); /* a miss reads ... */
    assert_int_equal(sw_libstate_exec_at(ls, 0x2000), SW_ENOENT); /* ... once per stop */
    assert_int_equal(sw_libstate_maps_reads(ls), 1);
    p->stop_gen++;
    assert_int_equal(sw_libstate_exec_at(ls, 0x2000), SW_ENOENT);
    assert_int_equal(sw_libstate_maps_reads(ls), 2);
    sw_libstate_free(ls);

    /* no_maps: never read */
    struct sw_libstate_config cfg;
    sw_libstate_config_init(&cfg);
    cfg.no_maps = true;
    assert_int_equal(sw_libstate_new(p, &cfg, &ls), 0);
    assert_int_equal(sw_libstate_exec_at(ls, 0x7f0020000010), SW_ENOENT);
    assert_int_equal(sw_libstate_maps_reads(ls), 0);
    sw_libstate_free(ls);
    sw_proc_free(p);
    unlink(tmp);
}

static void
test_maps_not_for_qemu_user(void **state)
{
    (void)state;
    char tmp[64];
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    p->pid = 1; /* QEMU user mode: its /proc is the host's QEMU process */
    serve_maps(p, node_maps, tmp, sizeof tmp);
    struct sw_libstate *ls = NULL;
    assert_int_equal(sw_libstate_new(p, NULL, &ls), 0);
    assert_int_equal(sw_libstate_exec_at(ls, 0x7f0020000010), SW_ENOENT);
    assert_int_equal(sw_libstate_maps_reads(ls), 0);
    assert_int_equal(fake_proc_file_bytes(p), 0);
    sw_libstate_free(ls);
    sw_proc_free(p);
    unlink(tmp);
}

static void
test_maps_no_host_io(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    p->pid = 4242; /* no file added: read_file is SW_EUNSUP, asked once */
    struct sw_libstate *ls = NULL;
    assert_int_equal(sw_libstate_new(p, NULL, &ls), 0);
    assert_int_equal(sw_libstate_exec_at(ls, 0x7f0020000010), SW_ENOENT);
    p->stop_gen++;
    assert_int_equal(sw_libstate_exec_at(ls, 0x7f0020000010), SW_ENOENT);
    assert_int_equal(sw_libstate_maps_reads(ls), 0);
    sw_libstate_free(ls);
    sw_proc_free(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maps_parse_node),
        cmocka_unit_test(test_maps_parse_hostile),
        cmocka_unit_test(test_maps_read_once_per_stop),
        cmocka_unit_test(test_maps_not_for_qemu_user),
        cmocka_unit_test(test_maps_no_host_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
