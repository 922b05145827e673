/* elf/elf.h -- local ELF files: segments, symbols, code bytes, debug links.
 *
 * The ELF cache opens each file once (by path) with libelf and keeps what the
 * walker needs: the PT_LOAD range, the build-id, code symbols from .symtab or
 * .dynsym and the separate debug file (/usr/lib/debug/.build-id),
 * and the section contents steppers read instead of target memory.  Its
 * DWARF and CFI are not here: libstate/module.h keeps them per file.
 * libelf is included through elf/elf_internal.h (elf/file.c, elf/elf.c,
 * elf/symbols.c) and in elf/debug_plain.c, nowhere else.
 *
 * Threads: a cache and its files may be used from several threads at once
 * (walkers sharing one cache).  What a file holds from its opening is
 * read-only; what is read later (symbol tables, sections, the uncompressed
 * debug copy) is read under the file's lock, once.
 */
#ifndef RSPWALK_ELF_H
#define RSPWALK_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/arch.h"
#include "rspwalk/types.h"

struct sw_elfcache;
struct sw_elf;

/* One function symbol, link-time address. */
struct sw_elfsym {
    const char *name; /* valid until the cache is freed */
    sw_addr value;
    sw_addr size;
};

/* ---- how far compressed sections may inflate (elf/inflate.c) ----------- */

/* The default ceiling of one section's inflated size.  Debian's largest
 * debug files hold a few hundred megabytes of .debug_info; a stub's file
 * that asks for more is more likely a bomb than a program, and a user who
 * walks such a program raises it (sw_libstate_config.max_inflate_bytes). */
#define SW_ELF_INFLATE_MAX_BYTES (512ull * 1024 * 1024)
/* The default most a section may grow by inflating: DWARF compresses 3 to
 * 10 times with zlib, which itself cannot pass about 1032 (zeros); 100
 * leaves a margin for honest files and stops a 2 MB file asking for 2 GiB. */
#define SW_ELF_INFLATE_MAX_RATIO 100u
/* Sections inflating to less than this are held to the ceiling alone. */
#define SW_ELF_INFLATE_RATIO_FLOOR (1024u * 1024)

/* Limits on inflating compressed sections; 0 in a member: its default. */
struct sw_inflate_limits {
    uint64_t max_bytes; /* 0: SW_ELF_INFLATE_MAX_BYTES */
    unsigned max_ratio; /* 0: SW_ELF_INFLATE_MAX_RATIO */
};

struct Elf;
/* Whether every compressed section of ELF (SHF_COMPRESSED or GNU .zdebug)
 * inflates within LIM (NULL: the defaults), by the sizes their headers
 * declare (libelf allocates what the header says).  False with the first
 * section over a limit named in WHY. */
bool sw_elf_inflate_ok(struct Elf *elf, const struct sw_inflate_limits *lim, char *why,
                       size_t why_len);

/* A new cache; DEBUG_DIR (NULL: /usr/lib/debug) is where separate debug
 * files are looked up by build-id.  Returns NULL when out of memory.
 * Free with sw_elfcache_free, when no thread uses it any more. */
struct sw_elfcache *sw_elfcache_new(const char *debug_dir);
void sw_elfcache_free(struct sw_elfcache *c);
/* Where uncompressed copies of debug files are kept (NULL: none, the
 * default).  Before the cache is shared or used.  Returns 0 or SW_ENOMEM. */
int sw_elfcache_set_cache_dir(struct sw_elfcache *c, const char *dir);
/* The limits on inflating compressed sections (LIM copied; the defaults
 * until set).  Before the cache is shared or used. */
void sw_elfcache_set_inflate_limits(struct sw_elfcache *c, const struct sw_inflate_limits *lim);
/* Why a compressed section of E or its debug file is not read (over the
 * cache's limits), NULL when none: valid while the cache lives. */
const char *sw_elf_warning(const struct sw_elf *e);
/* The limits of E's cache (borrowed, valid while the cache lives). */
const struct sw_inflate_limits *sw_elf_inflate_limits(const struct sw_elf *e);

/* Open PATH (once; later calls return the same object).  Returns 0,
 * SW_ENOENT (no such file), SW_EBADELF (not ELF, truncated, no PT_LOAD), with
 * the message in ERR naming PATH and the cause.  *OUT is borrowed, valid
 * until the cache is freed. */
int sw_elfcache_open(struct sw_elfcache *c, const char *path, struct sw_elf **out,
                     struct sw_errbuf *err);

/* Open an ELF image held in memory (the vDSO read from the target): IMAGE of
 * LEN bytes is copied.  NAME is used in messages and as the cache key, with
 * the bytes: an image of other bytes under the same NAME (another target's
 * vDSO) is another entry. */
int sw_elfcache_open_mem(struct sw_elfcache *c, const char *name, const void *image, size_t len,
                         struct sw_elf **out, struct sw_errbuf *err);

/* The file or image already opened under KEY (a path, or the NAME given to
 * sw_elfcache_open_mem: the last image opened so), or NULL.  Borrowed, valid
 * until the cache is freed. */
struct sw_elf *sw_elfcache_lookup(struct sw_elfcache *c, const char *key);

