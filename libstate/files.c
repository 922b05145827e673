/* libstate/files.c -- which local file each module is read from.
 *
 * Under the sysroot first, then by its file name in the library path (gdb's
 * solib-search-path).  A local file whose build-id note lies in a
 * loaded segment is checked against the target's memory: the note's bytes
 * where the module is loaded, one small read, every module's in one batch
 * (one round trip on gdbserver, no Host I/O at all).  A file that cannot be
 * checked so is checked through read_file (vFile: the target file's first
 * page); without a usable local file the target's copy is fetched into the
 * cache directory (libstate/fetch.c).  Not the module list (libstate.c).
 */
#define _GNU_SOURCE /* tdestroy */
#include "libstate/files.h"

#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rspwalk/proc.h"
#include "cfi/cfi.h"
#include "dwarf/dwarf.h"
#include "elf/elf.h"
#include "libstate/fetch.h"
#include "libstate/module.h"
#include "util/path.h"

/* A build-id note: 12-byte header, "GNU\0", the descriptor. */
#define SW_LS_NOTE_MAX (16 + SW_FETCH_MAX_BUILD_ID)

/* Open PATH for a module into *ELF; a missing or unusable file, or one
 * built for another architecture than the target's, leaves *ELF NULL (the
 * module is listed without a file).  Returns 0 or SW_ENOMEM. */
static int warn(struct sw_libstate *ls, const char *msg);

static int
open_module_file(struct sw_libstate *ls, const char *path, struct sw_elf **elf)
{
    struct sw_errbuf err;
    struct stat st;

    *elf = NULL;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISREG(st.st_mode)) {
        /* A FIFO or a device named as a library: never opened for reading
         * (elf/file.c opens regular files only, and would refuse it too). */
        char msg[sizeof ls->err.msg];
        snprintf(msg, sizeof msg, "%s: not a regular file; not used", path);
        return warn(ls, msg);
    }
    int rc = sw_elfcache_open(ls->cache, path, elf, &err);
    if (rc != 0) {
        *elf = NULL;
        if (rc == SW_ENOMEM)
            return sw_err_copy(&ls->err, &err);
        sw_debug(SW_DBG_CACHE, "libstate: %s", err.msg);
        return 0;
    }
    /* Compressed sections over the cache's limits (elf/inflate.c): said once. */
    if (sw_elf_warning(*elf) != NULL && (rc = sw_ls_warn(ls, sw_elf_warning(*elf))) != 0)
        return sw_fail(&ls->err, rc, "%s: out of memory", path);
    if (sw_elf_arch(*elf) != ls->proc->arch) {
        sw_debug(SW_DBG_CACHE, "libstate: %s: built for %s, the target is %s", path,
                 sw_elf_arch(*elf) ? sw_elf_arch(*elf)->name : "an unsupported architecture",
                 ls->proc->arch->name);
        *elf = NULL;
    }
    return 0;
}

/* At most this many warnings are kept: each names a file the stub chose,
 * and a stub listing 100000 modules of the wrong build would otherwise
 * print 100000 lines. */
#define SW_LS_MAX_WARNINGS 64u

int
sw_ls_warn(struct sw_libstate *ls, const char *msg)
{
    sw_debug(SW_DBG_CACHE, "libstate: %s", msg);
    if (ls->nwarnings > SW_LS_MAX_WARNINGS)
        return 0;
    if (ls->nwarnings == SW_LS_MAX_WARNINGS)
        msg = "more warnings about modules left out";
    for (size_t i = 0; i < ls->nwarnings; i++)
        if (strcmp(ls->warnings[i], msg) == 0)
            return 0; /* the same file seen again at a later refresh */
    char **grown = sw_grow(ls->warnings, &ls->warnings_cap, ls->nwarnings + 1, sizeof *grown, 8);
    if (grown == NULL)
        return SW_ENOMEM;
    ls->warnings = grown;
    ls->warnings[ls->nwarnings] = sw_strdup(msg);
    if (ls->warnings[ls->nwarnings] == NULL)
        return SW_ENOMEM;
    ls->nwarnings++;
    return 0;
}

