/* libstate/cache.h -- the cache directory kept honest: entries checked on use, a size limit.
 *
 * What libstate/fetch.c stores under CACHE_DIR/<build-id hex>/ is checked
 * against the target's file each time a library state takes it, and the
 * directory is kept under a size limit, least recently used entries first
 * out.  Included only by libstate/ files and their tests; not the fetching.
 */
#ifndef RSPWALK_LIBSTATE_CACHE_H
#define RSPWALK_LIBSTATE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "rspwalk/proc.h"

/* The size limit when none is given: about 500 libc6 copies with their
 * uncompressed debug files, a few targets' worth of libraries. */
#define SW_CACHE_DEFAULT_MAX_BYTES (1024ull * 1024 * 1024)

/* Whether the cached file PATH is the target's TARGET_PATH as P's
 * read_file sees it now: the same size, and the same bytes wherever a walk
 * reads names or unwinding rules (the ELF header's page, the section
 * headers, symbol and string tables, notes, relocations, .eh_frame(_hdr),
 * .gnu_debuglink, .gnu_debugdata and any .debug_ / .zdebug_ section).
 * Returns 0 when it is; SW_EBADELF when it is not (the first difference in
 * ERR); SW_ENOENT, SW_EIO when PATH cannot be read; SW_ENOMEM or a link
 * error (the target's message in ERR). */
int sw_cache_verify(struct sw_proc *p, const char *target_path, const char *path,
                    struct sw_errbuf *err);

/* Remove every file of the entry DIR (CACHE_DIR/<build-id hex>) and DIR
 * itself: a copy found to differ from the target's, with what was made
 * from it (its uncompressed debug copy). */
void sw_cache_drop(const char *dir);

/* Note that the entry DIR was used now (its modification time: the order
 * sw_cache_evict removes entries in). */
void sw_cache_touch(const char *dir);

/* Remove entries of CACHE_DIR (directories named by a build-id's hex
 * digits), least recently used first, until its entries' regular files
 * total at most MAX_BYTES; KEEP (an entry's path, NULL: none) and entries
 * used in the last minute (a run may have them open) are not removed.  Anything else in CACHE_DIR
 * is left alone.  Returns the number of entries removed. */
size_t sw_cache_evict(const char *cache_dir, uint64_t max_bytes, const char *keep);

#endif /* RSPWALK_LIBSTATE_CACHE_H */