const char *sw_elf_path(const struct sw_elf *e);
/* The separate debug file used for symbols and .debug_frame, or NULL. */
const char *sw_elf_debug_path(const struct sw_elf *e);
/* The debug file for the DWARF and CFI readers: its uncompressed copy in
 * the cache directory (elf/debug_plain.h; made on the first call) where it
 * has compressed sections and the cache allows it (sw_elfcache_set_cache_dir,
 * not RSPWALK_NO_CACHE), else sw_elf_debug_path.  Borrowed, valid until the
 * cache is freed. */
const char *sw_elf_dwarf_path(struct sw_elf *e);
/* Whether sw_elf_dwarf_path is known without work: no copy is needed, or it
 * was made before (then taken).  False while making it is still to come. */
bool sw_elf_dwarf_ready(struct sw_elf *e);
/* The architecture from the ELF header; NULL if unsupported. */
const struct arch_desc *sw_elf_arch(const struct sw_elf *e);
/* ET_EXEC (false) or ET_DYN (true). */
bool sw_elf_is_dyn(const struct sw_elf *e);
/* e_entry. */
sw_addr sw_elf_entry(const struct sw_elf *e);
/* Lowest p_vaddr and highest p_vaddr+p_memsz of the PT_LOAD segments. */
void sw_elf_load_range(const struct sw_elf *e, sw_addr *lo, sw_addr *hi);
/* The program interpreter named by PT_INTERP ("/lib64/ld-linux-x86-64.so.2",
 * a path on the target), or NULL if the file has none.  Borrowed, valid
 * until the cache is freed. */
const char *sw_elf_interp(const struct sw_elf *e);
/* The bytes of an image opened with sw_elfcache_open_mem (the cache's copy,
 * borrowed, valid until the cache is freed); NULL and 0 for a file. */
void sw_elf_image(const struct sw_elf *e, const uint8_t **data, size_t *len);
/* Link-time address of PT_DYNAMIC, 0 if none. */
sw_addr sw_elf_dynamic_vaddr(const struct sw_elf *e);
/* Link-time address of the program headers (PT_PHDR, else the PT_LOAD that
 * holds e_phoff), 0 if they are not loaded: AT_PHDR minus this is the bias. */
sw_addr sw_elf_phdr_vaddr(const struct sw_elf *e);
/* The build-id note: *ID is borrowed; *LEN 0 if the file has none. */
void sw_elf_build_id(const struct sw_elf *e, const uint8_t **id, size_t *len);
/* The whole build-id note as a loaded image holds it: *VADDR its link-time
 * address, *NOTE (borrowed) its *LEN bytes (header, name, descriptor) in
 * file byte order.  False when the file has no build-id note inside a
 * PT_LOAD's file contents (the target's memory then cannot show it). */
bool sw_elf_build_id_note(const struct sw_elf *e, sw_addr *vaddr, const uint8_t **note,
                          size_t *len);

/* The symbol naming link-time address VADDR, as gdb's minimal symbols name
 * it (elf/symbols.c): the file's .symtab (its .dynsym without one) and
 * its debug file's .symtab; at one address the greatest name by strcmp
 * ("nanosleep" over "__nanosleep"), a sized symbol over sizeless ones while
 * it covers VADDR, only symbols of VADDR's own code section.  Versioned
 * names keep their version.  The symbol tables are read on the first call.
 * Returns 0, SW_ENOSYM, or SW_ENOMEM (reading the tables; a later call
 * retries). */
int sw_elf_symbol_at(struct sw_elf *e, sw_addr vaddr, struct sw_elfsym *out);

/* Read the symbol tables now, as sw_elf_symbol_at's first call would
 * (libstate: while a round trip is under way).  Returns 0 or SW_ENOMEM. */
int sw_elf_load_symbols(struct sw_elf *e);

/* The symbol named NAME, or NAME@VERSION: the file's before its debug
 * file's, then table order.  Returns 0, SW_ENOSYM or SW_ENOMEM. */
int sw_elf_symbol_by_name(struct sw_elf *e, const char *name, struct sw_elfsym *out);

/* The same, preferring a GLOBAL or WEAK symbol to a LOCAL one (gdb's
 * lookup_minimal_symbol within one file: an external symbol ends its search
 * over every file, a file-local one does not); *LOCAL says which it found.
 * Returns 0, SW_ENOSYM or SW_ENOMEM. */
int sw_elf_symbol_by_name_bind(struct sw_elf *e, const char *name, struct sw_elfsym *out,
                               bool *local);

/* The value of the defined symbol NAME of any type (data objects too: the code-only tables
 * above do not hold them), read from the file's .symtab, its .dynsym, then the debug
 * file's .symtab, each time (for the few look-ups of a stub's qSymbol).  Returns 0 or
 * SW_ENOSYM. */
int sw_elf_any_symbol(struct sw_elf *e, const char *name, sw_addr *value);

/* Copy LEN bytes at link-time address VADDR from the file's allocated,
 * non-NOBITS sections or PT_LOAD file contents (code and read-only data).
 * Returns 0 or SW_EMEM if any byte is not in the file. */
int sw_elf_read(struct sw_elf *e, sw_addr vaddr, void *buf, size_t len);

/* The contents of section NAME (".eh_frame") of the file itself, or of the
 * debug file when FROM_DEBUG.  *DATA borrowed (valid until the cache is
 * freed), *ADDR its sh_addr.  Returns 0 or SW_ENOENT. */
int sw_elf_section(struct sw_elf *e, const char *name, bool from_debug, const uint8_t **data,
                   size_t *len, sw_addr *addr);

#endif /* RSPWALK_ELF_H */
