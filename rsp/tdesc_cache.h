/* rsp/tdesc_cache.h -- the target-description cache's lookups (rsp/tdesc_cache.c).
 *
 * Not installed; the object and its new/free are public (rspwalk/rsp.h).
 * rsp/xfer.c asks it after reading target.xml and fills it after a parse.
 */
#ifndef RSPWALK_RSP_TDESC_CACHE_H
#define RSPWALK_RSP_TDESC_CACHE_H

#include "rspwalk/rsp.h"

/* A copy of the description cached under the key (the stub's qSupported
 * reply QSUP of QSUP_LEN bytes, target.xml XML of XML_LEN bytes) into *OUT,
 * and the entry becomes the most recently used.  Returns 0 (found; *OUT:
 * caller frees with rsp_tdesc_free), SW_ENOENT (not cached; *OUT NULL) or
 * SW_ENOMEM.  Counts a hit or a miss. */
int rsp_tdesc_cache_get(struct rsp_tdesc_cache *c, const char *qsup, size_t qsup_len,
                        const char *xml, size_t xml_len, struct rsp_tdesc **out);

/* Keep a copy of TD (borrowed) under the key, evicting the least recently
 * used entry when full; a key already cached is left as it is (another
 * session parsed the same description meanwhile).  Returns 0 or SW_ENOMEM
 * (nothing kept). */
int rsp_tdesc_cache_put(struct rsp_tdesc_cache *c, const char *qsup, size_t qsup_len,
                        const char *xml, size_t xml_len, const struct rsp_tdesc *td);

/* A deep copy of TD into *OUT: 0 or SW_ENOMEM.  *OUT: rsp_tdesc_free. */
int rsp_tdesc_copy(const struct rsp_tdesc *td, struct rsp_tdesc **out);

#endif /* RSPWALK_RSP_TDESC_CACHE_H */
