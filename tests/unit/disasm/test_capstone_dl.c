/* tests/unit/disasm/test_capstone_dl.c -- capstone opened on first use, and when it cannot be.
 *
 * This file builds disasm/capstone_dl.c itself with a SONAME no system has,
 * so the loader's failure path runs here (the library's own copy, with the
 * real SONAME, is what every decoding test in test_analysis*.c and
 * test_frame_func*.c goes through).  The walker's decoder then reports
 * capstone missing instead of running out of memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#undef SW_CAPSTONE_SONAME
#define SW_CAPSTONE_SONAME "libcapstone-not-here.so.99"
#include "disasm/capstone_dl.c"

#include "rspwalk/arch.h"
#include "disasm/disasm.h"

static void
test_capstone_dl_missing_library_fails_every_call_and_says_why(void **state)
{
    (void)state;
    assert_false(sw_cs_load());
    assert_non_null(strstr(sw_cs_load_error(), "libcapstone-not-here.so.99"));
    assert_false(sw_cs_load()); /* tried once, remembered */

    csh h = 0;
    assert_int_equal(sw_cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_MEM);
    assert_int_equal(sw_cs_option(h, CS_OPT_DETAIL, CS_OPT_ON), CS_ERR_MEM);
    cs_insn *in = (cs_insn *)&h;
    static const uint8_t nop[] = { 0x90 };
    assert_int_equal(sw_cs_disasm(h, nop, 1, 0x1000, 1, &in), 0);
    assert_null(in);
    sw_cs_free(NULL, 0);
    assert_int_equal(sw_cs_close(&h), CS_ERR_MEM);
}

static void
test_capstone_dl_missing_library_means_no_decoder(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_false(sw_disasm_available(&why));
    assert_non_null(why);
    assert_non_null(strstr(why, "libcapstone-not-here.so.99"));
    assert_null(sw_disasm_new(&arch_x86_64));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capstone_dl_missing_library_fails_every_call_and_says_why),
        cmocka_unit_test(test_capstone_dl_missing_library_means_no_decoder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
