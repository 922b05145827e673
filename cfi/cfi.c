/* cfi/cfi.c -- call frame information through libdwarf.
 *
 * The only file that includes <libdwarf.h>: Debian 12 ships the 20210528
 * API (dwarf_init_path with 12 arguments, the *3 register tables), which
 * differs from libdwarf 0.x.  Reads .eh_frame and .debug_frame of a file and
 * .debug_frame of its separate debug file, or of an ELF image in memory (the
 * vDSO) through libelf's elf_memory and dwarf_elf_init_b; evaluates nothing.
 * A file's .eh_frame is not read whole when it has an .eh_frame_hdr: the
 * header names the FDE for an address, and libdwarf reads that FDE and its
 * CIE from an image of the two (cfi/eh_frame_hdr.h), once per FDE.
 * RSPWALK_CFI_WHOLE_TABLE=1 reads the whole .eh_frame (for comparisons).
 */
#include "cfi/cfi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "util/dl.h"
#include "util/util.h"
#include "expr/expr.h"
#include "cfi/libdwarf_dl.h"
#include "cfi/ra_state.h"
#include "cfi/eh_frame_hdr.h"

/* ---- libdwarf, opened on first use (cfi/libdwarf_dl.h) ----------------------------- */

#ifndef SW_LIBDWARF_SONAME
#define SW_LIBDWARF_SONAME "libdwarf.so.1"
#endif

struct sw_libdwarf_fns sw_libdwarf;

#define SYM(field)                                                                                 \
    {                                                                                              \
        "dwarf_" #field, &sw_libdwarf.field                                                        \
    }
static const struct sw_dl_sym libdwarf_syms[] = {
    SYM(dealloc_error),
    SYM(elf_init_b),
    SYM(errmsg),
    SYM(fde_cie_list_dealloc),
    SYM(finish),
    SYM(get_address_size),
    SYM(get_cie_info_b),
    SYM(get_cie_of_fde),
    SYM(get_fde_at_pc),
    SYM(get_fde_info_for_all_regs3),
    SYM(get_fde_info_for_cfa_reg3_b),
    SYM(get_fde_instr_bytes),
    SYM(get_fde_list),
    SYM(get_fde_range),
    SYM(get_fde_list_eh),
    SYM(get_locdesc_entry_d),
    SYM(get_location_op_value_c),
    SYM(loc_head_c_dealloc),
    SYM(loclist_from_expr_c),
    SYM(set_frame_cfa_value),
    SYM(set_frame_rule_initial_value),
    SYM(set_frame_rule_table_size),
    SYM(set_frame_same_value),
    SYM(set_frame_undefined_value),
};
#undef SYM

static struct sw_dl libdwarf_dl = { .soname = SW_LIBDWARF_SONAME,
                                    .syms = libdwarf_syms,
                                    .nsyms = sizeof libdwarf_syms / sizeof libdwarf_syms[0],
                                    .lock = PTHREAD_MUTEX_INITIALIZER };

bool
sw_cfi_load(const char **why)
{
    return sw_libdwarf_load(why);
}

bool
sw_libdwarf_load(const char **why)
{
    return sw_dl_load(&libdwarf_dl, why);
}

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
    bool big_endian;  /* the file's byte order: operands of DW_CFA_advance_loc2/4 */
    /* .eh_frame looked up through .eh_frame_hdr (struct sw_cfi's HDR): no
     * list loaded; each FDE gets a table of its own (struct hdr_fde). */
    bool by_hdr;
};

/* One FDE found through .eh_frame_hdr, with its CIE, read by libdwarf from
 * an ELF image of the two (sw_ehhdr_image); kept until sw_cfi_close, since
 * rows point into it. */
struct hdr_fde {
    uint64_t off;       /* the FDE's offset in .eh_frame */
    uint8_t *image;     /* owned */
    Elf *elf;           /* owned: over IMAGE */
    Dwarf_Debug dbg;    /* owned */
    struct cfi_table t; /* its list (one CIE, one FDE); WHAT borrowed */
};

/* Rows remembered per sw_cfi (sw_cfi_row_at). */
#define ROW_CACHE 8

/* LOCK guards every query: libdwarf's handles, SCRATCH, the FDEs found
 * through .eh_frame_hdr and the kept rows all change as rows are looked up.
 * The rest is set when the CFI is opened. */
