/* libstate/maps.h -- executable memory from the target's memory map.
 *
 * /proc/PID/maps read through the ProcessState's read_file (RSP Host I/O):
 * its executable ranges are code the walker knows of even where no module
 * covers them (V8's compiled code, a JIT's anonymous rwx buffer).
 */
#ifndef RSPWALK_LIBSTATE_MAPS_H
#define RSPWALK_LIBSTATE_MAPS_H

#include "rspwalk/types.h"

struct sw_libstate;

/* The most bytes of /proc/PID/maps read and the most lines parsed: node
 * maps a few thousand ranges (about 100 bytes a line); more is a lie. */
#define SW_MAPS_MAX_BYTES (4u * 1024 * 1024)
#define SW_MAPS_MAX_LINES 65536u

/* One executable range [START, END). */
struct sw_maps_range {
    sw_addr start, end;
};

/* Parse LEN bytes of TEXT (not NUL-terminated; every byte hostile) as
 * /proc/PID/maps lines ("start-end perms offset dev inode [path]") and keep
 * the ranges whose perms have 'x', sorted by start, overlaps dropped.  A
 * malformed line (no '-', a number not hex or over 16 digits, start >= end,
 * perms not 4 characters of "rwxps-") is skipped and counted in *BAD (may
 * be NULL); at most MAX_LINES lines are read.  Returns 0 or SW_ENOMEM.
 * *OUT: caller frees with sw_free; NULL when *N is 0. */
int sw_maps_parse(const char *text, size_t len, size_t max_lines, struct sw_maps_range **out,
                  size_t *n, size_t *bad);

/* Whether ADDR lies in one of the N sorted ranges R. */
bool sw_maps_find(const struct sw_maps_range *r, size_t n, sw_addr addr);

/* LS's executable ranges as they were last read, read again from the
 * target when ADDR is in none of them and they were not read at this stop
 * (the process's stop generation): at most one read of the file per stop.
 * Returns 0 when ADDR is in one, SW_ENOENT when not or when the map cannot
 * be read (no read_file, no process id, QEMU user mode's pid 1, NO_MAPS),
 * or a link error with the message on LS. */
int sw_ls_maps_exec_at(struct sw_libstate *ls, sw_addr addr);

/* Forget LS's ranges (a refresh: read again at the next miss). */
void sw_ls_maps_reset(struct sw_libstate *ls);

/* Free LS's ranges. */
void sw_ls_maps_free(struct sw_libstate *ls);

#endif /* RSPWALK_LIBSTATE_MAPS_H */
