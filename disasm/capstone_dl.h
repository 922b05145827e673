/* disasm/capstone_dl.h -- capstone, loaded the first time an instruction is decoded.
 *
 * Most walks never decode an instruction (CFI covers every frame), and
 * linking libcapstone costs every process its 77 000 relocations at start
 * (0.7 ms and 380 page faults of a 6 ms walk, measured): so the library is
 * opened with dlopen by its SONAME (SW_CAPSTONE_SONAME, read from the
 * libcapstone.so this was built against) when a decoder is first made, as
 * systemd opens its optional libraries.  Included by disasm_internal.h after
 * <capstone/capstone.h>: the capstone calls of walker/disasm*.c go through
 * these wrappers.
 */
#ifndef RSPWALK_DISASM_CAPSTONE_DL_H
#define RSPWALK_DISASM_CAPSTONE_DL_H

#include <stdbool.h>

#include <capstone/capstone.h>

/* Open capstone once (thread-safe).  False when it cannot be loaded: the
 * reason is then sw_cs_load_error()'s, and every wrapper below fails as
 * capstone would without memory (cs_open: CS_ERR_MEM). */
bool sw_cs_load(void);
const char *sw_cs_load_error(void);

cs_err sw_cs_open(cs_arch arch, cs_mode mode, csh *handle);
cs_err sw_cs_close(csh *handle);
cs_err sw_cs_option(csh handle, cs_opt_type type, size_t value);
size_t sw_cs_disasm(csh handle, const uint8_t *code, size_t code_size, uint64_t address,
                    size_t count, cs_insn **insn);
void sw_cs_free(cs_insn *insn, size_t count);
cs_err sw_cs_regs_access(csh handle, const cs_insn *insn, cs_regs regs_read,
                         uint8_t *regs_read_count, cs_regs regs_write, uint8_t *regs_write_count);

#ifndef SW_CAPSTONE_DL_IMPL
#define cs_open        sw_cs_open
#define cs_close       sw_cs_close
#define cs_option      sw_cs_option
#define cs_disasm      sw_cs_disasm
#define cs_free        sw_cs_free
#define cs_regs_access sw_cs_regs_access
#endif

#endif /* RSPWALK_DISASM_CAPSTONE_DL_H */