struct sw_cfi {
    pthread_mutex_t lock;
    Dwarf_Debug dbg[2]; /* the file, its debug file; NULL if not open */
    struct cfi_table tables[3];
    size_t ntables;
    Dwarf_Regtable_Entry3 *scratch; /* CFI_TABLE_COLUMNS entries */
    char *path;
    Elf *elf;         /* owned: the libelf handle over IMAGE, for sw_cfi_open_mem */
    uint8_t *image;   /* owned copy of the in-memory image; NULL for files */
    Elf *file_elf[2]; /* owned: libelf handles of 64-bit big-endian files (see open_dbg) */
    int file_fd[2];   /* owned: their descriptors; -1 if none */
    /* The file through libelf for .eh_frame_hdr (see eh_frame_hdr.h). */
    Elf *hdr_elf; /* owned */
    int hdr_fd;   /* owned; 0 if none */
    struct sw_ehhdr hdr;
    unsigned hdr_machine;
    uint32_t hdr_flags;
    struct hdr_fde *hfdes; /* owned: nhfdes entries */
    size_t nhfdes, caphfdes;
    /* The last rows found, by address: a deep recursion asks for the same
     * return address at every level, a program's threads for the same
     * start_thread and clone3 (libdwarf runs the FDE's instructions from its
     * start for each answer, allocating its register table). */
    struct row_cache {
        sw_addr vaddr;
        bool valid;
        struct sw_cfi_row row;
    } rows[ROW_CACHE];
    unsigned next_row;
    /* Every expression block decoded so far, which rows point into: a rule
     * names the same block at each address of its FDE. */
    struct cfi_expr_block {
        const void *block;
        size_t len;
        struct sw_expr_op *ops; /* owned */
        struct sw_cfi_expr expr;
    } * exprs;
    size_t nexprs, capexprs;
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
    if (dwarf_finish(dbg, &de) == DW_DLV_ERROR)
        dw_drop_error(NULL, de);
}

/* Whether PATH starts with the ELF magic (and its byte order, EI_DATA, in
 * *MSB); SW_ENOENT when it cannot be read. */
