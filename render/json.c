/* render/json.c -- JSON strings for the documents of render/.
 *
 * One escaping routine for the stack document and the tree, so both quote
 * a function name the same way.  Names come from the target and its files,
 * which may hold any bytes: what is not UTF-8 becomes U+FFFD, so every
 * document is valid JSON (RFC 8259, section 8.1).
 */
#include "render/json.h"

#include <stddef.h>

#include "render/text.h"

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
                size_t n = sw_utf8_seq_len(p);
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
