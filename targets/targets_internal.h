/* targets/targets_internal.h -- helpers shared by the targets/ backends. */
#ifndef RSPWALK_TARGETS_INTERNAL_H
#define RSPWALK_TARGETS_INTERNAL_H

#include "rspwalk/arch.h"
#include "rspwalk/proc.h"
#include "rspwalk/rsp.h"
#include "rspwalk/types.h"

/* Parse a qXfer:libraries-svr4 document (XML of LEN bytes) into modules.
 * *MODS: caller frees with sw_modinfo_free.  Returns 0, SW_EPROTO, SW_ENOMEM. */
int tgt_parse_svr4(const char *xml, size_t len, struct sw_modinfo **mods, size_t *n,
                   struct sw_errbuf *err);

/* The architecture of the ELF file at PATH from its header alone.
 * Returns 0, SW_ENOENT, SW_EBADELF, SW_ENOARCH with the message in ERR. */
int tgt_arch_from_elf(const char *path, const struct arch_desc **out, struct sw_errbuf *err);

/* The description for the stopped target behind S when A's <architecture>
 * is shared by two byte orders ("powerpc:common64": ppc64 and ppc64le):
 * decided by the stopped thread's MSR (64-bit mode, LE bit), else by which
 * byte order makes the auxv keys small.  *OUT is A when A has no twin or
 * nothing decides.  Costs a 'g' (or qXfer:auxv) only for such an A.
 * Returns 0, or SW_ECONN/SW_ETIMEDOUT with the message in ERR. */
int tgt_rsp_byte_order(struct rsp_session *s, const struct arch_desc *a,
                       const struct arch_desc **out, struct sw_errbuf *err);

/* Whether thread TID exists in the RSP process P: 0 or SW_ENOENT. */
int tgt_rsp_thread_check(struct sw_proc *p, sw_tid tid);

#endif /* RSPWALK_TARGETS_INTERNAL_H */
