/* tests/unit/dap/test_dap.c -- the DAP front door without a target (dap/).
 *
 * The framing (dap/wire.c) on whole, split, oversized and malformed input; printed
 * aggregates split into members (dap/value.c); and a session (dap/session.c) fed bytes
 * through a fake client: its responses, the error response for each kind of bad message,
 * attach refusing commands, devices and local sockets unless the configuration allows
 * them, and requests that need a target.  Real targets: tests/integration/run-dap.sh.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dap/dap.h"
#include "dap/session_internal.h"
#include "dap/wire.h"

/* ---- framing ------------------------------------------------------------------------- */

static void
push(struct dap_wire *w, const char *s)
{
    assert_int_equal(dap_wire_push(w, s, strlen(s)), 0);
}

static void
test_wire_message_split_anywhere_comes_out_whole(void **state)
{
    (void)state;
    const char *msg =
        "Content-Length: 7\r\nContent-Type: x\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}";
    for (size_t cut = 0; cut <= strlen(msg); cut++) {
        struct dap_wire w;
        const char *body;
        size_t len;
        char why[128];
        dap_wire_init(&w, 100);
        assert_int_equal(dap_wire_push(&w, msg, cut), 0);
        int got = 0;
        for (int pass = 0; pass < 2; pass++) {
            enum dap_wire_result r;
            while ((r = dap_wire_next(&w, &body, &len, why, sizeof why)) == DAP_WIRE_MESSAGE) {
                assert_string_equal(body, got == 0 ? "{\"a\":1}" : "{}");
                got++;
            }
            assert_int_equal(r, DAP_WIRE_MORE);
            if (pass == 0)
                push(&w, msg + cut);
        }
        assert_int_equal(got, 2);
        dap_wire_fini(&w);
    }
}

static void
expect_bad(const char *input, const char *why_part, const char *then)
{
    struct dap_wire w;
    const char *body;
    size_t len;
    char why[128] = "";
    dap_wire_init(&w, 100);
    push(&w, input);
    assert_int_equal(dap_wire_next(&w, &body, &len, why, sizeof why), DAP_WIRE_BAD);
    assert_non_null(strstr(why, why_part));
    /* In step again: the next good message comes out, nothing else before it. */
    push(&w, then);
    assert_int_equal(dap_wire_next(&w, &body, &len, why, sizeof why), DAP_WIRE_MESSAGE);
    assert_string_equal(body, "{}");
    assert_int_equal(dap_wire_next(&w, &body, &len, why, sizeof why), DAP_WIRE_MORE);
    dap_wire_fini(&w);
}

static void
test_wire_malformed_headers_are_reported_and_skipped(void **state)
{
    (void)state;
    const char *good = "Content-Length: 2\r\n\r\n{}";
    expect_bad("Content-Length: twelve\r\n\r\n{}", "not a number", good);
    expect_bad("Content-Type: x\r\n\r\n{}", "no Content-Length", good);
    expect_bad("Content-Length: 2\nX: y\r\n\r\n{}", "Name: value", good);
    /* A tail that may start the next header is kept. */
    expect_bad("garbage: x\r\nbad\r\n\r\nContent-Len", "Name: value", "gth: 2\r\n\r\n{}");
    expect_bad("garbage\r\n\r\n", "Name: value", good);
}

static void
test_wire_too_large_body_is_skipped_in_step(void **state)
{
    (void)state;
    /* The body arrives after the refusal, in pieces: dropped unread. */
    expect_bad("Content-Length: 150\r\n\r\n", "larger than the 100 bytes",
               "0123456789012345678901234567890123456789012345678901234567890123456789"
               "01234567890123456789012345678901234567890123456789012345678901234567890123456789"
               "Content-Length: 2\r\n\r\n{}");
}

static void
test_wire_endless_header_fails_after_4096_bytes(void **state)
{
    (void)state;
    struct dap_wire w;
    const char *body;
    size_t len;
    char why[128], junk[5000];
    memset(junk, 'a', sizeof junk - 1);
    junk[sizeof junk - 1] = '\0';
    dap_wire_init(&w, 100);
    push(&w, junk);
    assert_int_equal(dap_wire_next(&w, &body, &len, why, sizeof why), DAP_WIRE_BAD);
    assert_non_null(strstr(why, "4096"));
    assert_true(w.len < 16);
    dap_wire_fini(&w);
}

/* ---- printed aggregates ----------------------------------------------------------------- */

