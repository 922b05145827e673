/* render/json.c -- JSON strings for the documents of render/.
 *
 * One escaping routine for the stack document and the tree, so both quote
 * a function name the same way.  Names come from the target and its files,
 * which may hold any bytes: what is not UTF-8 becomes U+FFFD, so every
 * document is valid JSON (RFC 8259, section 8.1).
 */
#include "render/json.h"

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at P (RFC 3629, section 4:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t
utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf;

    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return n;
}

void
sw_json_str(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                fprintf(f, "\\u%04x", *p);
            } else if (*p < 0x80) {
                fputc(*p, f);
            } else {
                size_t n = utf8_len(p);
                if (n == 0) {
                    fputs("\\ufffd", f);
                } else {
                    fwrite(p, 1, n, f);
                    p += n - 1;
                }
            }
        }
    }
    fputc('"', f);
}
