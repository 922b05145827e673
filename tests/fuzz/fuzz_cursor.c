/* tests/fuzz/fuzz_cursor.c -- libFuzzer target for the sticky cursor and stop replies.
 *
 * The input is parsed as a stop reply, then walked with cursor operations
 * chosen by its first byte; no read may go past the end of the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/cursor.h"
#include "rspwalk/rsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly SIZE bytes, so ASan sees any over-read */
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    struct rsp_stop st;
    struct sw_errbuf err = { 0, "" };
    int rc = rsp_stop_parse(buf, size, &st, &err);
    if (rc == 0 && st.nexpedited > RSP_MAX_EXPEDITED)
        abort();

    struct rsp_cur c;
    rsp_cur_init(&c, "fuzz", buf, size);
    unsigned op = size ? data[0] : 0;
    for (int i = 0; i < 64 && !rsp_cur_eof(&c); i++) {
        struct rsp_span k, v;
        uint8_t bytes[8];
        switch ((op + (unsigned)i) % 7) {
        case 0:
            (void)rsp_cur_hex(&c, 1 + (op % 20));
            break;
        case 1:
            (void)rsp_cur_shex(&c, 16);
            break;
        case 2:
            (void)rsp_cur_kv(&c, &k, &v);
            break;
        case 3:
            (void)rsp_cur_until(&c, ';');
            (void)rsp_cur_accept(&c, ';');
            break;
        case 4:
            (void)rsp_cur_bytes(&c, bytes, 1 + op % 8);
            break;
        case 5:
            (void)rsp_cur_accept_str(&c, "thread:");
            (void)rsp_cur_lit(&c, ':');
            break;
        default:
            k = rsp_cur_rest(&c);
            (void)rsp_span_eq(k, "OK");
            break;
        }
        if (c.failed)
            rsp_cur_init(&c, "fuzz", c.p,
                         (size_t)(c.end - c.p) > 0 ? (size_t)(c.end - c.p) - 1 : 0);
        if (c.p > c.end || rsp_cur_offset(&c) > size)
            abort();
    }
    free(buf);
    return 0;
}
