/* tests/fuzz/fuzz_dwarf_expr.c -- libFuzzer target for the DWARF expression evaluator.
 *
 * The first byte picks width, byte order and whether the CFA is pushed;
 * the rest is the expression.  Every input must return 0 or an SW_E* code
 * without reading outside the expression or the fake memory, and soon.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/errors.h"
#include "cfi/cfi.h"

static uint8_t memory[256];

static int
fuzz_read(void *arg, sw_addr addr, void *buf, size_t len)
{
    (void)arg;
    if (addr >= sizeof memory || len > sizeof memory - addr)
        return SW_EMEM;
    memcpy(buf, memory + addr, len);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    struct sw_frame f;
    struct sw_errbuf err;
    sw_frame_init(&f);
    for (unsigned i = 0; i < 17; i++)
        if (mode & 0x80 || i % 3)
            sw_frame_set_reg(&f, i, 0x10 * i);
    for (size_t i = 0; i < sizeof memory; i++)
        memory[i] = (uint8_t)(i * 7);

    struct sw_expr_ctx ctx = {
        .frame = &f,
        .addr_size = (mode & 1) ? 4 : 8,
        .big_endian = (mode & 2) != 0,
        .read = fuzz_read,
        .err = (mode & 8) ? &err : NULL,
    };
    /* A copy of exactly the expression's size, so ASan sees overreads. */
    size_t len = size - 1;
    uint8_t *expr = malloc(len ? len : 1);
    if (expr == NULL)
        return 0;
    memcpy(expr, data + 1, len);
    sw_addr result;
    int rc = sw_dwarf_expr_eval(&ctx, expr, len, (mode & 4) != 0, 0x40, &result);
    if (rc > 0 || (rc < 0 && rc != SW_EPROTO && rc != SW_EMEM && rc != SW_ENOREG))
        abort();
    if (rc == 0 && ctx.addr_size == 4 && result > UINT32_MAX)
        abort();
    free(expr);
    return 0;
}
