/* dwarf/unitcache.c -- a parsed unit kept beside the uncompressed copy, taken on later runs.
 *
 * Parsing a unit into scopes and call sites (dwarf/scopes.c) costs libc's
 * big units a few million instructions each (pthread_create.c: 1500 DIEs
 * read), and libdw first reads the headers of every unit before it; a walk
 * of four threads into libc parses eight of them.  The same units are
 * parsed on every run, so where the DWARF is read from the uncompressed
 * copy in the cache directory (elf/debug_plain.h) each parsed unit is
 * written beside it, CACHE/<build-id>/unit-<offset>, and later runs take it
 * from there without touching the DWARF at all.  The file: a header (magic
 * with the format, the copy's size and mtime, the unit's offset, the counts),
 * then the scopes, ranges and sites in host order, then their names; written
 * through a temporary file renamed into place.  A file that does not match
 * the copy or is cut short is parsed again and rewritten.
 *
 * UNIT_FORMAT names what dwarf/scopes.c reads: change it with the parse.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf/dwarf_internal.h"

#define UNIT_MAGIC  "SWUNIT"
#define UNIT_FORMAT 1
#define NO_NAME     UINT32_MAX

struct unit_head {
    char magic[8]; /* UNIT_MAGIC, then UNIT_FORMAT as a byte */
    uint64_t src_size, src_mtime_ns, cu_off;
    uint32_t nscopes, nranges, nsites, strbytes;
};

struct unit_scope {
    uint64_t die;
    uint32_t parent, first, nranges, name; /* NAME: offset in the strings, or NO_NAME */
    uint8_t kind, pad[7];
};

struct unit_site {
    uint64_t pc, taddr;
    uint32_t func, tname;
    uint8_t tail, tmulti, tkind, pad[5];
};

static void
unit_head_init(struct sw_dinfo *d, const struct di_cu *cu, struct unit_head *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, UNIT_MAGIC, sizeof UNIT_MAGIC - 1);
    h->magic[sizeof UNIT_MAGIC - 1] = UNIT_FORMAT;
    h->src_size = d->src_size;
    h->src_mtime_ns = d->src_mtime_ns;
    h->cu_off = cu->off;
}

static char *
unit_path(struct sw_dinfo *d, const struct di_cu *cu)
{
    char name[40];
    snprintf(name, sizeof name, "unit-%llx", (unsigned long long)cu->off);
    return sw_di_cache_file(d, name);
}

/* NAME in BUF of LEN string bytes, checked to end inside it. */
static const char *
name_at(const char *buf, uint32_t len, uint32_t off)
{
    if (off == NO_NAME || off >= len || memchr(buf + off, 0, len - off) == NULL)
        return NULL;
    return buf + off;
}

int
sw_di_unit_load(struct sw_dinfo *d, struct di_cu *cu)
{
    struct unit_head want, h;
    struct stat st;
    char *path = unit_path(d, cu);
    int rc = 0;
    if (path == NULL)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    sw_free(path);
    if (fd < 0)
        return 0;
    unit_head_init(d, cu, &want);
    if (fstat(fd, &st) != 0 || read(fd, &h, sizeof h) != (ssize_t)sizeof h ||
        memcmp(&h, &want, offsetof(struct unit_head, nscopes)) != 0 || h.nscopes > (1u << 24) ||
        h.nranges > (1u << 24) || h.nsites > (1u << 24) || h.strbytes > (1u << 28))
        goto out;
    size_t body = h.nscopes * sizeof(struct unit_scope) + h.nranges * sizeof(struct di_range) +
                  h.nsites * sizeof(struct unit_site);
    if ((uint64_t)st.st_size != sizeof h + body + h.strbytes)
        goto out;
    char *buf = sw_malloc(body + h.strbytes + 1);
    struct di_scope *scopes = sw_calloc(h.nscopes ? h.nscopes : 1, sizeof *scopes);
    struct di_range *ranges = sw_calloc(h.nranges ? h.nranges : 1, sizeof *ranges);
    struct di_site *sites = sw_calloc(h.nsites ? h.nsites : 1, sizeof *sites);
    char *strings = sw_malloc(h.strbytes + 1);
    if (buf == NULL || scopes == NULL || ranges == NULL || sites == NULL || strings == NULL) {
        rc = SW_ENOMEM;
    } else if (read(fd, buf, body + h.strbytes) == (ssize_t)(body + h.strbytes)) {
        const struct unit_scope *us = (const struct unit_scope *)(void *)buf;
        const struct di_range *ur = (const struct di_range *)(void *)(us + h.nscopes);
        const struct unit_site *ut = (const struct unit_site *)(void *)(ur + h.nranges);
        memcpy(strings, ut + h.nsites, h.strbytes);
        strings[h.strbytes] = '\0';
        bool ok = true;
        for (uint32_t i = 0; i < h.nscopes && ok; i++) {
            scopes[i] = (struct di_scope){ .parent = us[i].parent,
                                           .first = us[i].first,
                                           .nranges = us[i].nranges,
                                           .kind = us[i].kind,
                                           .name = name_at(strings, h.strbytes, us[i].name),
                                           .die = us[i].die };
            /* Parents come first, ranges are in bounds: what lookups rely on. */
            ok = (us[i].parent == DI_NONE || us[i].parent < i) && us[i].first <= h.nranges &&
                 us[i].nranges <= h.nranges - us[i].first && us[i].kind <= DI_BLOCK;
        }
        memcpy(ranges, ur, h.nranges * sizeof *ranges);
        for (uint32_t i = 0; i < h.nsites && ok; i++) {
            sites[i] = (struct di_site){ .pc = ut[i].pc,
                                         .func = ut[i].func,
                                         .tail = ut[i].tail != 0,
                                         .tmulti = ut[i].tmulti != 0,
                                         .tkind = ut[i].tkind,
                                         .taddr = ut[i].taddr,
                                         .tname = name_at(strings, h.strbytes, ut[i].tname) };
            ok = ut[i].func < h.nscopes && ut[i].tkind <= DI_TGT_NAME &&
                 (ut[i].tkind != DI_TGT_NAME || sites[i].tname != NULL);
        }
        if (ok) {
            sw_di_cu_reset(cu);
            cu->scopes = scopes;
            cu->nscopes = cu->capscopes = h.nscopes;
            cu->ranges = (struct di_rbuf){ ranges, h.nranges, h.nranges };
            cu->sites = sites;
            cu->nsites = cu->capsites = h.nsites;
            cu->strings = strings;
            scopes = NULL;
            ranges = NULL;
            sites = NULL;
            strings = NULL;
            rc = sw_di_cu_index(cu);
            if (rc < 0)
                sw_di_cu_reset(cu);
            else
                rc = 1;
        }
    }
    sw_free(buf);
    sw_free(scopes);
    sw_free(ranges);
    sw_free(sites);
    sw_free(strings);
out:
    close(fd);
    return rc;
}

