/* tests/unit/render/test_tree.c -- the merged prefix tree: merging, task ranges, counts, formats.
 *
 * Trees are built from literal paths and written to memory; each format is
 * checked whole against its expected text.  The allocation-failure sweep
 * checks that a failed add leaves no trace in what is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/tree.h"
#include "rspwalk/rspwalk.h"
#include "util/util.h"

#define PROG "/bin/prog"
#define LIBC "/lib/libc.so.6"

static const struct sw_tree_frame path_b[] = {
    { "main", PROG, 0x1000 },
    { "a", PROG, 0x1100 },
    { "b", PROG, 0x1200 },
};
static const struct sw_tree_frame path_c[] = {
    { "main", PROG, 0x1000 },
    { "a", PROG, 0x1104 }, /* another pc in a: merges all the same */
    { "c", LIBC, 0x7000 },
};

/* T written in FORMAT; caller frees.  Fails the test on an error. */
static char *
written(const struct sw_tree *t, enum sw_tree_format format)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(sw_tree_write(t, format, f), 0);
    fclose(f);
    return buf;
}

/* Six threads of one process: 0, 1, 3, 5 in b, 2 and 4 in c, both under
 * main -> a. */
static struct sw_tree *
six_threads(void)
{
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    for (size_t i = 0; i < 6; i++) {
        char thread[16];
        size_t task;
        snprintf(thread, sizeof thread, "p64.%zx", 0x65 + i);
        assert_int_equal(sw_tree_add_task(t, "127.0.0.1:2345", 100, thread, &task), 0);
        assert_int_equal(task, i);
        const struct sw_tree_frame *p = i == 2 || i == 4 ? path_c : path_b;
        assert_int_equal(sw_tree_add_path(t, task, p, 3, 1), 0);
    }
    return t;
}

static void
test_tree_paths_merge_into_one_prefix_tree_json(void **state)
{
    (void)state;
    struct sw_tree *t = six_threads();
    char *s = written(t, SW_TREE_JSON);
    assert_string_equal(
        s,
        "{\"version\": 1, \"tasks\": 6, \"tasks_index\": [\n"
        "  {\"task\": 0, \"target\": \"127.0.0.1:2345\", \"pid\": 100, \"thread\": \"p64.65\"},\n"
        "  {\"task\": 1, \"target\": \"127.0.0.1:2345\", \"pid\": 100, \"thread\": \"p64.66\"},\n"
        "  {\"task\": 2, \"target\": \"127.0.0.1:2345\", \"pid\": 100, \"thread\": \"p64.67\"},\n"
        "  {\"task\": 3, \"target\": \"127.0.0.1:2345\", \"pid\": 100, \"thread\": \"p64.68\"},\n"
        "  {\"task\": 4, \"target\": \"127.0.0.1:2345\", \"pid\": 100, \"thread\": \"p64.69\"},\n"
        "  {\"task\": 5, \"target\": \"127.0.0.1:2345\", \"pid\": 100, \"thread\": \"p64.6a\"}],\n"
        " \"tree\": {\"function\": \"/\", \"count\": 6, \"tasks\": \"[0-5]\", \"children\": [\n"
        "  {\"function\": \"main\", \"module\": \"/bin/prog\", \"count\": 6, \"tasks\": \"[0-5]\", "
        "\"children\": [\n"
        "   {\"function\": \"a\", \"module\": \"/bin/prog\", \"count\": 6, \"tasks\": \"[0-5]\", "
        "\"children\": [\n"
        "    {\"function\": \"b\", \"module\": \"/bin/prog\", \"count\": 4, \"tasks\": "
        "\"[0-1,3,5]\", \"children\": []},\n"
        "    {\"function\": \"c\", \"module\": \"/lib/libc.so.6\", \"count\": 2, \"tasks\": "
        "\"[2,4]\", \"children\": []}]}]}]},\n"
        " \"classes\": [\n"
        "  {\"tasks\": \"[0-1,3,5]\", \"count\": 4, \"path\": [\"main\", \"a\", \"b\"]},\n"
        "  {\"tasks\": \"[2,4]\", \"count\": 2, \"path\": [\"main\", \"a\", \"c\"]}]}\n");
    free(s);
    sw_tree_free(t);
}

