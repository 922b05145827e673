/* util/idmap.h -- an index from a (pid, tid)-like key to a row of an array.
 *
 * The threads, register caches and other per-thread arrays a stub can grow
 * to 60000 rows are searched through this instead of row by row.  The index
 * may go stale when its array is compacted elsewhere: a caller checks that
 * the row found holds the key and rebuilds when it does not.  Not a general
 * hash table: no removal, values are array rows.
 */
#ifndef RSPWALK_UTIL_IDMAP_H
#define RSPWALK_UTIL_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sw_idmap_slot {
    int64_t a, b;
    size_t row; /* SIZE_MAX: empty */
};

/* Zero-initialised is empty and usable. */
struct sw_idmap {
    struct sw_idmap_slot *slots; /* owned: cap entries, cap a power of two or 0 */
    size_t cap, n;
    uint64_t seed; /* 0 until the first put: then from the clock and the address */
};

/* Free M's slots; M is then empty and usable. */
void sw_idmap_fini(struct sw_idmap *m);
/* Forget every key, keeping the slots. */
void sw_idmap_clear(struct sw_idmap *m);
/* Map (A, B) to ROW, replacing an earlier row.  Returns 0 or SW_ENOMEM
 * (M unchanged). */
int sw_idmap_put(struct sw_idmap *m, int64_t a, int64_t b, size_t row);
/* The row of (A, B) in *ROW; false when M has none. */
bool sw_idmap_get(const struct sw_idmap *m, int64_t a, int64_t b, size_t *row);

#endif /* RSPWALK_UTIL_IDMAP_H */
