/* tests/unit/render/test_tree_pack.c -- the merged tree packed and merged back: rspwalk-mpi's wire.
 *
 * A packed tree read back writes the same documents as the tree; packed
 * subtrees merged in order number their tasks one after the other (STAT's
 * remap) and equal one tree of every task; count+rep keeps representatives;
 * bytes that are not a packed tree (cut, flipped, forged) are SW_EPROTO.
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
    { "a", PROG, 0x1104 },
    { "c", LIBC, 0x7000 },
};
/* A frame without function or module: named by its pc. */
static const struct sw_tree_frame path_pc[] = {
    { "main", PROG, 0x1000 },
    { NULL, NULL, 0x401136 },
};

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

static void
assert_same_documents(const struct sw_tree *a, const struct sw_tree *b)
{
    static const enum sw_tree_format formats[] = { SW_TREE_JSON, SW_TREE_DOT, SW_TREE_FOLDED };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        char *x = written(a, formats[i]), *y = written(b, formats[i]);
        assert_string_equal(x, y);
        free(x);
        free(y);
    }
}

/* Task I of N of target TARGET (NULL: none): path b, c or pc by I. */
static void
add_tasks(struct sw_tree *t, const char *target, size_t first, size_t n)
{
    for (size_t i = first; i < first + n; i++) {
        char thread[24];
        size_t task;
        snprintf(thread, sizeof thread, "p64.%zx", 0x65 + i);
        assert_int_equal(sw_tree_add_task(t, target, i % 5 == 4 ? -7 : 100 + (int64_t)i / 3,
                                          i % 7 == 6 ? NULL : thread, &task),
                         0);
        const struct sw_tree_frame *p = i % 3 == 0 ? path_b : i % 3 == 1 ? path_c : path_pc;
        assert_int_equal(sw_tree_add_path(t, task, p, p == path_pc ? 2 : 3, 1 + i % 2), 0);
    }
}

static struct sw_tree *
sample_tree(void)
{
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    add_tasks(t, "127.0.0.1:2345", 0, 5);
    add_tasks(t, NULL, 5, 3);
    add_tasks(t, "127.0.0.1:2346", 8, 6);
    return t;
}

static void
packed(const struct sw_tree *t, uint8_t **buf, size_t *len)
{
    void *b;
    assert_int_equal(sw_tree_pack(t, &b, len), 0);
    *buf = b;
}

static void
test_tree_pack_read_back_writes_the_same_documents(void **state)
{
    (void)state;
    struct sw_tree *t = sample_tree(), *u = NULL;
    uint8_t *buf;
    size_t len;
    struct sw_errbuf err = { 0 };

    packed(t, &buf, &len);
    assert_int_equal(sw_tree_unpack(buf, len, &u, &err), 0);
    assert_int_equal(sw_tree_tasks(u), 14);
    assert_same_documents(t, u);
    free(buf);
    sw_tree_free(u);
    sw_tree_free(t);
}

static void
test_tree_pack_of_an_empty_tree_reads_back_empty(void **state)
{
    (void)state;
    struct sw_tree *t, *u = NULL;
    uint8_t *buf;
    size_t len;

    assert_int_equal(sw_tree_new(&t), 0);
    packed(t, &buf, &len);
    assert_int_equal(sw_tree_unpack(buf, len, &u, NULL), 0);
    assert_same_documents(t, u);
    free(buf);
    sw_tree_free(u);
    sw_tree_free(t);
}

/* Three ranks' trees merged packed in rank order: their tasks are numbered
 * one after the other, as in one tree of every task added in that order. */
