/* rsp/xfer.c -- qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH, whole objects in chunks.
 *
 * Replies are "m<data>" (more follows) or "l<data>" (last), binary data
 * '}'-escaped (and run-length encoded by gdbserver, undone by the codec).
 * Known objects are gated by their qSupported feature.  Not a parser of
 * what the objects contain.
 */
#include "rsp/xfer.h"

#include <stdio.h>
#include <string.h>

#include "rsp/tdesc_cache.h"

/* Objects larger than this are refused: target.xml is ~14 KiB, aarch64's
 * system-registers.xml 13 KiB, a long library list some 100 KiB. */
#define XFER_MAX_SIZE (16u * 1024 * 1024)
/* The longest chunk asked for: gdbserver clamps to its buffer, QEMU to
 * 2045 bytes; we just keep reading until 'l'. */
#define XFER_MAX_CHUNK 0x4000

static const struct {
    const char *object;
    enum rsp_pkt kind;
} known_objects[] = {
    { "features", RSP_PKT_XFER_FEATURES },        { "threads", RSP_PKT_XFER_THREADS },
    { "libraries-svr4", RSP_PKT_XFER_LIBS_SVR4 }, { "auxv", RSP_PKT_XFER_AUXV },
    { "exec-file", RSP_PKT_XFER_EXEC_FILE },      { "memory-map", RSP_PKT_XFER_MEMORY_MAP },
};

static enum rsp_pkt
xfer_kind(const char *object)
{
    for (size_t i = 0; i < sizeof known_objects / sizeof known_objects[0]; i++)
        if (strcmp(known_objects[i].object, object) == 0)
            return known_objects[i].kind;
    return RSP_PKT_XFER_OTHER;
}

/* The longest chunk asked for: a PacketSize less the reply's framing. */
static size_t
xfer_chunk(const struct rsp_session *s)
{
    size_t chunk = s->x.packet_size > 32 ? s->x.packet_size - 16 : 16;
    return chunk > XFER_MAX_CHUNK ? XFER_MAX_CHUNK : chunk;
}

int
rsp_xfer_request(const struct rsp_session *s, const char *object, const char *annex, size_t offset,
                 char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "qXfer:%s:read:%s:%zx,%zx", object, annex, offset, xfer_chunk(s));
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

int
rsp_xfer_read(struct rsp_session *s, const char *object, const char *annex, char **data,
              size_t *len)
{
    struct sw_buf b;
    enum rsp_pkt kind = xfer_kind(object);
    char req[512];
    int rc = 0;
    *data = NULL;
    *len = 0;
    if (strpbrk(object, ":#$}*") != NULL || strpbrk(annex, "#$}*") != NULL)
        return sw_fail(&s->err, SW_EINVAL, "qXfer:%s:read:%s: bad object or annex name", object,
                       annex);
    sw_buf_init(&b);
    for (;;) {
        struct rsp_reply r;
        int reqlen = rsp_xfer_request(s, object, annex, b.len, req, sizeof req);
        if (reqlen < 0) {
            rc = sw_fail(&s->err, SW_EINVAL, "qXfer:%s:read:%s: packet too long", object, annex);
            break;
        }
        rc = rsp_request(&s->x, kind, req, (size_t)reqlen, &r);
        if (rc < 0)
            break;
        if (r.p[0] != 'm' && r.p[0] != 'l') {
            rc = sw_fail(&s->err, SW_EPROTO,
                         "reading qXfer:%s:read:%s at offset %zu: reply starts with '%c', not "
                         "'m' or 'l'",
                         object, annex, b.len, r.p[0]);
            break;
        }
        bool last = r.p[0] == 'l';
        /* Undo the escapes in the decoder's buffer: it is ours until the next read. */
        long n = rsp_unescape((uint8_t *)r.p + 1, r.len - 1);
        if (n < 0) {
            rc = sw_fail(&s->err, SW_EPROTO,
                         "reading qXfer:%s:read:%s at offset %zu: data ends in a lone '}'", object,
                         annex, b.len);
            break;
        }
        if (n == 0 && !last) {
            rc = sw_fail(&s->err, SW_EPROTO,
                         "reading qXfer:%s:read:%s at offset %zu: 'm' reply without data", object,
                         annex, b.len);
            break;
        }
        if (b.len + (size_t)n > XFER_MAX_SIZE) {
            rc = sw_fail(&s->err, SW_EPROTO, "reading qXfer:%s:read:%s: larger than %u bytes",
                         object, annex, XFER_MAX_SIZE);
            break;
        }
        if (sw_buf_append(&b, r.p + 1, (size_t)n) != 0) {
            rc = sw_fail(&s->err, SW_ENOMEM, "reading qXfer:%s:read:%s: out of memory", object,
                         annex);
            break;
        }
        if (last)
            break;
    }
    if (rc == 0 && sw_buf_terminate(&b) != 0)
        rc = sw_fail(&s->err, SW_ENOMEM, "reading qXfer:%s:read:%s: out of memory", object, annex);
    if (rc < 0) {
        sw_buf_fini(&b);
        return rc;
    }
    *data = b.data;
    *len = b.len;
    return 0;
}

