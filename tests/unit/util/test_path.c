/* tests/unit/util/test_path.c -- names a target gives, kept inside their directories.
 *
 * sw_path_normalize by text, sw_path_in_root over a scratch sysroot holding
 * symbolic links that point out of it, sw_path_open_regular on a FIFO.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/path.h"

static void
expect_norm(const char *in, const char *want)
{
    char *out = NULL;
    assert_int_equal(sw_path_normalize(in, &out), 0);
    assert_string_equal(out, want);
    sw_free(out);
}

static void
test_path_normalize_collapses_dots_and_slashes(void **state)
{
    (void)state;
    expect_norm("/lib//x86_64/./libc.so.6", "/lib/x86_64/libc.so.6");
    expect_norm("/usr/lib/../lib64/", "/usr/lib64");
    expect_norm("libfoo.so", "/libfoo.so");
    expect_norm("/", "/");
    expect_norm("", "/");
    expect_norm("/a/b/../../c", "/c");
}

static void
test_path_normalize_refuses_climbing_above_root(void **state)
{
    (void)state;
    char *out = (char *)1;
    assert_int_equal(sw_path_normalize("/lib/../../etc/shadow", &out), SW_EINVAL);
    assert_null(out);
    assert_int_equal(sw_path_normalize("..", &out), SW_EINVAL);
    assert_int_equal(sw_path_normalize("/a/../..", &out), SW_EINVAL);
}

static void
test_path_is_name_takes_one_component(void **state)
{
    (void)state;
    assert_true(sw_path_is_name("libc.so.6.debug", 15));
    assert_true(sw_path_is_name("..a", 3));
    assert_false(sw_path_is_name("", 0));
    assert_false(sw_path_is_name(".", 1));
    assert_false(sw_path_is_name("..", 2));
    assert_false(sw_path_is_name("../../etc/shadow", 16));
    assert_false(sw_path_is_name("a/b", 3));
    assert_false(sw_path_is_name("a\0b", 3));
}

/* A scratch sysroot: usr/lib/libc.so.6 (a file), lib -> usr/lib (relative),
 * abs -> /usr/lib (absolute: the sysroot's, not the host's), up ->
 * ../../../../etc (climbs: stops at the sysroot), loop -> loop. */
static char root[64];

static int
setup_root(void **state)
{
    (void)state;
    char p[256];
    snprintf(root, sizeof root, "/tmp/sw-path-XXXXXX");
    if (mkdtemp(root) == NULL)
        return -1;
    snprintf(p, sizeof p, "%s/usr", root);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/usr/lib", root);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/etc", root);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/usr/lib/libc.so.6", root);
    FILE *f = fopen(p, "w");
    if (f == NULL)
        return -1;
    fclose(f);
    snprintf(p, sizeof p, "%s/lib", root);
    if (symlink("usr/lib", p) != 0)
        return -1;
    snprintf(p, sizeof p, "%s/abs", root);
    if (symlink("/usr/lib", p) != 0)
        return -1;
    snprintf(p, sizeof p, "%s/usr/lib/up", root);
    if (symlink("../../../../etc", p) != 0)
        return -1;
    snprintf(p, sizeof p, "%s/loop", root);
    if (symlink("loop", p) != 0)
        return -1;
    snprintf(p, sizeof p, "%s/fifo", root);
    if (mkfifo(p, 0600) != 0)
        return -1;
    return 0;
}

static int
teardown_root(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void
expect_in_root(const char *name, const char *want_rel)
{
    struct sw_errbuf err;
    char *out = NULL, want[256];
    assert_int_equal(sw_path_in_root(root, name, &out, &err), 0);
    snprintf(want, sizeof want, "%s%s", root, want_rel);
    assert_string_equal(out, want);
    sw_free(out);
}

static void
test_path_in_root_follows_links_inside_the_sysroot(void **state)
{
    (void)state;
    expect_in_root("/lib/libc.so.6", "/usr/lib/libc.so.6");
    expect_in_root("/abs/libc.so.6", "/usr/lib/libc.so.6");
    expect_in_root("lib/./libc.so.6", "/usr/lib/libc.so.6");
    expect_in_root("/usr/lib/missing/../x", "/usr/lib/x");
}

static void
test_path_in_root_link_climbing_out_stops_at_the_sysroot(void **state)
{
    (void)state;
    expect_in_root("/usr/lib/up/shadow", "/etc/shadow");
    expect_in_root("/usr/lib/up/../x", "/x");
}

static void
test_path_in_root_refuses_dotdot_above_the_sysroot(void **state)
{
    (void)state;
    struct sw_errbuf err;
    char *out = NULL;
    assert_int_equal(sw_path_in_root(root, "/lib/../../../etc/shadow", &out, &err), SW_EINVAL);
    assert_null(out);
    assert_non_null(strstr(err.msg, "above the sysroot"));
}

static void
test_path_in_root_refuses_a_link_loop(void **state)
{
    (void)state;
    struct sw_errbuf err;
    char *out = NULL;
    assert_int_equal(sw_path_in_root(root, "/loop/x", &out, &err), SW_EINVAL);
    assert_non_null(strstr(err.msg, "symbolic links"));
}

static void
test_path_in_root_without_sysroot_is_the_host_path(void **state)
{
    (void)state;
    struct sw_errbuf err;
    char *out = NULL;
    assert_int_equal(sw_path_in_root(NULL, "/usr/../lib//x", &out, &err), 0);
    assert_string_equal(out, "/usr/../lib//x");
    sw_free(out);
    assert_int_equal(sw_path_in_root("/", "build/x.elf", &out, &err), 0);
    assert_string_equal(out, "build/x.elf");
    sw_free(out);
}

static void
test_path_open_regular_refuses_fifo_without_blocking(void **state)
{
    (void)state;
    struct sw_errbuf err;
    char p[256];
    snprintf(p, sizeof p, "%s/fifo", root);
    assert_int_equal(sw_path_open_regular(p, false, NULL, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "not a regular file"));
    snprintf(p, sizeof p, "%s/lib", root);
    assert_int_equal(sw_path_open_regular(p, false, NULL, &err), SW_EBADELF); /* a directory */
    snprintf(p, sizeof p, "%s/lib/libc.so.6", root);
    int fd = sw_path_open_regular(p, false, NULL, &err);
    assert_true(fd >= 0);
    close(fd);
    snprintf(p, sizeof p, "%s/usr/lib/up", root);
    assert_int_equal(sw_path_open_regular(p, true, NULL, &err), SW_EBADELF);
    snprintf(p, sizeof p, "%s/none", root);
    assert_int_equal(sw_path_open_regular(p, false, NULL, &err), SW_ENOENT);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_normalize_collapses_dots_and_slashes),
        cmocka_unit_test(test_path_normalize_refuses_climbing_above_root),
        cmocka_unit_test(test_path_is_name_takes_one_component),
        cmocka_unit_test(test_path_in_root_follows_links_inside_the_sysroot),
        cmocka_unit_test(test_path_in_root_link_climbing_out_stops_at_the_sysroot),
        cmocka_unit_test(test_path_in_root_refuses_dotdot_above_the_sysroot),
        cmocka_unit_test(test_path_in_root_refuses_a_link_loop),
        cmocka_unit_test(test_path_in_root_without_sysroot_is_the_host_path),
        cmocka_unit_test(test_path_open_regular_refuses_fifo_without_blocking),
    };
    return cmocka_run_group_tests(tests, setup_root, teardown_root);
}
