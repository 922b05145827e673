/* render/json.h -- the JSON string writer the documents of render/ share.
 *
 * Not a JSON library: the documents are written straight to a FILE in one
 * pass, and these are the only escaping rules they need.
 */
#ifndef RSPWALK_RENDER_JSON_H
#define RSPWALK_RENDER_JSON_H

#include <stddef.h>
#include <stdio.h>

/* S as a JSON string, escaped (RFC 8259, section 7), or null for NULL.
 * Bytes from 0x80 up are copied as they are: names are UTF-8 or opaque. */
void sw_json_str(FILE *f, const char *s);

/* The length of the well-formed UTF-8 sequence at P (RFC 3629, section 4:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or 0; P holds
 * a NUL-terminated string, so a short sequence is not read past its end.
 * Shared with the text escaper (render/text.c). */
size_t sw_utf8_seq_len(const unsigned char *p);

#endif /* RSPWALK_RENDER_JSON_H */
