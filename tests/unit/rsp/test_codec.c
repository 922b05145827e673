/* tests/unit/rsp/test_codec.c -- the RSP byte-pump decoder and the encoders.
 *
 * Pure codec only: checksums, acks, run-length, escapes, notifications,
 * garbage and oversize packets.  The session's answers (nak, retransmit)
 * are in test_session.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "rsp/codec.h"
#include "rspwalk/errors.h"

/* Feed all of S (LEN bytes) in chunks of STEP and collect the events. */
struct run {
    enum rsp_dec_event ev[16];
    char pkt[16][256];
    size_t n;
};

static void
feed(struct rsp_dec *d, const char *s, size_t len, size_t step, struct run *r)
{
    size_t off = 0;
    r->n = 0;
    while (off < len) {
        size_t chunk = len - off < step ? len - off : step;
        size_t used = 0;
        while (used < chunk) {
            enum rsp_dec_event ev;
            size_t n = rsp_dec_feed(d, (const uint8_t *)s + off + used, chunk - used, &ev);
            assert_true(n > 0 && n <= chunk - used);
            used += n;
            if (ev != RSP_DEC_NONE && r->n < 16) {
                r->ev[r->n] = ev;
                snprintf(r->pkt[r->n], sizeof r->pkt[0], "%s",
                         ev == RSP_DEC_PACKET || ev == RSP_DEC_NOTIFY ? (char *)d->pkt : "");
                r->n++;
            }
        }
        off += chunk;
    }
}

static void
feed_str(struct rsp_dec *d, const char *s, size_t step, struct run *r)
{
    feed(d, s, strlen(s), step, r);
}

static void
test_codec_checksum_is_sum_mod_256(void **state)
{
    (void)state;
    assert_int_equal(rsp_checksum("OK", 2), 0x9a);
    assert_int_equal(rsp_checksum("", 0), 0);
    assert_int_equal(rsp_checksum("qSupported", 10), 0x37);
}

static void
test_codec_frame_appends_lowercase_checksum(void **state)
{
    (void)state;
    char out[32];
    long n = rsp_frame("g", 1, out, sizeof out);
    assert_int_equal(n, 5);
    assert_memory_equal(out, "$g#67", 5);
    assert_int_equal(rsp_frame("", 0, out, sizeof out), 4);
    assert_memory_equal(out, "$#00", 4);
    assert_int_equal(rsp_frame("abc", 3, out, 6), -1);
}

static void
test_codec_good_packet_is_reported_with_payload(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed_str(&d, "+$OK#9a", 64, &r);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.ev[0], RSP_DEC_ACK);
    assert_int_equal(r.ev[1], RSP_DEC_PACKET);
    assert_string_equal(r.pkt[1], "OK");
    assert_int_equal(d.pkt_len, 2);
    rsp_dec_fini(&d);
}

static void
test_codec_packet_fed_one_byte_at_a_time_is_the_same(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed_str(&d, "$T05thread:p01.2b67;#a6-+", 1, &r);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.ev[0], RSP_DEC_PACKET);
    assert_string_equal(r.pkt[0], "T05thread:p01.2b67;");
    assert_int_equal(r.ev[1], RSP_DEC_NAK);
    assert_int_equal(r.ev[2], RSP_DEC_ACK);
    rsp_dec_fini(&d);
}

static void
test_codec_bad_checksum_is_reported_for_a_nak(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed_str(&d, "$OK#9b$OK#zz$OK#9a", 4, &r);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.ev[0], RSP_DEC_BAD_CHECKSUM);
    assert_int_equal(r.ev[1], RSP_DEC_BAD_CHECKSUM);
    assert_int_equal(r.ev[2], RSP_DEC_PACKET);
    assert_string_equal(r.pkt[2], "OK");
    rsp_dec_fini(&d);
}

static void
test_codec_checksum_digits_accept_upper_case(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed_str(&d, "$OK#9A", 64, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_PACKET);
    rsp_dec_fini(&d);
}

