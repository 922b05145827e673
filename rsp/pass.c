/* rsp/pass.c -- a front end's packets passed through to the stub as they are.
 *
 * For a stub in front of this one (rspwalk --rsp-listen): the packet goes
 * out unchanged and its reply comes back unchanged but for run-lengths, so
 * the caller can frame it again.  What the session keeps of the stop stays
 * only across packets that read.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/rsp.h"

#include "rsp/cursor.h"
#include "rsp/exchange.h"
#include "rsp/session.h"
#include "rsp/stop.h"
#include "rsp/threads.h"
#include "util/util.h"

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

/* Drop the registers kept of the thread a 'P' or 'G' writes (the Hg
 * thread), or all of them when which one that is is not known: the other
 * threads' registers, the stop's objects and memory stay. */
static void
regs_written(struct rsp_session *s)
{
    struct rsp_thread_id id = s->hg;
    size_t k = 0;
    for (size_t i = 0; i < s->nregs; i++) {
        if (!s->hg_valid || (s->regs[i].id.pid == id.pid && s->regs[i].id.tid == id.tid))
            sw_free(s->regs[i].buf);
        else
            s->regs[k++] = s->regs[i];
    }
    s->nregs = k;
}

/* 'Hg' passed through and answered REPLY: the selection the session keeps. */
static void
hg_passed(struct rsp_session *s, const char *p, size_t len, const char *reply, size_t rlen)
{
    struct rsp_cur c;
    struct rsp_thread_id id;
    s->hg_valid = false;
    if (rlen != 2 || memcmp(reply, "OK", 2) != 0)
        return;
    rsp_cur_init(&c, "Hg", p + 2, len - 2);
    if (!rsp_thread_id_read(&c, &id) || !rsp_cur_eof(&c) || id.tid <= 0)
        return; /* "any" or "all": the stub's choice */
    s->hg = rsp_thread_resolve(s, id);
    s->hg_valid = true;
}

/* A qXfer read from offset 0 that a reply kept at this stop answers: the
 * same object and annex read from 0, whose reply was the last chunk ('l')
 * and fits in the length asked for now. */
static bool
kept_xfer(struct rsp_session *s, const char *p, size_t len, const char **reply, size_t *rlen)
{
    if (!starts(p, len, "qXfer:"))
        return false;
    const char *at = NULL; /* the ":0," of the offset */
    for (size_t i = len; i-- > 2;)
        if (p[i] == ',') {
            at = p + i - 2;
            break;
        }
    if (at == NULL || memcmp(at, ":0,", 3) != 0 || strstr(p, ":read:") == NULL)
        return false;
    size_t head = (size_t)(at - p) + 3;
    char *end;
    char tmp[24];
    if (len - head == 0 || len - head >= sizeof tmp)
        return false;
    memcpy(tmp, p + head, len - head);
    tmp[len - head] = '\0';
    unsigned long long want = strtoull(tmp, &end, 16);
    if (*end != '\0')
        return false;
    for (size_t i = 0; i < s->npre; i++) {
        const struct rsp_prefetched *e = &s->pre[i];
        if (e->req_len <= head || memcmp(e->req, p, head) != 0 || e->len == 0 ||
            e->reply[0] != 'l' || e->len - 1 > want)
            continue;
        *reply = e->reply;
        *rlen = e->len;
        return true;
    }
    return false;
}

int
rsp_pass_request(struct rsp_session *s, const char *payload, size_t len, const char **reply,
                 size_t *rlen)
{
    /* A front end that reads the thread list this way finds it in the next
     * stops' first writes (rsp_stop_fetch), as at the first one. */
    if (starts(payload, len, "qXfer:threads:read:"))
        s->list_by_xfer = true;
    if (kept_xfer(s, payload, len, reply, rlen))
        return 0; /* escapes kept: the front end's framing takes them as they are */
    struct rsp_reply r = { 0 };
    *reply = "";
    *rlen = 0;
    /* A thread selection, a register write or a breakpoint changes no
     * memory as read: what the stop read of memory and objects stays. */
    bool hg = starts(payload, len, "Hg");
    if (len > 0 && (payload[0] == 'P' || payload[0] == 'G'))
        regs_written(s);
    else if (starts(payload, len, "H"))
        s->hg_valid = false;
    else if (len > 0 && (payload[0] == 'Z' || payload[0] == 'z'))
        ; /* the stub hides its breakpoints from reads */
    else if (!only_reads(payload, len))
        rsp_caches_drop(s);
    int rc = rsp_request(&s->x, RSP_PKT_PASS, payload, len, &r);
    if (hg)
        hg_passed(s, payload, len, r.p != NULL ? r.p : "", r.p != NULL ? r.len : 0);
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
