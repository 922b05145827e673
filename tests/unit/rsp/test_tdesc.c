/* tests/unit/rsp/test_tdesc.c -- target.xml parsing: numbering, offsets, includes, errors.
 *
 * Documents in the shapes gdbserver 13.1 (one inline document) and QEMU 7.2
 * (target.xml + i386-64bit.xml, commented-out registers, no xmlns:xi) send.
 * The complete QEMU document is replayed in test_session.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/errors.h"
#include "rspwalk/rsp.h"

static const char gdbserver_xml[] =
    "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
    "<target xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
    "  <architecture>i386:x86-64</architecture>\n  <osabi>GNU/Linux</osabi>\n"
    "  <feature name=\"org.gnu.gdb.i386.core\">\n"
    "    <flags id=\"i386_eflags\" size=\"4\"><field name=\"CF\" start=\"0\" end=\"0\"/></flags>\n"
    "    <reg name=\"rax\" bitsize=\"64\" type=\"int64\"/>\n"
    "    <reg name=\"rbx\" bitsize=\"64\" type=\"int64\"/>\n"
    "    <reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\" regnum=\"16\"/>\n"
    "    <reg name=\"eflags\" bitsize=\"32\" type=\"i386_eflags\"/>\n"
    "  </feature>\n"
    "  <feature name=\"org.gnu.gdb.i386.linux\">\n"
    "    <reg name=\"orig_rax\" bitsize=\"64\" type=\"int\" regnum=\"57\"/>\n"
    "  </feature>\n"
    "</target>\n";

static void
test_tdesc_gdbserver_inline_document_numbers_and_offsets(void **state)
{
    (void)state;
    struct rsp_tdesc *td;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(rsp_tdesc_parse(gdbserver_xml, strlen(gdbserver_xml), NULL, NULL, &td, &err),
                     0);
    assert_string_equal(td->arch, "i386:x86-64");
    assert_string_equal(td->osabi, "GNU/Linux");
    assert_int_equal(td->nregs, 5);
    assert_string_equal(td->regs[0].name, "rax");
    assert_int_equal(td->regs[0].regnum, 0);
    assert_int_equal(td->regs[1].regnum, 1);
    assert_string_equal(td->regs[2].name, "rip");
    assert_int_equal(td->regs[2].regnum, 16);
    assert_int_equal(td->regs[2].offset, 16); /* regnum gaps take no room */
    assert_string_equal(td->regs[3].name, "eflags");
    assert_int_equal(td->regs[3].regnum, 17); /* previous + 1 */
    assert_int_equal(td->regs[3].bitsize, 32);
    assert_string_equal(td->regs[3].type, "i386_eflags");
    assert_string_equal(td->regs[4].feature, "org.gnu.gdb.i386.linux");
    assert_int_equal(td->regs[4].offset, 28);
    assert_int_equal(td->g_size, 36);
    rsp_tdesc_free(td);
}

static const char qemu_target[] =
    "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\"><target>"
    "<architecture>i386:x86-64</architecture><xi:include href=\"i386-64bit.xml\"/></target>";

