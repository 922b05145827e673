/* libstate/maps.c -- executable memory from the target's memory map.
 *
 * Parses /proc/PID/maps as the stub serves it (every byte hostile: bounded
 * bytes and lines, a malformed line skipped) and keeps its executable
 * ranges for the walker's frame checks, read at most once per stop.
 */
#include "libstate/maps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libstate/files.h"
#include "rspwalk/proc.h"
#include "util/util.h"

/* One read_file call: at most the RSP backend's small read, so it asks no
 * fstat (a /proc file's size is 0: the reads decide where it ends). */
#define MAPS_CHUNK (64u * 1024)

/* A hex number of 1 to 16 digits at *P (before END), ended by STOP. */
static bool
parse_hex(const char **p, const char *end, char stop, sw_addr *out)
{
    sw_addr v = 0;
    size_t digits = 0;
    const char *s = *p;
    for (; s < end && *s != stop; s++) {
        int d = sw_hex_val(*s);
        if (d < 0 || ++digits > 16)
            return false;
        v = v << 4 | (sw_addr)d;
    }
    if (digits == 0 || s == end)
        return false;
    *p = s + 1;
    *out = v;
    return true;
}

/* Line [S, END): its range and whether it is executable; false: malformed. */
static bool
parse_line(const char *s, const char *end, struct sw_maps_range *r, bool *exec)
{
    if (!parse_hex(&s, end, '-', &r->start) || !parse_hex(&s, end, ' ', &r->end) ||
        r->start >= r->end || end - s < 4 || (end - s > 4 && s[4] != ' '))
        return false;
    static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };
    for (int i = 0; i < 4; i++)
        if (s[i] == '\0' || strchr(allowed[i], s[i]) == NULL)
            return false;
    *exec = s[2] == 'x';
    return true;
}

static int
range_cmp(const void *a, const void *b)
{
    const struct sw_maps_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int
sw_maps_parse(const char *text, size_t len, size_t max_lines, struct sw_maps_range **out, size_t *n,
              size_t *bad)
{
    struct sw_maps_range *r = NULL;
    size_t nr = 0, cap = 0, nbad = 0, lines = 0;
    const char *p = text, *end = text + len;

    while (p < end && lines < max_lines) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        struct sw_maps_range one;
        bool exec = false;
        lines++;
        if (le == p) {
            /* an empty line: nothing */
        } else if (!parse_line(p, le, &one, &exec)) {
            nbad++;
        } else if (exec) {
            if (nr == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct sw_maps_range *g = sw_realloc(r, ncap * sizeof *g);
                if (g == NULL) {
                    sw_free(r);
                    return SW_ENOMEM;
                }
                r = g;
                cap = ncap;
            }
            r[nr++] = one;
        }
        p = nl != NULL ? nl + 1 : end;
    }
    if (nr > 1)
        qsort(r, nr, sizeof *r, range_cmp);
    /* A range that overlaps the one kept before it is a lie: dropped. */
    size_t k = 0;
    for (size_t i = 0; i < nr; i++) {
        if (k > 0 && r[i].start < r[k - 1].end) {
            nbad++;
            continue;
        }
        r[k++] = r[i];
    }
    if (k == 0) {
        sw_free(r);
        r = NULL;
    }
    *out = r;
    *n = k;
    if (bad != NULL)
        *bad = nbad;
    return 0;
}

bool
sw_maps_find(const struct sw_maps_range *r, size_t n, sw_addr addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < r[mid].start)
            hi = mid;
        else if (addr >= r[mid].end)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

/* Read /proc/PID/maps from the target into LS's ranges.  Returns 0 (also
 * when the file cannot be read: no ranges), or a link error. */
static int
maps_read(struct sw_libstate *ls)
{
    struct sw_proc *p = ls->proc;
    char path[40];
    snprintf(path, sizeof path, "/proc/%" PRId64 "/maps", p->pid);

    char *buf = sw_malloc(SW_MAPS_MAX_BYTES);
    if (buf == NULL)
        return sw_fail(&ls->err, SW_ENOMEM, "reading '%s': out of memory", path);
    size_t len = 0;
    unsigned trips = 0;
    int rc = 0;
    while (len < SW_MAPS_MAX_BYTES) {
        size_t want = SW_MAPS_MAX_BYTES - len < MAPS_CHUNK ? SW_MAPS_MAX_BYTES - len : MAPS_CHUNK;
        size_t got = 0;
        rc = p->ops->read_file(p, path, len, buf + len, want, &got);
        trips++;
        if (rc != 0 || got == 0 || got > want)
            break;
        len += got;
        if (got < want)
            break; /* short only at the end of the file (sw_proc_ops.read_file) */
    }
    if (rc != 0 && sw_is_link_error(rc)) {
        sw_fail(&ls->err, rc, "%s", sw_proc_errmsg(p));
        sw_free(buf);
        return rc;
    }
    if (rc != 0) {
        sw_debug(SW_DBG_CACHE, "libstate: %s cannot be read: %s", path, sw_proc_errmsg(p));
        ls->maps_failed = true; /* not offered: not asked again */
        sw_free(buf);
        return 0;
    }
    struct sw_maps_range *r = NULL;
    size_t n = 0, bad = 0;
    rc = sw_maps_parse(buf, len, SW_MAPS_MAX_LINES, &r, &n, &bad);
    sw_free(buf);
    if (rc != 0)
        return sw_fail(&ls->err, rc, "reading '%s': out of memory", path);
    sw_free(ls->maps);
    ls->maps = r;
    ls->nmaps = n;
    ls->maps_reads++;
    sw_debug(SW_DBG_CACHE,
             "libstate: %s: %zu bytes in %u reads, %zu executable ranges, %zu lines not used", path,
             len, trips, n, bad);
    return 0;
}

int
sw_ls_maps_exec_at(struct sw_libstate *ls, sw_addr addr)
{
    struct sw_proc *p = ls->proc;
    if (ls->maps != NULL && sw_maps_find(ls->maps, ls->nmaps, addr))
        return 0;
    /* QEMU user mode reports pid 1: its /proc is the host's QEMU. */
    if (ls->no_maps || ls->maps_failed || p->pid <= 1 || p->ops->read_file == NULL)
        return SW_ENOENT;
    if (ls->maps_read && ls->maps_gen == p->stop_gen)
        return SW_ENOENT;
    ls->maps_read = true;
    ls->maps_gen = p->stop_gen;
    int rc = maps_read(ls);
    if (rc != 0)
        return rc;
    return ls->maps != NULL && sw_maps_find(ls->maps, ls->nmaps, addr) ? 0 : SW_ENOENT;
}

void
sw_ls_maps_reset(struct sw_libstate *ls)
{
    ls->maps_read = false;
}

void
sw_ls_maps_free(struct sw_libstate *ls)
{
    sw_free(ls->maps);
    ls->maps = NULL;
    ls->nmaps = 0;
    ls->maps_read = false;
}
