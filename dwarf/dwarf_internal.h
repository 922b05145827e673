/* dwarf/dwarf_internal.h -- what the files behind dwarf/dwarf.h share.
 *
 * libdw and the DIE helpers (dwarf/die.c), the handle, the address -> unit
 * table and the parsed units (dwarf/dwarf.c), the scopes of a unit
 * (dwarf/scopes.c), the unit cache beside the copy (dwarf/unitcache.c),
 * inline and tail-call chains (dwarf/chains.c), types (dwarf/types.c),
 * variables (dwarf/vars.c) and C++ names without a linkage name
 * (dwarf/names.c).  The lower of these call none above them: die.c none,
 * names.c die.c, dwarf.c those two, unitcache.c dwarf.c, scopes.c all four.
 * Included only by those files: they are the ones that include
 * elfutils' <elfutils/libdw.h> (the CFI adapter, cfi/cfi.c,
 * reads frames with libdwarf; the two libraries export 34 functions of the
 * same names, so no file includes both).  Not an interface.
 */
#ifndef RSPWALK_DWARF_INTERNAL_H
#define RSPWALK_DWARF_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dwarf.h>
#include "dwarf/libdw_dl.h"
#include <libelf.h>

#include "util/util.h"
#include "dwarf/dwarf.h"

/* Bounds on the work garbage DWARF can cause.  Real units nest scopes a few
 * levels deep (glibc: under 12) and gdb's tail-call chains are short (glibc:
 * 1-2), so these never cut a real answer. */
#define DI_MAX_DEPTH  64         /* DIE nesting followed inside a unit */
#define DI_MAX_DIES   (1u << 22) /* DIEs visited in one unit */
#define DI_MAX_HOPS   8          /* abstract_origin / specification links followed */
#define DI_MAX_RANGES 4096       /* entries read from one range list */
#define DI_MAX_CHAIN  32         /* tail calls in one chain */
#define DI_MAX_VISITS 8192       /* call sites entered by one tail-call search */
#define DI_NONE       UINT32_MAX

/* Bounds for garbage: types nest a few levels in real programs, and gdb's
 * info locals shows members one level deep here anyway. */
#define DI_MAX_TYPE_DEPTH 8
#define DI_MAX_MEMBERS    256
#define DI_MAX_LOCS       1024

enum di_scope_kind { DI_FUNC, DI_INLINED, DI_BLOCK };

struct di_range {
    sw_addr lo, hi;
};

/* A DIE with code: a concrete function, an inlined subroutine or a lexical
 * block, in DIE pre-order (children follow their parent). */
struct di_scope {
    uint32_t parent;         /* DI_NONE at the top of the unit */
    uint32_t first, nranges; /* in cu->ranges, in DWARF order */
    uint8_t kind;            /* enum di_scope_kind */
    const char *name;        /* DI_FUNC, DI_INLINED: gdb's name; in the mapped file */
    Dwarf_Off die;           /* the DIE's global offset (local variables) */
};

enum di_target_kind { DI_TGT_NONE, DI_TGT_ADDR, DI_TGT_NAME };

struct di_site {
    sw_addr pc;    /* DW_AT_call_return_pc (DW_AT_low_pc for the GNU tag) */
    uint32_t func; /* the enclosing DI_FUNC scope */
    bool tail;
    bool tmulti;   /* DI_TGT_ADDR of a DW_AT_ranges target: TADDR is its first
                    * range, and its other ranges start no function */
    uint8_t tkind; /* enum di_target_kind */
    sw_addr taddr;
    const char *tname;
};

struct di_pcidx {
    sw_addr pc;
    uint32_t idx; /* in cu->sites */
};

struct di_rbuf {
    struct di_range *v;
    size_t n, cap;
};

struct di_cu {
    Dwarf_Off off; /* global offset of the unit DIE */
    int state;     /* 0: not parsed, 1: parsed, -1: malformed (stays empty) */
    struct di_scope *scopes;
    size_t nscopes, capscopes;
    struct di_rbuf ranges;
    struct di_site *sites;
    size_t nsites, capsites;
    struct di_pcidx *by_pc; /* every site, sorted by pc */
    char *strings;          /* owned: the names of a unit taken from the cache, or NULL */
};

