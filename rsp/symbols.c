/* rsp/symbols.c -- what a bare-metal stub asks of the client: qSymbol look-ups, and what it
 * tells of the board: its memory map.
 *
 * qSymbol (gdb manual "General Query Packets"): the client offers "qSymbol::", the stub
 * answers "OK" or "qSymbol:HEXNAME", the client answers "qSymbol:HEXVALUE:HEXNAME" (or
 * "qSymbol::HEXNAME", unknown) and gets the next request, until "OK".  OpenOCD asks for its
 * RTOS helpers' symbols this way (src/rtos/rtos.c, rtos_qsymbol).  The memory map
 * (qXfer:memory-map:read, "Memory Map Format") lists the regions that may be read.
 */
#include "rsp/session.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/xfer.h"

/* The longest symbol name answered: OpenOCD's are some 30 characters. */
#define QSYM_NAME_MAX 256

int
rsp_qsymbol_serve(struct rsp_session *s, rsp_symbol_fn lookup, void *arg, size_t *asked)
{
    /* "qSymbol:" + 16 hex digits + ':' + the name in hex. */
    char req[16 + 17 + 2 * QSYM_NAME_MAX + 1], name[QSYM_NAME_MAX + 1];
    struct rsp_reply r;
    size_t n = 0;
    int rc;

    if (asked != NULL)
        *asked = 0;
    if (s->qsymbol_done)
        return 0;
    s->qsymbol_done = true;
    rc = rsp_request(&s->x, RSP_PKT_QSYMBOL, "qSymbol::", 9, &r);
    for (;;) {
        if (rc == SW_EUNSUP || rc == SW_ESTUB)
            return 0; /* no look-ups: nothing asked */
        if (rc < 0)
            return rc;
        if (r.len == 2 && memcmp(r.p, "OK", 2) == 0)
            break;
        if (r.len < 8 || memcmp(r.p, "qSymbol:", 8) != 0 || (r.len - 8) % 2 != 0 ||
            (r.len - 8) / 2 > QSYM_NAME_MAX || r.len == 8)
            return sw_fail(&s->err, SW_EPROTO, "qSymbol: the stub asked '%.*s', not a symbol name",
                           (int)(r.len > 60 ? 60 : r.len), r.p);
        size_t hexlen = r.len - 8;
        char hex[2 * QSYM_NAME_MAX + 1];
        memcpy(hex, r.p + 8, hexlen);
        hex[hexlen] = '\0';
        for (size_t i = 0; i < hexlen / 2; i++) {
            int hi = sw_hex_val(hex[2 * i]), lo = sw_hex_val(hex[2 * i + 1]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return sw_fail(&s->err, SW_EPROTO, "qSymbol: the name '%s' is not hex", hex);
            name[i] = (char)(hi << 4 | lo);
        }
        name[hexlen / 2] = '\0';
        if (++n > RSP_QSYMBOL_MAX)
            return sw_fail(&s->err, SW_EPROTO, "qSymbol: the stub asked for more than %d symbols",
                           RSP_QSYMBOL_MAX);
        uint64_t addr = 0;
        int found = lookup(arg, name, &addr);
        if (found < 0)
            return found;
        if (found)
            snprintf(req, sizeof req, "qSymbol:%" PRIx64 ":%s", addr, hex);
        else
            snprintf(req, sizeof req, "qSymbol::%s", hex);
        sw_debug(SW_DBG_PKT, "qSymbol: %s -> %s\n", name, found ? req + 8 : "(unknown)");
        rc = rsp_request(&s->x, RSP_PKT_QSYMBOL, req, strlen(req), &r);
    }
    /* The stub's threads and their registers may have changed (an RTOS seen): nothing
     * read before is kept. */
    if (n > 0)
        rsp_caches_drop(s);
    if (asked != NULL)
        *asked = n;
    return 0;
}

static int
region_cmp(const void *a, const void *b)
{
    const struct rsp_mem_region *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The value of attribute ATTR ("start=") in the element text [P, END), as a number. */
static bool
attr_u64(const char *p, const char *end, const char *attr, uint64_t *out)
{
    size_t alen = strlen(attr);
    for (const char *q = p; q + alen + 1 < end; q++) {
        if (memcmp(q, attr, alen) != 0 || (q > p && q[-1] != ' ' && q[-1] != '\t' && q[-1] != '\n'))
            continue;
        char quote = q[alen];
        if (quote != '"' && quote != '\'')
            return false;
        char *stop;
        unsigned long long v = strtoull(q + alen + 1, &stop, 0);
        if (stop == q + alen + 1 || stop >= end || *stop != quote)
            return false;
        *out = v;
        return true;
    }
    return false;
}

/* The <memory type="..." start="..." length="..."> elements of XML, sorted. */
static int
memmap_parse(struct rsp_session *s, const char *xml, size_t len)
{
    const char *p = xml, *end = xml + len;
    struct rsp_mem_region *v = NULL;
    size_t n = 0, cap = 0;
    while ((p = strstr(p, "<memory")) != NULL && p < end) {
        const char *e = strchr(p, '>');
        if (e == NULL || e >= end)
            break;
        if (p[7] != ' ' && p[7] != '\t' && p[7] != '\n') {
            p = e; /* <memory-map> */
            continue;
        }
        struct rsp_mem_region r = { 0 };
        if (!attr_u64(p, e, "start=", &r.start) || !attr_u64(p, e, "length=", &r.length) ||
            r.length == 0 || r.start + r.length - 1 < r.start) {
            sw_free(v);
            return sw_fail(&s->err, SW_EPROTO,
                           "qXfer:memory-map: a region without a usable start and length: %.*s",
                           (int)(e - p > 80 ? 80 : e - p + 1), p);
        }
        r.flash = strstr(p, "type=\"flash\"") != NULL && strstr(p, "type=\"flash\"") < e;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 8;
            struct rsp_mem_region *nv = cap < 4096 ? sw_realloc(v, nc * sizeof *nv) : NULL;
            if (nv == NULL) {
                sw_free(v);
                return sw_fail(&s->err, cap < 4096 ? SW_ENOMEM : SW_EPROTO, "qXfer:memory-map: %s",
                               cap < 4096 ? "out of memory" : "more than 4096 regions");
            }
            v = nv;
            cap = nc;
        }
        v[n++] = r;
        p = e;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, region_cmp);
    s->memmap = v;
    s->nmemmap = n;
    return 0;
}

int
rsp_memory_map(struct rsp_session *s, const struct rsp_mem_region **regions, size_t *n)
{
    *regions = NULL;
    *n = 0;
    if (!s->memmap_read) {
        char *xml = NULL;
        size_t len = 0;
        if (!s->x.feat[RSP_FEAT_XFER_MEMORY_MAP]) {
            s->memmap_read = true;
            return 0;
        }
        int rc = rsp_xfer_read(s, "memory-map", "", &xml, &len);
        if (rc < 0 && sw_is_link_error(rc))
            return rc; /* asked again next time */
        if (rc == 0)
            rc = memmap_parse(s, xml, len);
        free(xml);
        if (rc == SW_ENOMEM)
            return rc;
        if (rc < 0)
            sw_debug(SW_DBG_PKT, "qXfer:memory-map: %s: read as no map\n", s->err.msg);
        s->memmap_read = true;
    }
    *regions = s->memmap;
    *n = s->nmemmap;
    return 0;
}
