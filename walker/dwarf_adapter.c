/* walker/dwarf_adapter.c -- call frame information through libdwarf.
 *
 * The only file that includes <libdwarf.h>: Debian 12 ships the 20210528
 * API (dwarf_init_path with 12 arguments, the *3 register tables), which
 * differs from libdwarf 0.x.  Reads .eh_frame and .debug_frame of a file and
 * .debug_frame of its separate debug file, or of an ELF image in memory (the
 * vDSO), through libelf and our own libdwarf object access (see struct
 * cfi_obj for why not dwarf_init_path); evaluates nothing.
 */
#include "walker/cfi.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <libdwarf.h>
#include <gelf.h>
#include <libelf.h>

#include "util/util.h"

/* Rule table columns libdwarf tracks.  A DW_CFA_* on a register at or past
 * this fails the whole FDE (DW_DLE_DF_REG_NUM_TOO_HIGH), so it must cover
 * every DWARF number a supported ABI uses in CFI (ppc64's vector registers
 * reach 108, aarch64's SVE 127), while staying below the pseudo columns
 * DW_FRAME_UNDEFINED_VAL (1034) and DW_FRAME_SAME_VAL (1035). */
#define CFI_TABLE_COLUMNS 256

/* One FDE list: .eh_frame or .debug_frame of one libdwarf handle. */
struct cfi_table {
    Dwarf_Debug dbg; /* borrowed from struct cfi_file */
    Dwarf_Cie *cies;
    Dwarf_Signed ncies;
    Dwarf_Fde *fdes;
    Dwarf_Signed nfdes;
    const char *what; /* ".eh_frame of /lib/.../libc.so.6": for messages */
    char *label;      /* owned storage of WHAT */
};

/* One ELF file or image as libdwarf sees it: libelf underneath, our own
 * libdwarf object access on top, for files and images alike.
 *
 * Why not dwarf_init_path: its ELF reader tells libdwarf that an ELF64
 * object has 8-byte lengths, and libdwarf 20210528's READ_AREA_LENGTH_CK
 * (dwarf_util.h) then takes a zero 4-byte length in a big-endian object
 * for the start of an IRIX 64-bit length and reads 8 bytes.  Every linked
 * .eh_frame ends in crtend's 4-byte zero terminator, so on big-endian ELF64
 * (ppc64 ELFv1) that read runs past the section: "DW_DLE_READ_LITTLEENDIAN_
 * ERROR Read would end past the end of section", and not one FDE.  ppc32
 * (4-byte lengths) and ppc64le (not big-endian) never reach it.  Here
 * get_length_size says 4, the initial length of 32-bit DWARF; 64-bit DWARF
 * announces itself with 0xffffffff and is read as such whatever this says.
 * libdwarf's own libelf access (dwarf_elf_init_b) happens to say 4 too, but
 * only as an undocumented detail, and it is gone from libdwarf 0.x;
 * dwarf_object_init_b is the interface that stays. */
struct cfi_obj {
    Elf *elf;              /* owned */
    int fd;                /* owned; -1 for an image */
    size_t shstrndx;       /* section of the section names */
    size_t shnum;          /* section headers, the null one included */
    bool big_endian;       /* EI_DATA */
    Dwarf_Small addr_size; /* 8 for ELFCLASS64, else 4 */
    /* What libdwarf keeps a pointer to: valid until dwarf_object_finish. */
    Dwarf_Obj_Access_Interface iface;
};

struct sw_cfi {
    Dwarf_Debug dbg[2];     /* the file, its debug file; NULL if not open */
    struct cfi_obj *obj[2]; /* owned: what dbg[i] reads through */
    struct cfi_table tables[3];
    size_t ntables;
    Dwarf_Regtable_Entry3 *scratch; /* CFI_TABLE_COLUMNS entries */
    char *path;
    uint8_t *image; /* owned copy of the in-memory image; NULL for files */
};

/* Take libdwarf's message into ERR and release the error object. */
static int dw_fail(struct sw_errbuf *err, int code, Dwarf_Debug dbg, Dwarf_Error de,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
dw_fail(struct sw_errbuf *err, int code, Dwarf_Debug dbg, Dwarf_Error de, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sw_vfail(err, code, fmt, ap);
    va_end(ap);
    if (de) {
        const char *m = dwarf_errmsg(de);
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, ": %s", m ? m : "libdwarf error");
        dwarf_dealloc_error(dbg, de);
    }
    return code;
}

