/* render/text.c -- names from the target made safe for a line of text.
 *
 * A module path, a symbol or a thread name comes from the stub or from a
 * file it served, and may hold any bytes: a newline or a terminal escape
 * printed as it is forges lines of output.  One escaper for the text, dot
 * and folded writers and the CLI.  Not the JSON escaper (render/json.c).
 */
#include "render/text.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/render.h"

size_t
sw_utf8_seq_len(const unsigned char *p)
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

/* Whether the well-formed N-byte sequence at P is a character a terminal
 * acts on or that reorders what is shown: C1 controls (U+0080-U+009F, CSI
 * among them), the line and paragraph separators (U+2028, U+2029) and the
 * bidirectional embeddings, overrides and isolates (U+202A-U+202E,
 * U+2066-U+2069; Unicode TR #9). */
static bool
unsafe_char(const unsigned char *p, size_t n)
{
    if (n == 2)
        return p[0] == 0xc2 && p[1] <= 0x9f;
    if (n != 3 || p[0] != 0xe2)
        return false;
    return (p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae) ||
           (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
}

/* Call PUT on each piece of S escaped: PUT(ARG, bytes, len). */
static void
escape_each(const char *s, unsigned flags, void (*put)(void *, const char *, size_t), void *arg)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        size_t n = 1;
        bool esc;
        if (*p < 0x20 || *p == 0x7f)
            esc = true;
        else if (*p == '\\' && !(flags & SW_TEXT_KEEP_BACKSLASH)) {
            put(arg, "\\\\", 2);
            p++;
            continue;
        } else if (*p == ';')
            esc = (flags & SW_TEXT_ESCAPE_SEMICOLON) != 0;
        else if (*p < 0x80)
            esc = false;
        else if ((n = sw_utf8_seq_len(p)) == 0) {
            n = 1;
            esc = true;
        } else
            esc = unsafe_char(p, n);
        if (!esc) {
            put(arg, (const char *)p, n);
        } else {
            for (size_t i = 0; i < n; i++) {
                char e[4] = { '\\', 'x', hex[p[i] >> 4], hex[p[i] & 15] };
                put(arg, e, 4);
            }
        }
        p += n;
    }
}

static void
put_file(void *arg, const char *b, size_t n)
{
    fwrite(b, 1, n, arg);
}

void
sw_text_fputs(FILE *f, const char *s, unsigned flags)
{
    escape_each(s ? s : "(null)", flags, put_file, f);
}

struct text_sink {
    char *out; /* NULL: counting only */
    size_t n;
};

static void
put_mem(void *arg, const char *b, size_t n)
{
    struct text_sink *k = arg;
    if (k->out != NULL)
        memcpy(k->out + k->n, b, n);
    k->n += n;
}

char *
sw_text_escape(const char *s, unsigned flags)
{
    struct text_sink k = { NULL, 0 };
    if (s == NULL)
        s = "(null)";
    escape_each(s, flags, put_mem, &k);
    char *out = malloc(k.n + 1);
    if (out == NULL)
        return NULL;
    k.out = out;
    k.n = 0;
    escape_each(s, flags, put_mem, &k);
    out[k.n] = '\0';
    return out;
}

char *
sw_text_vescapef(unsigned flags, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *line = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (line != NULL)
        vsnprintf(line, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    char *out = line != NULL ? sw_text_escape(line, flags) : NULL;
    free(line);
    return out;
}