static void
test_tree_dot_is_stats_format_with_path_hash_ids_and_task_ranges(void **state)
{
    (void)state;
    struct sw_tree *t = six_threads();
    char *s = written(t, SW_TREE_DOT);
    /* Ids: sdbm over "main\n/bin/prog\n", then "a\n/bin/prog\n" after it, ... */
    assert_string_equal(
        s, "digraph G {\n"
           "\tgraph [type=\"stat_4_1\"];\n"
           "\tnode [shape=record,style=filled,labeljust=c,height=0.2];\n"
           "\t0 [function=\"/\",label=\"/\"];\n"
           "\t10262081733803098986 [function=\"main\",module=\"/bin/prog\",label=\"main\"];\n"
           "\t6378259874460885484 [function=\"a\",module=\"/bin/prog\",label=\"a\"];\n"
           "\t10360189448901184813 [function=\"b\",module=\"/bin/prog\",label=\"b\"];\n"
           "\t15789743041488831100 [function=\"c\",module=\"/lib/libc.so.6\",label=\"c\"];\n"
           "\t0 -> 10262081733803098986 [bv=\"[0-5]\",count=6,label=\"6:[0-5]\"];\n"
           "\t10262081733803098986 -> 6378259874460885484 [bv=\"[0-5]\",count=6,"
           "label=\"6:[0-5]\"];\n"
           "\t6378259874460885484 -> 10360189448901184813 [bv=\"[0-1,3,5]\",count=4,"
           "label=\"4:[0-1,3,5]\"];\n"
           "\t6378259874460885484 -> 15789743041488831100 [bv=\"[2,4]\",count=2,"
           "label=\"2:[2,4]\"];\n"
           "}\n");
    free(s);
    sw_tree_free(t);
}

static void
test_tree_folded_has_one_sorted_line_a_path_with_its_count(void **state)
{
    (void)state;
    struct sw_tree *t = six_threads();
    char *s = written(t, SW_TREE_FOLDED);
    assert_string_equal(s, "main;a;b 4\nmain;a;c 2\n");
    free(s);
    sw_tree_free(t);
}

static void
test_tree_samples_count_paths_and_or_task_sets(void **state)
{
    (void)state;
    struct sw_tree *t;
    size_t t0, t1;
    assert_int_equal(sw_tree_new(&t), 0);
    assert_int_equal(sw_tree_add_task(t, NULL, 0, NULL, &t0), 0);
    assert_int_equal(sw_tree_add_task(t, NULL, 0, NULL, &t1), 0);
    /* A profile: task 0 seen 70 times in b, 20 in a itself; task 1 10 in c. */
    assert_int_equal(sw_tree_add_path(t, t0, path_b, 3, 70), 0);
    assert_int_equal(sw_tree_add_path(t, t0, path_b, 2, 20), 0);
    assert_int_equal(sw_tree_add_path(t, t1, path_c, 3, 10), 0);
    char *s = written(t, SW_TREE_FOLDED);
    assert_string_equal(s, "main;a 20\nmain;a;b 70\nmain;a;c 10\n");
    free(s);
    s = written(t, SW_TREE_JSON);
    assert_non_null(strstr(s, "{\"task\": 0, \"target\": null, \"pid\": null, \"thread\": null}"));
    assert_non_null(strstr(s, "{\"function\": \"/\", \"count\": 100, \"tasks\": \"[0-1]\""));
    assert_non_null(strstr(s, "{\"function\": \"a\", \"module\": \"/bin/prog\", \"count\": 100, "
                              "\"tasks\": \"[0-1]\""));
    assert_non_null(strstr(s, "{\"function\": \"b\", \"module\": \"/bin/prog\", \"count\": 70, "
                              "\"tasks\": \"[0]\""));
    assert_non_null(strstr(s, "{\"tasks\": \"[0]\", \"count\": 20, \"path\": [\"main\", \"a\"]}"));
    free(s);
    sw_tree_free(t);
}

