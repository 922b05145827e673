/* libstate/fetch.h -- files from the target, kept by build-id.
 *
 * What the LibraryState uses when the sysroot lacks a module's file, or holds
 * one built from other sources: the target's copy read through the
 * ProcessState's read_file (RSP Host I/O), stored once under
 * CACHE_DIR/<build-id hex>/<basename>.  Included only by libstate/ files and
 * their tests; not the module list itself (libstate.c).
 */
#ifndef RSPWALK_LIBSTATE_FETCH_H
#define RSPWALK_LIBSTATE_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "rspwalk/libstate.h"
#include "rspwalk/proc.h"
#include "elf/image.h"

/* The longest build-id taken (elf/elf.h). */
#define SW_FETCH_MAX_BUILD_ID SW_ELF_MAX_BUILD_ID
/* The default ceiling of a fetched file: sw_libstate_config's
 * max_fetch_bytes (rspwalk/libstate.h says why). */
#define SW_FETCH_MAX_FILE_BYTES SW_LS_MAX_FETCH_BYTES

/* The build-id of the file TARGET_PATH as the target sees it, read from its
 * first pages with P's read_file.  *ID_LEN 0: the file has no build-id.
 * Returns 0; SW_EUNSUP (no read_file, or the stub has no Host I/O);
 * SW_ENOENT; SW_EBADELF; or a link error.  The message is in ERR. */
int sw_fetch_target_build_id(struct sw_proc *p, const char *target_path,
                             uint8_t id[SW_FETCH_MAX_BUILD_ID], size_t *id_len,
                             struct sw_errbuf *err);

/* The local copy of TARGET_PATH whose build-id is ID: CACHE_DIR/<hex>/<basename>
 * if that file exists and is the target's file (libstate/cache.h's check:
 * size and the bytes walks read, a few small reads), else the whole file
 * read with P's read_file, checked to carry ID, written mode 0600 to a
 * temporary file in the build-id directory and renamed into place (so a
 * reader never sees a partial file, and two rspwalk processes fetching at
 * once both succeed).  A cached copy that is not the target's is removed
 * and fetched again, and DROPPED's message says so (empty otherwise).
 * Directories are made mode 0700 as needed; after a store, entries least
 * recently used are evicted until the cache holds at most MAX_BYTES (0:
 * SW_CACHE_DEFAULT_MAX_BYTES).  *PATH: caller frees with sw_free.  Returns
 * 0, SW_EINVAL (no file name, or no build-id), SW_EUNSUP, SW_ENOENT,
 * SW_EBADELF (the file's build-id is not ID, or it is larger than
 * FILE_MAX_BYTES), SW_EIO (the cache cannot be written), SW_ENOMEM or a link
 * error, the message in ERR.  The file is streamed to disk (one chunk in
 * memory), the directory made only once the first read succeeded, and cut
 * off at FILE_MAX_BYTES (0: SW_FETCH_MAX_FILE_BYTES). */
int sw_fetch_file(struct sw_proc *p, const char *cache_dir, uint64_t max_bytes,
                  const char *target_path, const uint8_t *id, size_t id_len,
                  uint64_t file_max_bytes, char **path, struct sw_errbuf *err,
                  struct sw_errbuf *dropped);

/* The default cache directory: $XDG_CACHE_HOME/rspwalk when that is an
 * absolute path, else $HOME/.cache/rspwalk.  Returns an owned string (free
 * with sw_free), or NULL with no usable environment or no memory. */
char *sw_fetch_default_cache_dir(void);

#endif /* RSPWALK_LIBSTATE_FETCH_H */
