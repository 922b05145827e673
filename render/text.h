/* render/text.h -- the UTF-8 rule the text and JSON escapers share.
 *
 * The public escaper is rspwalk/render.h's sw_text_escape (render/text.c);
 * this is what render/json.c needs of it.  Not installed.
 */
#ifndef RSPWALK_RENDER_TEXT_H
#define RSPWALK_RENDER_TEXT_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at P (RFC 3629, section 4:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or 0; P holds
 * a NUL-terminated string, so a short sequence is not read past its end. */
size_t sw_utf8_seq_len(const unsigned char *p);

#endif /* RSPWALK_RENDER_TEXT_H */