static void
test_codec_run_length_is_expanded_while_decoding(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    /* gdbserver's stop reply, as measured on gdbserver 13.1. */
    const char *p = "T0506:0*,;07:d0e6f*\"7f0* ;10:704bfef7ff7f0* ;thread:p32f4.32f4;core:1;";
    char frame[256];
    long n = rsp_frame(p, strlen(p), frame, sizeof frame);
    assert_true(n > 0);
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed(&d, frame, (size_t)n, 3, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_PACKET);
    assert_string_equal(r.pkt[0], "T0506:0000000000000000;07:d0e6ffffff7f0000;10:704bfef7ff7f0000;"
                                  "thread:p32f4.32f4;core:1;");
    rsp_dec_fini(&d);
}

static void
test_codec_run_of_seven_is_split_around_hash_and_dollar_counts(void **state)
{
    (void)state;
    /* A run of 7 would need count '#' (6+29=35) and 8 '$': encoders emit "0*\"00". */
    uint8_t out[32];
    assert_int_equal(rsp_rle_expand((const uint8_t *)"0*\"00", 5, out, sizeof out), 8);
    assert_memory_equal(out, "00000000", 8);
    assert_int_equal(rsp_rle_expand((const uint8_t *)"a*~", 3, out, sizeof out), -1);
    uint8_t big[128];
    assert_int_equal(rsp_rle_expand((const uint8_t *)"a*~", 3, big, sizeof big), 98);
    assert_int_equal(rsp_rle_expand((const uint8_t *)"x* ", 3, out, sizeof out), 4);
    assert_memory_equal(out, "xxxx", 4);
}

static void
test_codec_malformed_run_is_reported_as_bad_rle(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    char frame[64];
    uint8_t out[8];
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    /* '*' with nothing before it */
    long n = rsp_frame("*!abc", 5, frame, sizeof frame);
    feed(&d, frame, (size_t)n, 64, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_BAD_RLE);
    /* a count below ' ' */
    n = rsp_frame("a*\x10", 3, frame, sizeof frame);
    feed(&d, frame, (size_t)n, 64, &r);
    assert_int_equal(r.ev[0], RSP_DEC_BAD_RLE);
    /* '*' right before '#': the count is missing */
    feed_str(&d, "$a*#8b", 64, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_BAD_RLE);
    /* the decoder recovers for the next packet */
    feed_str(&d, "$OK#9a", 64, &r);
    assert_int_equal(r.ev[0], RSP_DEC_PACKET);
    rsp_dec_fini(&d);
    assert_int_equal(rsp_rle_expand((const uint8_t *)"*!", 2, out, sizeof out), -1);
    assert_int_equal(rsp_rle_expand((const uint8_t *)"a*", 2, out, sizeof out), -1);
    assert_int_equal(rsp_rle_expand((const uint8_t *)"a*#", 3, out, sizeof out), -1);
}

static void
test_codec_garbage_before_and_between_packets_is_skipped(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed_str(&d, "hello\r\n$OK#9a junk $E01#a6", 5, &r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.pkt[0], "OK");
    assert_string_equal(r.pkt[1], "E01");
    assert_int_equal(d.garbage, 13);
    rsp_dec_fini(&d);
}

static void
test_codec_dollar_inside_packet_restarts_the_packet(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed_str(&d, "$T05thr$OK#9a", 64, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_PACKET);
    assert_string_equal(r.pkt[0], "OK");
    rsp_dec_fini(&d);
}

static void
test_codec_oversize_packet_is_discarded_without_growing(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    char frame[300];
    char payload[200];
    memset(payload, 'a', sizeof payload);
    long n = rsp_frame(payload, sizeof payload, frame, sizeof frame);
    assert_int_equal(rsp_dec_init(&d, 64), 0);
    feed(&d, frame, (size_t)n, 7, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_OVERSIZE);
    assert_true(d.cap <= 65);
    /* a run-length that expands past the limit is oversize too */
    feed_str(&d, "$a*~a*~#00", 64, &r);
    assert_int_equal(r.ev[0], RSP_DEC_OVERSIZE);
    feed_str(&d, "$OK#9a", 64, &r);
    assert_int_equal(r.ev[0], RSP_DEC_PACKET);
    rsp_dec_fini(&d);
}