static int
warn(struct sw_libstate *ls, const char *msg)
{
    return sw_ls_warn(ls, msg);
}

/* The local file *LOCAL of TARGET is another build than the target's:
 * reported, and not used. */
static int
drop_local(struct sw_libstate *ls, const char *target, char **local, struct sw_elf **elf)
{
    char msg[sizeof ls->err.msg];
    snprintf(msg, sizeof msg, "%s: local file's build-id differs from the target's; not used",
             target);
    *elf = NULL;
    sw_free(*local);
    *local = NULL;
    if (warn(ls, msg) != 0)
        return sw_fail(&ls->err, SW_ENOMEM, "checking %s: out of memory", target);
    return 0;
}

/* Without a usable local file: the target's copy of TARGET, whose build-id
 * is ID (ID_LEN 0: unknown, not fetched), from the cache directory or read
 * through read_file, replacing *LOCAL and *ELF.  Any failure but a link
 * error or no memory leaves them as they are.  Returns 0, SW_ENOMEM or a
 * link error (message on LS). */
static int
fetch_copy(struct sw_libstate *ls, const char *target, const uint8_t *id, size_t id_len,
           char **local, struct sw_elf **elf)
{
    struct sw_errbuf err;
    if (id_len == 0 || ls->cache_dir == NULL || ls->proc->ops->read_file == NULL) {
        sw_debug(SW_DBG_CACHE, "libstate: %s: not fetched (%s)", target,
                 id_len == 0                        ? "the target's file has no build-id"
                 : ls->proc->ops->read_file == NULL ? "no file access to the target"
                                                    : "no cache directory");
        return 0;
    }
    char *fetched = NULL;
    struct sw_errbuf dropped;
    int rc = sw_fetch_file(ls->proc, ls->cache_dir, ls->cache_max_bytes, target, id, id_len,
                           ls->max_fetch_bytes, &fetched, &err, &dropped);
    if (dropped.msg[0] != '\0' && warn(ls, dropped.msg) != 0) {
        sw_free(fetched);
        return sw_fail(&ls->err, SW_ENOMEM, "checking %s: out of memory", target);
    }
    if (rc != 0) {
        if (sw_is_link_error(rc) || rc == SW_ENOMEM)
            return sw_err_copy(&ls->err, &err);
        sw_debug(SW_DBG_CACHE, "libstate: %s", err.msg);
        return 0;
    }
    rc = open_module_file(ls, fetched, elf);
    if (rc != 0 || *elf == NULL) {
        sw_free(fetched);
        return rc;
    }
    sw_free(*local);
    *local = fetched;
    return 0;
}

/* Check the local file *LOCAL (opened as *ELF, NULL when missing or
 * unusable) for TARGET against the target's copy, through read_file: a
 * build-id that differs makes it unusable (reported); without a usable
 * local file, the target's copy is fetched into the cache directory.  The
 * target's build-id comes from the first page of its file; a file without
 * one cannot be checked (the local file is kept) or cached.  Any failure
 * but a link error or no memory keeps what was found locally.  Returns 0,
 * SW_ENOMEM or a link error (message on LS). */
static int
check_or_fetch(struct sw_libstate *ls, const char *target, char **local, struct sw_elf **elf)
{
    struct sw_proc *p = ls->proc;
    uint8_t id[SW_FETCH_MAX_BUILD_ID];
    size_t id_len = 0;
    struct sw_errbuf err;
    int rc;

    sw_err_clear(&err);
    if (p->ops->read_file == NULL)
        return 0;
    rc = sw_fetch_target_build_id(p, target, id, &id_len, &err);
    if (rc != 0) {
        if (sw_is_link_error(rc) || rc == SW_ENOMEM)
            return sw_err_copy(&ls->err, &err);
        sw_debug(SW_DBG_CACHE, "libstate: %s: no build-id from the target: %s", target, err.msg);
        return 0;
    }
    if (*elf != NULL) {
        const uint8_t *lid;
        size_t lid_len;
        sw_elf_build_id(*elf, &lid, &lid_len);
        if (id_len == 0 || lid_len == 0 || (lid_len == id_len && memcmp(lid, id, id_len) == 0))
            return 0;
        if ((rc = drop_local(ls, target, local, elf)) != 0)
            return rc;
    }
    return fetch_copy(ls, target, id, id_len, local, elf);
}

