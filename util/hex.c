/* util/hex.c -- hex digits, as the RSP and build-id paths spell bytes. */
#include "util/util.h"

int
sw_hex_val(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Every byte's digit value plus one, 0 for a non-digit: sw_hex_decode reads
 * each memory read's reply through it without a branch a digit (a sampler
 * decodes kilobytes a stop, and the digits of addresses are not predictable:
 * the branches of sw_hex_val took 3 times as long). */
static const uint8_t hex_table[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

int
sw_hex_decode(const char *s, size_t n, uint8_t *out)
{
    /* A non-digit's value minus one wraps to UINT_MAX, above any digit's. */
    unsigned bad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned hi = hex_table[(unsigned char)s[2 * i]] - 1u;
        unsigned lo = hex_table[(unsigned char)s[2 * i + 1]] - 1u;
        bad |= hi | lo;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return bad > 15 ? -1 : 0;
}

void
sw_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
}
