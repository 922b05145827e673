/* libstate/lib.h -- the library state's own half of a loaded module.
 *
 * A library state keeps each module as a struct sw_lib_entry: the public
 * struct sw_lib (rspwalk/libstate.h) and what only the library and its tests
 * see -- the module's ELF file, its image read from target memory, its
 * module of the module cache.  Included by libstate/ and walker/ files and
 * their tests.  Not the module list (libstate.c) nor the module (module.h).
 */
#ifndef RSPWALK_LIBSTATE_LIB_H
#define RSPWALK_LIBSTATE_LIB_H

#include <stddef.h>
#include <stdint.h>

#include "rspwalk/libstate.h"

struct sw_elf;
struct sw_module;

/* One loaded module as its library state holds it.  PUB is the first member:
 * every struct sw_lib a library state hands out (sw_libstate_lib,
 * sw_libstate_lib_at, the change callback) is the PUB of one of these, so
 * the accessors below may convert it back.  A struct sw_lib from anywhere
 * else must not be given to them. */
struct sw_lib_entry {
    struct sw_lib pub;
    struct sw_elf *elf; /* borrowed from the libstate's ELF cache; NULL if no local file */
    /* The module's ELF image read from target memory (the vDSO, which has no
     * file: PUB.PATH is NULL), for readers that take bytes rather than a
     * path; NULL and 0 for a module read from a local file.  Borrowed from
     * the ELF cache, valid until the library state is freed. */
    const uint8_t *image;
    size_t image_len;
    /* The file as walks use it: its CFI and DWARF, opened on first use
     * (libstate/module.h).  Borrowed from the module cache; NULL if no
     * local file. */
    struct sw_module *module;
};

/* The entry whose PUB is LIB (LIB handed out by a library state). */
static inline const struct sw_lib_entry *
sw_lib_entry_of(const struct sw_lib *lib)
{
    return (const struct sw_lib_entry *)(const void *)lib;
}

/* LIB's ELF file (borrowed from the ELF cache, valid until the library state
 * is freed); NULL if it has no local file or image. */
static inline struct sw_elf *
sw_lib_elf(const struct sw_lib *lib)
{
    return sw_lib_entry_of(lib)->elf;
}

/* LIB's module (borrowed from the module cache); NULL if no local file. */
static inline struct sw_module *
sw_lib_module(const struct sw_lib *lib)
{
    return sw_lib_entry_of(lib)->module;
}

/* LIB's image read from target memory (*DATA borrowed, valid until the
 * library state is freed): NULL and 0 unless LIB is the vDSO. */
static inline void
sw_lib_image(const struct sw_lib *lib, const uint8_t **data, size_t *len)
{
    *data = sw_lib_entry_of(lib)->image;
    *len = sw_lib_entry_of(lib)->image_len;
}

#endif /* RSPWALK_LIBSTATE_LIB_H */
