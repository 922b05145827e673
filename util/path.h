/* util/path.h -- paths a target names, confined to the directories given for them.
 *
 * A stub names files (libraries, its executable, debug links inside files it
 * serves); these turn such names into local paths that cannot leave the
 * sysroot, a library directory, the debug directory or the cache, and open
 * them without blocking on anything but a regular file.  Not the search order.
 */
#ifndef RSPWALK_UTIL_PATH_H
#define RSPWALK_UTIL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "util/util.h"

/* The most symbolic links followed resolving one name (Linux's MAXSYMLINKS). */
#define SW_PATH_MAX_LINKS 40

/* Whether NAME[0, LEN) is one path component a target may name inside a
 * directory: not empty, not "." or "..", no '/' and no NUL. */
bool sw_path_is_name(const char *name, size_t len);

/* PATH normalised by its text alone: "//" and "/./" collapsed, each ".."
 * taking away the component before it, no trailing '/'.  A relative PATH is
 * taken from "/" (the result is absolute).  Returns 0, SW_EINVAL when a ".."
 * would climb above "/" (the path names something outside its root), or
 * SW_ENOMEM.  *OUT: caller frees with sw_free. */
int sw_path_normalize(const char *path, char **out);

/* NAME, a path in the target's file system, as a local path under ROOT (a
 * sysroot), resolved the way a chroot to ROOT would resolve it: a NAME
 * whose ".." climbs above the target's "/" by its text is refused
 * (SW_EINVAL), else each symbolic link met under ROOT is followed, an
 * absolute one from ROOT and a relative one from its directory, a ".."
 * never leaving ROOT.  Components past one that does not exist are
 * appended as they are (the open then fails as missing).  ROOT NULL, "" or
 * "/": the host's own paths, NAME as it is (the kernel resolves it, and a
 * relative NAME stays relative).  Returns 0, SW_EINVAL (the message in ERR
 * names NAME and the cause: above the sysroot, more than
 * SW_PATH_MAX_LINKS links, a link that cannot be read) or SW_ENOMEM.
 * *OUT (no symbolic link left under ROOT): caller frees with sw_free. */
int sw_path_in_root(const char *root, const char *name, char **out, struct sw_errbuf *err);

/* Open PATH for reading only if it is a regular file: opened with
 * O_NONBLOCK (a FIFO or a device does not block the open), O_NOCTTY and,
 * with NOFOLLOW, O_NOFOLLOW (a symbolic link as the last component is
 * refused), then checked with fstat before anything is read.  *ST (may be
 * NULL) gets the fstat.  Returns the descriptor (caller closes it), or
 * SW_ENOENT (missing), SW_EBADELF (not a regular file, or a symbolic link
 * with NOFOLLOW) or SW_EIO, the message in ERR naming PATH and the cause. */
int sw_path_open_regular(const char *path, bool nofollow, struct stat *st, struct sw_errbuf *err);

#endif /* RSPWALK_UTIL_PATH_H */
