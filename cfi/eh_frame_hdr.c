/* cfi/eh_frame_hdr.c -- the FDE for an address through .eh_frame_hdr.
 *
 * The header (LSB "Exception Frame Header"): version 1, the encodings of
 * eh_frame_ptr, fde_count and the table, then those values and the table
 * of (initial location, FDE address) pairs sorted by initial location, both
 * in TABLE_ENC, relative to the header's start when DW_EH_PE_datarel.
 */
#include "cfi/eh_frame_hdr.h"

#include <elf.h>
#include <stddef.h>
#include <string.h>

#include "util/util.h"

#define PE_OMIT    0xff
#define PE_FORMAT  0x0f
#define PE_APPL    0x70
#define PE_ABSPTR  0x00
#define PE_ULEB    0x01
#define PE_UDATA2  0x02
#define PE_UDATA4  0x03
#define PE_UDATA8  0x04
#define PE_SLEB    0x09
#define PE_SDATA2  0x0a
#define PE_SDATA4  0x0b
#define PE_SDATA8  0x0c
#define PE_PCREL   0x10
#define PE_DATAREL 0x30

static uint64_t
rd(const uint8_t *p, size_t n, bool msb)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * (msb ? n - 1 - i : i));
    return v;
}

static void
wr(uint8_t *p, size_t n, bool msb, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (msb ? n - 1 - i : i)));
}

/* Size of a fixed-size encoding; 0 for LEB128 and unknown formats. */
static size_t
enc_size(unsigned enc, unsigned addr_size)
{
    switch (enc & PE_FORMAT) {
    case PE_ABSPTR:
        return addr_size;
    case PE_UDATA2:
    case PE_SDATA2:
        return 2;
    case PE_UDATA4:
    case PE_SDATA4:
        return 4;
    case PE_UDATA8:
    case PE_SDATA8:
        return 8;
    default:
        return 0;
    }
}

/* Decode the value in ENC at H->hdr + *OFF (advanced); false when it runs
 * past the header or the encoding is not one a header uses. */
static bool
decode(const struct sw_ehhdr *h, unsigned enc, size_t *off, uint64_t *out)
{
    if (enc == PE_OMIT || (enc & 0x80) != 0)
        return false;
    uint64_t field = h->hdr_addr + *off, v = 0;
    size_t n = enc_size(enc, h->addr_size);
    if (n != 0) {
        if (*off > h->hdr_len || h->hdr_len - *off < n)
            return false;
        v = rd(h->hdr + *off, n, h->msb);
        if ((enc & 0x08) && n < 8 && (v >> (8 * n - 1)) & 1) /* signed: extend */
            v |= ~(uint64_t)0 << (8 * n);
        *off += n;
    } else if ((enc & PE_FORMAT) == PE_ULEB || (enc & PE_FORMAT) == PE_SLEB) {
        unsigned shift = 0;
        uint8_t b = 0x80;
        while (b & 0x80) {
            if (*off >= h->hdr_len)
                return false;
            b = h->hdr[(*off)++];
            if (shift < 64)
                v |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
        }
        if ((enc & PE_FORMAT) == PE_SLEB && shift < 64 && (b & 0x40))
            v |= ~(uint64_t)0 << shift;
    } else {
        return false;
    }
    switch (enc & PE_APPL) {
    case PE_ABSPTR:
        break;
    case PE_PCREL:
        v += field;
        break;
    case PE_DATAREL:
        v += h->hdr_addr;
        break;
    default:
        return false;
    }
    if (h->addr_size == 4)
        v &= 0xffffffffu;
    *out = v;
    return true;
}

int
sw_ehhdr_init(struct sw_ehhdr *h, const uint8_t *hdr, size_t hdr_len, uint64_t hdr_addr,
              const uint8_t *eh, size_t eh_len, uint64_t eh_addr, bool msb, unsigned addr_size)
{
    memset(h, 0, sizeof *h);
    if (hdr == NULL || eh == NULL || hdr_len < 4 || hdr[0] != 1 ||
        (addr_size != 4 && addr_size != 8))
        return -1;
    h->hdr = hdr;
    h->hdr_len = hdr_len;
    h->hdr_addr = hdr_addr;
    h->eh = eh;
    h->eh_len = eh_len;
    h->eh_addr = eh_addr;
    h->msb = msb;
    h->addr_size = addr_size;
    size_t off = 4;
    uint64_t ptr, count;
    if (!decode(h, hdr[1], &off, &ptr) || ptr != eh_addr || !decode(h, hdr[2], &off, &count))
        return -1;
    unsigned te = hdr[3];
    size_t n = enc_size(te, addr_size);
    /* The table is searched in place: fixed-size entries, and values that
     * do not depend on where each entry sits. */
    if (te == PE_OMIT || n == 0 || ((te & PE_APPL) != PE_ABSPTR && (te & PE_APPL) != PE_DATAREL))
        return -1;
    if (count == 0 || count > (hdr_len - off) / (2 * n))
        return -1;
    h->table = hdr + off;
    h->count = count;
    h->table_enc = te;
    h->entry_size = 2 * n;
    return 0;
}

/* Entry I's value at byte K (0: location, 1: FDE address). */
static uint64_t
entry(const struct sw_ehhdr *h, uint64_t i, unsigned k)
{
    size_t off = (size_t)(h->table - h->hdr) + (size_t)i * h->entry_size + k * h->entry_size / 2;
    uint64_t v = 0;
    (void)decode(h, h->table_enc, &off, &v); /* inside the header: checked by init */
    return v;
}