static void
test_tree_children_ordered_by_count_then_name(void **state)
{
    (void)state;
    static const struct sw_tree_frame y[] = { { "y", NULL, 0 } }, x[] = { { "x", NULL, 0 } },
                                      z[] = { { "z", NULL, 0 } };
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(sw_tree_add_task(t, "t", 1, NULL, NULL), 0);
    assert_int_equal(sw_tree_add_path(t, 0, y, 1, 1), 0);
    assert_int_equal(sw_tree_add_path(t, 1, x, 1, 1), 0);
    assert_int_equal(sw_tree_add_path(t, 2, z, 1, 1), 0);
    assert_int_equal(sw_tree_add_path(t, 3, z, 1, 1), 0);
    char *s = written(t, SW_TREE_JSON);
    char *pz = strstr(s, "\"z\""), *px = strstr(s, "\"x\""), *py = strstr(s, "\"y\"");
    assert_true(pz != NULL && px != NULL && py != NULL);
    assert_true(pz < px && px < py);
    free(s);
    sw_tree_free(t);
}

static void
test_tree_task_ranges_join_in_any_order(void **state)
{
    (void)state;
    struct sw_rangeset s = { 0 };
    static const size_t order[] = { 5, 9, 0, 2, 7, 1, 3, 8, 2, 20, 19 };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        assert_int_equal(sw_rangeset_add(&s, order[i]), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sw_rangeset_write(&s, f);
    fclose(f);
    assert_string_equal(buf, "[0-3,5,7-9,19-20]");
    assert_true(sw_rangeset_has(&s, 8));
    assert_false(sw_rangeset_has(&s, 4));
    assert_false(sw_rangeset_has(&s, 21));
    /* 4 and 6 bridge three ranges into one. */
    assert_int_equal(sw_rangeset_add(&s, 4), 0);
    assert_int_equal(sw_rangeset_add(&s, 6), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.r[0].lo, 0);
    assert_int_equal(s.r[0].hi, 9);
    free(buf);
    sw_rangeset_fini(&s);
}

static void
test_tree_million_tasks_in_two_states_keep_few_ranges(void **state)
{
    (void)state;
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    for (size_t i = 0; i < 1000000; i++) {
        size_t task;
        assert_int_equal(sw_tree_add_task(t, "job", 1000 + (int64_t)(i / 4), NULL, &task), 0);
        assert_int_equal(sw_tree_add_path(t, task, i < 999990 ? path_b : path_c, 3, 1), 0);
    }
    assert_int_equal(t->root.tasks.n, 1);
    char *s = written(t, SW_TREE_FOLDED);
    assert_string_equal(s, "main;a;b 999990\nmain;a;c 10\n");
    free(s);
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(sw_tree_write(t, SW_TREE_JSON, f), 0);
    assert_int_equal(sw_tree_write(t, SW_TREE_DOT, f), 0);
    fclose(f);
    sw_tree_free(t);
}

static void
test_tree_frames_without_function_are_named_by_pc(void **state)
{
    (void)state;
    static const struct sw_tree_frame p[] = {
        { "main", PROG, 0x1000 },
        { NULL, NULL, 0x7f0012 },
        { "Box<int>::put(int) const", PROG, 0x1300 },
        { "odd;name", NULL, 0 },
    };
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    assert_int_equal(sw_tree_add_task(t, NULL, 0, NULL, NULL), 0);
    assert_int_equal(sw_tree_add_path(t, 0, p, 4, 1), 0);
    char *s = written(t, SW_TREE_FOLDED);
    assert_string_equal(s, "main;0x7f0012;Box<int>::put(int) const;odd\\x3bname 1\n");
    free(s);
    s = written(t, SW_TREE_DOT);
    /* Record labels escape what shapes a record. */
    assert_non_null(strstr(s, "label=\"Box\\<int\\>::put(int) const\""));
    assert_non_null(strstr(s, "[function=\"0x7f0012\",module=\"(null)\",label=\"0x7f0012\"]"));
    free(s);
    sw_tree_free(t);
}

/* Names from the target may hold any bytes: the JSON stays valid UTF-8. */
static void
test_tree_json_names_that_are_not_utf8_become_replacement_characters(void **state)
{
    (void)state;
    static const struct sw_tree_frame p[] = {
        { "main", PROG, 0x1000 },
        { "caf\xc3\xa9", NULL, 0 },      /* UTF-8: kept */
        { "bad\xff\xc3(\x7f", NULL, 0 }, /* 0xff, a cut sequence, DEL */
        { "over\xc0\xaflong", NULL, 0 }, /* an overlong '/' */
        { "sur\xed\xa0\x80rogate", NULL, 0 },
    };
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    assert_int_equal(sw_tree_add_task(t, "t\x80", 0, NULL, NULL), 0);
    assert_int_equal(sw_tree_add_path(t, 0, p, 5, 1), 0);
    char *s = written(t, SW_TREE_JSON);
    assert_non_null(strstr(s, "\"caf\xc3\xa9\""));
    assert_non_null(strstr(s, "\"bad\\ufffd\\ufffd(\\u007f\""));
    assert_non_null(strstr(s, "\"over\\ufffd\\ufffdlong\""));
    assert_non_null(strstr(s, "\"sur\\ufffd\\ufffd\\ufffdrogate\""));
    assert_non_null(strstr(s, "\"t\\ufffd\""));
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        assert_true(*c < 0x80 || (c[0] == 0xc3 && c[1] == 0xa9) || (c[-1] == 0xc3 && c[0] == 0xa9));
    free(s);
    sw_tree_free(t);
}

static void
test_tree_merge_equals_one_tree_of_all_tasks(void **state)
{
    (void)state;
    struct sw_tree *all = six_threads(), *lo, *hi;
    assert_int_equal(sw_tree_new(&lo), 0);
    assert_int_equal(sw_tree_new(&hi), 0);
    for (size_t i = 0; i < 6; i++) {
        struct sw_tree *part = i < 3 ? lo : hi;
        char thread[16];
        size_t task;
        snprintf(thread, sizeof thread, "p64.%zx", 0x65 + i);
        assert_int_equal(sw_tree_add_task(part, "127.0.0.1:2345", 100, thread, &task), 0);
        const struct sw_tree_frame *p = i == 2 || i == 4 ? path_c : path_b;
        assert_int_equal(sw_tree_add_path(part, task, p, 3, 1), 0);
    }
    assert_int_equal(sw_tree_merge(lo, hi), 0);
    assert_int_equal(sw_tree_tasks(lo), 6);
    char *a = written(all, SW_TREE_JSON), *b = written(lo, SW_TREE_JSON);
    assert_string_equal(a, b);
    free(a);
    free(b);
    a = written(all, SW_TREE_DOT);
    b = written(lo, SW_TREE_DOT);
    assert_string_equal(a, b);
    free(a);
    free(b);
    sw_tree_free(all);
    sw_tree_free(lo);
    sw_tree_free(hi);
}

static void
test_tree_bad_task_and_format_are_einval(void **state)
{
    (void)state;
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    assert_int_equal(sw_tree_add_path(t, 0, path_b, 3, 1), SW_EINVAL);
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(sw_tree_write(t, (enum sw_tree_format)99, f), SW_EINVAL);
    /* An empty tree is a root alone. */
    assert_int_equal(sw_tree_write(t, SW_TREE_FOLDED, f), 0);
    fclose(f);
    char *s = written(t, SW_TREE_JSON);
    assert_string_equal(s, "{\"version\": 1, \"tasks\": 0, \"tasks_index\": [],\n"
                           " \"tree\": {\"function\": \"/\", \"count\": 0, \"tasks\": \"[]\", "
                           "\"children\": []},\n \"classes\": []}\n");
    free(s);
    sw_tree_free(t);
    sw_tree_free(NULL);
}

static void
test_tree_deep_paths_need_no_deep_recursion(void **state)
{
    (void)state;
    enum { DEPTH = 200000 };
    struct sw_tree_frame *p = calloc(DEPTH, sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < DEPTH; i++)
        p[i] = (struct sw_tree_frame){ "recurse", PROG, 0x1000 };
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    assert_int_equal(sw_tree_add_task(t, NULL, 0, NULL, NULL), 0);
    assert_int_equal(sw_tree_add_path(t, 0, p, DEPTH, 1), 0);
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(sw_tree_write(t, SW_TREE_JSON, f), 0);
    assert_int_equal(sw_tree_write(t, SW_TREE_DOT, f), 0);
    assert_int_equal(sw_tree_write(t, SW_TREE_FOLDED, f), 0);
    fclose(f);
    sw_tree_free(t);
    free(p);
}

/* Build the six-thread tree with allocation N failing: every call succeeds
 * or fails with SW_ENOMEM, and what is written then shows only the paths
 * that were added whole. */
static void
test_tree_every_allocation_fails_cleanly(void **state)
{
    (void)state;
    char *want = NULL;
    for (unsigned long n = 1;; n++) {
        struct sw_tree *t = NULL;
        size_t added = 0;
        sw_test_fail_alloc_at(n);
        int rc = sw_tree_new(&t);
        for (size_t i = 0; rc == 0 && i < 6; i++) {
            size_t task;
            rc = sw_tree_add_task(t, "127.0.0.1:2345", 100, "p64.65", &task);
            if (rc == 0)
                rc = sw_tree_add_path(t, task, i == 2 || i == 4 ? path_c : path_b, 3, 1);
            if (rc == 0)
                added++;
        }
        unsigned long used = sw_test_alloc_count();
        sw_test_fail_alloc_at(0);
        if (rc == 0) {
            assert_int_equal(added, 6);
            free(want);
            sw_tree_free(t);
            break;
        }
        assert_int_equal(rc, SW_ENOMEM);
        if (t != NULL) {
            char *s = written(t, SW_TREE_FOLDED);
            /* Only whole paths: counts add up to the paths added. */
            unsigned long sum = 0;
            for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
                sum += strtoul(strrchr(line, ' ') + 1, NULL, 10);
            assert_int_equal(sum, added);
            free(s);
        }
        sw_tree_free(t);
        assert_true(used >= n - 1);
        assert_true(n < 10000);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_paths_merge_into_one_prefix_tree_json),
        cmocka_unit_test(test_tree_dot_is_stats_format_with_path_hash_ids_and_task_ranges),
        cmocka_unit_test(test_tree_folded_has_one_sorted_line_a_path_with_its_count),
        cmocka_unit_test(test_tree_samples_count_paths_and_or_task_sets),
        cmocka_unit_test(test_tree_children_ordered_by_count_then_name),
        cmocka_unit_test(test_tree_task_ranges_join_in_any_order),
        cmocka_unit_test(test_tree_million_tasks_in_two_states_keep_few_ranges),
        cmocka_unit_test(test_tree_frames_without_function_are_named_by_pc),
        cmocka_unit_test(test_tree_json_names_that_are_not_utf8_become_replacement_characters),
        cmocka_unit_test(test_tree_merge_equals_one_tree_of_all_tasks),
        cmocka_unit_test(test_tree_bad_task_and_format_are_einval),
        cmocka_unit_test(test_tree_deep_paths_need_no_deep_recursion),
        cmocka_unit_test(test_tree_every_allocation_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