struct di_span {
    sw_addr lo, hi;
    Dwarf_Off cu_off; /* the unit object is made on first use: libc has 1700 units */
};

/* LOCK (recursive) guards everything parsed on first use -- the unit table,
 * the units, the names, ERR -- and every libdw call on DBG: taken by
 * sw_di_parsed_cu_at, sw_dinfo_warm and the queries that read DIEs
 * themselves (dwarf/vars.c).  A unit, once parsed (state 1), is not changed
 * again: its scopes and sites are read without the lock. */
struct sw_dinfo {
    pthread_mutex_t lock;
    Dwarf *dbg;                      /* owned: libdw's handle; NULL: no .debug_info */
    int cache_state;                 /* 0: not looked at; 1: CACHE_DIR set; -1: no cache */
    char *cache_dir;                 /* owned: CACHE/<build-id>/, where SOURCE is the copy */
    uint64_t src_size, src_mtime_ns; /* the copy's, which cached tables must match */
    Elf *dbg_elf; /* owned: the mapping DBG's sections point into (elf_end after dwarf_end) */
    int dbg_fd;   /* owned: its descriptor, -1 when none */
    struct sw_elf *elf;
    char *path;
    char *source; /* the file DBG reads */
    struct di_cu **cus;
    size_t ncus, capcus; /* sorted by off */
    struct di_span *spans;
    size_t nspans, capspans; /* sorted by lo */
    bool aranges_read, units_scanned;
    struct sw_errbuf err;
    struct di_names *names; /* dwarf/names.c's, made on first use; NULL: none yet */
};

/* D's lock (recursive): around what reads DIEs or parses on first use. */
static inline void
sw_di_lock(struct sw_dinfo *d)
{
    pthread_mutex_lock(&d->lock);
}

static inline void
sw_di_unlock(struct sw_dinfo *d)
{
    pthread_mutex_unlock(&d->lock);
}

/* ---- libdw helpers (dwarf/die.c) --------------------------------------------------------- */

/* Record libdw's last failure on D, naming the source file; returns CODE. */
int sw_di_fail(struct sw_dinfo *d, int code, const char *what);

/* Attribute AT of DIE itself (no abstract origin followed); false when it is
 * absent or of another form.  Strings point into the mapped file, valid until
 * sw_dinfo_close. */
bool sw_di_attr_string(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, const char **out);
/* The global offset of the DIE reference AT names. */
bool sw_di_attr_ref(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, Dwarf_Off *off);
bool sw_di_attr_flag(struct sw_dinfo *d, Dwarf_Die *die, unsigned at);
bool sw_di_attr_addr(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, sw_addr *out);
bool sw_di_attr_udata(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, Dwarf_Word *out);
bool sw_di_has_attr(struct sw_dinfo *d, Dwarf_Die *die, unsigned at);

/* The DIE at global offset OFF into *OUT (a value: nothing to free); false
 * when there is none. */
bool sw_di_die_at(struct sw_dinfo *d, Dwarf_Off off, Dwarf_Die *out);

/* The offset of DIE (the libdw handle's own). */
static inline Dwarf_Off
sw_di_off(Dwarf_Die *die)
{
    return dwarf_dieoffset(die);
}

/* Append DIE's address ranges to RB, as gdb's dwarf2_get_pc_bounds reads them:
 * DW_AT_low_pc with DW_AT_high_pc, else DW_AT_ranges (a DWARF 4 list counts
 * from the base address of DIE's own unit).  Adds nothing for a DIE without
 * code; 0 or SW_ENOMEM.  RB->v: caller frees with sw_free. */
int sw_di_die_ranges(struct sw_dinfo *d, Dwarf_Die *die, struct di_rbuf *rb);

/* ---- the handle and its units (dwarf/dwarf.c) -------------------------------------------- */

/* CACHE/<build-id>/NAME when D reads the uncompressed copy in the cache
 * directory (elf/debug_plain.h), tables derived from which are kept
 * beside it and stamped with its size and mtime (D->src_size,
 * D->src_mtime_ns); NULL (owned by the caller: sw_free) when there is no
 * such copy or no memory. */