static const char qemu_core[] =
    "<?xml version=\"1.0\"?>\n<!-- Copyright (C) 2010-2017 Free Software Foundation -->\n"
    "<!DOCTYPE feature SYSTEM \"gdb-target.dtd\">\n"
    "<feature name=\"org.gnu.gdb.i386.core\">\n"
    "  <reg name=\"rax\" bitsize=\"64\" type=\"int64\" regnum=\"0\"/>\n"
    "  <reg name=\"rbx\" bitsize=\"64\"/><reg name=\"rcx\" bitsize=\"64\"/>\n"
    "  <reg name=\"rdx\" bitsize=\"64\"/><reg name=\"rsi\" bitsize=\"64\"/>\n"
    "  <reg name=\"rdi\" bitsize=\"64\"/><reg name=\"rbp\" bitsize=\"64\"/>\n"
    "  <reg name=\"rsp\" bitsize=\"64\"/><reg name=\"r8\" bitsize=\"64\"/>\n"
    "  <reg name=\"r9\" bitsize=\"64\"/><reg name=\"r10\" bitsize=\"64\"/>\n"
    "  <reg name=\"r11\" bitsize=\"64\"/><reg name=\"r12\" bitsize=\"64\"/>\n"
    "  <reg name=\"r13\" bitsize=\"64\"/><reg name=\"r14\" bitsize=\"64\"/>\n"
    "  <reg name=\"r15\" bitsize=\"64\"/>\n"
    "  <reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\"/>\n"
    "  <reg name=\"eflags\" bitsize=\"32\"/>\n"
    "  <reg name=\"cs\" bitsize=\"32\"/><reg name=\"ss\" bitsize=\"32\"/>\n"
    "  <reg name=\"ds\" bitsize=\"32\"/><reg name=\"es\" bitsize=\"32\"/>\n"
    "  <reg name=\"fs\" bitsize=\"32\"/><reg name=\"gs\" bitsize=\"32\"/>\n"
    "  <!-- Segment descriptor caches and TLS base MSRs -->\n"
    "  <!--reg name=\"cs_base\" bitsize=\"64\" type=\"int64\"/>\n"
    "  <reg name=\"ss_base\" bitsize=\"64\" type=\"int64\"/>\n"
    "  <reg name=\"ds_base\" bitsize=\"64\" type=\"int64\"/>\n"
    "  <reg name=\"es_base\" bitsize=\"64\" type=\"int64\"/-->\n"
    "  <reg name=\"fs_base\" bitsize=\"64\" type=\"int64\"/>\n"
    "  <reg name=\"gs_base\" bitsize=\"64\" type=\"int64\"/>\n"
    "</feature>\n";

struct docs {
    const char *name[4];
    const char *text[4];
    int calls;
    int fail_code;
};

static int
include_cb(void *arg, const char *annex, char **data, size_t *len)
{
    struct docs *d = arg;
    d->calls++;
    if (d->fail_code)
        return d->fail_code;
    for (int i = 0; i < 4 && d->name[i]; i++) {
        if (strcmp(d->name[i], annex) == 0) {
            *len = strlen(d->text[i]);
            *data = malloc(*len + 1);
            memcpy(*data, d->text[i], *len + 1);
            return 0;
        }
    }
    return SW_ENOENT;
}

static void
test_tdesc_qemu_include_with_commented_regs_puts_fs_base_at_24(void **state)
{
    (void)state;
    struct docs d = { { "i386-64bit.xml" }, { qemu_core }, 0, 0 };
    struct rsp_tdesc *td;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(rsp_tdesc_parse(qemu_target, strlen(qemu_target), include_cb, &d, &td, &err),
                     0);
    assert_int_equal(d.calls, 1);
    assert_string_equal(td->arch, "i386:x86-64");
    assert_null(td->osabi);
    assert_int_equal(td->nregs, 26);
    assert_string_equal(td->regs[23].name, "gs");
    assert_int_equal(td->regs[23].regnum, 23);
    assert_string_equal(td->regs[24].name, "fs_base");
    assert_int_equal(td->regs[24].regnum, 24);
    assert_string_equal(td->regs[24].feature, "org.gnu.gdb.i386.core");
    assert_string_equal(td->regs[7].name, "rsp");
    assert_int_equal(td->regs[7].offset, 56);
    assert_int_equal(td->regs[16].offset, 128);
    assert_int_equal(td->g_size, 17 * 8 + 7 * 4 + 2 * 8);
    rsp_tdesc_free(td);
}

static void
test_tdesc_bad_xml_is_eproto_naming_line_and_offset(void **state)
{
    (void)state;
    struct rsp_tdesc *td = (struct rsp_tdesc *)&td;
    struct sw_errbuf err = { 0, "" };
    const char *bad = "<target>\n<feature name=\"x\">\n<reg name=\"a\" bitsize=\"8\">\n</target>";
    assert_int_equal(rsp_tdesc_parse(bad, strlen(bad), NULL, NULL, &td, &err), SW_EPROTO);
    assert_null(td);
    assert_non_null(strstr(err.msg, "target description target.xml: XML error at line 4"));
    assert_non_null(strstr(err.msg, "mismatched tag"));
}