/* The strings of CU in one block: each name once per place it is used. */
struct unit_strings {
    char *v;
    size_t n, cap;
    bool oom;
};

static uint32_t
str_add(struct unit_strings *s, const char *name)
{
    if (name == NULL)
        return NO_NAME;
    size_t len = strlen(name) + 1;
    if (s->n + len > UINT32_MAX - 1) {
        s->oom = true;
        return NO_NAME;
    }
    char *v = sw_grow(s->v, &s->cap, s->n + len, 1, 4096);
    if (v == NULL) {
        s->oom = true;
        return NO_NAME;
    }
    s->v = v;
    memcpy(s->v + s->n, name, len);
    uint32_t off = (uint32_t)s->n;
    s->n += len;
    return off;
}

void
sw_di_unit_store(struct sw_dinfo *d, const struct di_cu *cu)
{
    struct unit_head h;
    struct unit_strings str = { 0 };
    char *path = unit_path(d, cu), *tmp = NULL;
    struct unit_scope *us = NULL;
    struct unit_site *ut = NULL;
    int fd = -1;
    bool ok = false;

    if (path == NULL || cu->nscopes > (1u << 24) || cu->nsites > (1u << 24) ||
        cu->ranges.n > (1u << 24))
        goto out;
    us = sw_calloc(cu->nscopes ? cu->nscopes : 1, sizeof *us);
    ut = sw_calloc(cu->nsites ? cu->nsites : 1, sizeof *ut);
    size_t pl = strlen(path);
    tmp = sw_malloc(pl + sizeof ".XXXXXX");
    if (us == NULL || ut == NULL || tmp == NULL)
        goto out;
    for (size_t i = 0; i < cu->nscopes; i++) {
        const struct di_scope *s = &cu->scopes[i];
        us[i] = (struct unit_scope){ .die = s->die,
                                     .parent = s->parent,
                                     .first = s->first,
                                     .nranges = s->nranges,
                                     .name = str_add(&str, s->name),
                                     .kind = s->kind };
    }
    for (size_t i = 0; i < cu->nsites; i++) {
        const struct di_site *s = &cu->sites[i];
        ut[i] = (struct unit_site){ .pc = s->pc,
                                    .taddr = s->taddr,
                                    .func = s->func,
                                    .tname = str_add(&str, s->tname),
                                    .tail = s->tail,
                                    .tmulti = s->tmulti,
                                    .tkind = s->tkind };
    }
    if (str.oom)
        goto out;
    unit_head_init(d, cu, &h);
    h.nscopes = (uint32_t)cu->nscopes;
    h.nranges = (uint32_t)cu->ranges.n;
    h.nsites = (uint32_t)cu->nsites;
    h.strbytes = (uint32_t)str.n;
    memcpy(tmp, path, pl);
    memcpy(tmp + pl, ".XXXXXX", sizeof ".XXXXXX");
    fd = mkstemp(tmp);
    if (fd < 0)
        goto out;
    ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h &&
         write(fd, us, cu->nscopes * sizeof *us) == (ssize_t)(cu->nscopes * sizeof *us) &&
         write(fd, cu->ranges.v, cu->ranges.n * sizeof *cu->ranges.v) ==
             (ssize_t)(cu->ranges.n * sizeof *cu->ranges.v) &&
         write(fd, ut, cu->nsites * sizeof *ut) == (ssize_t)(cu->nsites * sizeof *ut) &&
         write(fd, str.v, str.n) == (ssize_t)str.n && fchmod(fd, 0644) == 0;
    if (close(fd) != 0)
        ok = false;
    fd = -1;
    if (ok && rename(tmp, path) == 0)
        sw_debug(SW_DBG_CACHE, "dwarf: %s: unit 0x%llx kept in %s", d->source,
                 (unsigned long long)cu->off, path);
    else
        unlink(tmp);
out:
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    sw_free(str.v);
    sw_free(us);
    sw_free(ut);
    sw_free(tmp);
    sw_free(path);
}