char *sw_di_cache_file(struct sw_dinfo *d, const char *name);

/* The unit covering VADDR (its object, not yet parsed): from .debug_aranges
 * first, then, once, from every unit's own ranges.  Returns 0 with *OUT
 * (owned by D), SW_ENOENT, SW_ENOMEM. */
int sw_di_find_cu(struct sw_dinfo *d, sw_addr vaddr, struct di_cu **out);

/* Free what parsing CU allocated; its offset and state stay. */
void sw_di_cu_reset(struct di_cu *cu);
/* Sort CU's call sites by pc into CU->by_pc.  0 or SW_ENOMEM. */
int sw_di_cu_index(struct di_cu *cu);

/* ---- the scopes of a unit (dwarf/scopes.c) --------------------------------------------- */

/* The parsed unit covering VADDR; *CU NULL (and 0) when there is none.
 * Takes D's lock while it finds and parses; *CU may be read without it.
 * Returns 0, SW_ENOMEM, SW_EBADELF (message on D). */
int sw_di_parsed_cu_at(struct sw_dinfo *d, sw_addr vaddr, struct di_cu **cu);

/* The parsed unit CU from the cache beside the copy (dwarf/unitcache.c):
 * 1 when taken (CU filled, its state left to the caller), 0 when there is
 * none or it does not match, SW_ENOMEM. */
int sw_di_unit_load(struct sw_dinfo *d, struct di_cu *cu);
/* Keep the parsed unit CU there for later runs; a failure costs only them. */
void sw_di_unit_store(struct sw_dinfo *d, const struct di_cu *cu);

/* The innermost scope of CU covering VADDR; DI_NONE if none. */
uint32_t sw_di_innermost_scope(const struct di_cu *cu, sw_addr vaddr);

/* gdb's name for a C++ function whose DWARF has no linkage name: NAME
 * qualified by the namespaces and classes around its declaration DECL
 * (dwarf/names.c); NAME itself outside C++ units, at the top of a unit, or
 * when out of memory.  Valid until D is closed. */
const char *sw_di_cxx_name(struct sw_dinfo *d, Dwarf_Off decl, const char *name);
void sw_di_names_free(struct sw_dinfo *d);

/* The concrete function scope at or above scope I; DI_NONE if none. */
uint32_t sw_di_func_of(const struct di_cu *cu, uint32_t i);

/* ---- types and variables (dwarf/types.c, dwarf/vars.c) --------------------------------- */

/* Every allocation of one sw_dinfo_func, freed together. */
struct di_blk {
    struct di_blk *next;
    max_align_t data[];
};

struct di_tcache {
    Dwarf_Off off;
    struct sw_dinfo_type *t;
};

/* A sorted set of DIE offsets. */
struct di_offs {
    Dwarf_Off *v;
    size_t n, cap;
};

struct di_inherit;

struct di_vars {
    struct sw_dinfo *d;
    struct sw_dinfo_func *fn;
    struct di_blk *arena;
    sw_addr vaddr; /* the pc */
    unsigned addr_size;
    struct di_tcache *tc;
    size_t ntc, captc;
    struct sw_dinfo_var *vars;
    unsigned *depth; /* of each var's block: innermost printed first */
    size_t nvars, capvars;
    struct di_offs listed;  /* the abstract DIE of each listed variable (its own if none) */
    struct di_inherit *inh; /* dwarf/vars.c: the scope inheriting from its abstract one */
    bool oom;
};

/* N zeroed bytes in C's arena; NULL (and C->oom) when out of memory. */
void *sw_di_alloc(struct di_vars *c, size_t n);

/* A and B joined, in C's arena; "?" when out of memory. */
const char *sw_di_cat(struct di_vars *c, const char *a, const char *b);

/* The type DIE refers to by DW_AT_type (void when it has none), read at
 * nesting DEPTH, in C's arena and type cache; never NULL. */
const struct sw_dinfo_type *sw_di_die_type(struct di_vars *c, Dwarf_Die *die, unsigned depth);

/* The type of a variable whose type cannot be read. */
extern const struct sw_dinfo_type sw_di_type_unknown;

#endif /* RSPWALK_DWARF_INTERNAL_H */