static void
test_value_split_structure_array_and_nesting(void **state)
{
    (void)state;
    struct dap_member *m;
    long n = dap_value_split("{x = 1, s = \"a, {b}\", p = {y = 2, z = 3}, c = 44 ','}", &m);
    assert_int_equal(n, 4);
    assert_string_equal(m[0].name, "x");
    assert_string_equal(m[0].value, "1");
    assert_string_equal(m[1].value, "\"a, {b}\"");
    assert_string_equal(m[2].name, "p");
    assert_string_equal(m[2].value, "{y = 2, z = 3}");
    assert_true(dap_value_expandable(m[2].value));
    assert_string_equal(m[3].value, "44 ','");
    dap_members_free(m, (size_t)n);

    n = dap_value_split("{1, 2, 0 <repeats 14 times>}", &m);
    assert_int_equal(n, 3);
    assert_string_equal(m[1].name, "[1]");
    assert_string_equal(m[2].value, "0 <repeats 14 times>");
    dap_members_free(m, (size_t)n);

    assert_int_equal(dap_value_split("42", &m), 0);
    assert_int_equal(dap_value_split("{}", &m), 0);
    assert_false(dap_value_expandable("0x401136 <main>"));
    assert_false(dap_value_expandable("{ }"));
}

/* ---- a session without a target ---------------------------------------------------------- */

struct client {
    char out[65536];
    size_t len;
};

static int
client_write(void *arg, const void *buf, size_t len)
{
    struct client *c = arg;
    assert_true(c->len + len < sizeof c->out);
    memcpy(c->out + c->len, buf, len);
    c->len += len;
    return 0;
}

/* The messages written so far, as a JSON array (caller decrefs); the buffer emptied. */
static json_t *
client_take(struct client *c)
{
    json_t *all = json_array();
    size_t at = 0;
    while (at < c->len) {
        unsigned n;
        int hl;
        assert_int_equal(sscanf(c->out + at, "Content-Length: %u\r\n\r\n%n", &n, &hl), 1);
        json_t *m = json_loadb(c->out + at + hl, n, 0, NULL);
        assert_non_null(m);
        json_array_append_new(all, m);
        at += (size_t)hl + n;
    }
    c->len = 0;
    return all;
}

static void
feed(struct dap_session *s, const char *body)
{
    char head[64];
    snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", strlen(body));
    dap_session_feed(s, head, strlen(head));
    dap_session_feed(s, body, strlen(body));
}

/* Feed BODY and expect one failed response whose message contains PART. */
static void
expect_error(struct dap_session *s, struct client *c, const char *body, const char *part)
{
    feed(s, body);
    json_t *all = client_take(c);
    assert_int_equal(json_array_size(all), 1);
    json_t *r = json_array_get(all, 0);
    assert_string_equal(json_string_value(json_object_get(r, "type")), "response");
    assert_false(json_is_true(json_object_get(r, "success")));
    const char *msg = json_string_value(json_object_get(r, "message"));
    if (strstr(msg, part) == NULL)
        fail_msg("'%s' does not contain '%s'", msg, part);
    assert_null(strchr(msg, '\n'));
    json_decref(all);
}

static void
test_session_answers_initialize_with_honest_capabilities(void **state)
{
    (void)state;
    struct client c = { .len = 0 };
    struct dap_session *s;
    assert_int_equal(dap_session_new(NULL, client_write, &c, &s), 0);
    feed(s, "{\"seq\": 1, \"type\": \"request\", \"command\": \"initialize\", \"arguments\": {}}");
    json_t *all = client_take(&c);
    json_t *r = json_array_get(all, 0);
    assert_true(json_is_true(json_object_get(r, "success")));
    assert_int_equal(json_integer_value(json_object_get(r, "request_seq")), 1);
    assert_int_equal(json_integer_value(json_object_get(r, "seq")), 1);
    json_t *caps = json_object_get(r, "body");
    assert_true(json_is_true(json_object_get(caps, "supportsReadMemoryRequest")));
    assert_false(json_is_true(json_object_get(caps, "supportTerminateDebuggee")));
    json_decref(all);
    /* Nothing attached: no threads, no frames; and disconnect ends the session. */
    feed(s, "{\"seq\": 2, \"type\": \"request\", \"command\": \"threads\"}");
    all = client_take(&c);
    assert_int_equal(json_array_size(json_object_get(
                         json_object_get(json_array_get(all, 0), "body"), "threads")),
                     0);
    json_decref(all);
    expect_error(s, &c, "{\"seq\": 3, \"type\": \"request\", \"command\": \"continue\"}",
                 "not attached");
    feed(s, "{\"seq\": 4, \"type\": \"request\", \"command\": \"disconnect\"}");
    assert_true(dap_session_ended(s));
    json_decref(client_take(&c));
    dap_session_free(s);
}

