/* dap/wire.c -- Content-Length framing of the Debug Adapter Protocol (dap/wire.h).
 *
 * Strict: header lines end in CRLF, Content-Length is digits alone and at
 * most the configured size.  After a bad header the stream is out of step, so
 * bytes are dropped up to the next "Content-Length:"; a body that is merely
 * too large is dropped by its length, and the stream stays in step.
 */
#include "dap/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char clen[] = "Content-Length:";
#define CLEN_LEN (sizeof clen - 1)

void
dap_wire_init(struct dap_wire *w, size_t max_body)
{
    memset(w, 0, sizeof *w);
    w->max_body = max_body;
}

void
dap_wire_fini(struct dap_wire *w)
{
    free(w->buf);
    free(w->msg);
    memset(w, 0, sizeof *w);
}

/* Drop the first N pending bytes. */
static void
drop(struct dap_wire *w, size_t n)
{
    if (n >= w->len) {
        w->len = 0;
        return;
    }
    memmove(w->buf, w->buf + n, w->len - n);
    w->len -= n;
}

int
dap_wire_push(struct dap_wire *w, const void *buf, size_t len)
{
    const char *in = buf;
    /* The rest of a refused body goes without being kept. */
    if (w->skip > 0) {
        size_t n = len < w->skip ? len : w->skip;
        w->skip -= n;
        in += n;
        len -= n;
    }
    if (len == 0)
        return 0;
    if (w->len + len + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + len + 1)
            cap *= 2;
        char *nb = realloc(w->buf, cap);
        if (nb == NULL)
            return -1;
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, in, len);
    w->len += len;
    return 0;
}

/* Drop bytes up to the next "Content-Length:" after the first byte; with
 * none, keep only a tail that may be the start of one. */
static void
resync(struct dap_wire *w)
{
    for (size_t i = 1; i + CLEN_LEN <= w->len; i++)
        if (strncasecmp(w->buf + i, clen, CLEN_LEN) == 0) {
            drop(w, i);
            return;
        }
    size_t keep = w->len < CLEN_LEN ? w->len : CLEN_LEN - 1;
    for (; keep > 0; keep--)
        if (strncasecmp(w->buf + w->len - keep, clen, keep) == 0)
            break;
    drop(w, w->len - keep);
}

static enum dap_wire_result
bad(struct dap_wire *w, char *why, size_t whylen, const char *msg)
{
    snprintf(why, whylen, "%s", msg);
    resync(w);
    return DAP_WIRE_BAD;
}

/* Where the header's blank line ends (past "\r\n\r\n"), or 0. */
static size_t
header_end(const struct dap_wire *w)
{
    for (size_t i = 0; i + 4 <= w->len; i++)
        if (memcmp(w->buf + i, "\r\n\r\n", 4) == 0)
            return i + 4;
    return 0;
}

enum dap_wire_result
dap_wire_next(struct dap_wire *w, const char **body, size_t *len, char *why, size_t whylen)
{
    free(w->msg);
    w->msg = NULL;
    size_t hend = header_end(w);
    if (hend == 0) {
        if (w->len > DAP_MAX_HEADER)
            return bad(w, why, whylen, "malformed message: no end of header in 4096 bytes");
        return DAP_WIRE_MORE;
    }
    if (hend > DAP_MAX_HEADER)
        return bad(w, why, whylen, "malformed message: header longer than 4096 bytes");

    /* Each line "Name: value"; only Content-Length matters. */
    bool have = false;
    unsigned long long n = 0;
    for (size_t at = 0; at + 2 < hend;) {
        const char *line = w->buf + at;
        size_t ll = (size_t)((const char *)memchr(line, '\r', hend - at) - line);
        if (line[ll + 1] != '\n')
            return bad(w, why, whylen, "malformed message: header line not ended by CRLF");
        if (memchr(line, '\n', ll) != NULL || memchr(line, ':', ll) == NULL)
            return bad(w, why, whylen, "malformed message: header line without 'Name: value'");
        if (ll >= CLEN_LEN && strncasecmp(line, clen, CLEN_LEN) == 0) {
            size_t i = CLEN_LEN;
            while (i < ll && line[i] == ' ')
                i++;
            if (have || i == ll)
                return bad(w, why, whylen, "malformed message: Content-Length twice or empty");
            for (; i < ll; i++) {
                if (line[i] < '0' || line[i] > '9' || n > 1000000000000ull)
                    return bad(w, why, whylen, "malformed message: Content-Length is not a number");
                n = n * 10 + (unsigned)(line[i] - '0');
            }
            have = true;
        }
        at += ll + 2;
    }
    if (!have)
        return bad(w, why, whylen, "malformed message: no Content-Length header");
    if (n > w->max_body) {
        snprintf(why, whylen, "message of %llu bytes refused: larger than the %zu bytes accepted",
                 n, w->max_body);
        /* In step: drop the header and the body, also what is still to come. */
        size_t have_body = w->len - hend;
        if (have_body >= n) {
            drop(w, hend + (size_t)n);
        } else {
            w->skip = (size_t)n - have_body;
            w->len = 0;
        }
        return DAP_WIRE_BAD;
    }
    if (w->len - hend < n)
        return DAP_WIRE_MORE;
    /* Hand out a NUL-terminated copy (freed on the next call); the bytes
     * after the body are kept for the next message. */
    size_t rest = w->len - hend - (size_t)n;
    char *copy = malloc((size_t)n + 1);
    if (copy == NULL) {
        snprintf(why, whylen, "message of %llu bytes: out of memory", n);
        drop(w, hend + (size_t)n);
        return DAP_WIRE_BAD;
    }
    memcpy(copy, w->buf + hend, (size_t)n);
    copy[n] = '\0';
    memmove(w->buf, w->buf + hend + n, rest);
    w->len = rest;
    w->msg = copy;
    *body = copy;
    *len = (size_t)n;
    return DAP_WIRE_MESSAGE;
}