static void
dw_drop_error(Dwarf_Debug dbg, Dwarf_Error de)
{
    if (de)
        dwarf_dealloc_error(dbg, de);
}

static void
finish_dbg(Dwarf_Debug dbg)
{
    Dwarf_Error de = NULL;
    /* dwarf_object_finish, not dwarf_finish: the handle came from
     * dwarf_object_init_b, and its object access is ours to free. */
    if (dwarf_object_finish(dbg, &de) == DW_DLV_ERROR)
        dw_drop_error(NULL, de);
}

/* ---- the object access: sections through libelf --------------------- */

static int
obj_section_info(void *obj, Dwarf_Half index, Dwarf_Obj_Access_Section *out, int *error)
{
    struct cfi_obj *o = obj;
    Elf_Scn *scn = elf_getscn(o->elf, index);
    GElf_Shdr sh;

    if (scn == NULL)
        return DW_DLV_NO_ENTRY;
    if (gelf_getshdr(scn, &sh) == NULL) {
        *error = DW_DLE_ELF_GETSHDR_ERROR;
        return DW_DLV_ERROR;
    }
    memset(out, 0, sizeof *out);
    out->addr = sh.sh_addr;
    out->type = sh.sh_type;
    out->size = sh.sh_size;
    out->link = sh.sh_link;
    out->info = sh.sh_info;
    out->entrysize = sh.sh_entsize;
    out->name = elf_strptr(o->elf, o->shstrndx, sh.sh_name);
    if (out->name == NULL)
        out->name = "";
    if (sh.sh_type == SHT_NOBITS) {
        /* A debug file's .eh_frame: a name without bytes. */
        out->size = 0;
    } else if (sh.sh_flags & SHF_COMPRESSED) {
        /* Debian's debug files compress their .debug_* sections (ELF
         * gABI SHF_COMPRESSED), which libdwarf inflates only through its
         * own readers: inflate here, libelf keeps the result, and report
         * the inflated size.  One that cannot be inflated is left out. */
        if (elf_compress(scn, 0, 0) < 0 || gelf_getshdr(scn, &sh) == NULL ||
            (sh.sh_flags & SHF_COMPRESSED))
            out->size = 0;
        else
            out->size = sh.sh_size;
    }
    return DW_DLV_OK;
}

static Dwarf_Endianness
obj_byte_order(void *obj)
{
    return ((struct cfi_obj *)obj)->big_endian ? DW_OBJECT_MSB : DW_OBJECT_LSB;
}

static Dwarf_Small
obj_length_size(void *obj)
{
    (void)obj;
    return 4; /* the reason for this access: see struct cfi_obj */
}

static Dwarf_Small
obj_pointer_size(void *obj)
{
    return ((struct cfi_obj *)obj)->addr_size;
}

static Dwarf_Unsigned
obj_section_count(void *obj)
{
    return ((struct cfi_obj *)obj)->shnum;
}

