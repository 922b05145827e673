/* libstate/rdebug.c -- the dynamic linker's link map, read from target memory.
 *
 * For stubs without qXfer:libraries-svr4 (QEMU user mode offers no library list):
 * DT_DEBUG in the executable's dynamic section -> struct r_debug -> the
 * link_map chain, with plain memory reads, as gdb's solib-svr4.c does.  Not
 * the LibraryState: it only produces the list libstate.c places.
 */
#include "libstate/libstate_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ElfW(Dyn) tags (System V gABI, "Dynamic Section"). */
#define DYN_DT_NULL  0
#define DYN_DT_DEBUG 21
/* A dynamic section has a few dozen entries; this bounds a walk over
 * garbage that never reaches DT_NULL. */
#define DYN_MAX_ENTRIES 1024
/* Names are read in aligned chunks of this size, so a read never crosses a
 * page boundary into memory that may not be mapped (and each one stays in
 * one block of the RSP backend's cache). */
#define NAME_CHUNK 64

/* Field offsets of the target's structs, in units of its word size W:
 *   struct r_debug { int r_version; struct link_map *r_map; ElfW(Addr) r_brk; ... }
 *     (the int is padded to pointer alignment: r_map at W on 32- and 64-bit)
 *   struct link_map { ElfW(Addr) l_addr; char *l_name; ElfW(Dyn) *l_ld;
 *                     struct link_map *l_next, *l_prev; ... }  (glibc link.h) */
#define RD_R_MAP   1
#define RD_R_BRK   2
#define LM_L_ADDR  0
#define LM_L_NAME  1
#define LM_L_LD    2
#define LM_L_NEXT  3
#define LM_L_PREV  4
#define LM_NFIELDS 5

/* Read one target word at ADDR into *VAL.  Returns 0, SW_EMEM (message in
 * P->err) or a link error. */
static int
read_word(struct sw_proc *p, sw_addr addr, sw_addr *val)
{
    uint8_t b[8];
    size_t w = p->arch->word_size;
    int rc = p->ops->read_mem(p, addr, b, w);
    if (rc == 0)
        *val = arch_load(p->arch, b, w);
    return rc;
}

/* A failed read while looking for the list: a link error is the caller's
 * error (message in ERR); anything else only ends the search. */
static int
read_failed(struct sw_proc *p, int rc, struct sw_errbuf *err, const char *what, sw_addr addr)
{
    if (sw_is_link_error(rc))
        return sw_fail(err, rc, "reading %s at 0x%" PRIx64 ": %s", what, addr, sw_proc_errmsg(p));
    sw_debug(SW_DBG_CACHE, "libstate: r_debug: %s at 0x%" PRIx64 " not readable: %s", what, addr,
             sw_proc_errmsg(p));
    return 0;
}

/* The value of DT_DEBUG in the dynamic section at DYN_ADDR, 0 if it has none
 * or it cannot be read.  Returns 0 or a link error. */
static int
find_dt_debug(struct sw_proc *p, sw_addr dyn_addr, sw_addr *r_debug, struct sw_errbuf *err)
{
    size_t w = p->arch->word_size;
    uint8_t b[16];

    *r_debug = 0;
    for (size_t i = 0; i < DYN_MAX_ENTRIES; i++) {
        sw_addr at = dyn_addr + i * 2 * w;
        int rc = p->ops->read_mem(p, at, b, 2 * w);
        if (rc != 0)
            return read_failed(p, rc, err, "the dynamic section", at);
        uint64_t tag = arch_load(p->arch, b, w);
        if (tag == DYN_DT_NULL)
            return 0;
        if (tag == DYN_DT_DEBUG) {
            *r_debug = arch_load(p->arch, b + w, w);
            return 0;
        }
    }
    sw_debug(SW_DBG_CACHE, "libstate: r_debug: no DT_NULL in %u entries at 0x%" PRIx64,
             DYN_MAX_ENTRIES, dyn_addr);
    return 0;
}

/* Read the NUL-terminated string at ADDR (at most SW_RDEBUG_MAX_NAME_LEN
 * bytes) into *NAME (owned).  *NAME NULL: not readable or too long.
 * Returns 0, SW_ENOMEM or a link error (messages in ERR). */
