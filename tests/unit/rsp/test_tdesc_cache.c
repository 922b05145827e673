/* tests/unit/rsp/test_tdesc_cache.c -- target descriptions shared by sessions.
 *
 * Scripted QEMU-like stubs (target.xml with an xi:include) connect through
 * one cache: a hit sends target.xml only and gives the description a fresh
 * parse gives; another target.xml or qSupported reply misses.  Then the
 * bound, threads sharing one cache, and connects after one key at once
 * waiting for the first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rsp/session.h"
#include "rsp/tdesc_cache.h"
#include "rspwalk/rsp.h"
#include "tests/tools/fake_transport.h"
#include "tests/tools/session_check.h"

#define QSUP                                                                                       \
    "-> "                                                                                          \
    "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;xmlRegisters=i386\n"
/* QEMU's shape: PacketSize=1000, no no-ack mode, target.xml includes a core document. */
#define FEATS "PacketSize=1000;qXfer:features:read+;vContSupported+"
#define TARGET_XML                                                                                 \
    "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\"><target>"                   \
    "<architecture>aarch64</architecture><xi:include href=\"core.xml\"/>"                          \
    "<xi:include href=\"fpu.xml\"/></target>"
#define CORE_XML                                                                                   \
    "<?xml version=\"1.0\"?><feature name=\"org.gnu.gdb.aarch64.core\">"                           \
    "<reg name=\"x0\" bitsize=\"64\"/><reg name=\"x1\" bitsize=\"64\"/>"                           \
    "<reg name=\"sp\" bitsize=\"64\" type=\"data_ptr\" regnum=\"31\"/>"                            \
    "<reg name=\"pc\" bitsize=\"64\" type=\"code_ptr\"/></feature>"
#define FPU_XML                                                                                    \
    "<?xml version=\"1.0\"?><feature name=\"org.gnu.gdb.aarch64.fpu\">"                            \
    "<reg name=\"v0\" bitsize=\"128\" type=\"aarch64v\" regnum=\"34\"/>"                           \
    "<reg name=\"fpsr\" bitsize=\"32\"/></feature>"
#define FETCH_TARGET(xml) "-> qXfer:features:read:target.xml:0,ff0\n<- l" xml "\n"
#define FETCH_INCLUDES                                                                             \
    "-> qXfer:features:read:core.xml:0,ff0\n<- l" CORE_XML "\n"                                    \
    "-> qXfer:features:read:fpu.xml:0,ff0\n<- l" FPU_XML "\n"
#define PROLOGUE(feats) QSUP "<- " feats "\n-> ?\n<- T05thread:01;\n"

/* Connect to the stub SCRIPT plays through CACHE (may be NULL); check that
 * the session sent exactly what it says and took ROUND_TRIPS.  *TD: a copy
 * of its description (NULL if none); caller frees with rsp_tdesc_free. */
static void
connect_through(struct rsp_tdesc_cache *cache, const char *script, uint64_t round_trips,
                struct rsp_tdesc **td)
{
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 200;
    cfg.tdesc_cache = cache;
    struct fake_script *fs = fake_script_parse(script);
    assert_non_null(fs);
    struct rsp_session *s = NULL;
    struct sw_errbuf err = { 0, "" };
    int rc = rsp_session_connect(fake_transport_new(fs), &cfg, &s, &err);
    if (rc != 0)
        fail_msg("connect: %s / %s", err.msg, fake_script_error(fs));
    assert_int_equal(rsp_session_stats(s)->round_trips, round_trips);
    *td = NULL;
    if (rsp_session_tdesc(s) != NULL)
        assert_int_equal(rsp_tdesc_copy(rsp_session_tdesc(s), td), 0);
    fake_script_finish(s, fs, true);
}

