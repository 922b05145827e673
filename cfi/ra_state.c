/* cfi/ra_state.c -- RA_SIGN_STATE from call frame instructions; their bounds; CIE layout. */
#include "cfi/ra_state.h"

/* ---- AArch64 return-address signing --------------------------------------
 *
 * DW_CFA_AARCH64_negate_ra_state (0x2d, the opcode of SPARC's
 * DW_CFA_GNU_window_save) toggles RA_SIGN_STATE, a pseudo register of the
 * AArch64 DWARF supplement: after `paciasp` the return address in x30, and
 * its saved copy, carry a pointer authentication code.  libdwarf 20210528
 * reads the opcode and keeps nothing, so the state at an address comes from
 * replaying the CIE's and the FDE's instructions here, operands skipped.  As
 * a register column, DW_CFA_remember_state and DW_CFA_restore_state save
 * and restore it (GCC's unwinder does the same). */

struct cfa_reader {
    const uint8_t *p, *end;
    bool failed;
};

static uint64_t
cfa_uleb(struct cfa_reader *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->failed = true;
    return 0;
}

static uint64_t
cfa_fixed(struct cfa_reader *r, size_t n, bool msb)
{
    uint64_t v = 0;
    if ((size_t)(r->end - r->p) < n) {
        r->failed = true;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * (msb ? n - 1 - i : i));
    r->p += n;
    return v;
}

/* Skip N bytes. */
static void
cfa_skip(struct cfa_reader *r, uint64_t n)
{
    if (n > (uint64_t)(r->end - r->p))
        r->failed = true;
    else
        r->p += n;
}

/* Skip a block: its ULEB length, then that many bytes. */
static void
cfa_block(struct cfa_reader *r)
{
    uint64_t n = cfa_uleb(r);
    cfa_skip(r, n);
}

/* Skip the operands of extended opcode OP (DW_CFA_* with high bits 0 and an
 * operand: ULEBs/SLEBs and blocks); false for one it does not know. */
static bool
skip_operands(struct cfa_reader *r, uint8_t op)
{
    switch (op) {
    case 0x06: /* restore_extended */
    case 0x07: /* undefined */
    case 0x08: /* same_value */
    case 0x0d: /* def_cfa_register */
    case 0x0e: /* def_cfa_offset */
    case 0x13: /* def_cfa_offset_sf */
    case 0x2e: /* GNU_args_size */
        cfa_uleb(r);
        return true;
    case 0x05: /* offset_extended */
    case 0x09: /* register */
    case 0x0c: /* def_cfa */
    case 0x11: /* offset_extended_sf */
    case 0x12: /* def_cfa_sf */
    case 0x14: /* val_offset */
    case 0x15: /* val_offset_sf */
    case 0x2f: /* GNU_negative_offset_extended */
        cfa_uleb(r);
        cfa_uleb(r);
        return true;
    case 0x10: /* expression: register, block */
    case 0x16: /* val_expression: register, block */
        cfa_uleb(r);
        cfa_block(r);
        return true;
    case 0x0f: /* def_cfa_expression: block */
        cfa_block(r);
        return true;
    default:
        return false;
    }
}

/* Replay LEN bytes of call frame instructions at INSNS from LOC, up to and
 * including the instructions at TARGET, toggling *SIGNED.  Returns false
 * when an instruction cannot be followed (DW_CFA_set_loc, a vendor opcode,
 * truncated operands): the state then is what it was before it. */