static int
read_name(struct sw_proc *p, sw_addr addr, char **name, struct sw_errbuf *err)
{
    char buf[SW_RDEBUG_MAX_NAME_LEN];
    size_t have = 0;

    *name = NULL;
    while (have < sizeof buf) {
        sw_addr at = addr + have;
        size_t chunk = NAME_CHUNK - (size_t)(at % NAME_CHUNK);
        if (chunk > sizeof buf - have)
            chunk = sizeof buf - have;
        int rc = p->ops->read_mem(p, at, buf + have, chunk);
        if (rc != 0)
            return read_failed(p, rc, err, "a link_map name", at);
        char *nul = memchr(buf + have, '\0', chunk);
        if (nul != NULL) {
            *name = sw_strndup(buf, (size_t)(nul - buf));
            return *name ? 0 : sw_fail(err, SW_ENOMEM, "reading the link map: out of memory");
        }
        have += chunk;
    }
    sw_debug(SW_DBG_CACHE, "libstate: r_debug: name at 0x%" PRIx64 " longer than %u bytes", addr,
             SW_RDEBUG_MAX_NAME_LEN);
    return 0;
}

static bool
seen(const sw_addr *lms, size_t n, sw_addr lm)
{
    for (size_t i = 0; i < n; i++)
        if (lms[i] == lm)
            return true;
    return false;
}

int
sw_rdebug_brk(struct sw_proc *p, sw_addr dyn_addr, sw_addr *r_brk, struct sw_errbuf *err)
{
    sw_addr r_debug = 0, brk = 0;
    int rc;

    *r_brk = 0;
    if (dyn_addr == 0)
        return 0;
    rc = find_dt_debug(p, dyn_addr, &r_debug, err);
    if (rc != 0 || r_debug == 0)
        return rc;
    rc = read_word(p, r_debug + RD_R_BRK * p->arch->word_size, &brk);
    if (rc != 0)
        return read_failed(p, rc, err, "struct r_debug", r_debug);
    *r_brk = brk;
    return 0;
}

int
sw_rdebug_modules(struct sw_proc *p, sw_addr dyn_addr, struct sw_modinfo **mods, size_t *n,
                  sw_addr *r_brk, struct sw_errbuf *err)
{
    size_t w = p->arch->word_size;
    sw_addr r_debug = 0, lm = 0, brk = 0, prev = 0;
    struct sw_modinfo *out = NULL;
    sw_addr *visited = NULL;
    size_t nout = 0, nvisited = 0;
    int rc;

    *mods = NULL;
    *n = 0;
    if (r_brk)
        *r_brk = 0;
    if (dyn_addr == 0)
        return 0;
    rc = find_dt_debug(p, dyn_addr, &r_debug, err);
    if (rc != 0 || r_debug == 0)
        return rc; /* a static program, or ld.so has not filled DT_DEBUG in yet */
    rc = read_word(p, r_debug + RD_R_MAP * w, &lm);
    if (rc == 0)
        rc = read_word(p, r_debug + RD_R_BRK * w, &brk);
    if (rc != 0)
        return read_failed(p, rc, err, "struct r_debug", r_debug);
    if (r_brk)
        *r_brk = brk;
    if (lm == 0)
        return 0;

    out = sw_calloc(SW_RDEBUG_MAX_MODULES, sizeof *out);
    visited = sw_calloc(SW_RDEBUG_MAX_MODULES, sizeof *visited);
    if (out == NULL || visited == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "reading the link map: out of memory");
        goto fail;
    }
    while (lm != 0) {
        sw_addr f[LM_NFIELDS];
        if (nvisited == SW_RDEBUG_MAX_MODULES) {
            sw_debug(SW_DBG_CACHE, "libstate: r_debug: link map longer than %u entries; cut",
                     SW_RDEBUG_MAX_MODULES);
            break;
        }
        if (seen(visited, nvisited, lm)) {
            sw_debug(SW_DBG_CACHE, "libstate: r_debug: link map loops back to 0x%" PRIx64, lm);
            break;
        }
        visited[nvisited++] = lm;
        for (size_t i = 0; i < LM_NFIELDS && rc == 0; i++)
            rc = read_word(p, lm + i * w, &f[i]);
        if (rc != 0) {
            rc = read_failed(p, rc, err, "a link_map", lm);
            if (rc != 0)
                goto fail;
            break;
        }
        /* gdb (svr4_read_so_list) stops at a chain whose back links disagree. */
        if (f[LM_L_PREV] != prev) {
            sw_debug(SW_DBG_CACHE,
                     "libstate: r_debug: link_map 0x%" PRIx64 " has l_prev 0x%" PRIx64
                     ", expected 0x%" PRIx64 "; list cut",
                     lm, f[LM_L_PREV], prev);
            break;
        }
        char *name = NULL;
        if (f[LM_L_NAME] != 0) {
            rc = read_name(p, f[LM_L_NAME], &name, err);
            if (rc != 0)
                goto fail;
        }
        if (name != NULL && name[0] != '\0') {
            out[nout].name = name;
            out[nout].l_addr = f[LM_L_ADDR];
            out[nout].l_ld = f[LM_L_LD];
            out[nout].lm = lm;
            nout++;
        } else {
            /* The main program (empty name), or a name that cannot be read. */
            if (name == NULL && f[LM_L_NAME] != 0)
                sw_debug(SW_DBG_CACHE, "libstate: r_debug: link_map 0x%" PRIx64 " skipped", lm);
            sw_free(name);
        }
        prev = lm;
        lm = f[LM_L_NEXT];
    }
    sw_free(visited);
    if (nout == 0) {
        sw_free(out);
        return 0;
    }
    *mods = out;
    *n = nout;
    sw_debug(SW_DBG_CACHE, "libstate: r_debug at 0x%" PRIx64 ": %zu modules, r_brk 0x%" PRIx64,
             r_debug, nout, brk);
    return 0;
