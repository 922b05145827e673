/* tests/fuzz/fuzz_tree_pack.c -- libFuzzer target for the packed merged tree (rspwalk-mpi's wire).
 *
 * Bytes from another rank: read back or refused with SW_EPROTO.  What is
 * read must write, pack again and read back to the same tree, and merge
 * into a tree that has tasks already.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/rspwalk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *
json_of(const struct sw_tree *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        abort();
    if (sw_tree_write(t, SW_TREE_JSON, f) != 0)
        abort();
    fclose(f);
    return buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sw_tree *t = NULL, *again = NULL, *base = NULL;
    int rc = sw_tree_unpack(data, size, &t, NULL);
    if (rc == SW_EPROTO)
        return 0;
    if (rc != 0)
        abort();
    void *buf;
    size_t len;
    if (sw_tree_pack(t, &buf, &len) != 0 || sw_tree_unpack(buf, len, &again, NULL) != 0)
        abort();
    char *a = json_of(t), *b = json_of(again);
    if (strcmp(a, b) != 0)
        abort();
    if (sw_tree_new(&base) != 0 || sw_tree_add_task(base, "x", 1, "p1.1", NULL) != 0 ||
        sw_tree_merge_packed(base, buf, len, NULL) != 0 ||
        sw_tree_tasks(base) != 1 + sw_tree_tasks(t))
        abort();
    free(a);
    free(b);
    free(buf);
    sw_tree_free(t);
    sw_tree_free(again);
    sw_tree_free(base);
    return 0;
}