static int
obj_load_section(void *obj, Dwarf_Half index, Dwarf_Small **data, int *error)
{
    struct cfi_obj *o = obj;
    Elf_Scn *scn = elf_getscn(o->elf, index);
    GElf_Shdr sh;

    if (scn == NULL || gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS ||
        (sh.sh_flags & SHF_COMPRESSED))
        return DW_DLV_NO_ENTRY;
    /* The bytes as in the file: libdwarf swaps by obj_byte_order itself,
     * so no libelf conversion (elf_getdata would convert typed sections;
     * an inflated section is only reachable through it, as bytes). */
    Elf_Data *d = elf_rawdata(scn, NULL);
    if (d == NULL || d->d_buf == NULL || d->d_size < sh.sh_size)
        d = elf_getdata(scn, NULL);
    if (d == NULL || d->d_buf == NULL || d->d_size < sh.sh_size) {
        *error = DW_DLE_SECTION_SIZE_ERROR;
        return DW_DLV_ERROR;
    }
    *data = d->d_buf;
    return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods cfi_obj_methods = {
    .get_section_info = obj_section_info,   /* REQUIRED */
    .get_byte_order = obj_byte_order,       /* REQUIRED */
    .get_length_size = obj_length_size,     /* REQUIRED */
    .get_pointer_size = obj_pointer_size,   /* REQUIRED */
    .get_section_count = obj_section_count, /* REQUIRED */
    .load_section = obj_load_section,       /* REQUIRED */
    .relocate_a_section = NULL,             /* OPTIONAL: we read linked files, not ET_REL */
};

static void
obj_free(struct cfi_obj *o)
{
    if (o == NULL)
        return;
    if (o->elf)
        elf_end(o->elf);
    if (o->fd >= 0)
        close(o->fd);
    sw_free(o);
}

/* Wrap ELF (owned from here on, also on failure) and FD (-1 for an image)
 * for libdwarf.  WHAT names the file in messages.  *OUT: obj_free. */
static int
obj_new(Elf *elf, int fd, const char *what, struct cfi_obj **out, struct sw_errbuf *err)
{
    struct cfi_obj *o = sw_calloc(1, sizeof *o);
    if (o == NULL) {
        elf_end(elf);
        if (fd >= 0)
            close(fd);
        return sw_fail(err, SW_ENOMEM, "opening CFI of %s: out of memory", what);
    }
    o->elf = elf;
    o->fd = fd;
    const char *ident = elf_kind(elf) == ELF_K_ELF ? elf_getident(elf, NULL) : NULL;
    if (ident == NULL || elf_getshdrnum(elf, &o->shnum) != 0 ||
        elf_getshdrstrndx(elf, &o->shstrndx) != 0) {
        obj_free(o);
        return sw_fail(err, SW_EBADELF, "reading CFI of %s: %s", what,
                       ident ? elf_errmsg(-1) : "not an ELF file");
    }
    o->big_endian = ident[EI_DATA] == ELFDATA2MSB;
    o->addr_size = ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
    o->iface.object = o;
    o->iface.methods = &cfi_obj_methods;
    *out = o;
    return 0;
}

/* Whether PATH starts with the ELF magic; SW_ENOENT when it cannot be read. */
static int
check_elf_magic(const char *path, struct sw_errbuf *err)
{
    unsigned char m[4];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sw_fail(err, errno == ENOENT ? SW_ENOENT : SW_EIO, "opening %s for CFI: %s", path,
                       strerror(errno));
    ssize_t n = read(fd, m, sizeof m);
    close(fd);
    if (n != (ssize_t)sizeof m || memcmp(m, "\177ELF", 4) != 0)
        return sw_fail(err, SW_EBADELF, "reading CFI of %s: not an ELF file", path);
    return 0;
}

/* Check DBG's address size against the target's and set the frame-table
 * conventions.  On failure *DBG is finished and NULL. */
static int
setup_dbg(Dwarf_Debug *dbg, const char *path, unsigned addr_size, struct sw_errbuf *err)
{
    Dwarf_Error de = NULL;
    Dwarf_Half file_addr_size = 0;
    if (dwarf_get_address_size(*dbg, &file_addr_size, &de) == DW_DLV_OK && addr_size != 0 &&
        file_addr_size != addr_size) {
        finish_dbg(*dbg);
        *dbg = NULL;
        return sw_fail(err, SW_EBADELF, "reading CFI of %s: %u-byte addresses, the target has %u",
                       path, (unsigned)file_addr_size, addr_size);
    }
    dw_drop_error(*dbg, de);

    /* The libdwarf defaults, set explicitly so the rule decoding below
     * does not depend on how the library was configured. */
    dwarf_set_frame_rule_table_size(*dbg, CFI_TABLE_COLUMNS);
    dwarf_set_frame_rule_initial_value(*dbg, DW_FRAME_SAME_VAL);
    dwarf_set_frame_same_value(*dbg, DW_FRAME_SAME_VAL);
    dwarf_set_frame_undefined_value(*dbg, DW_FRAME_UNDEFINED_VAL);
    dwarf_set_frame_cfa_value(*dbg, DW_FRAME_CFA_COL3);
    return 0;
}

/* Whether O has a .eh_frame or .debug_frame with bytes.  Asked first
 * because dwarf_object_init_b 20210528 crashes on an object without any
 * DWARF section (a NULL section array; seen on a static executable with
 * only .text, .symtab and a build-id note), where dwarf_init_path said
 * DW_DLV_NO_ENTRY. */
static bool
obj_has_frames(struct cfi_obj *o)
{
    for (size_t i = 1; i < o->shnum; i++) {
        Elf_Scn *scn = elf_getscn(o->elf, i);
        GElf_Shdr sh;
        if (scn == NULL || gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS ||
            sh.sh_size == 0)
            continue;
        const char *name = elf_strptr(o->elf, o->shstrndx, sh.sh_name);
        if (name && (strcmp(name, ".eh_frame") == 0 || strcmp(name, ".debug_frame") == 0))
            return true;
    }
    return false;
}

/* Open libdwarf over O (owned by the caller, who frees it after
 * finish_dbg).  Returns 0 with *DBG set, 0 with *DBG NULL when the object
 * has no DWARF sections at all, or an error. */
static int
init_dbg(struct cfi_obj *o, const char *what, unsigned addr_size, Dwarf_Debug *dbg,
         struct sw_errbuf *err)
{
    Dwarf_Error de = NULL;
    *dbg = NULL;
    if (!obj_has_frames(o))
        return 0;
    /* No handler and a non-NULL error pointer: libdwarf returns
     * DW_DLV_ERROR instead of aborting. */
    int rc = dwarf_object_init_b(&o->iface, NULL, NULL, DW_GROUPNUMBER_ANY, dbg, &de);
    if (rc == DW_DLV_NO_ENTRY) {
        *dbg = NULL;
        return 0;
    }
    if (rc != DW_DLV_OK) {
        *dbg = NULL;
        return dw_fail(err, SW_EBADELF, NULL, de, "reading CFI of %s", what);
    }
    return setup_dbg(dbg, what, addr_size, err);
}

/* Open PATH with libdwarf into *DBG and *OBJ.  Returns 0 with both set, 0
 * with both NULL when the file has no DWARF sections at all, or an error. */
static int
open_dbg(const char *path, unsigned addr_size, Dwarf_Debug *dbg, struct cfi_obj **obj,
         struct sw_errbuf *err)
{
    *dbg = NULL;
    *obj = NULL;
    int rc = check_elf_magic(path, err);
    if (rc < 0)
        return rc;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sw_fail(err, errno == ENOENT ? SW_ENOENT : SW_EIO, "opening %s for CFI: %s", path,
                       strerror(errno));
    (void)elf_version(EV_CURRENT);
    /* Mapped, not read: a debug file may be hundreds of MB and we touch
     * two sections.  elf_compress inflates into memory of its own. */
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf == NULL) {
        close(fd);
        return sw_fail(err, SW_EBADELF, "reading CFI of %s: %s", path, elf_errmsg(-1));
    }
    if ((rc = obj_new(elf, fd, path, obj, err)) < 0)
        return rc;
    if ((rc = init_dbg(*obj, path, addr_size, dbg, err)) < 0 || *dbg == NULL) {
        obj_free(*obj);
        *obj = NULL;
    }
    return rc;
}

