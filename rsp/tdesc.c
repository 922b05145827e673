/* rsp/tdesc.c -- target descriptions (target.xml and its xi:includes) on libexpat.
 *
 * The only file that includes <expat.h>.  Registers are numbered as gdb
 * does: regnum when given, else previous + 1 across features in document
 * order, the first being 0; 'g' offsets follow regnum order.  Not the
 * mapping from names to roles (arch/ does that).
 */
#include "rspwalk/rsp.h"

#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Bounds that keep a hostile or broken stub from exhausting us.  Real
 * descriptions: gdbserver x86-64 ~14 KiB inline, QEMU aarch64 4 documents
 * and ~200 registers. */
#define TDESC_MAX_DEPTH    8
#define TDESC_MAX_BYTES    (8u * 1024 * 1024)
#define TDESC_MAX_REGS     8192
#define TDESC_MAX_REGNUM   65535
#define TDESC_MAX_BITSIZE  8192
#define TDESC_MAX_INCLUDES 64

struct reg_row {
    char *name, *feature, *type;
    unsigned regnum;
    unsigned bitsize;
};

struct pctx {
    rsp_tdesc_include_fn include;
    void *arg;
    struct sw_errbuf *err;
    int rc;
    XML_Parser parser; /* the document being parsed now */
    const char *doc;   /* its name, for messages */
    int depth;
    size_t total_bytes;
    unsigned nincludes;

    char *arch, *osabi;
    char *feature; /* owned: the current <feature name> */
    struct reg_row *regs;
    size_t nregs, cap;
    unsigned next_regnum;

    int capture; /* 1: <architecture>, 2: <osabi> */
    struct sw_buf text;
};

static const char *
attr(const XML_Char **atts, const char *name)
{
    for (size_t i = 0; atts[i] != NULL; i += 2)
        if (strcmp(atts[i], name) == 0)
            return atts[i + 1];
    return NULL;
}