static int
resolved_cmp(const void *a, const void *b)
{
    return strcmp(((const struct resolved *)a)->target, ((const struct resolved *)b)->target);
}

static void
resolved_free(void *p)
{
    struct resolved *r = p;
    sw_free(r->target);
    sw_free(r->path);
    sw_free(r);
}

void
sw_ls_resolved_free(struct sw_libstate *ls)
{
    tdestroy(ls->resolved, resolved_free);
    ls->resolved = NULL;
    ls->nresolved = 0;
}

/* Remember LOCAL (NULL: none) as TARGET's file.  Returns 0 or SW_ENOMEM. */
static int
remember(struct sw_libstate *ls, const char *target, const char *local)
{
    struct resolved *r = sw_calloc(1, sizeof *r);
    if (r == NULL)
        return SW_ENOMEM;
    r->target = sw_strdup(target);
    r->path = local ? sw_strdup(local) : NULL;
    struct resolved **slot = NULL;
    if (r->target != NULL && (local == NULL || r->path != NULL))
        slot = tsearch(r, &ls->resolved, resolved_cmp);
    if (slot == NULL || *slot != r) {
        /* out of memory, or TARGET is there already (callers look first) */
        resolved_free(r);
        return slot == NULL ? SW_ENOMEM : 0;
    }
    ls->nresolved++;
    return 0;
}

/* gdb's solib-search-path: TARGET's file name in each directory of the
 * library path, in order; the first usable file (opened into *ELF) takes
 * the place of *LOCAL.  Returns 0 or SW_ENOMEM. */
static int
search_lib_path(struct sw_libstate *ls, const char *target, char **local, struct sw_elf **elf)
{
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    if (ls->lib_path == NULL || !sw_path_is_name(base, strlen(base)))
        return 0;
    for (const char *p = ls->lib_path; *p != '\0';) {
        size_t n = strcspn(p, ":");
        if (n > 0) {
            size_t bl = strlen(base);
            char *cand = sw_malloc(n + bl + 2);
            if (cand == NULL)
                return sw_fail(&ls->err, SW_ENOMEM, "%s: out of memory", target);
            memcpy(cand, p, n);
            cand[n] = '/';
            memcpy(cand + n + 1, base, bl + 1);
            int rc = open_module_file(ls, cand, elf);
            if (rc != 0 || *elf != NULL) {
                if (rc == 0) {
                    sw_debug(SW_DBG_CACHE, "libstate: %s: found in the library path as %s", target,
                             cand);
                    sw_free(*local);
                    *local = cand;
                } else {
                    sw_free(cand);
                }
                return rc;
            }
            sw_free(cand);
        }
        p += n + (p[n] == ':');
    }
    return 0;
}

/* Whether ELF's build-id can be seen in target memory. */
static bool
checkable_in_memory(struct sw_elf *elf)
{
    sw_addr vaddr;
    const uint8_t *note;
    size_t len;
    return elf != NULL && sw_elf_build_id_note(elf, &vaddr, &note, &len) && len <= SW_LS_NOTE_MAX;
}

int
sw_ls_resolve(struct sw_libstate *ls, const char *target, bool defer, char **path,
              struct sw_elf **elf, bool *deferred)
{
    int rc;