/* Load one FDE list of DBG into a new table of C.  A missing section is no
 * table; a malformed one is no table either (the other sections may still
 * serve), with the reason left in ERR for the "no CFI" message. */
static int
add_table(struct sw_cfi *c, Dwarf_Debug dbg, bool eh, const char *path, struct sw_errbuf *err)
{
    struct cfi_table *t = &c->tables[c->ntables];
    const char *sec = eh ? ".eh_frame" : ".debug_frame";
    Dwarf_Error de = NULL;
    int rc;

    memset(t, 0, sizeof *t);
    if (eh)
        rc = dwarf_get_fde_list_eh(dbg, &t->cies, &t->ncies, &t->fdes, &t->nfdes, &de);
    else
        rc = dwarf_get_fde_list(dbg, &t->cies, &t->ncies, &t->fdes, &t->nfdes, &de);
    if (rc == DW_DLV_NO_ENTRY)
        return 0;
    if (rc != DW_DLV_OK) {
        dw_fail(err, SW_ENOCFI, dbg, de, "reading %s of %s", sec, path);
        return 0;
    }
    t->dbg = dbg;
    size_t n = strlen(sec) + strlen(path) + 5;
    t->label = sw_malloc(n);
    if (t->label == NULL) {
        dwarf_fde_cie_list_dealloc(dbg, t->cies, t->ncies, t->fdes, t->nfdes);
        return sw_fail(err, SW_ENOMEM, "reading %s of %s: out of memory", sec, path);
    }
    snprintf(t->label, n, "%s of %s", sec, path);
    t->what = t->label;
    c->ntables++;
    return 0;
}