static int stop(struct pctx *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record the first failure and abort the document being parsed. */
static int
stop(struct pctx *c, int code, const char *fmt, ...)
{
    if (c->rc != 0)
        return c->rc;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    c->rc = sw_fail(c->err, code, "target description %s: line %lu: %s", c->doc,
                    (unsigned long)XML_GetCurrentLineNumber(c->parser), what);
    XML_StopParser(c->parser, XML_FALSE);
    return c->rc;
}

/* A decimal attribute value in [lo, hi]. */
static bool
number(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

static int parse_doc(struct pctx *c, const char *name, const char *xml, size_t len);

static int
do_include(struct pctx *c, const char *href)
{
    char *data = NULL;
    size_t len = 0;
    if (href == NULL || *href == '\0')
        return stop(c, SW_EPROTO, "xi:include without href");
    if (c->include == NULL)
        return stop(c, SW_EPROTO, "xi:include '%s' but no way to fetch it", href);
    if (c->depth >= TDESC_MAX_DEPTH)
        return stop(c, SW_EPROTO, "xi:include '%s' nested deeper than %d", href, TDESC_MAX_DEPTH);
    if (++c->nincludes > TDESC_MAX_INCLUDES)
        return stop(c, SW_EPROTO, "xi:include '%s': more than %d includes", href,
                    TDESC_MAX_INCLUDES);
    int rc = c->include(c->arg, href, &data, &len);
    if (rc < 0) {
        sw_free(data);
        if (c->rc == 0) {
            c->rc = sw_fail(c->err, rc, "target description %s: fetching xi:include '%s' failed",
                            c->doc, href);
            XML_StopParser(c->parser, XML_FALSE);
        }
        return rc;
    }
    char *name = sw_strdup(href);
    if (name == NULL) {
        sw_free(data);
        return stop(c, SW_ENOMEM, "out of memory");
    }
    XML_Parser outer = c->parser;
    const char *outer_doc = c->doc;
    c->depth++;
    rc = parse_doc(c, name, data, len);
    c->depth--;
    c->parser = outer;
    c->doc = outer_doc;
    sw_free(name);
    sw_free(data);
    if (rc < 0)
        XML_StopParser(outer, XML_FALSE);
    return rc;
}

static int
add_reg(struct pctx *c, const XML_Char **atts)
{
    const char *name = attr(atts, "name");
    const char *bits = attr(atts, "bitsize");
    const char *num = attr(atts, "regnum");
    const char *type = attr(atts, "type");
    unsigned bitsize, regnum = c->next_regnum;
    if (name == NULL || *name == '\0')
        return stop(c, SW_EPROTO, "<reg> without a name");
    if (!number(bits, 1, TDESC_MAX_BITSIZE, &bitsize))
        return stop(c, SW_EPROTO, "register '%s': bad bitsize '%s'", name, bits ? bits : "");
    if (num != NULL && !number(num, 0, TDESC_MAX_REGNUM, &regnum))
        return stop(c, SW_EPROTO, "register '%s': bad regnum '%s'", name, num);
    if (regnum > TDESC_MAX_REGNUM)
        return stop(c, SW_EPROTO, "register '%s': register number past %d", name, TDESC_MAX_REGNUM);
    if (c->nregs >= TDESC_MAX_REGS)
        return stop(c, SW_EPROTO, "register '%s': more than %d registers", name, TDESC_MAX_REGS);
    struct reg_row *p = sw_grow(c->regs, &c->cap, c->nregs + 1, sizeof *p, 64);
    if (p == NULL)
        return stop(c, SW_ENOMEM, "out of memory");
    c->regs = p;
    struct reg_row *r = &c->regs[c->nregs];
    memset(r, 0, sizeof *r);
    r->name = sw_strdup(name);
    r->feature = sw_strdup(c->feature ? c->feature : "");
    r->type = type ? sw_strdup(type) : NULL;
    c->nregs++; /* counted even when a copy failed, so it is freed */
    if (r->name == NULL || r->feature == NULL || (type != NULL && r->type == NULL))
        return stop(c, SW_ENOMEM, "out of memory");
    r->regnum = regnum;
    r->bitsize = bitsize;
    c->next_regnum = regnum + 1;
    return 0;
}

static bool
is_include(const char *el)
{
    /* QEMU omits the xmlns:xi declaration, so names are taken literally
     * (no namespace processing): "xi:include", or another prefix. */
    const char *colon = strchr(el, ':');
    return strcmp(el, "xi:include") == 0 || (colon != NULL && strcmp(colon, ":include") == 0);
}

static void XMLCALL
on_start(void *data, const XML_Char *el, const XML_Char **atts)
{
    struct pctx *c = data;
    if (c->rc != 0)
        return;
    if (strcmp(el, "architecture") == 0 || strcmp(el, "osabi") == 0) {
        c->capture = el[0] == 'a' ? 1 : 2;
        c->text.len = 0;
    } else if (strcmp(el, "feature") == 0) {
        const char *name = attr(atts, "name");
        sw_free(c->feature);
        c->feature = sw_strdup(name ? name : "");
        if (c->feature == NULL)
            stop(c, SW_ENOMEM, "out of memory");
    } else if (strcmp(el, "reg") == 0) {
        add_reg(c, atts);
    } else if (is_include(el)) {
        do_include(c, attr(atts, "href"));
    }
}

static void XMLCALL
on_end(void *data, const XML_Char *el)
{
    struct pctx *c = data;
    if (c->rc != 0 || c->capture == 0)
        return;
    if (strcmp(el, "architecture") != 0 && strcmp(el, "osabi") != 0)
        return;
    char **slot = c->capture == 1 ? &c->arch : &c->osabi;
    c->capture = 0;
    sw_free(*slot);
    *slot = sw_strndup(c->text.data ? c->text.data : "", c->text.len);
    if (*slot == NULL)
        stop(c, SW_ENOMEM, "out of memory");
}

static void XMLCALL
on_text(void *data, const XML_Char *s, int len)
{
    struct pctx *c = data;
    if (c->rc != 0 || c->capture == 0 || len <= 0)
        return;
    if (c->text.len + (size_t)len > 4096) {
        (void)stop(c, SW_EPROTO, "<architecture> or <osabi> longer than 4096 bytes");
        return;
    }
    if (sw_buf_append(&c->text, s, (size_t)len) != 0)
        stop(c, SW_ENOMEM, "out of memory");
}

static int
parse_doc(struct pctx *c, const char *name, const char *xml, size_t len)
{
    if (len > TDESC_MAX_BYTES - c->total_bytes) {
        c->doc = name;
        if (c->rc == 0)
            c->rc = sw_fail(c->err, SW_EPROTO,
                            "target description %s: documents larger than %u bytes in all", name,
                            TDESC_MAX_BYTES);
        return c->rc;
    }
    c->total_bytes += len;
    XML_Parser p = XML_ParserCreate(NULL);
    if (p == NULL) {
        if (c->rc == 0)
            c->rc = sw_fail(c->err, SW_ENOMEM, "target description %s: out of memory", name);
        return c->rc;
    }
    c->parser = p;
    c->doc = name;
    c->capture = 0;
    XML_SetUserData(p, c);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetCharacterDataHandler(p, on_text);
    enum XML_Status st = XML_Parse(p, xml, (int)len, XML_TRUE);
    if (st != XML_STATUS_OK && c->rc == 0) {
        c->rc = sw_fail(c->err, SW_EPROTO,
                        "target description %s: XML error at line %lu column %lu (offset %ld): %s",
                        name, (unsigned long)XML_GetCurrentLineNumber(p),
                        (unsigned long)XML_GetCurrentColumnNumber(p),
                        (long)XML_GetCurrentByteIndex(p), XML_ErrorString(XML_GetErrorCode(p)));
    }
    XML_ParserFree(p);
    c->parser = NULL;
    return c->rc;
}

static int
cmp_regnum(const void *a, const void *b)
{
    const struct reg_row *x = a, *y = b;
    return x->regnum < y->regnum ? -1 : x->regnum > y->regnum;
}

static void
free_rows(struct pctx *c)
{
    for (size_t i = 0; i < c->nregs; i++) {
        sw_free(c->regs[i].name);
        sw_free(c->regs[i].feature);
        sw_free(c->regs[i].type);
    }
    sw_free(c->regs);
    sw_free(c->feature);
    sw_free(c->arch);
    sw_free(c->osabi);
    sw_buf_fini(&c->text);
}

int
rsp_tdesc_parse(const char *xml, size_t len, rsp_tdesc_include_fn include, void *arg,
                struct rsp_tdesc **out, struct sw_errbuf *err)
{
    struct pctx c;
    *out = NULL;
    memset(&c, 0, sizeof c);
    c.include = include;
    c.arg = arg;
    c.err = err;
    sw_buf_init(&c.text);
    if (len > INT32_MAX) {
        free_rows(&c);
        return sw_fail(err, SW_EPROTO, "target description target.xml: too large");
    }
    int rc = parse_doc(&c, "target.xml", xml, len);
    if (rc < 0) {
        free_rows(&c);
        return rc;
    }
    /* qsort is not stable, but equal regnums are refused just below. */
    if (c.nregs > 1)
        qsort(c.regs, c.nregs, sizeof c.regs[0], cmp_regnum);
    for (size_t i = 1; i < c.nregs; i++) {
        if (c.regs[i].regnum == c.regs[i - 1].regnum) {
            sw_fail(err, SW_EPROTO,
                    "target description: registers '%s' and '%s' both have regnum %u",
                    c.regs[i - 1].name, c.regs[i].name, c.regs[i].regnum);
            free_rows(&c);
            return SW_EPROTO;
        }
    }
    struct rsp_tdesc *td = sw_calloc(1, sizeof *td);
    struct rsp_treg *regs = c.nregs ? sw_calloc(c.nregs, sizeof *regs) : NULL;
    if (td == NULL || (c.nregs && regs == NULL)) {
        sw_free(td);
        sw_free(regs);
        free_rows(&c);
        return sw_fail(err, SW_ENOMEM, "target description: out of memory");
    }
    size_t off = 0;
    for (size_t i = 0; i < c.nregs; i++) {
        regs[i].name = c.regs[i].name;
        regs[i].feature = c.regs[i].feature;
        regs[i].type = c.regs[i].type;
        regs[i].regnum = c.regs[i].regnum;
        regs[i].bitsize = c.regs[i].bitsize;
        regs[i].offset = off;
        off += (c.regs[i].bitsize + 7) / 8;
    }
    td->regs = regs;
    td->nregs = c.nregs;
    td->g_size = off;
    td->arch = c.arch;
    td->osabi = c.osabi;
    sw_free(c.regs);
    sw_free(c.feature);
    sw_buf_fini(&c.text);
    *out = td;
    return 0;
}

void
rsp_tdesc_free(struct rsp_tdesc *td)
{
    if (td == NULL)
        return;
    for (size_t i = 0; i < td->nregs; i++) {
        sw_free(td->regs[i].name);
        sw_free(td->regs[i].feature);
        sw_free(td->regs[i].type);
    }
    sw_free(td->regs);
    sw_free(td->arch);
    sw_free(td->osabi);
    sw_free(td);
}
