/* tests/fuzz/fuzz_expr.c -- libFuzzer target for the DWARF expression evaluator (expr/expr.h).
 *
 * The first byte picks width, byte order, whether the CFA is pushed, whether there is a frame
 * base and which registers are known; then each 4 bytes are one operation: its atom, a
 * 16-bit operand (sign-extended, so branches go both ways) and the size of its encoding
 * (1 to 4 bytes, from which the byte offsets follow).  Every input must return 0 or a
 * documented SW_E* code, without reading outside the operations or the fake memory, and
 * soon.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/errors.h"
#include "expr/expr.h"

/* DW_OP_implicit_value: its second operand is a host pointer, not fuzzed. */
#define OP_IMPLICIT_VALUE 0x9e
#define OP_NOP            0x96

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

static bool
fuzz_reg(void *arg, unsigned dw, sw_word *val)
{
    uint8_t mode = *(const uint8_t *)arg;
    if (dw >= 17 || (!(mode & 0x80) && dw % 3 == 0))
        return false;
    *val = 0x10 * dw;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    struct sw_errbuf err;
    for (size_t i = 0; i < sizeof memory; i++)
        memory[i] = (uint8_t)(i * 7);

    struct sw_expr_ctx ctx = {
        .addr_size = (mode & 1) ? 4 : 8,
        .big_endian = (mode & 2) != 0,
        .reg = fuzz_reg,
        .read = fuzz_read,
        .arg = &mode,
        .have_cfa = (mode & 4) != 0,
        .push_cfa = (mode & 4) != 0,
        .cfa = 0x40,
        .have_frame_base = (mode & 0x10) != 0,
        .frame_base = 0x80,
        .err = (mode & 8) ? &err : NULL,
    };
    /* An array of exactly the expression's size, so ASan sees overreads. */
    size_t n = (size - 1) / 4;
    struct sw_expr_op *ops = malloc(n ? n * sizeof *ops : 1);
    if (ops == NULL)
        return 0;
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = data + 1 + 4 * i;
        uint64_t v = (uint64_t)(int64_t)(int16_t)(uint16_t)(p[1] | p[2] << 8);
        ops[i] = (struct sw_expr_op){
            .atom = p[0] == OP_IMPLICIT_VALUE ? OP_NOP : p[0],
            .number = v,
            .number2 = v,
            .offset = off,
        };
        off += 1 + (p[3] & 3);
    }
    sw_word result;
    int rc = sw_expr_eval_word(&ctx, ops, n, &result);
    if (rc > 0 ||
        (rc < 0 && rc != SW_EPROTO && rc != SW_EMEM && rc != SW_ENOREG && rc != SW_ENOENT))
        abort();
    if (rc == 0 && ctx.addr_size == 4 && result > UINT32_MAX)
        abort();
    free(ops);
    return 0;
}
