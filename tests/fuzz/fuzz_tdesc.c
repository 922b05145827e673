/* tests/fuzz/fuzz_tdesc.c -- libFuzzer target for target-description parsing.
 *
 * The input is split at NUL bytes into target.xml and up to seven include
 * documents, served to xi:include by name "0".."6".  Whatever the input,
 * the parse must end (depth and size bounds) without leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/errors.h"
#include "rspwalk/rsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct parts {
    const char *p[8];
    size_t len[8];
    size_t n;
};

static int
include(void *arg, const char *annex, char **data, size_t *len)
{
    struct parts *ps = arg;
    size_t i = (size_t)(annex[0] - '0');
    if (annex[0] < '0' || annex[0] > '6' || annex[1] != 0 || i + 1 >= ps->n)
        return SW_ENOENT;
    *len = ps->len[i + 1];
    *data = malloc(*len + 1);
    memcpy(*data, ps->p[i + 1], *len);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct parts ps = { { 0 }, { 0 }, 0 };
    const char *s = (const char *)data, *end = s + size;
    while (ps.n < 8) {
        const char *z = memchr(s, 0, (size_t)(end - s));
        ps.p[ps.n] = s;
        ps.len[ps.n] = z ? (size_t)(z - s) : (size_t)(end - s);
        ps.n++;
        if (z == NULL)
            break;
        s = z + 1;
    }
    struct rsp_tdesc *td;
    struct sw_errbuf err = { 0, "" };
    if (rsp_tdesc_parse(ps.p[0], ps.len[0], include, &ps, &td, &err) == 0) {
        size_t off = 0;
        for (size_t i = 0; i < td->nregs; i++) {
            if (td->regs[i].offset != off ||
                (i > 0 && td->regs[i].regnum <= td->regs[i - 1].regnum))
                abort();
            off += (td->regs[i].bitsize + 7) / 8;
        }
        if (off != td->g_size)
            abort();
        rsp_tdesc_free(td);
    }
    return 0;
}