static void
assert_str_or_null_equal(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static void
assert_tdesc_equal(const struct rsp_tdesc *a, const struct rsp_tdesc *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_str_or_null_equal(a->arch, b->arch);
    assert_str_or_null_equal(a->osabi, b->osabi);
    assert_int_equal(a->nregs, b->nregs);
    assert_int_equal(a->g_size, b->g_size);
    for (size_t i = 0; i < a->nregs; i++) {
        assert_string_equal(a->regs[i].name, b->regs[i].name);
        assert_string_equal(a->regs[i].feature, b->regs[i].feature);
        assert_str_or_null_equal(a->regs[i].type, b->regs[i].type);
        assert_int_equal(a->regs[i].regnum, b->regs[i].regnum);
        assert_int_equal(a->regs[i].bitsize, b->regs[i].bitsize);
        assert_int_equal(a->regs[i].offset, b->regs[i].offset);
    }
}

static void
assert_stats(struct rsp_tdesc_cache *c, uint64_t hits, uint64_t misses, size_t entries)
{
    struct rsp_tdesc_cache_stats st;
    rsp_tdesc_cache_stats(c, &st);
    assert_int_equal(st.hits, hits);
    assert_int_equal(st.misses, misses);
    assert_int_equal(st.entries, entries);
}

static void
test_tdesc_cache_hit_skips_includes_and_equals_a_fresh_parse(void **state)
{
    (void)state;
    struct rsp_tdesc_cache *c;
    struct rsp_tdesc *first, *second, *fresh;
    assert_int_equal(rsp_tdesc_cache_new(0, &c), 0);
    const char *full = PROLOGUE(FEATS) FETCH_TARGET(TARGET_XML) FETCH_INCLUDES;
    const char *cached = PROLOGUE(FEATS) FETCH_TARGET(TARGET_XML);
    connect_through(c, full, 5, &first);
    assert_stats(c, 0, 1, 1);
    connect_through(c, cached, 3, &second); /* the includes are not asked for */
    connect_through(c, cached, 3, &fresh);
    assert_stats(c, 2, 1, 1);
    rsp_tdesc_free(fresh);
    connect_through(NULL, full, 5, &fresh);
    assert_int_equal(first->nregs, 6);
    assert_string_equal(first->regs[2].name, "sp");
    assert_int_equal(first->regs[4].regnum, 34);
    assert_int_equal(first->g_size, 4 * 8 + 16 + 4);
    assert_tdesc_equal(second, fresh);
    assert_tdesc_equal(first, fresh);
    rsp_tdesc_free(first);
    rsp_tdesc_free(second);
    rsp_tdesc_free(fresh);
    rsp_tdesc_cache_free(c);
}

static void
test_tdesc_cache_other_target_xml_or_qsupported_misses(void **state)
{
    (void)state;
    struct rsp_tdesc_cache *c;
    struct rsp_tdesc *td;
    assert_int_equal(rsp_tdesc_cache_new(0, &c), 0);
    connect_through(c, PROLOGUE(FEATS) FETCH_TARGET(TARGET_XML) FETCH_INCLUDES, 5, &td);
    rsp_tdesc_free(td);
    /* One more byte in target.xml (a trailing newline): fetched and parsed again. */
    connect_through(c, PROLOGUE(FEATS) FETCH_TARGET(TARGET_XML "\\x0a") FETCH_INCLUDES, 5, &td);
    assert_int_equal(td->nregs, 6);
    rsp_tdesc_free(td);
    assert_stats(c, 0, 2, 2);
    /* Another stub kind with the same target.xml. */
    connect_through(c, PROLOGUE(FEATS ";QPassSignals+") FETCH_TARGET(TARGET_XML) FETCH_INCLUDES, 5,
                    &td);
    rsp_tdesc_free(td);
    assert_stats(c, 0, 3, 3);
    /* And each of the three now hits. */
    connect_through(c, PROLOGUE(FEATS ";QPassSignals+") FETCH_TARGET(TARGET_XML), 3, &td);
    rsp_tdesc_free(td);
    connect_through(c, PROLOGUE(FEATS) FETCH_TARGET(TARGET_XML "\\x0a"), 3, &td);
    rsp_tdesc_free(td);
    assert_stats(c, 2, 3, 3);
    rsp_tdesc_cache_free(c);
}

static void
test_tdesc_cache_keeps_no_failed_fetch(void **state)
{
    (void)state;
    struct rsp_tdesc_cache *c;
    struct rsp_tdesc *td;
    assert_int_equal(rsp_tdesc_cache_new(0, &c), 0);
    /* An include the stub refuses: no description, and nothing cached. */
    const char *refused =
        PROLOGUE(FEATS) FETCH_TARGET(TARGET_XML) "-> qXfer:features:read:core.xml:0,ff0\n<- E01\n";
    connect_through(c, refused, 4, &td);
    assert_null(td);
    assert_stats(c, 0, 1, 0);
    connect_through(c, PROLOGUE(FEATS) FETCH_TARGET(TARGET_XML) FETCH_INCLUDES, 5, &td);
    assert_non_null(td);
    rsp_tdesc_free(td);
    assert_stats(c, 0, 2, 1);
    rsp_tdesc_cache_free(c);
}

/* ---- the bound, and threads -------------------------------------------------- */

static const char *const docs[] = {
    "<target><architecture>a</architecture><feature name=\"f\"><reg name=\"r0\" "
    "bitsize=\"64\"/></feature></target>",
    "<target><architecture>b</architecture><feature name=\"f\"><reg name=\"r0\" "
    "bitsize=\"32\"/><reg name=\"r1\" bitsize=\"32\"/></feature></target>",
    "<target><feature name=\"g\"><reg name=\"x\" bitsize=\"8\" regnum=\"3\"/><reg name=\"y\" "
    "bitsize=\"16\" type=\"int\"/></feature></target>",
};
#define NDOCS (sizeof docs / sizeof docs[0])

static struct rsp_tdesc *
parse(size_t i)
{
    struct rsp_tdesc *td;
    struct sw_errbuf err = { 0, "" };
    assert_int_equal(rsp_tdesc_parse(docs[i], strlen(docs[i]), NULL, NULL, &td, &err), 0);
    return td;
}

static int
get(struct rsp_tdesc_cache *c, size_t i, struct rsp_tdesc **td)
{
    struct rsp_tdesc_claim cl;
    int rc = rsp_tdesc_cache_get(c, &cl, "q", 1, docs[i], strlen(docs[i]), 0, td);
    rsp_tdesc_cache_release(c, &cl);
    return rc;
}

static void
put(struct rsp_tdesc_cache *c, size_t i, const struct rsp_tdesc *td)
{
    struct rsp_tdesc_claim cl;
    struct rsp_tdesc *got;
    if (rsp_tdesc_cache_get(c, &cl, "q", 1, docs[i], strlen(docs[i]), 0, &got) == 0)
        rsp_tdesc_free(got);
    assert_int_equal(rsp_tdesc_cache_put(c, &cl, td), 0);
}

static void
test_tdesc_cache_is_bounded_least_recently_used_first(void **state)
{
    (void)state;
    struct rsp_tdesc_cache *c;
    struct rsp_tdesc *td[NDOCS], *got;
    assert_int_equal(rsp_tdesc_cache_new(2, &c), 0);
    for (size_t i = 0; i < NDOCS; i++)
        td[i] = parse(i);
    put(c, 0, td[0]);
    put(c, 1, td[1]);
    put(c, 1, td[1]);                     /* already there: kept once */
    assert_int_equal(get(c, 0, &got), 0); /* 0 is now the most recent */
    assert_tdesc_equal(got, td[0]);
    rsp_tdesc_free(got);
    put(c, 2, td[2]); /* evicts 1 */
    struct rsp_tdesc_cache_stats st;
    rsp_tdesc_cache_stats(c, &st);
    assert_int_equal(st.entries, 2);
    assert_int_equal(st.evictions, 1);
    assert_int_equal(get(c, 1, &got), SW_ENOENT);
    assert_null(got);
    for (size_t i = 0; i < NDOCS; i += 2) {
        assert_int_equal(get(c, i, &got), 0);
        assert_tdesc_equal(got, td[i]);
        rsp_tdesc_free(got);
    }
    /* The same target.xml under another qSupported reply is another key. */
    struct rsp_tdesc_claim cl;
    assert_int_equal(rsp_tdesc_cache_get(c, &cl, "r", 1, docs[0], strlen(docs[0]), 0, &got),
                     SW_ENOENT);
    assert_true(cl.claimed);
    rsp_tdesc_cache_release(c, &cl);
    assert_false(cl.claimed);
    for (size_t i = 0; i < NDOCS; i++)
        rsp_tdesc_free(td[i]);
    rsp_tdesc_cache_free(c);
    rsp_tdesc_cache_free(NULL);
}

struct worker {
    struct rsp_tdesc_cache *c;
    struct rsp_tdesc **want;
    unsigned seed;
    int bad; /* iterations whose description differed */
};

static bool
same(const struct rsp_tdesc *a, const struct rsp_tdesc *b)
{
    if (a->nregs != b->nregs || a->g_size != b->g_size || (a->arch == NULL) != (b->arch == NULL) ||
        (a->arch != NULL && strcmp(a->arch, b->arch) != 0))
        return false;
    for (size_t i = 0; i < a->nregs; i++)
        if (strcmp(a->regs[i].name, b->regs[i].name) != 0 ||
            a->regs[i].regnum != b->regs[i].regnum || a->regs[i].offset != b->regs[i].offset)
            return false;
    return true;
}

/* No cmocka asserts here: they are not thread-safe. */
static void *
work(void *arg)
{
    struct worker *w = arg;
    for (int k = 0; k < 2000; k++) {
        w->seed = w->seed * 1103515245u + 12345u;
        size_t i = (w->seed >> 16) % NDOCS;
        struct rsp_tdesc *td;
        struct rsp_tdesc_claim cl;
        struct sw_errbuf err = { 0, "" };
        if (rsp_tdesc_cache_get(w->c, &cl, "q", 1, docs[i], strlen(docs[i]), 1000, &td) ==
            SW_ENOENT) {
            if (rsp_tdesc_parse(docs[i], strlen(docs[i]), NULL, NULL, &td, &err) < 0 ||
                rsp_tdesc_cache_put(w->c, &cl, td) < 0) {
                w->bad++;
                rsp_tdesc_cache_release(w->c, &cl);
                rsp_tdesc_free(td);
                continue;
            }
        }
        w->bad += !same(td, w->want[i]);
        rsp_tdesc_free(td);
    }
    return NULL;
}

static void
test_tdesc_cache_threads_share_one_cache(void **state)
{
    (void)state;
    struct rsp_tdesc_cache *c;
    struct rsp_tdesc *want[NDOCS];
    assert_int_equal(rsp_tdesc_cache_new(2, &c), 0); /* smaller than the keys: evictions race */
    for (size_t i = 0; i < NDOCS; i++)
        want[i] = parse(i);
    pthread_t th[4];
    struct worker w[4];
    for (unsigned i = 0; i < 4; i++) {
        w[i] = (struct worker){ c, want, i + 1, 0 };
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].bad, 0);
    }
    struct rsp_tdesc_cache_stats st;
    rsp_tdesc_cache_stats(c, &st);
    assert_int_equal(st.hits + st.misses, 4 * 2000);
    assert_true(st.hits > 0 && st.evictions > 0);
    assert_int_equal(st.entries, 2);
    for (size_t i = 0; i < NDOCS; i++)
        rsp_tdesc_free(want[i]);
    rsp_tdesc_cache_free(c);
}