static void
test_tree_packed_subtrees_merge_with_tasks_remapped_in_order(void **state)
{
    (void)state;
    struct sw_tree *whole, *part[3], *merged;
    static const size_t first[3] = { 0, 4, 9 }, count[3] = { 4, 5, 5 };

    assert_int_equal(sw_tree_new(&whole), 0);
    add_tasks(whole, "127.0.0.1:2345", 0, 14);
    assert_int_equal(sw_tree_new(&merged), 0);
    for (size_t r = 0; r < 3; r++) {
        uint8_t *buf;
        size_t len;
        assert_int_equal(sw_tree_new(&part[r]), 0);
        add_tasks(part[r], "127.0.0.1:2345", first[r], count[r]);
        packed(part[r], &buf, &len);
        assert_int_equal(sw_tree_merge_packed(merged, buf, len, NULL), 0);
        free(buf);
        sw_tree_free(part[r]);
    }
    assert_same_documents(whole, merged);
    /* Task 9 is rank 2's task 0: path b (9 % 3 == 0), in b's task set. */
    char *dot = written(merged, SW_TREE_DOT);
    assert_non_null(strstr(dot, "bv=\"[0,3,6,9,12]\""));
    free(dot);
    sw_tree_free(whole);
    sw_tree_free(merged);
}

static void
test_tree_countrep_keeps_a_representative_and_the_counts(void **state)
{
    (void)state;
    struct sw_tree *a, *b, *u = NULL;
    uint8_t *buf;
    size_t len;

    assert_int_equal(sw_tree_new(&a), 0);
    assert_int_equal(sw_tree_set_countrep(a), 0);
    add_tasks(a, NULL, 0, 6);
    assert_int_equal(sw_tree_set_countrep(a), SW_EINVAL); /* paths already there */
    assert_int_equal(sw_tree_new(&b), 0);
    add_tasks(b, NULL, 6, 6);
    packed(a, &buf, &len);
    /* A count+rep tree merged into a full one makes it count+rep. */
    assert_int_equal(sw_tree_merge_packed(b, buf, len, NULL), 0);
    free(buf);
    char *json = written(b, SW_TREE_JSON);
    /* main: every task's count (1 + i % 2 over 12 tasks: 18), task 0 its representative. */
    assert_non_null(strstr(json,
                           "{\"function\": \"main\", \"module\": \"/bin/prog\", \"count\": 18, "
                           "\"tasks\": \"[0]\", \"rep\": 0"));
    free(json);
    packed(b, &buf, &len);
    assert_int_equal(sw_tree_unpack(buf, len, &u, NULL), 0);
    assert_same_documents(b, u);
    char *dot = written(u, SW_TREE_DOT);
    assert_non_null(strstr(dot, ",rep=0,label=\"18:[0]...\""));
    free(dot);
    free(buf);
    sw_tree_free(a);
    sw_tree_free(b);
    sw_tree_free(u);
}

static void
test_tree_pack_every_cut_is_eproto_naming_the_offset(void **state)
{
    (void)state;
    struct sw_tree *t = sample_tree();
    uint8_t *buf;
    size_t len;

    packed(t, &buf, &len);
    for (size_t n = 0; n < len; n++) {
        struct sw_tree *u = NULL;
        struct sw_errbuf err = { 0 };
        uint8_t *copy = malloc(n + 1); /* exactly N bytes readable, for ASan */
        memcpy(copy, buf, n);
        assert_int_equal(sw_tree_unpack(copy, n, &u, &err), SW_EPROTO);
        assert_null(u);
        assert_non_null(strstr(err.msg, "reading a packed tree: "));
        if (n >= 4)
            assert_non_null(strstr(err.msg, " at offset "));
        free(copy);
    }
    free(buf);
    sw_tree_free(t);
}

/* Every byte flipped to every value: read back or refused, never a crash,
 * a leak or an out-of-bounds read (ASan), and never a task beyond the
 * tree's. */
static void
test_tree_pack_every_changed_byte_is_read_or_refused(void **state)
{
    (void)state;
    struct sw_tree *t = sample_tree();
    uint8_t *buf;
    size_t len;

    packed(t, &buf, &len);
    for (size_t i = 0; i < len; i++) {
        uint8_t keep = buf[i];
        for (unsigned v = 0; v < 256; v += (i < 48 ? 1 : 37)) {
            struct sw_tree *u = NULL;
            buf[i] = (uint8_t)v;
            int rc = sw_tree_unpack(buf, len, &u, NULL);
            assert_true(rc == 0 || rc == SW_EPROTO);
            if (rc == 0) {
                char *s = written(u, SW_TREE_JSON);
                free(s);
                sw_tree_free(u);
            }
        }
        buf[i] = keep;
    }
    free(buf);
    sw_tree_free(t);
}

