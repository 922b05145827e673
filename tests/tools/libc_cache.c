/* tests/tools/libc_cache.c -- this machine's libc in an ELF cache, beside a fresh cache directory.
 */
#define _GNU_SOURCE
#include "tests/tools/libc_cache.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/errors.h"

void
libc_cache_open(struct libc_cache *lc, const char *tag, bool use_cache)
{
    struct sw_errbuf err = { 0 };
    snprintf(lc->cache, sizeof lc->cache, "/tmp/%s.XXXXXX", tag);
    assert_non_null(mkdtemp(lc->cache));
    lc->elfs = sw_elfcache_new(NULL);
    assert_non_null(lc->elfs);
    if (use_cache)
        assert_int_equal(sw_elfcache_set_cache_dir(lc->elfs, lc->cache), 0);
    if (sw_elfcache_open(lc->elfs, LIBC_CACHE_LIBC, &lc->libc, &err) != 0)
        fail_msg("%s", err.msg);
    if (sw_elf_debug_path(lc->libc) == NULL)
        fail_msg("no debug file for %s: apt-get install libc6-dbg", LIBC_CACHE_LIBC);
}

const char *
libc_cache_copy_dir(struct libc_cache *lc, char *buf, size_t n)
{
    const char *copy = sw_elf_dwarf_path(lc->libc);
    assert_non_null(strstr(copy, lc->cache));
    snprintf(buf, n, "%.*s", (int)(strrchr(copy, '/') - copy), copy);
    return buf;
}

void
libc_cache_close(struct libc_cache *lc)
{
    char cmd[256];
    sw_elfcache_free(lc->elfs);
    lc->elfs = NULL;
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", lc->cache, lc->cache);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", lc->cache);
}
