/* elf/debug_plain.c -- uncompressed copies of debug files, kept by build-id.
 *
 * Reads the debug file with libelf, inflates its SHF_COMPRESSED sections
 * (elf_compress), and writes them with every other section at offsets of its
 * own (ELF_F_LAYOUT) into a temporary file renamed to
 * CACHE/<build-id hex>/debuginfo.  Not the lookup of debug files
 * (elf/elf.c) and not a DWARF reader.
 */
#include "elf/debug_plain.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"
#include "elf/elf_internal.h"
#include "elf/image.h"

#define PLAIN_NAME "debuginfo"
/* GNU build-id note type (elf.h's NT_GNU_BUILD_ID). */
#define PLAIN_NT_GNU_BUILD_ID 3

static bool
has_compressed(Elf *elf)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) != NULL && (sh.sh_flags & SHF_COMPRESSED))
            return true;
    return false;
}

/* Whether ELF's SHT_NOTE sections carry the GNU build-id ID. */
static bool
has_build_id(Elf *elf, const uint8_t *id, size_t id_len)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        GElf_Nhdr nh;
        size_t off = 0, name_off, desc_off, next;
        while (d != NULL && off < d->d_size &&
               (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == PLAIN_NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0)
                return nh.n_descsz == id_len &&
                       memcmp((const uint8_t *)d->d_buf + desc_off, id, id_len) == 0;
            off = next;
        }
    }
    return false;
}

/* Whether PATH is a finished copy: no compressed section, build-id ID. */
static bool
good_copy(const char *path, const uint8_t *id, size_t id_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    bool ok = elf != NULL && !has_compressed(elf) && has_build_id(elf, id, id_len);
    elf_end(elf);
    close(fd);
    return ok;
}

static uint64_t
round_up(uint64_t v, uint64_t align)
{
    return align > 1 ? (v + align - 1) / align * align : v;
}

/* The section index of the symbol table's string table, 0 if none. */
static size_t
symtab_strings(Elf *in)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(in, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == SHT_SYMTAB)
            return sh.sh_link;
    return 0;
}

/* Write IN's sections, inflated, into the new file on OFD.  False (the
 * reason in WHY) when libelf refuses any step. */
static bool
write_plain(Elf *in, int ofd, const struct sw_inflate_limits *lim, const char **why)
{
    char over[160];
    GElf_Ehdr eh, oh;
    size_t shstrndx;
    bool ok = false;
    Elf *out = elf_begin(ofd, ELF_C_WRITE, NULL);

    *why = NULL; /* NULL: libelf's own message */
    if (out == NULL || gelf_getehdr(in, &eh) == NULL || elf_getshdrstrndx(in, &shstrndx) != 0 ||
        gelf_newehdr(out, gelf_getclass(in)) == NULL || gelf_getehdr(out, &oh) == NULL)
        goto out;
    if (eh.e_shnum == 0 || shstrndx >= SHN_LORESERVE) {
        *why = "extended section numbering";
        goto out;
    }
    memcpy(oh.e_ident, eh.e_ident, EI_NIDENT);
    oh.e_type = eh.e_type;
    oh.e_machine = eh.e_machine;
    oh.e_version = eh.e_version;
    oh.e_entry = eh.e_entry;
    oh.e_flags = eh.e_flags;
    oh.e_phoff = 0;
    oh.e_shstrndx = eh.e_shstrndx;
    elf_flagelf(out, ELF_C_SET, ELF_F_LAYOUT);

    size_t strtab = symtab_strings(in);
    uint64_t off = gelf_fsize(out, ELF_T_EHDR, 1, EV_CURRENT);
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(in, scn)) != NULL) {
        Elf_Scn *o = elf_newscn(out);
        if (o == NULL || gelf_getshdr(scn, &sh) == NULL)
            goto out;
        if (sh.sh_type == SHT_SYMTAB || (strtab != 0 && elf_ndxscn(scn) == strtab)) {
            sh.sh_type = SHT_NOBITS; /* kept for its index; libdwarf never reads it */
        } else if (!sw_elf_scn_inflate_ok(in, scn, &sh, elf_strptr(in, shstrndx, sh.sh_name), lim,
                                          over, sizeof over)) {
            /* kept for its index, empty: the walk goes on without it */
            sw_debug(SW_DBG_CACHE, "elf: %s: left out of the copy", over);
            sh.sh_type = SHT_NOBITS;
            sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
        } else if ((sh.sh_flags & SHF_COMPRESSED) &&
                   (elf_compress(scn, 0, 0) < 0 || gelf_getshdr(scn, &sh) == NULL)) {
            *why = "a section does not inflate";
            goto out;
        }
        sh.sh_offset = off;
        if (sh.sh_type != SHT_NOBITS) {
            Elf_Data *d = elf_getdata(scn, NULL);
            Elf_Data *od = d ? elf_newdata(o) : NULL;
            if (d == NULL || od == NULL || elf_getdata(scn, d) != NULL)
                goto out;
            od->d_buf = d->d_buf;
            od->d_type = d->d_type;
            od->d_size = d->d_size;
            od->d_align = d->d_align;
            od->d_off = 0;
            od->d_version = EV_CURRENT;
            sh.sh_offset = round_up(off, sh.sh_addralign);
            off = sh.sh_offset + sh.sh_size;
        }
        if (gelf_update_shdr(o, &sh) == 0)
            goto out;
    }
    oh.e_shoff = round_up(off, 8);
    if (gelf_update_ehdr(out, &oh) == 0 || elf_update(out, ELF_C_WRITE) < 0)
        goto out;
    ok = true;