/* ---- target.xml --------------------------------------------------------- */

struct include_ctx {
    struct rsp_session *s;
    struct sw_errbuf err; /* the first failed fetch */
    char annex[128];
};

static int
fetch_include(void *arg, const char *annex, char **data, size_t *len)
{
    struct include_ctx *ctx = arg;
    int rc = rsp_xfer_read(ctx->s, "features", annex, data, len);
    if (rc < 0 && ctx->err.code == 0) {
        sw_err_copy(&ctx->err, &ctx->s->err);
        snprintf(ctx->annex, sizeof ctx->annex, "%s", annex);
    }
    return rc;
}

int
rsp_tdesc_fetch(struct rsp_session *s, const char *qsup, size_t qsup_len)
{
    char *xml;
    size_t len;
    struct rsp_tdesc_cache *cache = qsup != NULL ? s->cfg.tdesc_cache : NULL;
    int rc = rsp_xfer_read(s, "features", "target.xml", &xml, &len);
    if (rc == SW_EUNSUP || rc == SW_ESTUB)
        return 0; /* no description: arch/ falls back to gdb's default layout */
    if (rc < 0)
        return rc;
    struct rsp_tdesc_claim claim = { 0 };
    if (cache != NULL) {
        rc = rsp_tdesc_cache_get(cache, &claim, qsup, qsup_len, xml, len, s->cfg.timeout_ms,
                                 &s->tdesc);
        if (rc == 0) {
            s->tdesc_xml = xml;
            return 0;
        }
        if (rc == SW_ENOMEM) {
            sw_free(xml);
            return sw_fail(&s->err, SW_ENOMEM, "target description: out of memory");
        }
    }
    struct include_ctx ctx = { s, { 0, "" }, "" };
    rc = rsp_tdesc_parse(xml, len, fetch_include, &ctx, &s->tdesc, &s->err);
    if (rc < 0) {
        if (cache != NULL)
            rsp_tdesc_cache_release(cache, &claim); /* before XML, its key, goes */
        sw_free(xml);
        if (ctx.err.code == SW_EUNSUP || ctx.err.code == SW_ESTUB) {
            /* An include the stub will not give: no description at all is
             * better than a wrongly numbered one. */
            sw_err_copy(&s->err, &ctx.err);
            sw_err_prefix(&s->err, "target description: xi:include '%s': ", ctx.annex);
            return 0;
        }
        if (ctx.err.code != 0) {
            sw_err_copy(&s->err, &ctx.err);
            return sw_err_prefix(&s->err, "target description: xi:include '%s': ", ctx.annex);
        }
        return rc;
    }
    /* Out of memory here costs the next connect a parse, nothing more. */
    if (cache != NULL)
        (void)rsp_tdesc_cache_put(cache, &claim, s->tdesc);
    s->tdesc_xml = xml;
    return 0;
}
