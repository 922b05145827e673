/* util/dirs.c -- the cache directories: made as needed.
 *
 * For what is kept by build-id below a cache directory: files fetched from
 * the target (libstate/fetch.c) and uncompressed debug files
 * (elf/debug_plain.c).  Made mode 0700: what they hold is trusted by later
 * runs (docs/usage.md, --cache-dir).  Not what goes into them.
 */
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int
sw_dirs_make(char *path, struct sw_errbuf *err)
{
    for (char *s = path + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        int r = mkdir(path, 0700);
        int e = errno;
        *s = c;
        if (r != 0 && e != EEXIST) {
            char what[256];
            snprintf(what, sizeof what, "%.*s", (int)(s - path), path);
            return sw_fail(err, SW_EIO, "creating the cache directory %s: %s", what, strerror(e));
        }
        if (c == '\0')
            return 0;
    }
}
