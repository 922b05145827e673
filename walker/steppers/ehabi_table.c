/* walker/steppers/ehabi_table.c -- the EHABI index searched, its entries decoded, their
 * unwind opcodes run (IHI0038 "Exception Handling ABI for the Arm Architecture", sections
 * 6 (the index table), 7 (the exception-handling table) and 10.3 (the opcodes)).
 * Pure: the file's bytes come from the table, the stack's words from the read callback.
 */
#include "walker/steppers/ehabi_table.h"

#include <inttypes.h>
#include <string.h>

static uint32_t
word_at(const uint8_t *p, bool big_endian)
{
    if (big_endian)
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* The address a prel31 word at WHERE names: its low 31 bits, sign-extended, from WHERE. */
static sw_addr
prel31(uint32_t word, sw_addr where)
{
    int32_t off = (int32_t)(word << 1) >> 1;
    return (where + (sw_addr)(int64_t)off) & 0xffffffffu;
}

static int
read_word(const struct sw_ehabi_table *t, sw_addr vaddr, uint32_t *out, struct sw_errbuf *err)
{
    uint8_t b[4];
    if (t->read(t->arg, vaddr, b, 4) < 0)
        return sw_fail(err, SW_EBADELF, ".ARM.extab word at 0x%" PRIx64 " is not in the file",
                       vaddr);
    *out = word_at(b, t->big_endian);
    return 0;
}

/* The opcodes of a compact-model word W (bits 27-24: the personality index) whose first
 * word is at WHERE, and of the extra words after it, into *OUT. */
static int
compact_ops(const struct sw_ehabi_table *t, uint32_t w, sw_addr where, struct sw_ehabi_entry *out,
            struct sw_errbuf *err)
{
    unsigned index = (w >> 24) & 0xf;
    out->personality = index;
    if (index == 0) {
        /* su16: three opcodes in the word itself. */
        out->ops[0] = (uint8_t)(w >> 16);
        out->ops[1] = (uint8_t)(w >> 8);
        out->ops[2] = (uint8_t)w;
        out->nops = 3;
        return 0;
    }
    if (index > 2)
        return sw_fail(err, SW_EBADELF,
                       "EHABI entry at 0x%" PRIx64 ": personality routine index %u is not ARM's",
                       where, index);
    /* lu16 and lu32: two opcodes here, then as many words as bits 23-16 say; lu32's
     * descriptors follow them and are not read. */
    unsigned extra = (w >> 16) & 0xff;
    out->ops[0] = (uint8_t)(w >> 8);
    out->ops[1] = (uint8_t)w;
    out->nops = 2;
    for (unsigned i = 0; i < extra; i++) {
        uint32_t x;
        if (read_word(t, where + 4 + 4 * (sw_addr)i, &x, err) < 0)
            return SW_EBADELF;
        for (int sh = 24; sh >= 0; sh -= 8)
            out->ops[out->nops++] = (uint8_t)(x >> sh);
    }
    return 0;
}

int
sw_ehabi_lookup(const struct sw_ehabi_table *t, sw_addr pc, struct sw_ehabi_entry *out,
                struct sw_errbuf *err)
{
    size_t n = t->exidx_len / 8, lo = 0, hi = n;

    memset(out, 0, offsetof(struct sw_ehabi_entry, ops));
    /* The last entry whose function starts at or below PC: the linker sorts the index by
     * address (and fills the gaps between functions that have entries with
     * EXIDX_CANTUNWIND). */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        sw_addr where = t->exidx_addr + 8 * (sw_addr)mid;
        if (prel31(word_at(t->exidx + 8 * mid, t->big_endian), where) <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return sw_fail(err, SW_ENOCFI, "no .ARM.exidx entry covers 0x%" PRIx64, pc);
    size_t i = lo - 1;
    sw_addr where = t->exidx_addr + 8 * (sw_addr)i;
    uint32_t w0 = word_at(t->exidx + 8 * i, t->big_endian);
    uint32_t w1 = word_at(t->exidx + 8 * i + 4, t->big_endian);
    if (w0 & 0x80000000u)
        return sw_fail(err, SW_EBADELF,
                       ".ARM.exidx entry at 0x%" PRIx64 ": its function offset has bit 31 set",
                       where);
    out->fn_start = prel31(w0, where);
    out->fn_end =
        i + 1 < n ? prel31(word_at(t->exidx + 8 * (i + 1), t->big_endian), where + 8) : SW_ADDR_MAX;
    if (w1 == 1) {
        out->cantunwind = true;
        return 0;
    }
    if (w1 & 0x80000000u) {
        /* Inline: the compact model with personality 0 only. */
        if ((w1 >> 24) != 0x80)
            return sw_fail(err, SW_EBADELF,
                           ".ARM.exidx entry at 0x%" PRIx64 ": inline word 0x%08" PRIx32
                           " is not personality routine 0",
                           where, w1);
        return compact_ops(t, w1, where + 4, out, err);
    }
    sw_addr ext = prel31(w1, where + 4);
    uint32_t e0;
    if (read_word(t, ext, &e0, err) < 0)
        return sw_err_prefix(err, ".ARM.exidx entry at 0x%" PRIx64 ": ", where);
    if (e0 & 0x80000000u)
        return compact_ops(t, e0, ext, out, err);
    /* The generic model: a prel31 to the personality routine, then its data.  GCC's
     * routines (__gxx_personality_v0, __gcc_personality_v0) keep the opcodes as the lu16
     * form does, with the word count in bits 31-24 (libgcc's __gnu_unwind_frame). */
    uint32_t d0;
    if (read_word(t, ext + 4, &d0, err) < 0)
        return sw_err_prefix(err, ".ARM.exidx entry at 0x%" PRIx64 ": ", where);
    unsigned extra = d0 >> 24;
    out->personality = 3;
    out->ops[0] = (uint8_t)(d0 >> 16);
    out->ops[1] = (uint8_t)(d0 >> 8);
    out->ops[2] = (uint8_t)d0;
    out->nops = 3;
    for (unsigned k = 0; k < extra && out->nops + 4 <= SW_EHABI_MAX_OPS; k++) {
        uint32_t x;
        if (read_word(t, ext + 8 + 4 * (sw_addr)k, &x, err) < 0)
            return sw_err_prefix(err, ".ARM.exidx entry at 0x%" PRIx64 ": ", where);
        for (int sh = 24; sh >= 0; sh -= 8)
            out->ops[out->nops++] = (uint8_t)(x >> sh);
    }
    return 0;
}

/* Pop the registers of MASK (bit N: rN), lowest first from the lowest address. */
static int
pop_mask(struct sw_ehabi_vrs *v, unsigned mask, sw_ehabi_read_fn read, void *arg,
         struct sw_errbuf *err)
{
    sw_addr vsp = v->r[13];
    bool sp_popped = false;
    uint32_t new_sp = 0;
    for (unsigned r = 0; r < 16; r++) {
        if (!(mask & (1u << r)))
            continue;
        uint32_t val;
        int rc = read(arg, vsp, &val);
        if (rc < 0)
            return sw_fail(err, rc, "EHABI: r%u saved at 0x%" PRIx64 " cannot be read", r, vsp);
        if (r == 13) {
            /* The popped SP is the vsp after the whole pop. */
            sp_popped = true;
            new_sp = val;
        } else {
            v->r[r] = val;
            v->known |= (uint16_t)(1u << r);
            v->popped |= (uint16_t)(1u << r);
            v->addr[r] = vsp;
        }
        vsp += 4;
    }
    v->r[13] = sp_popped ? new_sp : (uint32_t)vsp;
    return 0;
}

static int
refuse(struct sw_errbuf *err, size_t at, const uint8_t *ops, const char *what)
{
    return sw_fail(err, SW_ENOCFI, "EHABI opcode 0x%02x at byte %zu: %s", ops[at], at, what);
}

int
sw_ehabi_execute(const uint8_t *ops, size_t nops, struct sw_ehabi_vrs *v, sw_ehabi_read_fn read,
                 void *arg, struct sw_errbuf *err)
{
    bool pc_set = false;
    size_t i = 0;
    int rc;

    if (!(v->known & (1u << 13)))
        return sw_fail(err, SW_ENOCFI, "EHABI: the SP is not known");
    while (i < nops) {
        size_t at = i;
        uint8_t op = ops[i++];
        uint8_t next = i < nops ? ops[i] : 0;

        if ((op & 0xc0) == 0x00) { /* 00xxxxxx: vsp += (x << 2) + 4 */
            v->r[13] += ((uint32_t)(op & 0x3f) << 2) + 4;
        } else if ((op & 0xc0) == 0x40) { /* 01xxxxxx: vsp -= (x << 2) + 4 */
            v->r[13] -= ((uint32_t)(op & 0x3f) << 2) + 4;
        } else if ((op & 0xf0) == 0x80) { /* 1000iiii iiiiiiii: pop under mask r4-r15 */
            if (i >= nops)
                return refuse(err, at, ops, "its second byte is missing");
            unsigned mask = ((unsigned)(op & 0x0f) << 8 | next) << 4;
            i++;
            if (mask == 0)
                return refuse(err, at, ops, "refuse to unwind");
            if ((rc = pop_mask(v, mask, read, arg, err)) < 0)
                return rc;
            pc_set |= (mask & 0x8000) != 0;
        } else if ((op & 0xf0) == 0x90) { /* 1001nnnn: vsp = r[nnnn] */
            unsigned n = op & 0x0f;
            if (n == 13 || n == 15)
                return refuse(err, at, ops, "reserved");
            if (!(v->known & (1u << n)))
                return sw_fail(err, SW_ENOCFI, "EHABI: vsp = r%u, which is not known", n);
            v->r[13] = v->r[n];
        } else if ((op & 0xf0) == 0xa0) { /* 1010Lnnn: pop r4-r[4+nnn] (+ r14 when L) */
            unsigned mask = ((1u << ((op & 7) + 1)) - 1) << 4;
            if (op & 0x08)
                mask |= 1u << 14;
            if ((rc = pop_mask(v, mask, read, arg, err)) < 0)
                return rc;
        } else if (op == 0xb0) { /* finish */
            break;
        } else if (op == 0xb1) { /* 10110001 0000iiii: pop under mask r0-r3 */
            if (i >= nops || next == 0 || (next & 0xf0) != 0)
                return refuse(err, at, ops, "spare");
            i++;
            if ((rc = pop_mask(v, next, read, arg, err)) < 0)
                return rc;
        } else if (op == 0xb2) { /* vsp += 0x204 + (uleb128 << 2) */
            uint64_t val = 0;
            unsigned shift = 0;
            uint8_t b;
            do {
                if (i >= nops || shift > 28)
                    return refuse(err, at, ops, "its ULEB128 operand is truncated or too long");
                b = ops[i++];
                val |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
            } while (b & 0x80);
            v->r[13] += 0x204 + (uint32_t)(val << 2);
        } else if (op == 0xb3) { /* VFP D[ssss]-D[ssss+cccc] by FSTMFDX */
            if (i >= nops)
                return refuse(err, at, ops, "its second byte is missing");
            i++;
            v->r[13] += 8 * ((uint32_t)(next & 0x0f) + 1) + 4;
        } else if ((op & 0xfc) == 0xb4) { /* 101101nn */
            return refuse(err, at, ops, "spare");
        } else if ((op & 0xf8) == 0xb8) { /* VFP D[8]-D[8+nnn] by FSTMFDX */
            v->r[13] += 8 * ((uint32_t)(op & 7) + 1) + 4;
        } else if ((op & 0xf8) == 0xc0 && (op & 7) < 6) { /* iWMMXt wR[10]-wR[10+nnn] */
            v->r[13] += 8 * ((uint32_t)(op & 7) + 1);
        } else if (op == 0xc6) { /* iWMMXt wR[ssss]-wR[ssss+cccc] */
            if (i >= nops)
                return refuse(err, at, ops, "its second byte is missing");
            i++;
            v->r[13] += 8 * ((uint32_t)(next & 0x0f) + 1);
        } else if (op == 0xc7) { /* iWMMXt wCGR under mask */
            if (i >= nops || next == 0 || (next & 0xf0) != 0)
                return refuse(err, at, ops, "spare");
            i++;
            v->r[13] += 4 * (uint32_t)__builtin_popcount(next);
        } else if (op == 0xc8 || op == 0xc9) { /* VFP D[16+ssss].. / D[ssss].. by VPUSH */
            if (i >= nops)
                return refuse(err, at, ops, "its second byte is missing");
            i++;
            v->r[13] += 8 * ((uint32_t)(next & 0x0f) + 1);
        } else if ((op & 0xf8) == 0xd0) { /* VFP D[8]-D[8+nnn] by VPUSH */
            v->r[13] += 8 * ((uint32_t)(op & 7) + 1);
        } else {
            return refuse(err, at, ops, "spare");
        }
    }
    if (!pc_set) {
        if (!(v->known & (1u << 14)))
            return sw_fail(err, SW_ENOCFI, "EHABI: the return address (lr) is not known");
        v->r[15] = v->r[14];
        v->known |= 1u << 15;
        v->popped &= (uint16_t) ~(1u << 15);
        if (v->popped & (1u << 14)) {
            v->popped |= 1u << 15;
            v->addr[15] = v->addr[14];
        }
    }
    return 0;
}
