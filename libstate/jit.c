/* libstate/jit.c -- the GDB JIT interface: generated code's in-memory ELF objects.
 *
 * Reads __jit_debug_descriptor and its jit_code_entry list from target
 * memory, bounded (entries, bytes of each object, bytes in all), and opens
 * each object through the ELF cache like the vDSO's image, so that walks
 * find its symbols and CFI as a module's.  Not the module list (libstate.c).
 */
#include "libstate/jit.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "elf/elf.h"
#include "libstate/files.h"
#include "libstate/lib.h"
#include "libstate/module.h"

/* The descriptor's words as last read (WORDS, compared at each stop), the
 * objects of its list (LIBS and, for each, the entry it came from, so that
 * an entry still listed is not read again). */
struct sw_ls_jit {
    sw_addr desc_addr; /* 0: no descriptor in any module */
    uint8_t words[32];
    bool have_words;
    struct sw_lib_entry *libs; /* owned, N of them; names owned */
    struct sw_jit_entry *from; /* owned, N of them */
    size_t n;
    uint64_t bytes_read; /* of objects, over the library state's life */
    bool warned_total;
};

/* i386 aligns a uint64_t member to 4 bytes; the other 32-bit ABIs to 8. */
static bool
size_packed(const struct arch_desc *a)
{
    return a->word_size == 4 && strcmp(a->name, "i386") == 0;
}

size_t
sw_jit_desc_bytes(const struct arch_desc *a)
{
    return 8 + 2 * (size_t)a->word_size;
}

size_t
sw_jit_entry_bytes(const struct arch_desc *a)
{
    size_t w = a->word_size;
    if (w == 8)
        return 32;
    return size_packed(a) ? 20 : 24;
}

void
sw_jit_desc_decode(const struct arch_desc *a, const uint8_t *buf, struct sw_jit_desc *d)
{
    size_t w = a->word_size;
    d->version = (uint32_t)arch_load(a, buf, 4);
    d->action = (uint32_t)arch_load(a, buf + 4, 4);
    d->relevant = arch_load(a, buf + 8, w);
    d->first = arch_load(a, buf + 8 + w, w);
}

static void
entry_decode(const struct arch_desc *a, const uint8_t *buf, sw_addr at, struct sw_jit_entry *e)
{
    size_t w = a->word_size;
    size_t size_off = w == 8 ? 24 : size_packed(a) ? 12 : 16;
    e->at = at;
    e->next = arch_load(a, buf, w);
    e->prev = arch_load(a, buf + w, w);
    e->symfile_addr = arch_load(a, buf + 2 * w, w);
    e->symfile_size = arch_load(a, buf + size_off, 8);
}

int
sw_jit_entries(struct sw_proc *p, sw_addr first, size_t max, struct sw_jit_entry **out, size_t *n,
               char *why, size_t whylen, struct sw_errbuf *err)
{
    const struct arch_desc *a = p->arch;
    const size_t eb = sw_jit_entry_bytes(a);
    struct sw_jit_entry *v = NULL;
    size_t nv = 0, cap = 0;
    sw_addr at = first, prev = 0;
    uint8_t buf[32];
    char local[8];

    if (why == NULL || whylen == 0) {
        why = local;
        whylen = sizeof local;
    }
    why[0] = '\0';
    *out = NULL;
    *n = 0;
    while (at != 0) {
        if (nv == max) {
            snprintf(why, whylen, "more than %zu entries: the rest are left out", max);
            break;
        }
        int rc = p->ops->read_mem(p, at, buf, eb);
        if (rc != 0 && sw_is_link_error(rc)) {
            sw_free(v);
            return sw_fail(err, rc, "reading the JIT entry at 0x%" PRIx64 ": %s", at,
                           sw_proc_errmsg(p));
        }
        if (rc != 0) {
            snprintf(why, whylen, "the entry at 0x%" PRIx64 " cannot be read: %s", at,
                     sw_proc_errmsg(p));
            break;
        }
        struct sw_jit_entry e;
        entry_decode(a, buf, at, &e);
        if (e.prev != prev) {
            /* A list whose every link is checked both ways has no cycle:
             * the first entry met twice would need two predecessors. */
            snprintf(why, whylen,
                     "the entry at 0x%" PRIx64 " says its predecessor is 0x%" PRIx64
                     ", not 0x%" PRIx64 " (a broken or cyclic list): the rest are left out",
                     at, e.prev, prev);
            break;
        }
        if (nv == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            struct sw_jit_entry *g = sw_realloc(v, ncap * sizeof *g);
            if (g == NULL) {
                sw_free(v);
                return sw_fail(err, SW_ENOMEM, "reading the JIT entries: out of memory");
            }
            v = g;
            cap = ncap;
        }
        v[nv++] = e;
        prev = at;
        at = e.next;
    }
    *out = nv ? v : NULL;
    if (nv == 0)
        sw_free(v);
    *n = nv;
    return 0;
}

