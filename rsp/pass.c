/* rsp/pass.c -- a front end's packets passed through to the stub as they are.
 *
 * For a stub in front of this one (rspwalk --rsp-listen): the packet goes
 * out unchanged and its reply comes back unchanged but for run-lengths, so
 * the caller can frame it again.  What the session keeps of the stop stays
 * only across packets that read.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "rspwalk/rsp.h"

#include "rsp/exchange.h"
#include "rsp/session.h"
#include "rsp/stop.h"

static bool
starts(const char *p, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(p, prefix, n) == 0;
}

/* Whether PAYLOAD only reads, so that the stop's caches stay valid. */
static bool
only_reads(const char *p, size_t len)
{
    if (len == 0)
        return false;
    switch (p[0]) {
    case 'm':
    case 'g':
    case 'p':
    case '?':
        return true;
    case 'q':
        if (starts(p, len, "qRcmd"))
            return false;
        if (starts(p, len, "qXfer:"))
            return memchr(p, ':', len) != NULL && strstr(p, ":read:") != NULL;
        return true;
    case 'v':
        return starts(p, len, "vFile:") || starts(p, len, "vMustReplyEmpty") ||
               starts(p, len, "vCont?");
    default:
        return false;
    }
}

int
rsp_pass_request(struct rsp_session *s, const char *payload, size_t len, const char **reply,
                 size_t *rlen)
{
    struct rsp_reply r = { 0 };
    *reply = "";
    *rlen = 0;
    if (!only_reads(payload, len))
        rsp_caches_drop(s);
    int rc = rsp_request(&s->x, RSP_PKT_PASS, payload, len, &r);
    if (rc < 0 && rc != SW_EUNSUP && rc != SW_ESTUB)
        return rc;
    if (r.p != NULL) {
        *reply = r.p;
        *rlen = r.len;
    }
    return 0;
}

int
rsp_pass_resume(struct rsp_session *s, const char *payload, size_t len)
{
    rsp_caches_drop(s);
    return rsp_send_resume(&s->x, RSP_PKT_PASS_RESUME, payload, len);
}

int
rsp_pass_wait_stop(struct rsp_session *s, int timeout_ms, const char **reply, size_t *rlen)
{
    struct rsp_reply r;
    int rc = rsp_recv_stop(&s->x, timeout_ms, &r);
    if (rc < 0)
        return rc;
    *reply = r.p;
    *rlen = r.len;
    /* A reply that does not parse is still the front end's to judge. */
    if (r.len > 0 && strchr("TSWX", r.p[0]) != NULL)
        (void)rsp_take_stop(s, &r, "stop reply", false, NULL);
    return 0;
}
