/* tests/unit/targets/test_svr4.c -- the libraries-svr4 document and ELF header helpers of targets/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/errors.h"
#include "targets/targets_internal.h"

/* As gdbserver 13.1 sent it for a dynamic x86-64 program (RLE expanded). */
static const char svr4_doc[] =
    "<library-list-svr4 version=\"1.0\" main-lm=\"0x7ffff7ffe2e0\">"
    "<library name=\"linux-vdso.so.1\" lm=\"0x7ffff7fc1000\" l_addr=\"0x7ffff7fc1000\" "
    "l_ld=\"0x7ffff7fc13e0\" lmid=\"0x0\"/>"
    "<library name=\"/lib/x86_64-linux-gnu/libc.so.6\" lm=\"0x7ffff7fbb6a0\" "
    "l_addr=\"0x7ffff7dcf000\" l_ld=\"0x7ffff7fa7bc0\" lmid=\"0x0\"/>"
    "<library name=\"/tmp/a&amp;b.so\" lm=\"0x1\" l_addr=\"0x2\" l_ld=\"0x3\" lmid=\"0x0\"/>"
    "</library-list-svr4>";

static void
test_svr4_lists_every_library_with_addresses(void **state)
{
    (void)state;
    struct sw_modinfo *m;
    size_t n;
    struct sw_errbuf err = { 0 };
    assert_int_equal(tgt_parse_svr4(svr4_doc, strlen(svr4_doc), &m, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(m[0].name, "linux-vdso.so.1");
    assert_string_equal(m[1].name, "/lib/x86_64-linux-gnu/libc.so.6");
    assert_int_equal(m[1].l_addr, 0x7ffff7dcf000ULL);
    assert_int_equal(m[1].l_ld, 0x7ffff7fa7bc0ULL);
    assert_int_equal(m[1].lm, 0x7ffff7fbb6a0ULL);
    assert_string_equal(m[2].name, "/tmp/a&b.so");
    sw_modinfo_free(m, n);
}

static void
test_svr4_empty_list_is_no_libraries(void **state)
{
    (void)state;
    const char *doc = "<library-list-svr4 version=\"1.0\"/>";
    struct sw_modinfo *m;
    size_t n = 99;
    struct sw_errbuf err = { 0 };
    assert_int_equal(tgt_parse_svr4(doc, strlen(doc), &m, &n, &err), 0);
    assert_int_equal(n, 0);
    sw_modinfo_free(m, n);
}

static void
test_svr4_garbage_is_a_protocol_error(void **state)
{
    (void)state;
    struct sw_modinfo *m;
    size_t n;
    struct sw_errbuf err = { 0 };
    assert_int_equal(tgt_parse_svr4("hello", 5, &m, &n, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "libraries-svr4"));
    const char *cut = "<library-list-svr4><library name=\"/x\" l_addr=\"0x1\"";
    assert_int_equal(tgt_parse_svr4(cut, strlen(cut), &m, &n, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "unterminated"));
    const char *noname = "<library-list-svr4><library l_addr=\"0x1\"/></library-list-svr4>";
    assert_int_equal(tgt_parse_svr4(noname, strlen(noname), &m, &n, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "without a name"));
}

static void
test_svr4_reads_len_bytes_past_a_nul_and_no_further(void **state)
{
    (void)state;
    struct sw_modinfo *m;
    size_t n;
    struct sw_errbuf err = { 0 };
    /* a NUL of the stub's inside the document does not end it */
    static const char doc[] = "<library-list-svr4>\0<library name=\"/x\" l_addr=\"0x10\"/>"
                              "</library-list-svr4>";
    assert_int_equal(tgt_parse_svr4(doc, sizeof doc - 1, &m, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(m[0].name, "/x");
    sw_modinfo_free(m, n);
    /* exactly LEN bytes, no terminator after them: nothing is read past */
    static const char head[] = "<library-list-svr4><library name=\"/y\"/>";
    char *cut = malloc(sizeof head - 1);
    memcpy(cut, head, sizeof head - 1);
    assert_int_equal(tgt_parse_svr4(cut, sizeof head - 1, &m, &n, &err), 0);
    assert_int_equal(n, 1);
    sw_modinfo_free(m, n);
    assert_int_equal(tgt_parse_svr4(cut, 10, &m, &n, &err), SW_EPROTO);
    free(cut);
}

static void
test_arch_from_elf_reads_the_header(void **state)
{
    (void)state;
    const struct arch_desc *a = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(tgt_arch_from_elf("/proc/self/exe", &a, &err), 0);
    assert_ptr_equal(a, &arch_x86_64);
    assert_int_equal(tgt_arch_from_elf("/etc/passwd", &a, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "/etc/passwd: not an ELF file"));
    assert_int_equal(tgt_arch_from_elf("/nonexistent/x", &a, &err), SW_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/x"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_svr4_lists_every_library_with_addresses),
        cmocka_unit_test(test_svr4_empty_list_is_no_libraries),
        cmocka_unit_test(test_svr4_garbage_is_a_protocol_error),
        cmocka_unit_test(test_svr4_reads_len_bytes_past_a_nul_and_no_further),
        cmocka_unit_test(test_arch_from_elf_reads_the_header),
    };
    return cmocka_run_group_tests_name("svr4", tests, NULL, NULL);
}