void
sw_cfi_close(struct sw_cfi *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->ntables; i++) {
        struct cfi_table *t = &c->tables[i];
        dwarf_fde_cie_list_dealloc(t->dbg, t->cies, t->ncies, t->fdes, t->nfdes);
        sw_free(t->label);
    }
    for (size_t i = 0; i < 2; i++) {
        if (c->dbg[i])
            finish_dbg(c->dbg[i]);
        obj_free(c->obj[i]);
    }
    sw_free(c->image);
    sw_free(c->scratch);
    sw_free(c->path);
    sw_free(c);
}

int
sw_cfi_open(const char *path, const char *debug_path, unsigned addr_size, struct sw_cfi **out,
            struct sw_errbuf *err)
{
    struct sw_errbuf why;
    int rc;

    if (path == NULL || out == NULL)
        return sw_fail(err, SW_EINVAL, "opening CFI: no file");
    struct sw_cfi *c = sw_calloc(1, sizeof *c);
    if (c == NULL)
        return sw_fail(err, SW_ENOMEM, "opening CFI of %s: out of memory", path);
    c->path = sw_strdup(path);
    c->scratch = sw_calloc(CFI_TABLE_COLUMNS, sizeof *c->scratch);
    if (c->path == NULL || c->scratch == NULL) {
        sw_cfi_close(c);
        return sw_fail(err, SW_ENOMEM, "opening CFI of %s: out of memory", path);
    }

    sw_err_clear(&why);
    if ((rc = open_dbg(path, addr_size, &c->dbg[0], &c->obj[0], err)) < 0)
        goto fail;
    if (c->dbg[0]) {
        /* .eh_frame first: it is what the code was built to unwind with;
         * .debug_frame may describe the same code less precisely. */
        if ((rc = add_table(c, c->dbg[0], true, path, &why)) < 0 ||
            (rc = add_table(c, c->dbg[0], false, path, &why)) < 0)
            goto fail_why;
    }
    if (debug_path && strcmp(debug_path, path) != 0) {
        /* The separate debug file is optional: a broken or missing one
         * leaves the file's own CFI.  Its .eh_frame is NOBITS. */
        struct sw_errbuf ignored;
        if (open_dbg(debug_path, addr_size, &c->dbg[1], &c->obj[1], &ignored) == 0 && c->dbg[1] &&
            (rc = add_table(c, c->dbg[1], false, debug_path, &why)) < 0)
            goto fail_why;
    }
    if (c->ntables == 0) {
        if (why.code)
            rc = sw_err_copy(err, &why);
        else
            rc = sw_fail(err, SW_ENOCFI, "reading CFI of %s: no .eh_frame or .debug_frame", path);
        goto fail;
    }
    *out = c;
    return 0;

fail_why:
    sw_err_copy(err, &why);
fail:
    sw_cfi_close(c);
    return rc;
}

int
sw_cfi_open_mem(const uint8_t *image, size_t len, const char *name, unsigned addr_size,
                struct sw_cfi **out, struct sw_errbuf *err)
{
    struct sw_errbuf why;
    int rc;

    if (name == NULL)
        name = "an in-memory image";
    if (image == NULL || out == NULL || len < 4 || memcmp(image, "\177ELF", 4) != 0)
        return sw_fail(err, SW_EBADELF, "reading CFI of %s: not an ELF image", name);
    struct sw_cfi *c = sw_calloc(1, sizeof *c);
    if (c == NULL)
        return sw_fail(err, SW_ENOMEM, "opening CFI of %s: out of memory", name);
    c->path = sw_strdup(name);
    c->scratch = sw_calloc(CFI_TABLE_COLUMNS, sizeof *c->scratch);
    /* A private copy: libelf may convert it in place, and the CFI must
     * outlive the caller's buffer (rules point into it). */
    c->image = sw_malloc(len);
    if (c->path == NULL || c->scratch == NULL || c->image == NULL) {
        sw_cfi_close(c);
        return sw_fail(err, SW_ENOMEM, "opening CFI of %s: out of memory", name);
    }
    memcpy(c->image, image, len);