    *path = NULL;
    *elf = NULL;
    *deferred = false;
    /* A balanced tree (glibc's tsearch is red-black): 100000 modules are
     * looked up in O(log n) each, not in a list scanned per module. */
    struct resolved key = { .target = (char *)target };
    struct resolved **found = tfind(&key, &ls->resolved, resolved_cmp);
    if (found != NULL) {
        if ((*found)->path == NULL)
            return 0;
        *path = sw_strdup((*found)->path);
        if (*path == NULL)
            return SW_ENOMEM;
        rc = open_module_file(ls, *path, elf);
        if (rc != 0 || *elf == NULL) {
            sw_free(*path);
            *path = NULL;
        }
        return rc;
    }
    char *local = NULL;
    struct sw_errbuf err;
    rc = sw_path_in_root(ls->sysroot, target, &local, &err);
    if (rc == SW_EINVAL) {
        /* A name that climbs out of the sysroot, or a loop of links: no
         * local file for it, and none fetched under its name. */
        char msg[sizeof err.msg + sizeof "; not used"];
        snprintf(msg, sizeof msg, "%s; not used", err.msg);
        if ((rc = warn(ls, msg)) == 0)
            rc = remember(ls, target, NULL);
        return rc == 0 ? 0 : sw_fail(&ls->err, SW_ENOMEM, "checking %s: out of memory", target);
    }
    if (rc != 0)
        return sw_err_copy(&ls->err, &err);
    rc = open_module_file(ls, local, elf);
    if (rc == 0 && *elf == NULL)
        rc = search_lib_path(ls, target, &local, elf);
    if (rc == 0 && defer && checkable_in_memory(*elf)) {
        *deferred = true;
        *path = local;
        return 0;
    }
    if (rc == 0)
        rc = check_or_fetch(ls, target, &local, elf);
    if (rc == 0 && *elf == NULL) {
        sw_free(local);
        local = NULL;
    }
    if (rc == 0)
        rc = remember(ls, target, local);
    if (rc != 0) {
        sw_free(local);
        *elf = NULL;
        return rc;
    }
    *path = local;
    return 0;
}

/* The build-id in a note read from target memory (BUF, LEN bytes as the
 * local note's layout says): *ID and *ID_LEN, or false when BUF holds no
 * GNU build-id note of that size. */
static bool
note_id(const struct arch_desc *a, const uint8_t *buf, size_t len, const uint8_t **id,
        size_t *id_len)
{
    if (len < 16 || arch_load(a, buf, 4) != 4 || arch_load(a, buf + 8, 4) != 3 ||
        memcmp(buf + 12, "GNU", 4) != 0)
        return false;
    size_t n = (size_t)arch_load(a, buf + 4, 4);
    if (n == 0 || n > SW_FETCH_MAX_BUILD_ID || n > len - 16 || len - n < 16)
        return false;
    *id = buf + len - n;
    *id_len = n;
    return true;
}

/* The verdict on CHECK's file from NOTE, what target memory holds where the
 * file's note would be (RC: the read's result). */
static int
check_one(struct sw_libstate *ls, struct sw_lib_entry *lib, struct sw_ls_check *check, int rc,
          const uint8_t *seen)
{
    sw_addr vaddr;
    const uint8_t *note, *id;
    size_t len, id_len;
    struct sw_elf *before = lib->elf;

    sw_elf_build_id_note(lib->elf, &vaddr, &note, &len);
    if (rc == 0 && memcmp(seen, note, len) == 0) {
        sw_debug(SW_DBG_CACHE, "libstate: %s: build-id found in target memory at 0x%" PRIx64,
                 check->target, lib->pub.bias + vaddr);
    } else if (rc == 0 && note_id(ls->proc->arch, seen, len, &id, &id_len)) {
        sw_debug(SW_DBG_CACHE, "libstate: %s: another build-id in target memory at 0x%" PRIx64,
                 check->target, lib->pub.bias + vaddr);
        if ((rc = drop_local(ls, check->target, &lib->pub.path, &lib->elf)) != 0 ||
            (rc = fetch_copy(ls, check->target, id, id_len, &lib->pub.path, &lib->elf)) != 0)
            return rc;
    } else {
        sw_debug(SW_DBG_CACHE,
                 "libstate: %s: no build-id note in target memory at 0x%" PRIx64
                 "; asking for the file",
                 check->target, lib->pub.bias + vaddr);
        if ((rc = check_or_fetch(ls, check->target, &lib->pub.path, &lib->elf)) != 0)
            return rc;
    }
    if (lib->elf == NULL) {
        sw_free(lib->pub.path);
        lib->pub.path = NULL;
    }
    check->changed = lib->elf != before;
    return remember(ls, check->target, lib->pub.path);
}