static int
check_elf_magic(const char *path, bool *msb, struct sw_errbuf *err)
{
    unsigned char m[6];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sw_fail(err, errno == ENOENT ? SW_ENOENT : SW_EIO, "opening %s for CFI: %s", path,
                       strerror(errno));
    ssize_t n = read(fd, m, sizeof m);
    close(fd);
    if (n != (ssize_t)sizeof m || memcmp(m, "\177ELF", 4) != 0)
        return sw_fail(err, SW_EBADELF, "reading CFI of %s: not an ELF file", path);
    *msb = m[5] == 2; /* ELFDATA2MSB */
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

/* Open PATH with libdwarf.  Returns 0 with *DBG set (and the file's byte
 * order in *MSB), 0 with *DBG NULL when the file has no DWARF sections at
 * all, or an error. */
static int
open_dbg(const char *path, unsigned addr_size, Dwarf_Debug *dbg, Elf **elfp, int *fdp, bool *msb,
         struct sw_errbuf *err)
{
    Dwarf_Error de = NULL;
    int rc = check_elf_magic(path, msb, err);
    if (rc < 0)
        return rc;
    *dbg = NULL;

    /* Through libelf's read-only mapping (dwarf_elf_init_b), not libdwarf's
     * own ELF reader (dwarf_init_path): the sections then point into the
     * mapped file instead of being read() whole into libdwarf's memory on
     * first use, and 64-bit big-endian objects get the length size 4 (the
     * own reader gives them 8, then reads the 4-byte zero that ends every
     * linked .eh_frame as an IRIX 64-bit length, past the section's end:
     * DW_DLE_READ_LITTLEENDIAN_ERROR on every ppc64 file).  Not
     * dwarf_object_init_b: its handles and dwarf_init_path's corrupt each
     * other when both are open. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sw_fail(err, errno == ENOENT ? SW_ENOENT : SW_EIO, "reading CFI of %s: %s", path,
                       strerror(errno));
    (void)elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf == NULL) {
        close(fd);
        return sw_fail(err, SW_EBADELF, "reading CFI of %s: %s", path, elf_errmsg(-1));
    }
    rc = dwarf_elf_init_b(elf, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, dbg, &de);
    if (rc != DW_DLV_OK) {
        *dbg = NULL;
        elf_end(elf);
        close(fd);
        if (rc == DW_DLV_NO_ENTRY)
            return 0;
        return dw_fail(err, SW_EBADELF, NULL, de, "reading CFI of %s", path);
    }
    *elfp = elf;
    *fdp = fd;
    return setup_dbg(dbg, path, addr_size, err);
}

/* Load one FDE list of DBG into a new table of C.  A missing section is no
 * table; a malformed one is no table either (the other sections may still
 * serve), with the reason left in ERR for the "no CFI" message. */
static int
add_table(struct sw_cfi *c, Dwarf_Debug dbg, bool msb, bool eh, const char *path,
          struct sw_errbuf *err)
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
    t->big_endian = msb;
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

/* Find .eh_frame_hdr and .eh_frame of PATH through libelf and set C->HDR
 * up.  Returns 0, or -1 when the file has no usable header (the caller then
 * reads the whole .eh_frame; RSPWALK_CFI_WHOLE_TABLE=1 forces that). */
static int
open_hdr(struct sw_cfi *c, const char *path)
{
    if (sw_env_get()->cfi_whole_table)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    (void)elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    size_t shstrndx;
    if (elf == NULL || elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &eh) == NULL ||
        elf_getshdrstrndx(elf, &shstrndx) != 0)
        goto none;
    Elf_Data *hdr = NULL, *ehd = NULL;
    uint64_t hdr_addr = 0, eh_addr = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS)
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name && strcmp(name, ".eh_frame_hdr") == 0 && hdr == NULL) {
            hdr = elf_rawdata(scn, NULL);
            hdr_addr = sh.sh_addr;
        } else if (name && strcmp(name, ".eh_frame") == 0 && ehd == NULL) {
            ehd = elf_rawdata(scn, NULL);
            eh_addr = sh.sh_addr;
        }
    }
    if (hdr == NULL || ehd == NULL || hdr->d_buf == NULL || ehd->d_buf == NULL ||
        sw_ehhdr_init(&c->hdr, hdr->d_buf, hdr->d_size, hdr_addr, ehd->d_buf, ehd->d_size, eh_addr,
                      eh.e_ident[EI_DATA] == ELFDATA2MSB,
                      eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4) < 0)
        goto none;
    c->hdr_elf = elf;
    c->hdr_fd = fd;
    c->hdr_machine = eh.e_machine;
    c->hdr_flags = (uint32_t)eh.e_flags;
    return 0;

none:
    sw_debug(SW_DBG_CACHE, "cfi: %s: no usable .eh_frame_hdr, reading the whole .eh_frame\n", path);
    if (elf)
        elf_end(elf);
    close(fd);
    return -1;
}

/* A table for DBG's .eh_frame looked up through C->HDR (open_hdr). */
static int
add_hdr_table(struct sw_cfi *c, Dwarf_Debug dbg, bool msb, const char *path, struct sw_errbuf *err)
{
    struct cfi_table *t = &c->tables[c->ntables];
    memset(t, 0, sizeof *t);
    size_t n = strlen(path) + 14;
    t->label = sw_malloc(n);
    if (t->label == NULL)
        return sw_fail(err, SW_ENOMEM, "reading .eh_frame of %s: out of memory", path);
    snprintf(t->label, n, ".eh_frame of %s", path);
    t->what = t->label;
    t->dbg = dbg;
    t->big_endian = msb;
    t->by_hdr = true;
    c->ntables++;
    return 0;
}

/* Give up the header for T: load the whole list as add_table does (a
 * malformed section leaves T empty, as add_table leaves no table). */
static void
hdr_fall_back(struct cfi_table *t)
{
    Dwarf_Error de = NULL;
    t->by_hdr = false;
    if (dwarf_get_fde_list_eh(t->dbg, &t->cies, &t->ncies, &t->fdes, &t->nfdes, &de) != DW_DLV_OK) {
        dw_drop_error(t->dbg, de);
        t->cies = NULL;
        t->fdes = NULL;
        t->ncies = t->nfdes = 0;
    }
}

/* The table to search for VADDR in T, a by_hdr table: the one-FDE table of
 * the FDE the header names (read on first use), NULL when no FDE starts at
 * or below VADDR, or T itself after falling back to the whole list (an FDE
 * the header names cannot be read by itself).  Errors: out of memory. */