static void
test_codec_notification_is_reported_and_corrupt_one_ignored(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    char frame[64];
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    long n = rsp_frame("Stop:T05", 8, frame, sizeof frame);
    frame[0] = '%';
    feed(&d, frame, (size_t)n, 64, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_NOTIFY);
    assert_string_equal(r.pkt[0], "Stop:T05");
    feed_str(&d, "%oocd_keepalive:00#00$OK#9a", 64, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_PACKET);
    rsp_dec_fini(&d);
}

static void
test_codec_raw_interrupt_byte_is_reported_outside_packets_only(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    char frame[16];
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed_str(&d, "\x03", 64, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_INTERRUPT);
    long n = rsp_frame("a\x03z", 3, frame, sizeof frame);
    feed(&d, frame, (size_t)n, 64, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.ev[0], RSP_DEC_PACKET);
    assert_memory_equal(d.pkt, "a\x03z", 3);
    rsp_dec_fini(&d);
}

static void
test_codec_escapes_are_kept_by_decoder_and_undone_by_unescape(void **state)
{
    (void)state;
    struct rsp_dec d;
    struct run r;
    uint8_t bin[] = { 'l', '#', '$', '}', '*', 0x00, 'x' };
    uint8_t esc[32];
    char frame[64];
    long e = rsp_escape(bin, sizeof bin, esc, sizeof esc);
    assert_int_equal(e, 11);
    assert_memory_equal(esc, "l}\x03}\x04}]}\x0a\x00x", 11);
    assert_int_equal(rsp_escape(bin, sizeof bin, esc, 4), -1);
    long n = rsp_frame((const char *)esc, (size_t)e, frame, sizeof frame);
    assert_int_equal(rsp_dec_init(&d, 1024), 0);
    feed(&d, frame, (size_t)n, 2, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(d.pkt_len, 11);
    assert_memory_equal(d.pkt, esc, 11);
    assert_int_equal(rsp_unescape(d.pkt, d.pkt_len), (long)sizeof bin);
    assert_memory_equal(d.pkt, bin, sizeof bin);
    uint8_t lone[] = { 'a', '}' };
    assert_int_equal(rsp_unescape(lone, 2), -1);
    rsp_dec_fini(&d);
}

static void
test_codec_run_length_applies_before_unescape(void **state)
{
    (void)state;
    /* gdbserver escapes first, then run-length encodes the escaped stream:
     * "}\x03" then three more 0x03 bytes: "#\x03\x03\x03\x03" after both steps. */
    uint8_t out[16];
    long n = rsp_rle_expand((const uint8_t *)"}\x03*\x20", 4, out, sizeof out);
    assert_int_equal(n, 5);
    assert_int_equal(rsp_unescape(out, (size_t)n), 4);
    assert_memory_equal(out, "#\x03\x03\x03", 4);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec_checksum_is_sum_mod_256),
        cmocka_unit_test(test_codec_frame_appends_lowercase_checksum),
        cmocka_unit_test(test_codec_good_packet_is_reported_with_payload),
        cmocka_unit_test(test_codec_packet_fed_one_byte_at_a_time_is_the_same),
        cmocka_unit_test(test_codec_bad_checksum_is_reported_for_a_nak),
        cmocka_unit_test(test_codec_checksum_digits_accept_upper_case),
        cmocka_unit_test(test_codec_run_length_is_expanded_while_decoding),
        cmocka_unit_test(test_codec_run_of_seven_is_split_around_hash_and_dollar_counts),
        cmocka_unit_test(test_codec_malformed_run_is_reported_as_bad_rle),
        cmocka_unit_test(test_codec_garbage_before_and_between_packets_is_skipped),
        cmocka_unit_test(test_codec_dollar_inside_packet_restarts_the_packet),
        cmocka_unit_test(test_codec_oversize_packet_is_discarded_without_growing),
        cmocka_unit_test(test_codec_notification_is_reported_and_corrupt_one_ignored),
        cmocka_unit_test(test_codec_raw_interrupt_byte_is_reported_outside_packets_only),
        cmocka_unit_test(test_codec_escapes_are_kept_by_decoder_and_undone_by_unescape),
        cmocka_unit_test(test_codec_run_length_applies_before_unescape),
    };
    return cmocka_run_group_tests_name("codec", tests, NULL, NULL);
}