static void
test_tree_pack_forged_counts_and_ranges_are_refused(void **state)
{
    (void)state;
    struct sw_errbuf err = { 0 };
    struct sw_tree *u = NULL;
    /* 2^63 targets in 14 bytes. */
    static const uint8_t many_targets[] = { 'S',  'W',  'T',  '1',  0,    0x80, 0x80,
                                            0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40 };
    assert_int_equal(sw_tree_unpack(many_targets, sizeof many_targets, &u, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "more targets than the bytes left could hold"));
    /* No targets, one task (no target, pid 0, no thread), root: count 1,
     * self 1, tasks {0..1} (beyond the one task). */
    static const uint8_t beyond[] = { 'S', 'W', 'T', '1', 0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0 };
    assert_int_equal(sw_tree_unpack(beyond, sizeof beyond, &u, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "a task range beyond the tree's tasks at offset"));
    /* The same with tasks {0}: well formed. */
    static const uint8_t good[] = { 'S', 'W', 'T', '1', 0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0 };
    assert_int_equal(sw_tree_unpack(good, sizeof good, &u, &err), 0);
    assert_int_equal(sw_tree_tasks(u), 1);
    sw_tree_free(u);
    /* Unknown flags; a number of 11 bytes. */
    static const uint8_t flags[] = { 'S', 'W', 'T', '1', 2, 0, 0, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(sw_tree_unpack(flags, sizeof flags, &u, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "unknown flags at offset 4"));
    static const uint8_t long_number[] = { 'S',  'W',  'T',  '1',  0xff, 0xff, 0xff, 0xff,
                                           0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    assert_int_equal(sw_tree_unpack(long_number, sizeof long_number, &u, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "a number longer than 64 bits"));
    assert_int_equal(sw_tree_unpack("SWT2", 4, &u, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "not one"));
    /* Trailing bytes. */
    uint8_t more[sizeof good + 1];
    memcpy(more, good, sizeof good);
    more[sizeof good] = 0;
    assert_int_equal(sw_tree_unpack(more, sizeof more, &u, &err), SW_EPROTO);
    assert_non_null(strstr(err.msg, "bytes after the last node"));
}

/* Reading back with allocation N failing: SW_ENOMEM and nothing leaked
 * (ASan), until enough allocations succeed. */
static void
test_tree_pack_every_allocation_fails_cleanly(void **state)
{
    (void)state;
    struct sw_tree *t = sample_tree();
    uint8_t *buf;
    size_t len;

    packed(t, &buf, &len);
    for (unsigned long n = 1;; n++) {
        struct sw_tree *u = NULL;
        void *again = NULL;
        size_t len2 = 0;
        sw_test_fail_alloc_at(n);
        int rc = sw_tree_unpack(buf, len, &u, NULL);
        int rc2 = sw_tree_pack(t, &again, &len2);
        sw_test_fail_alloc_at(0);
        assert_true(rc == 0 || rc == SW_ENOMEM);
        assert_true(rc2 == 0 || rc2 == SW_ENOMEM);
        free(again);
        sw_tree_free(u);
        if (rc == 0 && rc2 == 0)
            break;
        assert_true(n < 10000);
    }
    free(buf);
    sw_tree_free(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_pack_read_back_writes_the_same_documents),
        cmocka_unit_test(test_tree_pack_of_an_empty_tree_reads_back_empty),
        cmocka_unit_test(test_tree_packed_subtrees_merge_with_tasks_remapped_in_order),
        cmocka_unit_test(test_tree_countrep_keeps_a_representative_and_the_counts),
        cmocka_unit_test(test_tree_pack_every_cut_is_eproto_naming_the_offset),
        cmocka_unit_test(test_tree_pack_every_changed_byte_is_read_or_refused),
        cmocka_unit_test(test_tree_pack_forged_counts_and_ranges_are_refused),
        cmocka_unit_test(test_tree_pack_every_allocation_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