fail:
    sw_free(visited);
    sw_modinfo_free(out, nout);
    if (r_brk)
        *r_brk = 0;
    return rc;
}

/* ---- the list unchanged since the last refresh ------------------------------ */

size_t
sw_rdebug_entry_bytes(const struct sw_proc *p)
{
    return LM_NFIELDS * p->arch->word_size;
}

int
sw_rdebug_watch(const struct sw_modinfo *mods, size_t n, struct sw_rdebug_entry **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    for (size_t i = 0; i < n; i++)
        if (mods[i].lm == 0)
            return 0; /* an entry we could not find again */
    if (n == 0)
        return 0;
    struct sw_rdebug_entry *e = sw_calloc(n, sizeof *e);
    if (e == NULL)
        return SW_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        e[i].lm = mods[i].lm;
        e[i].l_addr = mods[i].l_addr;
        e[i].l_ld = mods[i].l_ld;
        e[i].check_ld = mods[i].l_ld != 0;
        e[i].l_next = i + 1 < n ? mods[i + 1].lm : 0;
        e[i].l_prev = i > 0 ? mods[i - 1].lm : 0;
        e[i].check_prev = i > 0;
    }
    *out = e;
    *nout = n;
    return 0;
}

int
sw_rdebug_unchanged(struct sw_proc *p, const struct sw_rdebug_entry *e, size_t n, bool *same,
                    struct sw_errbuf *err)
{
    size_t w = p->arch->word_size;
    uint8_t b[LM_NFIELDS * 8];

    *same = false;
    for (size_t i = 0; i < n; i++) {
        int rc = p->ops->read_mem(p, e[i].lm, b, LM_NFIELDS * w);
        if (rc != 0)
            return read_failed(p, rc, err, "a link_map", e[i].lm);
        sw_addr f[LM_NFIELDS];
        for (size_t k = 0; k < LM_NFIELDS; k++)
            f[k] = arch_load(p->arch, b + k * w, w);
        if (f[LM_L_ADDR] != e[i].l_addr || f[LM_L_NEXT] != e[i].l_next ||
            (e[i].check_ld && f[LM_L_LD] != e[i].l_ld) ||
            (e[i].check_prev && f[LM_L_PREV] != e[i].l_prev)) {
            sw_debug(SW_DBG_CACHE, "libstate: link_map 0x%" PRIx64 " changed", e[i].lm);
            return 0;
        }
    }
    *same = true;
    return 0;
}
