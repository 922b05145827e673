/* elf/debug_plain.h -- uncompressed copies of debug files, kept by build-id.
 *
 * Debian's debug files (libc6-dbg) compress their .debug_* sections; libdwarf
 * 20210528 inflates a whole section on first use, so finding the inline
 * chain at one pc in libc inflates 5.8 MB of .debug_info, about 30 ms, on
 * every run.  The first run writes an uncompressed copy into the cache
 * directory; later runs hand that to the DWARF readers.  Included only by
 * elf/elf.c and the tests; not the debug-file lookup (elf/elf.c).
 */
#ifndef RSPWALK_ELF_DEBUG_PLAIN_H
#define RSPWALK_ELF_DEBUG_PLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* The uncompressed copy of the debug file DEBUG_PATH, whose build-id is ID:
 * CACHE_DIR/<hex of ID>/debuginfo, written on first use (every
 * SHF_COMPRESSED section inflated; .symtab and its string table, which the
 * DWARF readers never use, left out as SHT_NOBITS; no program headers),
 * through a temporary file renamed into place, so readers never see a
 * partial copy and concurrent runs agree.  An existing copy is used when it
 * carries ID in its build-id note.  *OUT (free with sw_free) is NULL when
 * DEBUG_PATH has nothing compressed or no copy can be made (the reason in a
 * debug line); then DEBUG_PATH serves as it is.  A section over LIM (NULL:
 * the defaults, elf/elf.h) is not inflated: the copy has it as SHT_NOBITS,
 * so no reader inflates it later.  Returns 0 or SW_ENOMEM. */
struct sw_inflate_limits;
int sw_debug_plain_path(const char *cache_dir, const char *debug_path, const uint8_t *id,
                        size_t id_len, const struct sw_inflate_limits *lim, char **out);

/* The copy sw_debug_plain_path would give if it is there already: never
 * made here (*OUT NULL when absent).  Returns 0 or SW_ENOMEM. */
int sw_debug_plain_existing(const char *cache_dir, const uint8_t *id, size_t id_len, char **out);

#endif /* RSPWALK_ELF_DEBUG_PLAIN_H */
