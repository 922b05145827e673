/* tests/tools/libc_cache.h -- this machine's libc in an ELF cache, beside a fresh cache directory.
 *
 * For tests of what rspwalk keeps in its cache directory (uncompressed debug
 * files, unit tables, parsed units): libc with its libc6-dbg debug file, and
 * a directory under /tmp of the test's own, removed at the end.  Test-only.
 */
#ifndef RSPWALK_TESTS_LIBC_CACHE_H
#define RSPWALK_TESTS_LIBC_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "elf/elf.h"

#define LIBC_CACHE_LIBC "/lib/x86_64-linux-gnu/libc.so.6"

struct libc_cache {
    struct sw_elfcache *elfs; /* owned: libc_cache_close */
    struct sw_elf *libc;      /* borrowed from ELFS */
    char cache[64];           /* the directory: /tmp/TAG.XXXXXX */
};

/* Open libc in a new ELF cache and make the directory; with USE_CACHE the
 * ELF cache keeps its copies there (sw_elfcache_set_cache_dir).  Fails the
 * current cmocka test when libc or its debug file is missing. */
void libc_cache_open(struct libc_cache *lc, const char *tag, bool use_cache);

/* Where the cache keeps what it makes of libc's debug file: CACHE/<build-id>
 * (making the uncompressed copy there on the first call), in BUF of N bytes.
 * Fails the current cmocka test when the copy is not in the directory. */
const char *libc_cache_copy_dir(struct libc_cache *lc, char *buf, size_t n);

/* Free the ELF cache and remove the directory, read-only parts included. */
void libc_cache_close(struct libc_cache *lc);

#endif /* RSPWALK_TESTS_LIBC_CACHE_H */
