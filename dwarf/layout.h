/* dwarf/layout.h -- the layout of a C structure from .debug_info: its size and members' offsets.
 *
 * For readers of a target's own data structures (rtos/: FreeRTOS's TCB_t and List_t), which
 * take offsets from the program's DWARF where it has them and documented defaults otherwise.
 * Link-time facts only; nothing here reads the target.
 */
#ifndef RSPWALK_DWARF_LAYOUT_H
#define RSPWALK_DWARF_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "rspwalk/types.h"

struct sw_dinfo;

/* One member asked for by name; OFFSET and SIZE are written when it is found. */
struct sw_dinfo_field {
    const char *name; /* borrowed */
    bool found;       /* out */
    uint64_t offset;  /* out: DW_AT_data_member_location (a constant) */
    uint64_t size;    /* out: bytes of its type (arrays: element size times count), 0 unknown */
};

/* Find the first complete definition of `struct TAG` in D (a top-level DIE of any compilation
 * unit; declarations are skipped) and fill its N members MEMBERS by name; *SIZE (may be NULL)
 * gets its DW_AT_byte_size.  Members the structure lacks keep found false.  Returns 0,
 * SW_ENOENT (no such structure, or D has no .debug_info), SW_ENOMEM; the message on D. */
int sw_dinfo_struct_layout(struct sw_dinfo *d, const char *tag, struct sw_dinfo_field *members,
                           size_t n, uint64_t *size);

#endif /* RSPWALK_DWARF_LAYOUT_H */
