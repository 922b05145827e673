/* tests/unit/util/test_allocfail.c -- the allocation-failure sweep over a whole walk.
 *
 * For N = 1, 2, ...: make the Nth library allocation fail, create a walker
 * over a fake process and the known-prologue ELF, walk, free.  Each run must
 * succeed or fail with SW_ENOMEM, never crash, and (under ASan) never leak.
 * The sweep ends at the first N past the last allocation of a full run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "util/util.h"

#define ELF   SW_TEST_DATA "/x86_64_frames.elf"
#define STACK 0x7fff0000u

/* One walk; returns the walker's result (0 or SW_ENOMEM). */
static int
one_walk(size_t *frames)
{
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    sw_addr sp0 = STACK + 0x100, f1 = STACK + 0x120;
    fake_proc_add_mem(p, STACK, NULL, 0x1000);
    fake_proc_set_reg(p, 1, 16, 0x40101d); /* savefp_func + 1 */
    fake_proc_set_reg(p, 1, 7, sp0);
    fake_proc_set_reg(p, 1, 6, f1);
    fake_proc_put_word(p, sp0, f1);
    fake_proc_put_word(p, sp0 + 8, 0x401019);
    fake_proc_put_word(p, f1, 0);
    fake_proc_put_word(p, f1 + 8, 0x401007);

    struct sw_walker_config cfg = { .exe = ELF };
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    int rc = sw_walker_new(p, &cfg, &w, &err);
    if (rc < 0)
        return rc;
    struct sw_stack st;
    sw_stack_init(&st);
    rc = sw_walk_stack(w, SW_TID_DEFAULT, &st);
    if (rc == 0) {
        struct sw_symbol sym;
        for (size_t i = 0; i < st.n; i++)
            if (sw_frame_symbol(w, &st.frames[i], &sym) == SW_ENOMEM)
                rc = SW_ENOMEM;
    }
    *frames = st.n;
    sw_stack_fini(&st);
    sw_walker_free(w);
    return rc;
}

static void
test_allocfail_every_allocation_of_a_walk_fails_cleanly(void **state)
{
    (void)state;
    size_t frames = 0;
    sw_test_fail_alloc_at(0);
    assert_int_equal(one_walk(&frames), 0);
    assert_int_equal(frames, 3);
    unsigned long total = sw_test_alloc_count();
    assert_true(total > 0);

    unsigned long ok = 0, nomem = 0;
    for (unsigned long n = 1; n <= total; n++) {
        sw_test_fail_alloc_at(n);
        int rc = one_walk(&frames);
        if (rc == 0)
            ok++; /* the failed allocation was optional (a cache) */
        else if (rc == SW_ENOMEM)
            nomem++;
        else
            fail_msg("allocation %lu of %lu failed: result %d (%s), expected 0 or SW_ENOMEM", n,
                     total, rc, sw_errname(rc));
    }
    sw_test_fail_alloc_at(0);
    assert_true(nomem > 0);
    print_message("allocfail: %lu allocations, %lu runs failed with SW_ENOMEM, %lu succeeded\n",
                  total, nomem, ok);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocfail_every_allocation_of_a_walk_fails_cleanly),
    };
    return cmocka_run_group_tests_name("allocfail", tests, NULL, NULL);
}