/* What a walk reads first, read while the check's round trip is under way:
 * the DWARF libraries (opened on first use, util/dl.h), then each module's
 * symbol tables, its call frame information and its DWARF's unit table, one
 * piece a call (module I, piece STEP; LIBS pieces done first). */
struct ls_warm {
    struct sw_modcache *mc;
    struct sw_lib_entry *libs;
    size_t n, i;
    unsigned word_size;
    int step, libs_done;
    struct sw_module *m; /* LIBS[I]'s, from step 1 */
};

static bool
warm_modules(void *arg)
{
    struct ls_warm *w = arg;
    struct sw_errbuf err;
    const struct sw_errbuf *why;
    struct sw_dinfo *d;
    struct sw_cfi *cfi;
    const char *lib_why;
    switch (w->libs_done++) {
    case 0:
        (void)sw_cfi_load(&lib_why); /* a failure is reported by the walk that needs it */
        return true;
    case 1:
        (void)sw_dinfo_load(&lib_why);
        return true;
    default:
        break;
    }
    /* A failure (no memory) is met again, and reported, at first use. */
    for (; w->i < w->n; w->i++, w->step = 0) {
        struct sw_lib_entry *lib = &w->libs[w->i];
        if (lib->elf == NULL)
            continue;
        switch (w->step) {
        case 0:
            w->step = 1;
            (void)sw_elf_load_symbols(lib->elf);
            return true;
        case 1:
            /* CFI and DWARF only where that is cheap: an uncompressed copy
             * not made yet is made at the first use, not speculatively. */
            if (lib->pub.path == NULL || !sw_elf_dwarf_ready(lib->elf) ||
                sw_modcache_module(w->mc, lib->elf, &w->m, &err) != 0)
                continue;
            w->step = 2;
            (void)sw_module_cfi(w->m, w->word_size, &cfi, &why);
            return true;
        case 2:
            w->step = 3;
            if (sw_module_dinfo(w->m, &d, &err) == 0 && d != NULL) {
                (void)sw_dinfo_warm(d);
                return true;
            }
            continue;
        default:
            continue;
        }
    }
    return false;
}

int
sw_ls_check_files(struct sw_libstate *ls, struct sw_lib_entry *libs, struct sw_ls_check *checks,
                  size_t n, sw_addr warm, size_t nlibs)
{
    struct ls_warm w = { ls->mc, libs, nlibs, 0, ls->proc->arch->word_size, 0, 0, NULL };
    struct sw_mem_req *reqs = sw_calloc(n + 1, sizeof *reqs);
    uint8_t *bufs = sw_malloc(n ? n * SW_LS_NOTE_MAX : 1);
    size_t nreq = n;
    int rc = 0;

    if (reqs == NULL || bufs == NULL) {
        rc = sw_fail(&ls->err, SW_ENOMEM, "checking %zu modules' files: out of memory", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        struct sw_lib_entry *lib = &libs[checks[i].lib];
        sw_addr vaddr;
        const uint8_t *note;
        size_t len;
        sw_elf_build_id_note(lib->elf, &vaddr, &note, &len);
        reqs[i] = (struct sw_mem_req){ lib->pub.bias + vaddr, len, bufs + i * SW_LS_NOTE_MAX, 0 };
    }
    if (warm != 0)
        reqs[nreq++] = (struct sw_mem_req){ warm, 1, NULL, 0 };
    if (nreq == 0)
        goto out;
    rc = sw_proc_read_mem_batch_while(ls->proc, reqs, nreq, warm_modules, &w);
    if (rc != 0) {
        rc = sw_fail(&ls->err, rc, "checking the modules' build-ids in target memory: %s",
                     sw_proc_errmsg(ls->proc));
        goto out;
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = check_one(ls, &libs[checks[i].lib], &checks[i], reqs[i].rc, reqs[i].buf);
out:
    sw_free(reqs);
    sw_free(bufs);
    return rc;
}
