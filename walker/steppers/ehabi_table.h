/* walker/steppers/ehabi_table.h -- the ARM exception-handling tables (EHABI, IHI0038): the index
 * (.ARM.exidx) searched for a PC, its entries decoded to unwind opcodes, and the opcodes run
 * over a virtual register set.  Pure functions over bytes already read and a read callback;
 * no module lookup and no walker: the stepper is walker/steppers/ehabi.c.  Included by it and
 * the unit tests.
 */
#ifndef RSPWALK_WALKER_STEPPERS_EHABI_TABLE_H
#define RSPWALK_WALKER_STEPPERS_EHABI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/errors.h"
#include "rspwalk/types.h"
#include "util/util.h"

/* The most opcode bytes one entry carries: the compact forms' 3 (su16) or 2 + 4 * 255
 * (lu16/lu32, whose extra-word count is 8 bits). */
#define SW_EHABI_MAX_OPS (2 + 4 * 255)

/* One module's tables as its file holds them: the index section and a reader of the
 * file's allocated bytes (for .ARM.extab entries, which the index points at by address). */
struct sw_ehabi_table {
    const uint8_t *exidx; /* borrowed: the .ARM.exidx contents */
    size_t exidx_len;
    sw_addr exidx_addr; /* its link-time address (prel31 offsets count from each word) */
    bool big_endian;    /* the file's data byte order */
    /* Copy LEN bytes at link-time address VADDR of the file; 0 or a negative code. */
    int (*read)(void *arg, sw_addr vaddr, void *buf, size_t len);
    void *arg;
};

/* What the index says of one function. */
struct sw_ehabi_entry {
    sw_addr fn_start;     /* link-time start of the function the entry covers */
    sw_addr fn_end;       /* the next entry's start; the table's last entry: SW_ADDR_MAX */
    bool cantunwind;      /* EXIDX_CANTUNWIND: the function has no unwind information */
    unsigned personality; /* 0, 1 or 2 (ARM's routines); 3: another routine, GCC's data */
    size_t nops;
    uint8_t ops[SW_EHABI_MAX_OPS];
};

#define SW_ADDR_MAX (~(sw_addr)0)

/* The entry of T covering link-time address PC into *OUT.  Returns 0, SW_ENOCFI (no entry
 * covers PC: it lies before the first; the message in ERR), or SW_EBADELF (a malformed
 * table: an index word with bit 31 set, an extab entry outside the file, a personality
 * index past 2; ERR names the address). */
int sw_ehabi_lookup(const struct sw_ehabi_table *t, sw_addr pc, struct sw_ehabi_entry *out,
                    struct sw_errbuf *err);

/* The virtual register set the opcodes work on: r0-r15, which are known, and where each
 * popped one was read. */
struct sw_ehabi_vrs {
    uint32_t r[16];
    uint16_t known;  /* bit N: r[N] holds a value */
    uint16_t popped; /* bit N: r[N] was read from the stack at addr[N] */
    sw_addr addr[16];
};

/* Read the 32-bit word at runtime address ADDR of the target into *VAL; 0 or a negative
 * code (passed through by sw_ehabi_execute). */
typedef int (*sw_ehabi_read_fn)(void *arg, sw_addr addr, uint32_t *val);

/* Run the NOPS opcodes OPS (IHI0038 section 10.3) over *V, whose r13 (the vsp) must be
 * known, reading popped words through READ.  The opcodes end at "finish" or with the bytes;
 * then r15, unless an opcode popped it, takes r14.  Returns 0, SW_ENOCFI ("refuse to
 * unwind", a spare or reserved opcode, a register that is not known used as the vsp: ERR
 * says which), or READ's code with ERR naming the address. */
int sw_ehabi_execute(const uint8_t *ops, size_t nops, struct sw_ehabi_vrs *v, sw_ehabi_read_fn read,
                     void *arg, struct sw_errbuf *err);

#endif /* RSPWALK_WALKER_STEPPERS_EHABI_TABLE_H */