static int
hdr_table_for(struct sw_cfi *c, struct cfi_table *t, sw_addr vaddr, struct cfi_table **out,
              struct sw_errbuf *err)
{
    uint64_t off;
    *out = NULL;
    if (sw_ehhdr_find(&c->hdr, vaddr, &off) == 0)
        return 0;
    for (size_t i = 0; i < c->nhfdes; i++)
        if (c->hfdes[i].off == off) {
            *out = &c->hfdes[i].t;
            return 0;
        }
    if (c->nhfdes == c->caphfdes) {
        size_t cap = c->caphfdes ? 2 * c->caphfdes : 16;
        struct hdr_fde *nh = sw_realloc(c->hfdes, cap * sizeof *nh);
        if (nh == NULL)
            return sw_fail(err, SW_ENOMEM, "reading %s: out of memory", t->what);
        c->hfdes = nh;
        c->caphfdes = cap;
    }
    struct hdr_fde *h = &c->hfdes[c->nhfdes];
    memset(h, 0, sizeof *h);
    h->off = off;
    size_t len = 0;
    int rc = sw_ehhdr_image(&c->hdr, off, c->hdr_machine, c->hdr_flags, &h->image, &len);
    if (rc == -2)
        return sw_fail(err, SW_ENOMEM, "reading %s: out of memory", t->what);
    Dwarf_Error de = NULL;
    if (rc < 0)
        goto fall_back;
    h->elf = elf_memory((char *)h->image, len);
    if (h->elf == NULL || dwarf_elf_init_b(h->elf, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL,
                                           &h->dbg, &de) != DW_DLV_OK) {
        h->dbg = NULL;
        goto fall_back;
    }
    if (setup_dbg(&h->dbg, t->what, 0, err) < 0)
        goto fall_back;
    h->t.dbg = h->dbg;
    h->t.what = t->what;
    h->t.big_endian = t->big_endian;
    if (dwarf_get_fde_list_eh(h->dbg, &h->t.cies, &h->t.ncies, &h->t.fdes, &h->t.nfdes, &de) !=
            DW_DLV_OK ||
        h->t.nfdes != 1)
        goto fall_back;
    c->nhfdes++;
    *out = &h->t;
    return 0;

fall_back:
    if (h->dbg) {
        dw_drop_error(h->dbg, de);
        if (h->t.fdes)
            dwarf_fde_cie_list_dealloc(h->dbg, h->t.cies, h->t.ncies, h->t.fdes, h->t.nfdes);
        finish_dbg(h->dbg);
    } else {
        dw_drop_error(NULL, de);
    }
    if (h->elf)
        elf_end(h->elf);
    sw_free(h->image);
    sw_debug(SW_DBG_CACHE,
             "cfi: %s: FDE at .eh_frame+0x%" PRIx64
             " not read through .eh_frame_hdr, reading the whole section\n",
             t->what, off);
    hdr_fall_back(t);
    *out = t;
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
    for (size_t i = 0; i < 2; i++)
        if (c->dbg[i])
            finish_dbg(c->dbg[i]);
    /* dwarf_finish leaves an Elf given to dwarf_elf_init_b to its owner. */
    if (c->elf)
        elf_end(c->elf);
    for (size_t i = 0; i < 2; i++) {
        if (c->file_elf[i])
            elf_end(c->file_elf[i]);
        if (c->file_fd[i] > 0)
            close(c->file_fd[i]);
    }
    for (size_t i = 0; i < c->nhfdes; i++) {
        struct hdr_fde *h = &c->hfdes[i];
        dwarf_fde_cie_list_dealloc(h->dbg, h->t.cies, h->t.ncies, h->t.fdes, h->t.nfdes);
        finish_dbg(h->dbg);
        elf_end(h->elf);
        sw_free(h->image);
    }
    sw_free(c->hfdes);
    for (size_t i = 0; i < c->nexprs; i++)
        sw_free(c->exprs[i].ops);
    sw_free(c->exprs);
    if (c->hdr_elf)
        elf_end(c->hdr_elf);
    if (c->hdr_fd > 0)
        close(c->hdr_fd);
    sw_free(c->image);
    sw_free(c->scratch);
    sw_free(c->path);
    pthread_mutex_destroy(&c->lock);
    sw_free(c);
}

