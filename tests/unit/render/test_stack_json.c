/* tests/unit/render/test_stack_json.c -- the stack document and walks into a tree, over a fake
 * process.
 *
 * Two threads of a fake x86_64 process stopped in the known-prologue ELF
 * (tests/unit/data/x86_64_frames.S): their document has both walks, no
 * session statistics, and the tree fed by the same walks merges them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"

#define ELF   SW_TEST_DATA "/x86_64_frames.elf"
#define STACK 0x7fff0000u

/* A walker over threads 1 and 2, both stopped in savefp_func called from
 * the same caller chain. */
static struct sw_walker *
two_threads(void)
{
    static const sw_tid tids[] = { 1, 2 };
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(p, STACK, NULL, 0x1000);
    fake_proc_set_threads(p, tids, 2);
    for (sw_tid t = 1; t <= 2; t++) {
        sw_addr base = STACK + 0x400 * t, sp0 = base + 0x100, f1 = base + 0x120;
        fake_proc_set_reg(p, t, 16, 0x40101d); /* savefp_func + 1 */
        fake_proc_set_reg(p, t, 7, sp0);
        fake_proc_set_reg(p, t, 6, f1);
        fake_proc_put_word(p, sp0, f1);
        fake_proc_put_word(p, sp0 + 8, 0x401019);
        fake_proc_put_word(p, f1, 0);
        fake_proc_put_word(p, f1 + 8, 0x401007);
    }
    struct sw_walker_config cfg = { .exe = ELF };
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_walker_new(p, &cfg, &w, &err), 0);
    return w;
}

static void
test_stack_json_has_every_thread_and_feeds_the_tree(void **state)
{
    (void)state;
    static const sw_tid tids[] = { 1, 2 };
    struct sw_walker *w = two_threads();
    struct sw_tree *t;
    assert_int_equal(sw_tree_new(&t), 0);
    struct sw_render_opts o = { .target = "fake", .tree = t };
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_render_stacks_json(f, &o, w, tids, 2, &err), 0);
    fclose(f);
    static const char head[] = "{\"version\": 1, \"arch\": \"x86_64\", \"target\": \"fake\", "
                               "\"threads\": [\n  {\"id\": ";
    assert_true(strncmp(doc, head, strlen(head)) == 0);
    assert_non_null(strstr(doc, "\"function\": \"savefp_func\""));
    assert_non_null(strstr(doc, ",\n  {\"id\": "));
    assert_string_equal(doc + len - strlen("\n], \"stats\": null}\n"), "\n], \"stats\": null}\n");
    free(doc);

    /* The members alone, for a larger object. */
    struct sw_render_opts bare = { .target = "fake", .members_only = true };
    doc = NULL;
    f = open_memstream(&doc, &len);
    assert_int_equal(sw_render_stacks_json(f, &bare, w, tids, 2, &err), 0);
    fclose(f);
    assert_true(strncmp(doc, head + 1, strlen(head) - 1) == 0);
    assert_string_equal(doc + len - strlen("\n], \"stats\": null"), "\n], \"stats\": null");
    free(doc);

    /* The same walks in the tree: two tasks on one path. */
    assert_int_equal(sw_tree_tasks(t), 2);
    doc = NULL;
    f = open_memstream(&doc, &len);
    assert_int_equal(sw_tree_write(t, SW_TREE_FOLDED, f), 0);
    fclose(f);
    assert_non_null(strstr(doc, "savefp_func 2\n"));
    free(doc);

    /* And the tree alone, without a document. */
    struct sw_tree *t2;
    assert_int_equal(sw_tree_new(&t2), 0);
    assert_int_equal(sw_render_stacks_tree(t2, &o, w, tids, 2, NULL), 0);
    char *a = NULL, *b = NULL;
    f = open_memstream(&a, &len);
    sw_tree_write(t, SW_TREE_JSON, f);
    fclose(f);
    f = open_memstream(&b, &len);
    sw_tree_write(t2, SW_TREE_JSON, f);
    fclose(f);
    assert_string_equal(a, b);
    free(a);
    free(b);
    sw_tree_free(t2);
    sw_tree_free(t);
    sw_walker_free(w);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_json_has_every_thread_and_feeds_the_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