static void
test_tdesc_bad_register_attributes_are_eproto(void **state)
{
    (void)state;
    struct rsp_tdesc *td;
    struct sw_errbuf err = { 0, "" };
    const char *a =
        "<target><feature name=\"x\"><reg name=\"a\" bitsize=\"wide\"/></feature></target>";
    assert_int_equal(rsp_tdesc_parse(a, strlen(a), NULL, NULL, &td, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "register 'a': bad bitsize 'wide'"));
    const char *b = "<target><feature name=\"x\"><reg bitsize=\"8\"/></feature></target>";
    assert_int_equal(rsp_tdesc_parse(b, strlen(b), NULL, NULL, &td, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "<reg> without a name"));
    const char *c = "<target><feature name=\"x\"><reg name=\"a\" bitsize=\"8\" regnum=\"3\"/>"
                    "<reg name=\"b\" bitsize=\"8\" regnum=\"3\"/></feature></target>";
    assert_int_equal(rsp_tdesc_parse(c, strlen(c), NULL, NULL, &td, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "registers 'a' and 'b' both have regnum 3"));
    const char *e = "<target><reg name=\"a\" bitsize=\"8\" regnum=\"-1\"/></target>";
    assert_int_equal(rsp_tdesc_parse(e, strlen(e), NULL, NULL, &td, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "bad regnum '-1'"));
}

static void
test_tdesc_include_recursion_is_bounded(void **state)
{
    (void)state;
    const char *loop = "<feature name=\"f\"><reg name=\"r\" bitsize=\"8\"/>"
                       "<xi:include href=\"loop.xml\"/></feature>";
    struct docs d = { { "loop.xml" }, { loop }, 0, 0 };
    struct rsp_tdesc *td;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(rsp_tdesc_parse(loop, strlen(loop), include_cb, &d, &td, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "nested deeper than 8"));
    assert_int_equal(d.calls, 8);
}

static void
test_tdesc_include_without_callback_or_failing_is_an_error(void **state)
{
    (void)state;
    struct rsp_tdesc *td;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(rsp_tdesc_parse(qemu_target, strlen(qemu_target), NULL, NULL, &td, &err),
                     SW_EPROTO);
    assert_non_null(strstr(err.msg, "xi:include 'i386-64bit.xml' but no way to fetch it"));
    struct docs d = { { NULL }, { NULL }, 0, SW_ETIMEDOUT };
    assert_int_equal(rsp_tdesc_parse(qemu_target, strlen(qemu_target), include_cb, &d, &td, &err),
                     SW_ETIMEDOUT);
    assert_non_null(strstr(err.msg, "fetching xi:include 'i386-64bit.xml' failed"));
    /* an include that is itself bad XML names that document */
    struct docs bad = { { "i386-64bit.xml" }, { "<feature><reg" }, 0, 0 };
    assert_int_equal(rsp_tdesc_parse(qemu_target, strlen(qemu_target), include_cb, &bad, &td, &err),
                     SW_EPROTO);
    assert_non_null(strstr(err.msg, "target description i386-64bit.xml: XML error"));
}

static void
test_tdesc_without_registers_is_valid_and_empty(void **state)
{
    (void)state;
    /* gdbserver without xmlRegisters=i386 sends only these. */
    const char *x = "<target><architecture>i386:x86-64</architecture>"
                    "<osabi>GNU/Linux</osabi></target>";
    struct rsp_tdesc *td;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(rsp_tdesc_parse(x, strlen(x), NULL, NULL, &td, &err), 0);
    assert_int_equal(td->nregs, 0);
    assert_null(td->regs);
    assert_int_equal(td->g_size, 0);
    rsp_tdesc_free(td);
    rsp_tdesc_free(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tdesc_gdbserver_inline_document_numbers_and_offsets),
        cmocka_unit_test(test_tdesc_qemu_include_with_commented_regs_puts_fs_base_at_24),
        cmocka_unit_test(test_tdesc_bad_xml_is_eproto_naming_line_and_offset),
        cmocka_unit_test(test_tdesc_bad_register_attributes_are_eproto),
        cmocka_unit_test(test_tdesc_include_recursion_is_bounded),
        cmocka_unit_test(test_tdesc_include_without_callback_or_failing_is_an_error),
        cmocka_unit_test(test_tdesc_without_registers_is_valid_and_empty),
    };
    return cmocka_run_group_tests_name("tdesc", tests, NULL, NULL);
}
