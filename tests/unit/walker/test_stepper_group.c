/* tests/unit/walker/test_stepper_group.c -- the default steppers by name (stepper.h), and a walker
 * given only some of them (sw_walker_config.no_default_steppers + sw_add_stepper), as
 * rspwalk --steppers does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"

#define ELF SW_TEST_DATA "/x86_64_frames.elf"

static void
test_default_names_are_the_steppers_names_in_priority_order(void **state)
{
    (void)state;
    static const char *const want[] = { "stackbottom", "sighandler", "debug",   "ehabi",
                                        "frame-func",  "analysis",   "wanderer" };
    unsigned last = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_non_null(sw_stepper_default_name(i));
        assert_string_equal(sw_stepper_default_name(i), want[i]);
        struct sw_stepper *s = NULL;
        assert_int_equal(sw_stepper_new_named(want[i], &s), 0);
        assert_non_null(s);
        assert_string_equal(s->ops->name, want[i]); /* the JSON "stepper" value */
        assert_true(s->ops->priority > last);
        last = s->ops->priority;
        sw_stepper_free(s);
    }
    assert_null(sw_stepper_default_name(sizeof want / sizeof want[0]));
}

static void
test_an_unknown_name_is_enoent(void **state)
{
    (void)state;
    struct sw_stepper *s = (struct sw_stepper *)&s; /* not NULL: must be reset */
    assert_int_equal(sw_stepper_new_named("frame_func", &s), SW_ENOENT);
    assert_null(s);
    assert_int_equal(sw_stepper_new_named("", &s), SW_ENOENT);
    assert_int_equal(sw_stepper_new_named(NULL, &s), SW_ENOENT);
    assert_int_equal(sw_stepper_new_named("Wanderer", &s), SW_ENOENT);
}

static void
test_a_walker_with_chosen_steppers_tries_them_by_priority(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    struct sw_walker_config cfg = { .exe = ELF, .no_default_steppers = true };
    struct sw_errbuf err = { 0 };
    struct sw_walker *w;
    if (sw_walker_new(p, &cfg, &w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);

    struct sw_stepper *all[8];
    size_t n = 99;
    sw_stepper_group_steppers(sw_walker_group(w), all, 8, &n);
    assert_int_equal(n, 0); /* none until added */

    /* Added out of order, tried by priority. */
    const char *add[] = { "wanderer", "stackbottom", "sighandler" };
    for (size_t i = 0; i < 3; i++) {
        struct sw_stepper *s;
        assert_int_equal(sw_stepper_new_named(add[i], &s), 0);
        assert_int_equal(sw_add_stepper(w, s), 0);
    }
    sw_stepper_group_steppers(sw_walker_group(w), all, 8, &n);
    assert_int_equal(n, 3);
    assert_string_equal(all[0]->ops->name, "stackbottom");
    assert_string_equal(all[1]->ops->name, "sighandler");
    assert_string_equal(all[2]->ops->name, "wanderer");
    sw_walker_free(w);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_names_are_the_steppers_names_in_priority_order),
        cmocka_unit_test(test_an_unknown_name_is_enoent),
        cmocka_unit_test(test_a_walker_with_chosen_steppers_tries_them_by_priority),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