const char *
sw_jit_symfile_refused(uint64_t size, uint64_t read)
{
    if (size < 64)
        return "smaller than an ELF header, left out";
    if (size > SW_JIT_MAX_SYMFILE)
        return "larger than 16 MiB, left out";
    if (read > SW_JIT_MAX_TOTAL || size > SW_JIT_MAX_TOTAL - read)
        return "past the 256 MiB read of JIT objects, this and later ones are left out";
    return NULL;
}

static void
objects_free(struct sw_lib_entry *libs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sw_free(libs[i].pub.name);
    sw_free(libs);
}

void
sw_ls_jit_free(struct sw_libstate *ls)
{
    struct sw_ls_jit *j = ls->jit;
    if (j == NULL)
        return;
    objects_free(j->libs, j->n);
    sw_free(j->from);
    sw_free(j);
    ls->jit = NULL;
}

/* A warning on LS: "KIND at ADDR: WHAT".  Returns 0 or
 * SW_ENOMEM. */
static int
jit_warn(struct sw_libstate *ls, const char *kind, sw_addr addr, const char *what)
{
    char msg[320];
    snprintf(msg, sizeof msg, "%s at 0x%" PRIx64 ": %.240s", kind, addr, what);
    sw_debug(SW_DBG_CACHE, "libstate: %s", msg);
    return sw_ls_warn(ls, msg);
}

/* The object of entry E as an entry of LIBS: its image read from target
 * memory and opened through the ELF cache, placed where its own addresses
 * say (JIT objects are linked at their run-time addresses: bias 0).
 * *OK false, with a warning, when it is refused: too large, unreadable, not
 * ELF of the target's architecture, no PT_LOAD.  Returns 0, or a link
 * error or SW_ENOMEM. */
static int
object_open(struct sw_libstate *ls, struct sw_ls_jit *j, const struct sw_jit_entry *e,
            struct sw_lib_entry *lib, bool *ok)
{
    struct sw_proc *p = ls->proc;
    struct sw_errbuf err;
    char name[48];
    int rc;

