/* elf/elf_internal.h -- the ELF cache's objects, shared by elf/file.c (one
 * libelf handle), elf/elf.c (the cache, segments, sections) and
 * elf/symbols.c (symbol tables).  Not for other modules: they use
 * elf/elf.h.  Includes libelf.
 */
#ifndef RSPWALK_ELF_INTERNAL_H
#define RSPWALK_ELF_INTERNAL_H

#include <gelf.h>
#include <libelf.h>
#include <pthread.h>

#include "elf/elf.h"
struct elf_seg {
    sw_addr vaddr, memsz, filesz;
    uint64_t offset;
};

/* One code symbol as gdb's minimal symbol table holds it (gdb/elfread.c
 * elf_symtab_read): any type but FILE and SECTION, in an executable section.
 * Link-time address. */
struct elf_sym {
    const char *name; /* borrowed from libelf: "name@@VERSION" keeps its version */
    sw_addr value, size;
    uint32_t shndx; /* its section, in the table's own file */
    uint32_t order; /* its place in the table: the tie-break of name lookups */
    uint8_t local;  /* STB_LOCAL: gdb's mst_file_text */
    uint8_t ifunc;  /* STT_GNU_IFUNC: mst_text_gnu_ifunc */
};

/* The code symbols of one of gdb's objfiles (the file, or its debug file),
 * sorted by address, then name (strcmp), duplicates merged. */
struct elf_symtab {
    Elf *elf; /* the file SHNDX counts in; NULL: no table */
    struct elf_sym *syms;
    uint32_t *prev_sized; /* [i]: the highest j <= i whose symbol has a size, UINT32_MAX: none */
    size_t n, cap;
};

/* One libelf handle over a file (fd >= 0) or a memory copy (image). */
struct elf_file {
    int fd;
    void *image;
    Elf *elf;
    const uint8_t *raw;
    size_t rawlen;
};

/* What is set when the file is opened (under the cache's lock) is read-only
 * afterwards; LOCK guards what is read later, on first use: the symbol
 * tables, the uncompressed debug copy, and every libelf call on MAIN and DBG
 * (libelf reads section headers and data lazily). */
struct sw_elf {
    struct sw_elf *next;
    struct sw_elfcache *cache;
    pthread_mutex_t lock;
    char *path;
    char *debug_path;
    char *dwarf_path; /* an uncompressed copy of the debug file, NULL: none */
    bool dwarf_path_tried;
    /* Why a compressed section of the file or its debug file is not
     * inflated (over the cache's limits), "" when none is: a warning for
     * sw_elf_warning, set when the file is opened. */
    char inflate_warning[192];
    struct elf_file main;
    struct elf_file dbg; /* dbg.elf NULL: no separate debug file */
    const struct arch_desc *arch;
    uint16_t machine;
    uint32_t flags;  /* e_flags */
    bool big_endian; /* EI_DATA, known even when no arch table matches */
    bool is_dyn;
    sw_addr entry, lo, hi, dyn_vaddr, phdr_vaddr;
    const char *interp; /* PT_INTERP, borrowed from main.raw; NULL if none */
    struct elf_seg *segs;
    size_t nsegs;
    const uint8_t *build_id; /* borrowed from libelf's data of main */
    size_t build_id_len;
    int syms_state; /* 0: not read yet, 1: read, <0: the code reading failed with */
    /* [0] the file's own symbols (.symtab, else .dynsym; PowerPC64 ELFv1
     * entries), [1] its debug file's .symtab (elf/symbols.c). */
    struct elf_symtab tabs[2];
    struct elf_symtab aliases; /* ELFv1 descriptor names at their entries: for name lookups */
};

/* LOCK guards FILES (opening, looking up); DEBUG_DIR and CACHE_DIR are set
 * before the cache is shared. */
struct sw_elfcache {
    pthread_mutex_t lock;
    char *debug_dir;
    char *cache_dir;                  /* NULL: no uncompressed copies of debug files */
    struct sw_inflate_limits inflate; /* set before the cache is shared */
    struct sw_elf *files;
};

/* Whether section SCN of ELF (header SH, name NAME or NULL) inflates
 * within LIM (NULL: defaults); true when it is not compressed.  False with
 * the reason in WHY (elf/inflate.c). */
bool sw_elf_scn_inflate_ok(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                           const struct sw_inflate_limits *lim, char *why, size_t why_len);

/* ---- one libelf handle (elf/file.c) -------------------------------------- */

/* Open PATH for reading into F (F->fd -1 before): only a regular file, never
 * blocking on a FIFO or a device (util/path.h), with NOFOLLOW not through a
 * symbolic link as its last component.  Returns 0, SW_ENOENT, SW_EIO,
 * SW_EBADELF, with the message in ERR naming PATH.  Whatever was opened is
 * F's even on failure: close with sw_elf_file_close. */
int sw_elf_file_open(struct elf_file *f, const char *path, bool nofollow, struct sw_errbuf *err);
/* Open a copy of the LEN bytes at IMAGE (named NAME in messages) into F.
 * Returns 0, SW_ENOMEM, SW_EBADELF; close with sw_elf_file_close. */
int sw_elf_file_open_mem(struct elf_file *f, const char *name, const void *image, size_t len,
                         struct sw_errbuf *err);
/* Release what F holds; F is then closed (fd -1).  A closed F is a no-op. */
void sw_elf_file_close(struct elf_file *f);
/* The ELF header of F into *EH, checked that it and both header tables lie
 * inside the file.  Returns 0 or SW_EBADELF with the message naming PATH. */
int sw_elf_file_check_header(struct elf_file *f, const char *path, GElf_Ehdr *eh,
                             struct sw_errbuf *err);
/* F's build-id: *ID borrowed from libelf's data of F, *LEN 0 if none. */
void sw_elf_file_build_id(struct elf_file *f, const uint8_t **id, size_t *len);
/* The section named NAME of ELF (its header in *SH), or NULL. */
Elf_Scn *sw_elf_find_section(Elf *elf, const char *name, GElf_Shdr *sh);

/* ---- the loaded image (elf/segments.c) ---------------------------------- */

/* E's PT_LOAD segments, load range, PT_DYNAMIC, PT_PHDR and PT_INTERP from
 * the program headers of E->main (EH its ELF header).  Returns 0, SW_ENOMEM
 * or SW_EBADELF, with the message in ERR naming the file. */
int sw_elf_segments_read(struct sw_elf *e, const GElf_Ehdr *eh, struct sw_errbuf *err);

/* ---- symbol tables (elf/symbols.c) --------------------------------------- */

/* Free E's symbol tables (elf/symbols.c). */
void sw_elf_syms_free(struct sw_elf *e);

#endif /* RSPWALK_ELF_INTERNAL_H */