    (void)elf_version(EV_CURRENT);
    Elf *elf = elf_memory((char *)c->image, len);
    if (elf == NULL) {
        rc = sw_fail(err, SW_EBADELF, "reading CFI of %s: %s", name, elf_errmsg(-1));
        goto fail;
    }
    if ((rc = obj_new(elf, -1, name, &c->obj[0], err)) < 0 ||
        (rc = init_dbg(c->obj[0], name, addr_size, &c->dbg[0], err)) < 0)
        goto fail;
    if (c->dbg[0] == NULL) {
        rc = sw_fail(err, SW_ENOCFI, "reading CFI of %s: no .eh_frame or .debug_frame", name);
        goto fail;
    }

    sw_err_clear(&why);
    if ((rc = add_table(c, c->dbg[0], true, name, &why)) < 0 ||
        (rc = add_table(c, c->dbg[0], false, name, &why)) < 0) {
        sw_err_copy(err, &why);
        goto fail;
    }
    if (c->ntables == 0) {
        if (why.code)
            rc = sw_err_copy(err, &why);
        else
            rc = sw_fail(err, SW_ENOCFI, "reading CFI of %s: no .eh_frame or .debug_frame", name);
        goto fail;
    }
    *out = c;
    return 0;

fail:
    sw_cfi_close(c);
    return rc;
}

/* Translate one libdwarf register rule. */
static int
convert_rule(const Dwarf_Regtable_Entry3 *e, struct sw_cfi_rule *r)
{
    memset(r, 0, sizeof *r);
    switch (e->dw_value_type) {
    case DW_EXPR_OFFSET:
        if (e->dw_regnum == DW_FRAME_UNDEFINED_VAL)
            r->kind = SW_CFI_UNDEFINED;
        else if (e->dw_regnum == DW_FRAME_SAME_VAL)
            r->kind = SW_CFI_SAME;
        else if (e->dw_offset_relevant) {
            r->kind = SW_CFI_OFFSET;
            r->offset = (int64_t)e->dw_offset_or_block_len;
        } else {
            r->kind = SW_CFI_REGISTER;
            r->reg = e->dw_regnum;
        }
        return 0;
    case DW_EXPR_VAL_OFFSET:
        r->kind = SW_CFI_VAL_OFFSET;
        r->offset = (int64_t)e->dw_offset_or_block_len;
        return 0;
    case DW_EXPR_EXPRESSION:
    case DW_EXPR_VAL_EXPRESSION:
        r->kind =
            e->dw_value_type == DW_EXPR_EXPRESSION ? SW_CFI_EXPRESSION : SW_CFI_VAL_EXPRESSION;
        r->expr = e->dw_block_ptr;
        r->expr_len = (size_t)e->dw_offset_or_block_len;
        return r->expr || r->expr_len == 0 ? 0 : -1;
    default:
        return -1;
    }
}

