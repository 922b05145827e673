/* tests/fuzz/fuzz_svr4.c -- libFuzzer target for the qXfer:libraries-svr4 document.
 *
 * The input is the whole document as a stub would send it; a parse that
 * succeeds must give modules with names, and everything it made is freed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "targets/targets_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly SIZE bytes, so ASan sees any over-read */
    char *xml = malloc(size ? size : 1);
    memcpy(xml, data, size);
    struct sw_modinfo *mods = NULL;
    size_t n = 0;
    struct sw_errbuf err = { 0, "" };
    if (tgt_parse_svr4(xml, size, &mods, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++)
            if (mods[i].name == NULL)
                abort();
        sw_modinfo_free(mods, n);
    } else if (err.msg[0] == 0) {
        abort(); /* a failure says why */
    }
    free(xml);
    return 0;
}
