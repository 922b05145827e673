/* dap/wire.h -- the Debug Adapter Protocol's base protocol: Content-Length framing.
 *
 * A message is "Content-Length: N\r\n" (other header lines allowed and
 * ignored), "\r\n", then N bytes of JSON.  Pure: bytes in, message bodies
 * out, no I/O and no JSON here (dap/session.c parses the bodies).
 */
#ifndef RSPWALK_DAP_WIRE_H
#define RSPWALK_DAP_WIRE_H

#include <stdbool.h>
#include <stddef.h>

/* The longest header accepted, all its lines: real ones are about 25 bytes. */
#define DAP_MAX_HEADER 4096

/* Bytes received and not yet taken as messages. */
struct dap_wire {
    char *buf; /* owned: LEN bytes pending, CAP allocated */
    size_t len, cap;
    size_t skip; /* bytes of a refused body still to drop as they come */
    size_t max_body;
    char *msg; /* owned: the last message handed out, freed by the next call */
};

/* An empty reader accepting bodies up to MAX_BODY bytes. */
void dap_wire_init(struct dap_wire *w, size_t max_body);
void dap_wire_fini(struct dap_wire *w);

/* Append LEN bytes.  Returns 0, or -1 when out of memory (nothing appended). */
int dap_wire_push(struct dap_wire *w, const void *buf, size_t len);

enum dap_wire_result {
    DAP_WIRE_MORE = 0, /* no complete message yet */
    DAP_WIRE_MESSAGE,  /* *BODY (LEN bytes, NUL-terminated) valid until the next call */
    DAP_WIRE_BAD,      /* a malformed header or a body too large: WHY says which; the
                        * bad bytes are dropped, up to the next "Content-Length:" */
};

/* Take the next message.  WHY (WHYLEN bytes) gets one line on DAP_WIRE_BAD. */
enum dap_wire_result dap_wire_next(struct dap_wire *w, const char **body, size_t *len, char *why,
                                   size_t whylen);

#endif /* RSPWALK_DAP_WIRE_H */