int
sw_ehhdr_find(const struct sw_ehhdr *h, uint64_t pc, uint64_t *fde_off)
{
    uint64_t lo = 0, hi = h->count; /* the answer is below HI */
    if (h->count == 0 || entry(h, 0, 0) > pc)
        return 0;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (entry(h, mid, 0) <= pc)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t fde = entry(h, lo, 1);
    if (fde < h->eh_addr || fde - h->eh_addr >= h->eh_len)
        return 0;
    *fde_off = fde - h->eh_addr;
    return 1;
}

/* The CIE or FDE at OFF in .eh_frame: its whole size (length field
 * included), the size of its length field, and its CIE pointer/id. */
static bool
record_at(const struct sw_ehhdr *h, uint64_t off, uint64_t *size, unsigned *lenw, uint64_t *id)
{
    if (off >= h->eh_len || h->eh_len - off < 8)
        return false;
    const uint8_t *p = h->eh + off;
    uint64_t len = rd(p, 4, h->msb);
    unsigned lw = 4, idw = 4;
    if (len == 0)
        return false; /* the terminator */
    if (len == 0xffffffffu) {
        if (h->eh_len - off < 20)
            return false;
        len = rd(p + 4, 8, h->msb);
        lw = 12;
        idw = 8;
    }
    if (len < idw || len > h->eh_len - off - lw)
        return false;
    *size = lw + len;
    *lenw = lw;
    *id = rd(p + lw, idw, h->msb);
    return true;
}

int
sw_ehhdr_image(const struct sw_ehhdr *h, uint64_t fde_off, unsigned e_machine, uint32_t e_flags,
               uint8_t **image, size_t *len)
{
    uint64_t fde_size, cie_size, cie_ptr, cie_id;
    unsigned fde_lw, cie_lw;
    if (!record_at(h, fde_off, &fde_size, &fde_lw, &cie_ptr) || cie_ptr == 0 ||
        cie_ptr > fde_off + fde_lw)
        return -1;
    uint64_t cie_off = fde_off + fde_lw - cie_ptr;
    if (!record_at(h, cie_off, &cie_size, &cie_lw, &cie_id) || cie_id != 0 ||
        cie_off + cie_size > fde_off)
        return -1;

    bool is64 = h->addr_size == 8, msb = h->msb;
    size_t ehsz = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
    size_t shsz = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
    static const char strtab[] = "\0.eh_frame\0.shstrtab"; /* names at 1 and 11 */
    size_t data_off = ehsz, data_len = (size_t)(cie_size + fde_size) + 4;
    size_t str_off = data_off + data_len;
    size_t sh_off = (str_off + sizeof strtab + 7) & ~(size_t)7;
    size_t total = sh_off + 3 * shsz;
    uint8_t *im = sw_calloc(1, total);
    if (im == NULL)
        return -2;

    /* The records: CIE, then FDE at its original address. */
    uint8_t *d = im + data_off;
    memcpy(d, h->eh + cie_off, (size_t)cie_size);
    memcpy(d + cie_size, h->eh + fde_off, (size_t)fde_size);
    wr(d + cie_size + fde_lw, fde_lw == 4 ? 4 : 8, msb, cie_size + fde_lw);
    memcpy(im + str_off, strtab, sizeof strtab);
    uint64_t sec_addr = h->eh_addr + fde_off - cie_size;

    /* ELF header. */
    memcpy(im, ELFMAG, SELFMAG);
    im[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
    im[EI_DATA] = msb ? ELFDATA2MSB : ELFDATA2LSB;
    im[EI_VERSION] = EV_CURRENT;
#define EH(field, v)                                                                               \
    (is64 ? wr(im + offsetof(Elf64_Ehdr, field), sizeof(((Elf64_Ehdr *)0)->field), msb, (v))       \
          : wr(im + offsetof(Elf32_Ehdr, field), sizeof(((Elf32_Ehdr *)0)->field), msb, (v)))
    EH(e_type, ET_DYN);
    EH(e_machine, e_machine);
    EH(e_version, EV_CURRENT);
    EH(e_flags, e_flags);
    EH(e_shoff, sh_off);
    EH(e_ehsize, ehsz);
    EH(e_shentsize, shsz);
    EH(e_shnum, 3);
    EH(e_shstrndx, 2);
#undef EH

    /* Section headers: null, .eh_frame, .shstrtab. */
    for (unsigned i = 1; i < 3; i++) {
        uint8_t *s = im + sh_off + i * shsz;
#define SH(field, v)                                                                               \
    (is64 ? wr(s + offsetof(Elf64_Shdr, field), sizeof(((Elf64_Shdr *)0)->field), msb, (v))        \
          : wr(s + offsetof(Elf32_Shdr, field), sizeof(((Elf32_Shdr *)0)->field), msb, (v)))
        if (i == 1) {
            SH(sh_name, 1);
            SH(sh_type, SHT_PROGBITS);
            SH(sh_flags, SHF_ALLOC);
            SH(sh_addr, sec_addr);
            SH(sh_offset, data_off);
            SH(sh_size, data_len);
            SH(sh_addralign, 1);
        } else {
            SH(sh_name, 11);
            SH(sh_type, SHT_STRTAB);
            SH(sh_offset, str_off);
            SH(sh_size, sizeof strtab);
            SH(sh_addralign, 1);
        }
#undef SH
    }
    *image = im;
    *len = total;
    return 0;
}
