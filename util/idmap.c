/* util/idmap.c -- an index from a (pid, tid)-like key to a row of an array.
 *
 * Open addressing with linear probing, at most half full.  The stub picks
 * the keys, so the hash is seeded per map (a stub cannot pick thread ids
 * that collide) and mixed with splitmix64's finaliser.
 */
#include "util/idmap.h"

#include <string.h>
#include <time.h>

#include "rspwalk/errors.h"
#include "util/util.h"

static uint64_t
mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

static size_t
slot_of(const struct sw_idmap *m, int64_t a, int64_t b)
{
    return (size_t)(mix(mix((uint64_t)a ^ m->seed) + (uint64_t)b) & (m->cap - 1));
}

void
sw_idmap_fini(struct sw_idmap *m)
{
    sw_free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}

void
sw_idmap_clear(struct sw_idmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        m->slots[i].row = SIZE_MAX;
    m->n = 0;
}

/* Put into M, which has room. */
static void
insert(struct sw_idmap *m, int64_t a, int64_t b, size_t row)
{
    size_t i = slot_of(m, a, b);
    while (m->slots[i].row != SIZE_MAX && (m->slots[i].a != a || m->slots[i].b != b))
        i = (i + 1) & (m->cap - 1);
    if (m->slots[i].row == SIZE_MAX)
        m->n++;
    m->slots[i] = (struct sw_idmap_slot){ .a = a, .b = b, .row = row };
}

int
sw_idmap_put(struct sw_idmap *m, int64_t a, int64_t b, size_t row)
{
    if (m->seed == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        m->seed =
            mix((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)(uintptr_t)m) | 1;
    }
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        struct sw_idmap_slot *s = sw_malloc(cap * sizeof *s);
        if (s == NULL)
            return SW_ENOMEM;
        struct sw_idmap old = *m;
        m->slots = s;
        m->cap = cap;
        sw_idmap_clear(m);
        for (size_t i = 0; i < old.cap; i++)
            if (old.slots[i].row != SIZE_MAX)
                insert(m, old.slots[i].a, old.slots[i].b, old.slots[i].row);
        sw_free(old.slots);
    }
    insert(m, a, b, row);
    return 0;
}

bool
sw_idmap_get(const struct sw_idmap *m, int64_t a, int64_t b, size_t *row)
{
    if (m->n == 0)
        return false;
    for (size_t i = slot_of(m, a, b); m->slots[i].row != SIZE_MAX; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].a == a && m->slots[i].b == b) {
            *row = m->slots[i].row;
            return true;
        }
    return false;
}