int
sw_cfi_open(const char *path, const char *debug_path, unsigned addr_size, struct sw_cfi **out,
            struct sw_errbuf *err)
{
    struct sw_errbuf why;
    int rc;

    const char *lib_why;
    if (path == NULL || out == NULL)
        return sw_fail(err, SW_EINVAL, "opening CFI: no file");
    if (!sw_libdwarf_load(&lib_why))
        return sw_fail(err, SW_EUNSUP, "reading CFI of %s: %s", path, lib_why);
    struct sw_cfi *c = sw_calloc(1, sizeof *c);
    if (c == NULL)
        return sw_fail(err, SW_ENOMEM, "opening CFI of %s: out of memory", path);
    pthread_mutex_init(&c->lock, NULL);
    c->path = sw_strdup(path);
    c->scratch = sw_calloc(CFI_TABLE_COLUMNS, sizeof *c->scratch);
    if (c->path == NULL || c->scratch == NULL) {
        sw_cfi_close(c);
        return sw_fail(err, SW_ENOMEM, "opening CFI of %s: out of memory", path);
    }

    sw_err_clear(&why);
    bool msb = false;
    if ((rc = open_dbg(path, addr_size, &c->dbg[0], &c->file_elf[0], &c->file_fd[0], &msb, err)) <
        0)
        goto fail;
    if (c->dbg[0]) {
        /* .eh_frame first: it is what the code was built to unwind with;
         * .debug_frame may describe the same code less precisely. */
        if ((rc = open_hdr(c, path) == 0 ? add_hdr_table(c, c->dbg[0], msb, path, &why)
                                         : add_table(c, c->dbg[0], msb, true, path, &why)) < 0 ||
            (rc = add_table(c, c->dbg[0], msb, false, path, &why)) < 0)
            goto fail_why;
    }
    if (debug_path && strcmp(debug_path, path) != 0) {
        /* The separate debug file is optional: a broken or missing one
         * leaves the file's own CFI.  Its .eh_frame is NOBITS. */
        struct sw_errbuf ignored;
        if (open_dbg(debug_path, addr_size, &c->dbg[1], &c->file_elf[1], &c->file_fd[1], &msb,
                     &ignored) == 0 &&
            c->dbg[1] && (rc = add_table(c, c->dbg[1], msb, false, debug_path, &why)) < 0)
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
    Dwarf_Error de = NULL;
    int rc;

    if (name == NULL)
        name = "an in-memory image";
    const char *lib_why;
    if (image == NULL || out == NULL || len < 4 || memcmp(image, "\177ELF", 4) != 0)
        return sw_fail(err, SW_EBADELF, "reading CFI of %s: not an ELF image", name);
    if (!sw_libdwarf_load(&lib_why))
        return sw_fail(err, SW_EUNSUP, "reading CFI of %s: %s", name, lib_why);
    struct sw_cfi *c = sw_calloc(1, sizeof *c);
    if (c == NULL)
        return sw_fail(err, SW_ENOMEM, "opening CFI of %s: out of memory", name);
    pthread_mutex_init(&c->lock, NULL);
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
    c->elf = elf_memory((char *)c->image, len);
    if (c->elf == NULL || elf_kind(c->elf) != ELF_K_ELF) {
        rc = sw_fail(err, SW_EBADELF, "reading CFI of %s: %s", name,
                     c->elf ? "not an ELF image" : elf_errmsg(-1));
        goto fail;
    }
    rc = dwarf_elf_init_b(c->elf, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &c->dbg[0], &de);
    if (rc == DW_DLV_NO_ENTRY) {
        c->dbg[0] = NULL;
        rc = sw_fail(err, SW_ENOCFI, "reading CFI of %s: no .eh_frame or .debug_frame", name);
        goto fail;
    }
    if (rc != DW_DLV_OK) {
        c->dbg[0] = NULL;
        rc = dw_fail(err, SW_EBADELF, NULL, de, "reading CFI of %s", name);
        goto fail;
    }
    if ((rc = setup_dbg(&c->dbg[0], name, addr_size, err)) < 0)
        goto fail;

    sw_err_clear(&why);
    bool msb = image[5] == 2; /* EI_DATA: ELFDATA2MSB */
    if ((rc = add_table(c, c->dbg[0], msb, true, name, &why)) < 0 ||
        (rc = add_table(c, c->dbg[0], msb, false, name, &why)) < 0) {
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

/* Decode the expression block BLOCK (LEN bytes) of DBG into OPS with libdwarf's own decoder.
 * False when libdwarf cannot (an unknown operation, a truncated operand) or the block holds
 * a DW_OP_implicit_value: libdwarf points its operand past the length, libdw (whose form
 * expr/expr.h takes) at it, and a CFI rule has no use for an implicit value. */
static bool
decode_expr(Dwarf_Debug dbg, const void *block, size_t len, struct sw_expr_op **ops, size_t *nops,
            bool *oom)
{
    Dwarf_Error de = NULL;
    Dwarf_Half asize = 0;
    Dwarf_Loc_Head_c head = NULL;
    Dwarf_Unsigned nlists = 0, n = 0, rawlo, rawhi, expr_off, desc_off;
    Dwarf_Locdesc_c desc = NULL;
    Dwarf_Small lle, source;
    Dwarf_Bool unavailable;
    Dwarf_Addr lo, hi;
    bool ok = false;

    *ops = NULL;
    *nops = 0;
    if (dwarf_get_address_size(dbg, &asize, &de) != DW_DLV_OK) {
        dw_drop_error(dbg, de);
        return false;
    }
    /* Offsets are 4 bytes in .eh_frame; version 5 admits every operation. */
    if (dwarf_loclist_from_expr_c(dbg, (Dwarf_Ptr)(uintptr_t)block, len, asize, 4, 5, &head,
                                  &nlists, &de) != DW_DLV_OK) {
        dw_drop_error(dbg, de);
        return false;
    }
    if (nlists != 1 ||
        dwarf_get_locdesc_entry_d(head, 0, &lle, &rawlo, &rawhi, &unavailable, &lo, &hi, &n, &desc,
                                  &source, &expr_off, &desc_off, &de) != DW_DLV_OK)
        goto out;
    if (n > 0 && (*ops = sw_calloc((size_t)n, sizeof **ops)) == NULL) {
        *oom = true;
        goto out;
    }
    for (Dwarf_Unsigned i = 0; i < n; i++) {
        Dwarf_Small atom;
        Dwarf_Unsigned o1, o2, o3, off;
        if (dwarf_get_location_op_value_c(desc, i, &atom, &o1, &o2, &o3, &off, &de) != DW_DLV_OK ||
            atom == DW_OP_implicit_value)
            goto out;
        (*ops)[i] = (struct sw_expr_op){ .atom = atom, .number = o1, .number2 = o2, .offset = off };
    }
    *nops = (size_t)n;
    ok = true;
out:
    dw_drop_error(dbg, de);
    dwarf_loc_head_c_dealloc(head);
    if (!ok) {
        sw_free(*ops);
        *ops = NULL;
    }
    return ok;
}

/* The operations of expression block BLOCK (LEN bytes) of DBG in *OUT, decoded on first
 * use and kept until sw_cfi_close.  Returns 0 or SW_ENOMEM: a block libdwarf cannot decode
 * is an undecodable expression, which loses only the rules that use it. */
static int
cfi_expr(struct sw_cfi *c, Dwarf_Debug dbg, const void *block, size_t len, struct sw_cfi_expr *out)
{
    struct cfi_expr_block *e;
    bool oom = false;

    for (size_t i = 0; i < c->nexprs; i++) {
        if (c->exprs[i].block == block && c->exprs[i].len == len) {
            *out = c->exprs[i].expr;
            return 0;
        }
    }
    e = sw_grow(c->exprs, &c->capexprs, c->nexprs + 1, sizeof *e, 16);
    if (e == NULL)
        return SW_ENOMEM;
    c->exprs = e;
    e = &c->exprs[c->nexprs];
    *e = (struct cfi_expr_block){ .block = block, .len = len };
    /* An empty block has no operations; evaluating it fails (no value). */
    if (len > 0) {
        e->expr.undecodable =
            block == NULL || !decode_expr(dbg, block, len, &e->ops, &e->expr.nops, &oom);
        if (oom)
            return SW_ENOMEM;
        e->expr.ops = e->ops;
    }
    c->nexprs++;
    *out = e->expr;
    return 0;
}

/* Translate one libdwarf register rule of DBG.  Returns 0, -1 for a rule
 * type we do not know, SW_ENOMEM. */
static int
convert_rule(struct sw_cfi *c, Dwarf_Debug dbg, const Dwarf_Regtable_Entry3 *e,
             struct sw_cfi_rule *r)
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
        if (e->dw_block_ptr == NULL && e->dw_offset_or_block_len != 0)
            return -1;
        return cfi_expr(c, dbg, e->dw_block_ptr, (size_t)e->dw_offset_or_block_len, &r->expr);
    default:
        return -1;
    }
}

/* Why the call frame instructions of FDE and of its CIE (CIE_LEN bytes after
 * a length field of OFFSET_SIZE, instructions INIT/INIT_LEN as libdwarf
 * reports them) may not be given to libdwarf 20210528, or NULL.  libdwarf
 * follows an expression block's length past its section, and computes a
 * CIE's instruction length as its end less where its augmentation data
 * ends, checked against the section only: data longer than the CIE makes
 * that length wrap.  So the CIE is laid out here (sw_cfi_cie_layout) and
 * the instructions of both entries scanned (sw_cfi_insns_bounded) first. */
static const char *
insns_unsound(struct cfi_table *t, Dwarf_Fde fde, Dwarf_Unsigned cie_len, Dwarf_Half offset_size,
              Dwarf_Ptr init, Dwarf_Unsigned init_len)
{
    Dwarf_Error de = NULL;
    Dwarf_Half dflt = 0;
    if (dwarf_get_address_size(t->dbg, &dflt, &de) != DW_DLV_OK) {
        dw_drop_error(t->dbg, de);
        return "no address size";
    }
    /* The CIE ends where its instructions end (init_len is counted back
     * from the CIE's end), its length field LW + CIE_LEN bytes before. */
    size_t lw = offset_size == 8 ? 12 : 4;
    if (init == NULL || init_len > cie_len)
        return "the CIE's instructions start past its end";
    const uint8_t *cie = (const uint8_t *)init + init_len - cie_len - lw;
    struct sw_cfi_cie_layout lay;
    int rc = sw_cfi_cie_layout(cie, (size_t)cie_len + lw, dflt, &lay);
    if (rc < 0)
        return "the CIE's augmentation data runs past it";
    if (rc == 0 && cie + lay.insns_off != (const uint8_t *)init)
        return "the CIE's instructions do not start where its augmentation data ends";
    if (!sw_cfi_insns_bounded(init, (size_t)init_len, lay.addr_size))
        return "an instruction runs past its FDE or CIE";

    Dwarf_Ptr finsns = NULL, fbytes = NULL;
    Dwarf_Unsigned flen = 0, fbytes_len = 0, func_len = 0;
    Dwarf_Addr low = 0;
    Dwarf_Off cie_off = 0, fde_off = 0;
    Dwarf_Signed cie_index = 0;
    if (dwarf_get_fde_instr_bytes(fde, &finsns, &flen, &de) != DW_DLV_OK ||
        dwarf_get_fde_range(fde, &low, &func_len, &fbytes, &fbytes_len, &cie_off, &cie_index,
                            &fde_off, &de) != DW_DLV_OK) {
        dw_drop_error(t->dbg, de);
        return "the FDE's instructions are not found";
    }
    /* FBYTES is the FDE's length field, FBYTES_LEN the length it holds */
    const uint8_t *fstart = fbytes, *f = finsns;
    size_t flw = (fstart[0] & fstart[1] & fstart[2] & fstart[3]) == 0xff ? 12 : 4;
    const uint8_t *fend = fstart + flw + fbytes_len;
    if (f == NULL || f < fstart || flen > (Dwarf_Unsigned)(fend - f) || f + flen != fend)
        return "the FDE's instructions start past its end";
    if (!sw_cfi_insns_bounded(finsns, (size_t)flen, lay.addr_size))
        return "an instruction runs past its FDE or CIE";
    return NULL;
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

    const char *why = insns_unsound(t, fde, cie_len, offset_size, init, init_len);
    if (why != NULL)
        return sw_fail(err, SW_EBADELF, "CFI row for 0x%" PRIx64 " in %s: %s", vaddr, t->what, why);

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
    row->ra_column = ra_col;
    row->signal_frame = aug && strchr(aug, 'S') != NULL;

    /* RA_SIGN_STATE: the CIE's instructions, then the FDE's up to VADDR. */
    Dwarf_Ptr insns = NULL;
    Dwarf_Unsigned insns_len = 0;
    bool ra_stack[RA_STATE_DEPTH], ra_signed = false;
    unsigned depth = 0;
    if (dwarf_get_fde_instr_bytes(fde, &insns, &insns_len, &de) != DW_DLV_OK) {
        dw_drop_error(t->dbg, de);
        insns = NULL;
    }
    if (insns && sw_cfi_replay_ra_state(init, (size_t)init_len, 0, UINT64_MAX, caf, t->big_endian,
                                        &ra_signed, ra_stack, &depth))
        sw_cfi_replay_ra_state(insns, (size_t)insns_len, lo, vaddr, caf, t->big_endian, &ra_signed,
                               ra_stack, &depth);
    row->ra_signed = ra_signed;

    const Dwarf_Regtable_Entry3 *cfa = &rt.rt3_cfa_rule;
    if (cfa->dw_value_type == DW_EXPR_EXPRESSION || cfa->dw_value_type == DW_EXPR_VAL_EXPRESSION) {
        row->cfa_is_expr = true;
        int rc = cfi_expr(c, t->dbg, cfa->dw_block_ptr, (size_t)cfa->dw_offset_or_block_len,
                          &row->cfa_expr);
        if (rc < 0)
            return sw_fail(err, rc, "CFI row for 0x%" PRIx64 " in %s: out of memory", vaddr,
                           t->what);
    } else if (cfa->dw_value_type == DW_EXPR_OFFSET && cfa->dw_regnum < CFI_TABLE_COLUMNS) {
        row->cfa_reg = cfa->dw_regnum;
        row->cfa_offset = cfa->dw_offset_relevant ? (int64_t)cfa->dw_offset_or_block_len : 0;
    } else {
        return sw_fail(err, SW_EBADELF, "CFI row for 0x%" PRIx64 " in %s: no usable CFA rule",
                       vaddr, t->what);
    }

    for (unsigned i = 0; i < SW_CFI_MAX_REGS; i++) {
        int rc = convert_rule(c, t->dbg, &c->scratch[i], &row->rules[i]);
        if (rc == SW_ENOMEM)
            return sw_fail(err, rc, "CFI row for 0x%" PRIx64 " in %s: out of memory", vaddr,
                           t->what);
        if (rc < 0)
            return sw_fail(err, SW_EBADELF,
                           "CFI row for 0x%" PRIx64 " in %s: register %u has rule type %u", vaddr,
                           t->what, i, (unsigned)c->scratch[i].dw_value_type);
    }
    return 0;
}

static int row_lookup(struct sw_cfi *c, sw_addr vaddr, struct sw_cfi_row *row,
                      struct sw_errbuf *err);

static int
row_at_locked(struct sw_cfi *c, sw_addr vaddr, struct sw_cfi_row *row, struct sw_errbuf *err)
{
    for (unsigned k = 0; k < ROW_CACHE; k++) {
        if (c->rows[k].valid && c->rows[k].vaddr == vaddr) {
            *row = c->rows[k].row;
            return 0;
        }
    }
    int rc = row_lookup(c, vaddr, row, err);
    if (rc == 0) {
        struct row_cache *e = &c->rows[c->next_row++ % ROW_CACHE];
        e->vaddr = vaddr;
        e->row = *row;
        e->valid = true;
    }
    return rc;
}

int
sw_cfi_row_at(struct sw_cfi *c, sw_addr vaddr, struct sw_cfi_row *row, struct sw_errbuf *err)
{
    pthread_mutex_lock(&c->lock);
    int rc = row_at_locked(c, vaddr, row, err);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static int
row_lookup(struct sw_cfi *c, sw_addr vaddr, struct sw_cfi_row *row, struct sw_errbuf *err)
{
    for (size_t i = 0; i < c->ntables; i++) {
        struct cfi_table *t = &c->tables[i];
        Dwarf_Error de = NULL;
        Dwarf_Fde fde;
        Dwarf_Addr lo, hi;
        if (t->by_hdr) {
            int rc = hdr_table_for(c, t, vaddr, &t, err);
            if (rc < 0)
                return rc;
            if (t == NULL)
                continue;
        }
        if (t->fdes == NULL)
            continue; /* fell back to a list that could not be read */
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