    *ok = false;
    snprintf(name, sizeof name, "[jit 0x%" PRIx64 "]", e->symfile_addr);
    const char *refused = sw_jit_symfile_refused(e->symfile_size, j->bytes_read);
    if (refused != NULL && e->symfile_size >= 64 && e->symfile_size <= SW_JIT_MAX_SYMFILE) {
        if (j->warned_total) /* the total: warned about once */
            return 0;
        j->warned_total = true;
    }
    if (refused != NULL)
        return jit_warn(ls, "JIT object", e->symfile_addr, refused);
    uint8_t *buf = sw_malloc((size_t)e->symfile_size);
    if (buf == NULL)
        return sw_fail(&ls->err, SW_ENOMEM,
                       "reading the JIT object at 0x%" PRIx64 ": out of memory", e->symfile_addr);
    j->bytes_read += e->symfile_size;
    rc = p->ops->read_mem(p, e->symfile_addr, buf, (size_t)e->symfile_size);
    if (rc != 0) {
        sw_free(buf);
        if (sw_is_link_error(rc))
            return sw_fail(&ls->err, rc, "reading the JIT object at 0x%" PRIx64 ": %s",
                           e->symfile_addr, sw_proc_errmsg(p));
        return jit_warn(ls, "JIT object (unreadable)", e->symfile_addr, sw_proc_errmsg(p));
    }
    struct sw_elf *elf = NULL;
    sw_err_clear(&err);
    rc = sw_elfcache_open_mem(ls->cache, name, buf, (size_t)e->symfile_size, &elf, &err);
    sw_free(buf);
    if (rc == SW_ENOMEM)
        return sw_err_copy(&ls->err, &err);
    if (rc != 0)
        return jit_warn(ls, "JIT object", e->symfile_addr, err.msg);
    if (sw_elf_arch(elf) != p->arch)
        return jit_warn(ls, "JIT object", e->symfile_addr,
                        "not built for the target's architecture, left out");
    sw_addr lo, hi;
    sw_elf_load_range(elf, &lo, &hi);
    memset(lib, 0, sizeof *lib);
    lib->pub.name = sw_strdup(name);
    if (lib->pub.name == NULL)
        return sw_fail(&ls->err, SW_ENOMEM, "%s: out of memory", name);
    lib->pub.start = lo;
    lib->pub.end = hi;
    lib->elf = elf;
    sw_elf_image(elf, &lib->image, &lib->image_len);
    rc = sw_modcache_module(ls->mc, elf, &lib->module, &ls->err);
    if (rc != 0) {
        sw_free(lib->pub.name);
        return rc;
    }
    *ok = true;
    return 0;
}

/* Read the list again from the descriptor's FIRST: entries still listed as
 * they were keep their object, the others are read.  Returns 0, or a link
 * error or SW_ENOMEM. */
static int
read_list(struct sw_libstate *ls, struct sw_ls_jit *j, sw_addr first)
{
    struct sw_jit_entry *e = NULL;
    size_t ne = 0, n = 0;
    char why[200];

    int rc =
        sw_jit_entries(ls->proc, first, SW_JIT_MAX_ENTRIES, &e, &ne, why, sizeof why, &ls->err);
    if (rc != 0)
        return rc;
    if (why[0] != '\0' && (rc = jit_warn(ls, "the JIT list", first, why)))
        goto out;
    struct sw_lib_entry *libs = ne ? sw_calloc(ne, sizeof *libs) : NULL;
    struct sw_jit_entry *from = ne ? sw_calloc(ne, sizeof *from) : NULL;
    if (ne && (libs == NULL || from == NULL)) {
        sw_free(libs);
        sw_free(from);
        rc = sw_fail(&ls->err, SW_ENOMEM, "reading the JIT objects: out of memory");
        goto out;
    }
    for (size_t i = 0; i < ne && rc == 0; i++) {
        bool ok = false;
        for (size_t k = 0; k < j->n && !ok; k++) {
            const struct sw_jit_entry *o = &j->from[k];
            if (o->at == e[i].at && o->symfile_addr == e[i].symfile_addr &&
                o->symfile_size == e[i].symfile_size && j->libs[k].pub.name != NULL) {
                libs[n] = j->libs[k];
                j->libs[k].pub.name = NULL; /* moved */
                ok = true;
            }
        }
        if (!ok)
            rc = object_open(ls, j, &e[i], &libs[n], &ok);
        if (rc == 0 && ok)
            from[n++] = e[i];
    }
    if (rc != 0) {
        objects_free(libs, n);
        sw_free(from);
        goto out;
    }
    objects_free(j->libs, j->n);
    sw_free(j->from);
    j->libs = libs;
    j->from = from;
    j->n = n;
    sw_debug(SW_DBG_CACHE, "libstate: %zu JIT objects of %zu entries", n, ne);
out:
    sw_free(e);
    return rc;
}