static void
test_session_answers_bad_messages_with_errors(void **state)
{
    (void)state;
    struct client c = { .len = 0 };
    struct dap_session *s;
    assert_int_equal(dap_session_new(NULL, client_write, &c, &s), 0);
    expect_error(s, &c, "{\"seq\": 1, \"type\": ", "not JSON");
    expect_error(s, &c, "[]", "not a JSON object");
    expect_error(s, &c, "{\"seq\": 1, \"seq\": 2, \"type\": \"request\", \"command\": \"x\"}",
                 "not JSON");
    expect_error(s, &c, "{\"seq\": -1, \"type\": \"request\", \"command\": \"threads\"}", "seq");
    expect_error(s, &c, "{\"seq\": 1, \"type\": \"response\", \"command\": \"threads\"}",
                 "\"type\" is not \"request\"");
    expect_error(s, &c, "{\"seq\": 1, \"type\": \"request\", \"command\": 3}", "no \"command\"");
    expect_error(s, &c, "{\"seq\": 1, \"type\": \"request\", \"command\": \"nope\"}",
                 "unknown or unsupported request 'nope'");
    expect_error(s, &c,
                 "{\"seq\": 1, \"type\": \"request\", \"command\": \"scopes\", \"arguments\": []}",
                 "not an object");
    expect_error(s, &c,
                 "{\"seq\": 1, \"type\": \"request\", \"command\": \"stackTrace\", "
                 "\"arguments\": {\"threadId\": 0}}",
                 "threadId");
    expect_error(s, &c,
                 "{\"seq\": 1, \"type\": \"request\", \"command\": \"readMemory\", "
                 "\"arguments\": {\"memoryReference\": \"0x10\", \"count\": 99999999}}",
                 "count");
    expect_error(s, &c, "{\"seq\": 1, \"type\": \"request\", \"command\": \"evaluate\"}",
                 "does not evaluate");
    assert_false(dap_session_ended(s));
    dap_session_free(s);
}

static void
test_session_attach_refuses_local_targets_unless_allowed(void **state)
{
    (void)state;
    struct client c = { .len = 0 };
    struct dap_session *s;
    assert_int_equal(dap_session_new(NULL, client_write, &c, &s), 0);
#define ATTACH_REQ                                                                                 \
    "{\"seq\": 1, \"type\": \"request\", \"command\": \"attach\", \"arguments\": {\"target\": "    \
    "\"%s\"}}"
    const char *refused[] = { "|gdbserver - /bin/true", "/dev/ttyS0@115200", "unix:/tmp/x.sock" };
    char body[256];
    for (size_t i = 0; i < 3; i++) {
        snprintf(body, sizeof body, ATTACH_REQ, refused[i]);
        expect_error(s, &c, body, "not allowed here");
    }
    expect_error(s, &c,
                 "{\"seq\": 1, \"type\": \"request\", \"command\": \"attach\", \"arguments\": {}}",
                 "either \"target\"");
    expect_error(s, &c,
                 "{\"seq\": 1, \"type\": \"request\", \"command\": \"attach\", "
                 "\"arguments\": {\"target\": 5}}",
                 "non-empty strings");
    expect_error(s, &c,
                 "{\"seq\": 1, \"type\": \"request\", \"command\": \"attach\", "
                 "\"arguments\": {\"id\": \"7\"}}",
                 "no registered targets");
    dap_session_free(s);

    /* Allowed: the command runs, and its failure is the attach's error. */
    struct dap_config cfg;
    dap_config_init(&cfg);
    cfg.allow_local = true;
    cfg.timeout_ms = 2000;
    assert_int_equal(dap_session_new(&cfg, client_write, &c, &s), 0);
    snprintf(body, sizeof body, ATTACH_REQ, "|true");
    feed(s, body);
    json_t *all = client_take(&c);
    const char *msg = json_string_value(json_object_get(json_array_get(all, 0), "message"));
    assert_non_null(msg);
    assert_null(strstr(msg, "not allowed"));
    json_decref(all);
    dap_session_free(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_message_split_anywhere_comes_out_whole),
        cmocka_unit_test(test_wire_malformed_headers_are_reported_and_skipped),
        cmocka_unit_test(test_wire_too_large_body_is_skipped_in_step),
        cmocka_unit_test(test_wire_endless_header_fails_after_4096_bytes),
        cmocka_unit_test(test_value_split_structure_array_and_nesting),
        cmocka_unit_test(test_session_answers_initialize_with_honest_capabilities),
        cmocka_unit_test(test_session_answers_bad_messages_with_errors),
        cmocka_unit_test(test_session_attach_refuses_local_targets_unless_allowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
