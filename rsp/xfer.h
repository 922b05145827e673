/* rsp/xfer.h -- qXfer requests and the target description fetch (rsp/xfer.c).
 *
 * Not installed; rsp_xfer_read itself is public (rspwalk/rsp.h).
 */
#ifndef RSPWALK_RSP_XFER_H
#define RSPWALK_RSP_XFER_H

#include "rsp/session.h"

/* The request for OBJECT/ANNEX at OFFSET, as rsp_xfer_read sends it, into
 * BUF of CAP bytes; its length, or -1 when it does not fit. */
int rsp_xfer_request(const struct rsp_session *s, const char *object, const char *annex,
                     size_t offset, char *buf, size_t cap);
/* Fetch target.xml and its includes, parse them and keep them in the
 * session (s->tdesc, s->tdesc_xml).  0 also when the stub has none.  With
 * s->cfg.tdesc_cache, the includes and the parse come from the cache when
 * the stub's qSupported reply QSUP (QSUP_LEN bytes, borrowed) and
 * target.xml are those of a cached entry, and a fresh parse is put there;
 * QSUP NULL: the cache is not used. */
int rsp_tdesc_fetch(struct rsp_session *s, const char *qsup, size_t qsup_len);

#endif /* RSPWALK_RSP_XFER_H */