bool
sw_cfi_replay_ra_state(const uint8_t *insns, size_t len, uint64_t loc, uint64_t target,
                       uint64_t caf, bool msb, bool *signed_, bool *stack, unsigned *depth)
{
    struct cfa_reader r = { insns, insns + len, false };
    while (r.p < r.end && !r.failed) {
        uint8_t op = *r.p++;
        uint64_t delta = 0;
        switch (op >> 6) {
        case 1: /* DW_CFA_advance_loc */
            delta = op & 0x3f;
            break;
        case 2: /* DW_CFA_offset: register in the opcode, ULEB offset */
            cfa_uleb(&r);
            continue;
        case 3: /* DW_CFA_restore */
            continue;
        }
        if (op >> 6 == 0) {
            switch (op) {
            case 0x00: /* nop */
            case 0x0a: /* remember_state */
            case 0x0b: /* restore_state */
            case 0x2d: /* AARCH64_negate_ra_state */
                break;
            case 0x02: /* advance_loc1 */
                delta = cfa_fixed(&r, 1, msb);
                break;
            case 0x03: /* advance_loc2 */
                delta = cfa_fixed(&r, 2, msb);
                break;
            case 0x04: /* advance_loc4 */
                delta = cfa_fixed(&r, 4, msb);
                break;
            default:
                if (!skip_operands(&r, op))
                    return false;
            }
        }
        if (r.failed)
            return false;
        if (delta != 0) {
            loc += delta * caf;
            if (loc > target)
                return true;
            continue;
        }
        if (op == 0x2d) {
            *signed_ = !*signed_;
        } else if (op == 0x0a) {
            if (*depth == RA_STATE_DEPTH)
                return false;
            stack[(*depth)++] = *signed_;
        } else if (op == 0x0b) {
            if (*depth == 0)
                return false;
            *signed_ = stack[--(*depth)];
        }
    }
    return !r.failed;
}

bool
sw_cfi_insns_bounded(const uint8_t *insns, size_t len, unsigned addr_size)
{
    struct cfa_reader r = { insns, insns + len, false };
    while (r.p < r.end && !r.failed) {
        uint8_t op = *r.p++;
        if (op >> 6 == 2) { /* DW_CFA_offset: ULEB offset */
            cfa_uleb(&r);
            continue;
        }
        if (op >> 6 != 0) /* advance_loc, restore: no operand */
            continue;
        switch (op) {
        case 0x00: /* nop */
        case 0x0a: /* remember_state */
        case 0x0b: /* restore_state */
        case 0x2d: /* AARCH64_negate_ra_state, GNU_window_save */
            break;
        case 0x01: /* set_loc: an address */
            cfa_skip(&r, addr_size);
            break;
        case 0x02: /* advance_loc1 */
        case 0x03: /* advance_loc2 */
        case 0x04: /* advance_loc4 */
        case 0x1d: /* MIPS_advance_loc8 */
            cfa_skip(&r, op == 0x02 ? 1 : op == 0x03 ? 2 : op == 0x04 ? 4 : 8);
            break;
        default:
            if (!skip_operands(&r, op))
                return false;
        }
    }
    return !r.failed;
}

int
sw_cfi_cie_layout(const uint8_t *cie, size_t len, unsigned addr_size, struct sw_cfi_cie_layout *out)
{
    struct cfa_reader r = { cie, cie + len, false };
    size_t id_size = 4;
    if (cfa_fixed(&r, 4, false) == 0xffffffffu) { /* 64-bit DWARF */
        cfa_skip(&r, 8);
        id_size = 8;
    }
    cfa_skip(&r, id_size);
    unsigned version = (unsigned)cfa_fixed(&r, 1, false);
    if (r.failed)
        return -1;
    const uint8_t *aug = r.p;
    while (r.p < r.end && *r.p != 0)
        r.p++;
    if (r.p == r.end)
        return -1;
    r.p++;
    if (version >= 4) {
        addr_size = (unsigned)cfa_fixed(&r, 1, false);
        cfa_skip(&r, 1); /* segment selector size */
    }
    cfa_uleb(&r); /* code alignment factor */
    cfa_uleb(&r); /* data alignment factor (an SLEB: the same bytes) */
    if (version == 1)
        cfa_skip(&r, 1);
    else
        cfa_uleb(&r);
    if (aug[0] == 'z')
        cfa_block(&r);
    if (r.failed)
        return -1;
    out->addr_size = addr_size;
    out->insns_off = (size_t)(r.p - cie);
    return aug[0] != 'z' && aug[0] != 0 ? 1 : 0;
}
