/* walker/elf_internal.h -- the ELF cache's objects, shared by elfcache.c (files,
 * segments, sections) and elfsyms.c (symbol tables).  Not for other modules:
 * they use walker/elf.h.  Includes libelf.
 */
#ifndef RSPWALK_WALKER_ELF_INTERNAL_H
#define RSPWALK_WALKER_ELF_INTERNAL_H

#include <gelf.h>
#include <libelf.h>

#include "walker/elf.h"
/* Name strings that need a copy ("@VERSION" stripped) go into blocks of this
 * size; a longer name gets a block of its own. */
#define NAME_BLOCK_SIZE 4096

enum sym_src { SRC_SYMTAB, SRC_DYNSYM, SRC_DEBUG };

struct elf_seg {
    sw_addr vaddr, memsz, filesz;
    uint64_t offset;
};

struct elf_sym {
    const char *name;
    sw_addr value, size;
    uint8_t bind;  /* 0 GLOBAL, 1 WEAK, 2 LOCAL: the order of preference at one address */
    uint8_t label; /* STT_NOTYPE in code: a fallback where no function covers */
    uint8_t src;   /* enum sym_src */
    uint32_t order;
};

/* One libelf handle over a file (fd >= 0) or a memory copy (image). */
struct elf_file {
    int fd;
    void *image;
    Elf *elf;
    const uint8_t *raw;
    size_t rawlen;
};

struct name_block {
    struct name_block *next;
    size_t used, cap;
    char data[];
};

struct sw_elf {
    struct sw_elf *next;
    struct sw_elfcache *cache;
    char *path;
    char *debug_path;
    char *dwarf_path; /* an uncompressed copy of the debug file, NULL: none */
    bool dwarf_path_tried;
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
    struct elf_sym *syms;
    sw_addr *maxend; /* maxend[i]: highest value+size among syms[0..i], i < nfuncs */
    size_t nsyms, capsyms;
    size_t nfuncs; /* syms[0..nfuncs) are functions, the rest labels; each part sorted */
    struct name_block *names;
};

struct sw_elfcache {
    char *debug_dir;
    char *cache_dir; /* NULL: no uncompressed copies of debug files */
    struct sw_elf *files;
};

/* The section named NAME of ELF (its header in *SH), or NULL. */
Elf_Scn *sw_elf_find_section(Elf *elf, const char *name, GElf_Shdr *sh);

#endif /* RSPWALK_WALKER_ELF_INTERNAL_H */
