/* targets/svr4.c -- the libraries-svr4 document and ELF headers, for the backends.
 *
 *   <library-list-svr4 version="1.0" main-lm="0x...">
 *     <library name="/lib/libc.so.6" lm="0x..." l_addr="0x..." l_ld="0x..." lmid="0x0"/>
 *   </library-list-svr4>
 * (GDB manual, "Library List Format for SVR4 Targets").  A small scanner is
 * enough: the document is flat and attribute values are quoted.  Not a
 * general XML parser (rsp/tdesc.c has one for target descriptions).
 */
#include "targets/targets_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Copy the value of attribute NAME inside the element text [P, END) into a
 * fresh string with the five predefined XML entities decoded; NULL if absent. */
static char *
attr_dup(const char *p, const char *end, const char *name)
{
    size_t nl = strlen(name);
    for (const char *q = p; q + nl + 2 < end; q++) {
        if ((q == p || q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n') &&
            strncmp(q, name, nl) == 0 && q[nl] == '=' && (q[nl + 1] == '"' || q[nl + 1] == '\'')) {
            char quote = q[nl + 1];
            const char *v = q + nl + 2, *ve = v;
            while (ve < end && *ve != quote)
                ve++;
            if (ve >= end)
                return NULL;
            char *out = sw_malloc((size_t)(ve - v) + 1), *o = out;
            if (out == NULL)
                return NULL;
            static const struct {
                const char *ent;
                char c;
            } ents[] = { { "&amp;", '&' },
                         { "&lt;", '<' },
                         { "&gt;", '>' },
                         { "&quot;", '"' },
                         { "&apos;", '\'' } };
            while (v < ve) {
                bool done = false;
                for (size_t k = 0; k < sizeof ents / sizeof ents[0] && !done; k++) {
                    size_t el = strlen(ents[k].ent);
                    if ((size_t)(ve - v) >= el && strncmp(v, ents[k].ent, el) == 0) {
                        *o++ = ents[k].c;
                        v += el;
                        done = true;
                    }
                }
                if (!done)
                    *o++ = *v++;
            }
            *o = '\0';
            return out;
        }
    }
    return NULL;
}

/* The first NEEDLE in [P, END), or NULL: the document is LEN bytes, which
 * may hold a NUL of the stub's before its end (strstr would stop there). */
static const char *
span_find(const char *p, const char *end, const char *needle)
{
    size_t nl = strlen(needle);
    for (; (size_t)(end - p) >= nl; p++) {
        p = memchr(p, needle[0], (size_t)(end - p));
        if (p == NULL || (size_t)(end - p) < nl)
            return NULL;
        if (memcmp(p, needle, nl) == 0)
            return p;
    }
    return NULL;
}

static bool
attr_addr(const char *p, const char *end, const char *name, sw_addr *out)
{
    char *v = attr_dup(p, end, name);
    if (v == NULL)
        return false;
    char *e;
    errno = 0;
    unsigned long long x = strtoull(v, &e, 0);
    bool ok = errno == 0 && e != v && *e == '\0';
    sw_free(v);
    if (ok)
        *out = (sw_addr)x;
    return ok;
}

int
tgt_parse_svr4(const char *xml, size_t len, struct sw_modinfo **mods, size_t *n,
               struct sw_errbuf *err)
{
    const char *end = xml + len;
    struct sw_modinfo *m = NULL;
    size_t k = 0, cap = 0;

    if (len == 0 || span_find(xml, end, "<library-list-svr4") == NULL)
        return sw_fail(err, SW_EPROTO, "qXfer:libraries-svr4: not a library-list-svr4 document");
    for (const char *p = xml; (p = span_find(p, end, "<library ")) != NULL;) {
        const char *e = memchr(p, '>', (size_t)(end - p));
        if (e == NULL) {
            sw_modinfo_free(m, k);
            return sw_fail(err, SW_EPROTO,
                           "qXfer:libraries-svr4: unterminated <library> at offset %zu",
                           (size_t)(p - xml));
        }
        if (k == cap) {
            cap = cap ? cap * 2 : 8;
            struct sw_modinfo *nm = sw_realloc(m, cap * sizeof *nm);
            if (nm == NULL) {
                sw_modinfo_free(m, k);
                return sw_fail(err, SW_ENOMEM, "qXfer:libraries-svr4: out of memory");
            }
            m = nm;
        }
        struct sw_modinfo *mi = &m[k];
        memset(mi, 0, sizeof *mi);
        mi->name = attr_dup(p, e, "name");
        if (mi->name == NULL) {
            sw_modinfo_free(m, k);
            return sw_fail(err, SW_EPROTO,
                           "qXfer:libraries-svr4: <library> without a name at offset %zu",
                           (size_t)(p - xml));
        }
        attr_addr(p, e, "l_addr", &mi->l_addr);
        attr_addr(p, e, "l_ld", &mi->l_ld);
        attr_addr(p, e, "lm", &mi->lm);
        k++;
        p = e + 1;
    }
    *mods = m;
    *n = k;
    return 0;
}

int
tgt_arch_from_elf(const char *path, const struct arch_desc **out, struct sw_errbuf *err)
{
    unsigned char h[20];
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return sw_fail(err, errno == ENOENT ? SW_ENOENT : SW_EIO, "%s: %s", path, strerror(errno));
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    if (got < sizeof h || memcmp(h, "\177ELF", 4) != 0)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF file", path);
    /* e_ident[EI_CLASS] at 4, [EI_DATA] at 5; e_machine at 18, in the file's order. */
    uint16_t machine = h[5] == 2 ? (uint16_t)(h[18] << 8 | h[19]) : (uint16_t)(h[19] << 8 | h[18]);
    const struct arch_desc *a = arch_by_elf(machine, h[4], h[5]);
    if (a == NULL)
        return sw_fail(err, SW_ENOARCH, "%s: ELF machine %u is not a supported architecture", path,
                       machine);
    *out = a;
    return 0;
}