struct waiter {
    struct rsp_tdesc_cache *c;
    int wait_ms;
    int rc;
    bool claimed;
    struct rsp_tdesc *td;
};

static void *
wait_for(void *arg)
{
    struct waiter *w = arg;
    struct rsp_tdesc_claim cl;
    w->rc = rsp_tdesc_cache_get(w->c, &cl, "q", 1, docs[0], strlen(docs[0]), w->wait_ms, &w->td);
    w->claimed = cl.claimed;
    rsp_tdesc_cache_release(w->c, &cl);
    return NULL;
}

/* Wait until the cache has seen N waits. */
static void
await_waits(struct rsp_tdesc_cache *c, uint64_t n)
{
    struct rsp_tdesc_cache_stats st;
    for (int i = 0; i < 2000; i++) {
        rsp_tdesc_cache_stats(c, &st);
        if (st.waits >= n)
            return;
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    fail_msg("no connect waited");
}

static void
test_tdesc_cache_same_key_at_once_waits_for_the_first_fetch(void **state)
{
    (void)state;
    struct rsp_tdesc_cache *c;
    struct rsp_tdesc *td = parse(0), *got;
    struct rsp_tdesc_claim cl;
    assert_int_equal(rsp_tdesc_cache_new(0, &c), 0);
    /* The first claims the key; the second waits and gets its result. */
    assert_int_equal(rsp_tdesc_cache_get(c, &cl, "q", 1, docs[0], strlen(docs[0]), 0, &got),
                     SW_ENOENT);
    assert_true(cl.claimed);
    struct waiter w = { c, 5000, 1, false, NULL };
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_for, &w), 0);
    await_waits(c, 1);
    assert_int_equal(rsp_tdesc_cache_put(c, &cl, td), 0);
    assert_false(cl.claimed);
    pthread_join(th, NULL);
    assert_int_equal(w.rc, 0);
    assert_tdesc_equal(w.td, td);
    rsp_tdesc_free(w.td);
    rsp_tdesc_cache_free(c);

    /* A first that fails: the waiter claims the key itself. */
    assert_int_equal(rsp_tdesc_cache_new(0, &c), 0);
    assert_int_equal(rsp_tdesc_cache_get(c, &cl, "q", 1, docs[0], strlen(docs[0]), 0, &got),
                     SW_ENOENT);
    w = (struct waiter){ c, 5000, 1, false, NULL };
    assert_int_equal(pthread_create(&th, NULL, wait_for, &w), 0);
    await_waits(c, 1);
    rsp_tdesc_cache_release(c, &cl);
    pthread_join(th, NULL);
    assert_int_equal(w.rc, SW_ENOENT);
    assert_true(w.claimed);

    /* A first that takes too long: the waiter gives up, unclaimed. */
    assert_int_equal(rsp_tdesc_cache_get(c, &cl, "q", 1, docs[0], strlen(docs[0]), 0, &got),
                     SW_ENOENT);
    w = (struct waiter){ c, 30, 1, true, NULL };
    assert_int_equal(pthread_create(&th, NULL, wait_for, &w), 0);
    pthread_join(th, NULL);
    assert_int_equal(w.rc, SW_ENOENT);
    assert_false(w.claimed);
    assert_null(w.td);
    rsp_tdesc_cache_release(c, &cl);
    struct rsp_tdesc_cache_stats st;
    rsp_tdesc_cache_stats(c, &st);
    assert_int_equal(st.waits, 2);
    assert_int_equal(st.hits, 0);
    assert_int_equal(st.misses, 4);
    rsp_tdesc_free(td);
    rsp_tdesc_cache_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tdesc_cache_hit_skips_includes_and_equals_a_fresh_parse),
        cmocka_unit_test(test_tdesc_cache_other_target_xml_or_qsupported_misses),
        cmocka_unit_test(test_tdesc_cache_keeps_no_failed_fetch),
        cmocka_unit_test(test_tdesc_cache_is_bounded_least_recently_used_first),
        cmocka_unit_test(test_tdesc_cache_threads_share_one_cache),
        cmocka_unit_test(test_tdesc_cache_same_key_at_once_waits_for_the_first_fetch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