/* Read the descriptor at J->DESC_ADDR and, when its words changed (or
 * ALWAYS), its list.  Returns 0, or a link error or SW_ENOMEM. */
static int
read_descriptor(struct sw_libstate *ls, struct sw_ls_jit *j, bool always)
{
    const struct arch_desc *a = ls->proc->arch;
    const size_t db = sw_jit_desc_bytes(a);
    uint8_t words[32];
    struct sw_jit_desc d;

    int rc = ls->proc->ops->read_mem(ls->proc, j->desc_addr, words, db);
    if (rc != 0 && sw_is_link_error(rc))
        return sw_fail(&ls->err, rc, "reading %s at 0x%" PRIx64 ": %s", SW_JIT_DESCRIPTOR,
                       j->desc_addr, sw_proc_errmsg(ls->proc));
    if (rc != 0) {
        sw_debug(SW_DBG_CACHE, "libstate: %s at 0x%" PRIx64 " cannot be read: %s",
                 SW_JIT_DESCRIPTOR, j->desc_addr, sw_proc_errmsg(ls->proc));
        memset(words, 0, sizeof words);
    }
    if (!always && j->have_words && memcmp(words, j->words, db) == 0)
        return 0;
    memcpy(j->words, words, db);
    j->have_words = true;
    sw_jit_desc_decode(a, words, &d);
    if (d.version != 1 && d.first != 0) {
        sw_debug(SW_DBG_CACHE, "libstate: %s version %" PRIu32 ", not 1: not read",
                 SW_JIT_DESCRIPTOR, d.version);
        d.first = 0;
    }
    return read_list(ls, j, d.first);
}

int
sw_ls_jit_refresh(struct sw_libstate *ls, const struct sw_lib_entry *libs, size_t n)
{
    if (ls->no_jit)
        return 0;
    if (ls->jit == NULL && (ls->jit = sw_calloc(1, sizeof *ls->jit)) == NULL)
        return sw_fail(&ls->err, SW_ENOMEM, "reading the JIT objects: out of memory");
    struct sw_ls_jit *j = ls->jit;
    sw_addr desc = 0;
    for (size_t i = 0; i < n && desc == 0; i++) {
        sw_addr v;
        if (libs[i].elf != NULL && sw_elf_any_symbol(libs[i].elf, SW_JIT_DESCRIPTOR, &v) == 0 &&
            v != 0)
            desc = v + libs[i].pub.bias;
    }
    if (desc != j->desc_addr) {
        j->desc_addr = desc;
        j->have_words = false;
    }
    if (desc == 0)
        return read_list(ls, j, 0);
    sw_debug(SW_DBG_CACHE, "libstate: %s at 0x%" PRIx64, SW_JIT_DESCRIPTOR, desc);
    return read_descriptor(ls, j, false);
}

int
sw_ls_jit_update(struct sw_libstate *ls)
{
    if (ls->jit == NULL || ls->jit->desc_addr == 0)
        return 0;
    return read_descriptor(ls, ls->jit, false);
}

void
sw_ls_jit_stop_read(const struct sw_libstate *ls, sw_addr *addr, size_t *len)
{
    *addr = 0;
    *len = 0;
    if (ls->jit != NULL && ls->jit->desc_addr != 0) {
        *addr = ls->jit->desc_addr;
        *len = sw_jit_desc_bytes(ls->proc->arch);
    }
}

const struct sw_lib *
sw_ls_jit_lib_at(const struct sw_libstate *ls, sw_addr addr)
{
    const struct sw_ls_jit *j = ls->jit;
    if (j == NULL)
        return NULL;
    for (size_t i = 0; i < j->n; i++)
        if (addr >= j->libs[i].pub.start && addr < j->libs[i].pub.end)
            return &j->libs[i].pub;
    return NULL;
}
