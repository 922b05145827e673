/* rsp/tdesc_cache.h -- the target-description cache's lookups (rsp/tdesc_cache.c).
 *
 * Not installed; the object and its new/free are public (rspwalk/rsp.h).
 * rsp/xfer.c asks it after reading target.xml and fills it after a parse.
 */
#ifndef RSPWALK_RSP_TDESC_CACHE_H
#define RSPWALK_RSP_TDESC_CACHE_H

#include "rspwalk/rsp.h"

/* A key being fetched and parsed by one caller (rsp_tdesc_cache_get said
 * SW_ENOENT with it claimed): others asking for the same key wait for it
 * rather than fetch it too.  The caller's storage; the key is borrowed and
 * must stay valid until rsp_tdesc_cache_put or rsp_tdesc_cache_release. */
struct rsp_tdesc_claim {
    const char *qsup, *xml; /* borrowed */
    size_t qsup_len, xml_len;
    uint64_t hash;
    bool claimed; /* on the cache's list: end it with put or release */
    struct rsp_tdesc_claim *next;
};

/* A copy of the description cached under the key (the stub's qSupported
 * reply QSUP of QSUP_LEN bytes, target.xml XML of XML_LEN bytes; both
 * borrowed by CL) into *OUT; the entry becomes the most recently used.
 * When another caller has the key claimed, waits up to WAIT_MS for its
 * result first.  Returns 0 (found; *OUT: caller frees with rsp_tdesc_free),
 * SW_ENOENT (not cached; *OUT NULL; CL claimed unless the wait timed out:
 * the caller fetches and parses, then calls rsp_tdesc_cache_put, or
 * rsp_tdesc_cache_release on failure) or SW_ENOMEM.  Counts a hit or a
 * miss. */
int rsp_tdesc_cache_get(struct rsp_tdesc_cache *c, struct rsp_tdesc_claim *cl, const char *qsup,
                        size_t qsup_len, const char *xml, size_t xml_len, int wait_ms,
                        struct rsp_tdesc **out);

/* Keep a copy of TD (borrowed) under CL's key, evicting the least recently
 * used entry when full, and end CL's claim; a key already cached is left as
 * it is.  Returns 0 or SW_ENOMEM (nothing kept; the claim ends all the same). */
int rsp_tdesc_cache_put(struct rsp_tdesc_cache *c, struct rsp_tdesc_claim *cl,
                        const struct rsp_tdesc *td);

/* End CL's claim without a result (the fetch or the parse failed): one of
 * the waiters fetches instead.  No-op unless CL is claimed. */
void rsp_tdesc_cache_release(struct rsp_tdesc_cache *c, struct rsp_tdesc_claim *cl);

/* A deep copy of TD into *OUT: 0 or SW_ENOMEM.  *OUT: rsp_tdesc_free. */
int rsp_tdesc_copy(const struct rsp_tdesc *td, struct rsp_tdesc **out);

#endif /* RSPWALK_RSP_TDESC_CACHE_H */