out:
    if (!ok && *why == NULL)
        *why = elf_errmsg(-1);
    elf_end(out);
    return ok;
}

/* Inflate DEBUG_PATH into FINAL (through a temporary file in DIR).  False
 * with the reason in WHY. */
static bool
make_copy(const char *debug_path, const char *dir, const char *final,
          const struct sw_inflate_limits *lim, const char **why)
{
    char tmp[4200];
    int ifd = open(debug_path, O_RDONLY | O_CLOEXEC);
    Elf *in = ifd >= 0 ? elf_begin(ifd, ELF_C_READ_MMAP, NULL) : NULL;
    bool ok = false;

    *why = "cannot open it";
    if (in == NULL)
        goto out;
    *why = "nothing compressed";
    if (!has_compressed(in))
        goto out;
    snprintf(tmp, sizeof tmp, "%s/.plain-XXXXXX", dir);
    int ofd = mkstemp(tmp);
    if (ofd < 0) {
        *why = strerror(errno);
        goto out;
    }
    ok = write_plain(in, ofd, lim, why) && fchmod(ofd, 0644) == 0;
    if (close(ofd) != 0)
        ok = false;
    if (ok && rename(tmp, final) != 0) {
        *why = strerror(errno);
        ok = false;
    }
    if (!ok)
        unlink(tmp);
out:
    elf_end(in);
    if (ifd >= 0)
        close(ifd);
    return ok;
}

/* CACHE_DIR/<hex of ID> and the copy's path in it (both owned: sw_free).
 * Returns 0, SW_ENOENT (no usable id), SW_ENOMEM. */
static int
copy_paths(const char *cache_dir, const uint8_t *id, size_t id_len, char **dirp, char **finalp)
{
    size_t cl = strlen(cache_dir);
    *dirp = *finalp = NULL;
    if (id_len == 0 || id_len > SW_ELF_MAX_BUILD_ID)
        return SW_ENOENT;
    char *dir = sw_malloc(cl + 1 + 2 * id_len + 1);
    char *final = sw_malloc(cl + 1 + 2 * id_len + sizeof "/" PLAIN_NAME);
    if (dir == NULL || final == NULL) {
        sw_free(dir);
        sw_free(final);
        return SW_ENOMEM;
    }
    memcpy(dir, cache_dir, cl);
    dir[cl] = '/';
    sw_hex_encode(id, id_len, dir + cl + 1);
    dir[cl + 1 + 2 * id_len] = '\0';
    snprintf(final, cl + 1 + 2 * id_len + sizeof "/" PLAIN_NAME, "%s/" PLAIN_NAME, dir);
    *dirp = dir;
    *finalp = final;
    return 0;
}

int
sw_debug_plain_path(const char *cache_dir, const char *debug_path, const uint8_t *id, size_t id_len,
                    const struct sw_inflate_limits *lim, char **out)
{
    struct sw_errbuf err;
    const char *why = NULL;
    char *dir, *final;

    *out = NULL;
    int rc = copy_paths(cache_dir, id, id_len, &dir, &final);
    if (rc != 0)
        return rc == SW_ENOENT ? 0 : rc;
    if (good_copy(final, id, id_len)) {
        *out = final;
        final = NULL;
    } else if (sw_dirs_make(dir, &err) != 0) {
        why = err.msg;
    } else if (make_copy(debug_path, dir, final, lim, &why)) {
        sw_debug(SW_DBG_CACHE, "elf: %s: inflated into %s", debug_path, final);
        *out = final;
        final = NULL;
    }
    if (*out == NULL)
        sw_debug(SW_DBG_CACHE, "elf: %s: no uncompressed copy (%s)", debug_path, why ? why : "?");
    sw_free(dir);
    sw_free(final);
    return 0;
}

int
sw_debug_plain_existing(const char *cache_dir, const uint8_t *id, size_t id_len, char **out)
{
    char *dir, *final;
    *out = NULL;
    int rc = copy_paths(cache_dir, id, id_len, &dir, &final);
    if (rc != 0)
        return rc == SW_ENOENT ? 0 : rc;
    if (good_copy(final, id, id_len)) {
        *out = final;
        final = NULL;
    }
    sw_free(dir);
    sw_free(final);
    return 0;
}
