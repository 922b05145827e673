/* tests/unit/walker/test_analysis_cases.c -- the dataflow over stripped x86 code's jump tables.
 *
 * sw_an_flow on hand-assembled x86-64 bytes: a function whose switch dispatches through
 * `jmp *%rax`, its case pushing an argument before a call.  The cases are reached only when
 * the seeds ask (stripped code), each from its first instruction, and not at or beyond the
 * seeds' ind_end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "disasm/disasm.h"
#include "walker/steppers/analysis_internal.h"

#define BASE 0x401000u

/* push %r12; push %rbx; sub $0x10,%rsp; jmp *%rax;
 * case (9): push $0; call *%rdx; add $8,%rsp; add $0x10,%rsp; pop %rbx; pop %r12; ret */
static const uint8_t code[] = {
    0x41, 0x54,             /* 0x00 push %r12      height 8 -> 16 */
    0x53,                   /* 0x02 push %rbx      -> 24 */
    0x48, 0x83, 0xec, 0x10, /* 0x03 sub $0x10,%rsp -> 40 */
    0xff, 0xe0,             /* 0x07 jmp *%rax      (the dispatch, at 40) */
    0x6a, 0x00,             /* 0x09 push $0        -> 48: a case */
    0xff, 0xd2,             /* 0x0b call *%rdx     at 48 */
    0x48, 0x83, 0xc4, 0x08, /* 0x0d add $8,%rsp    -> 40 */
    0x48, 0x83, 0xc4, 0x10, /* 0x11 add $0x10,%rsp -> 24 */
    0x5b,                   /* 0x15 pop %rbx       -> 16 */
    0x41, 0x5c,             /* 0x16 pop %r12       -> 8 */
    0xc3,                   /* 0x18 ret */
};

/* The flow over CODE with SEEDS into ST (zeroed here). */
static void
flow(const struct sw_an_seeds *seeds, struct sw_an_state *st)
{
    const char *why = NULL;
    if (!sw_disasm_available(&why))
        fail_msg("capstone is missing (apt-get install libcapstone-dev): %s", why ? why : "?");
    struct sw_disasm *dis = sw_disasm_new(&arch_x86_64);
    assert_non_null(dis);
    struct sw_an_func sum;
    memset(st, 0, sizeof(struct sw_an_state) * sizeof code);
    assert_int_equal(sw_an_flow(dis, &arch_x86_64, code, BASE, sizeof code, seeds, NULL, st, &sum),
                     0);
    sw_disasm_free(dis);
}

static void
assert_height(const struct sw_an_state *st, size_t off, int64_t height)
{
    struct sw_an_pc p;
    assert_true(st[off].flags & SW_AN_ST_SEEN);
    sw_an_state_facts(&st[off], &p);
    assert_true(p.sp_known);
    assert_false(p.sp_alt);
    assert_int_equal(p.height, height);
}

/* Symbolised code with no seeding asked for keeps the case "not reached". */
static void
test_cases_not_seeded_without_asking(void **state)
{
    (void)state;
    struct sw_an_state st[sizeof code];
    struct sw_an_seeds seeds = { 0 };
    flow(&seeds, st);
    assert_height(st, 0x07, 40);
    assert_false(st[0x09].flags & SW_AN_ST_SEEN);
    assert_false(st[0x0b].flags & SW_AN_ST_SEEN);
}

/* Seeded from its first instruction only: the push of the argument moves SP, and the call
 * after it is at 48, not at the dispatch's 40 met with 48 (unknown). */
static void
test_cases_seeded_from_their_first_instruction(void **state)
{
    (void)state;
    struct sw_an_state st[sizeof code];
    struct sw_an_seeds seeds = { .seed_ind = true };
    flow(&seeds, st);
    assert_height(st, 0x09, 40);
    assert_height(st, 0x0b, 48);
    assert_height(st, 0x0d, 48);
    assert_height(st, 0x15, 24);
    assert_height(st, 0x18, 8);
    struct sw_an_pc p;
    sw_an_state_facts(&st[0x0b], &p);
    assert_int_equal(p.ra, SW_AN_RA_SLOT);
    assert_int_equal(p.ra_off, -8);
}

/* Code at and beyond IND_END is entered by other jumps (a function only tail-called): not
 * seeded with the dispatch's state. */
static void
test_cases_not_seeded_past_ind_end(void **state)
{
    (void)state;
    struct sw_an_state st[sizeof code];
    struct sw_an_seeds seeds = { .seed_ind = true, .ind_end = 0x09 };
    flow(&seeds, st);
    assert_height(st, 0x07, 40);
    assert_false(st[0x09].flags & SW_AN_ST_SEEN);
    assert_false(st[0x0b].flags & SW_AN_ST_SEEN);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases_not_seeded_without_asking),
        cmocka_unit_test(test_cases_seeded_from_their_first_instruction),
        cmocka_unit_test(test_cases_not_seeded_past_ind_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
