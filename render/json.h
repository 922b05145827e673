/* render/json.h -- the JSON string writer the documents of render/ share.
 *
 * Not a JSON library: the documents are written straight to a FILE in one
 * pass, and these are the only escaping rules they need.
 */
#ifndef RSPWALK_RENDER_JSON_H
#define RSPWALK_RENDER_JSON_H

#include <stdio.h>

/* S as a JSON string, escaped (RFC 8259, section 7), or null for NULL.
 * Bytes from 0x80 up are copied as they are: names are UTF-8 or opaque. */
void sw_json_str(FILE *f, const char *s);

#endif /* RSPWALK_RENDER_JSON_H */