/* Fill ROW from FDE at VADDR. */
static int
row_from_fde(struct sw_cfi *c, struct cfi_table *t, Dwarf_Fde fde, Dwarf_Addr lo, Dwarf_Addr hi,
             sw_addr vaddr, struct sw_cfi_row *row, struct sw_errbuf *err)
{
    Dwarf_Error de = NULL;
    Dwarf_Cie cie;
    Dwarf_Unsigned cie_len, caf, init_len;
    Dwarf_Small version;
    char *aug = NULL;
    Dwarf_Signed daf;
    Dwarf_Half ra_col, offset_size;
    Dwarf_Ptr init;

    if (dwarf_get_cie_of_fde(fde, &cie, &de) != DW_DLV_OK ||
        dwarf_get_cie_info_b(cie, &cie_len, &version, &aug, &caf, &daf, &ra_col, &init, &init_len,
                             &offset_size, &de) != DW_DLV_OK)
        return dw_fail(err, SW_EBADELF, t->dbg, de, "CIE for 0x%" PRIx64 " in %s", vaddr, t->what);

    Dwarf_Regtable3 rt;
    Dwarf_Addr row_pc = 0;
    memset(&rt, 0, sizeof rt);
    rt.rt3_reg_table_size = CFI_TABLE_COLUMNS;
    rt.rt3_rules = c->scratch;
    if (dwarf_get_fde_info_for_all_regs3(fde, vaddr, &rt, &row_pc, &de) != DW_DLV_OK)
        return dw_fail(err, SW_EBADELF, t->dbg, de, "CFI row for 0x%" PRIx64 " in %s", vaddr,
                       t->what);

    /* The row ends where the next one starts; libdwarf reports that only
     * through the single-column query. */
    Dwarf_Small vt;
    Dwarf_Signed orel, reg, off;
    Dwarf_Ptr block;
    Dwarf_Addr row_pc2, next_pc = 0;
    Dwarf_Bool more = 0;
    if (dwarf_get_fde_info_for_cfa_reg3_b(fde, vaddr, &vt, &orel, &reg, &off, &block, &row_pc2,
                                          &more, &next_pc, &de) != DW_DLV_OK) {
        dw_drop_error(t->dbg, de);
        more = 0;
    }

    memset(row, 0, offsetof(struct sw_cfi_row, rules));
    row->lo = row_pc;
    /* dwarf_get_fde_at_pc reports the FDE's last byte, not one past it. */
    row->hi = (more && next_pc > vaddr && next_pc <= hi) ? next_pc : hi + 1;
    (void)lo;
    row->ra_column = ra_col;
    row->signal_frame = aug && strchr(aug, 'S') != NULL;

    const Dwarf_Regtable_Entry3 *cfa = &rt.rt3_cfa_rule;
    if (cfa->dw_value_type == DW_EXPR_EXPRESSION || cfa->dw_value_type == DW_EXPR_VAL_EXPRESSION) {
        row->cfa_is_expr = true;
        row->cfa_expr = cfa->dw_block_ptr;
        row->cfa_expr_len = (size_t)cfa->dw_offset_or_block_len;
    } else if (cfa->dw_value_type == DW_EXPR_OFFSET && cfa->dw_regnum < CFI_TABLE_COLUMNS) {
        row->cfa_reg = cfa->dw_regnum;
        row->cfa_offset = cfa->dw_offset_relevant ? (int64_t)cfa->dw_offset_or_block_len : 0;
    } else {
        return sw_fail(err, SW_EBADELF, "CFI row for 0x%" PRIx64 " in %s: no usable CFA rule",
                       vaddr, t->what);
    }

    for (unsigned i = 0; i < SW_FRAME_MAX_REGS; i++) {
        if (convert_rule(&c->scratch[i], &row->rules[i]) < 0)
            return sw_fail(err, SW_EBADELF,
                           "CFI row for 0x%" PRIx64 " in %s: register %u has rule type %u", vaddr,
                           t->what, i, (unsigned)c->scratch[i].dw_value_type);
    }
    return 0;
}

int
sw_cfi_row_at(struct sw_cfi *c, sw_addr vaddr, struct sw_cfi_row *row, struct sw_errbuf *err)
{
    for (size_t i = 0; i < c->ntables; i++) {
        struct cfi_table *t = &c->tables[i];
        Dwarf_Error de = NULL;
        Dwarf_Fde fde;
        Dwarf_Addr lo, hi;
        int rc = dwarf_get_fde_at_pc(t->fdes, vaddr, &fde, &lo, &hi, &de);
        if (rc == DW_DLV_NO_ENTRY)
            continue;
        if (rc != DW_DLV_OK)
            return dw_fail(err, SW_EBADELF, t->dbg, de, "finding the FDE for 0x%" PRIx64 " in %s",
                           vaddr, t->what);
        return row_from_fde(c, t, fde, lo, hi, vaddr, row, err);
    }
    return sw_fail(err, SW_ENOCFI, "no FDE covers 0x%" PRIx64 " in %s", vaddr, c->path);
}
