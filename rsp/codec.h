/* rsp/codec.h -- RSP framing: $...#cc, acks, '}' escapes, '*' run-length, '%'.
 *
 * Pure functions over byte buffers: no I/O.  The session feeds received bytes
 * to the decoder and takes whole packets out; the encoder frames what we send.
 *
 *   $ <data> # <2 hex checksum>      checksum = sum of <data> bytes mod 256, as sent
 *   % <name>:<data> # <cs>           notification, never acknowledged
 *   +  -                             ack, nak
 *   0x03                             interrupt (from a client; not expected from stubs)
 */
#ifndef RSPWALK_RSP_CODEC_H
#define RSPWALK_RSP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rsp_dec_event {
    RSP_DEC_NONE = 0,     /* all input consumed, no event yet */
    RSP_DEC_PACKET,       /* a packet with a good checksum: payload in pkt/pkt_len */
    RSP_DEC_NOTIFY,       /* a '%' notification with a good checksum: payload in pkt */
    RSP_DEC_ACK,          /* '+' */
    RSP_DEC_NAK,          /* '-' */
    RSP_DEC_BAD_CHECKSUM, /* a packet whose checksum did not match: answer '-' */
    RSP_DEC_OVERSIZE,     /* a packet longer than the limit: discarded */
    RSP_DEC_BAD_RLE,      /* a run-length sequence that cannot be decoded: discarded */
    RSP_DEC_INTERRUPT,    /* a raw 0x03 outside a packet */
};

/* Decoder state.  Fields other than pkt/pkt_len are private. */
struct rsp_dec {
    uint8_t *pkt; /* owned: the decoded payload (run-lengths expanded, '}'
                   * escapes NOT undone), NUL-terminated */
    size_t pkt_len;
    size_t max_len; /* decoded payload limit */
    size_t cap;
    int state;
    uint8_t sum;
    uint8_t cs_hi;
    bool is_notify;
    bool overflow;
    bool bad_rle;
    size_t garbage; /* bytes skipped outside packets, for stats */
};

/* Initialise D with a payload limit of MAX_LEN bytes.  Returns 0 or SW_ENOMEM. */
int rsp_dec_init(struct rsp_dec *d, size_t max_len);
void rsp_dec_fini(struct rsp_dec *d);

/* Feed up to LEN bytes from BUF.  Stops after the first event and stores it
 * in *EV (RSP_DEC_NONE if none).  Returns the bytes consumed; call again with
 * the rest.  The payload of a PACKET/NOTIFY event is valid until the next feed. */
size_t rsp_dec_feed(struct rsp_dec *d, const uint8_t *buf, size_t len, enum rsp_dec_event *ev);

/* Expand run-length encoding in place semantics: decode IN (LEN bytes, as
 * received between '$' and '#') into OUT (CAP bytes).  "c*N" repeats c a
 * further N-29 times.  Returns the decoded length, or -1 on a malformed run
 * or overflow.  (The decoder applies this itself; exposed for tests.) */
long rsp_rle_expand(const uint8_t *in, size_t len, uint8_t *out, size_t cap);

/* Undo '}' escapes of binary data in place ("}X" -> X ^ 0x20).  Returns the
 * new length, or -1 if the data ends in a lone '}'. */
long rsp_unescape(uint8_t *buf, size_t len);

/* Escape binary data: '#', '$', '}' and '*' become '}' followed by byte^0x20.
 * Writes at most CAP bytes to OUT; returns the escaped length, or -1 if CAP
 * is too small (2*LEN always suffices). */
long rsp_escape(const uint8_t *in, size_t len, uint8_t *out, size_t cap);

/* Frame PAYLOAD (LEN bytes, already escaped where needed) as "$...#cc" into
 * OUT of CAP bytes (LEN + 4 suffice).  Returns the frame length or -1. */
long rsp_frame(const char *payload, size_t len, char *out, size_t cap);

/* The checksum of LEN bytes. */
uint8_t rsp_checksum(const void *buf, size_t len);

#endif /* RSPWALK_RSP_CODEC_H */
