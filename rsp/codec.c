/* rsp/codec.c -- RSP framing as a byte pump: checksums, acks, run-length, escapes.
 *
 * Pure: bytes in, events out; no I/O, no clock.  The session owns the
 * transport and decides what to answer.  '}' escapes are NOT undone here
 * (rsp_unescape, applied by the session to binary replies only).
 */
#include "rsp/codec.h"

#include <string.h>

#include "util/util.h"

enum {
    ST_IDLE = 0, /* between packets: '+', '-', 0x03, '$', '%', or garbage */
    ST_DATA,     /* inside $...# */
    ST_COUNT,    /* after '*': the run-length count character comes next */
    ST_CS1,      /* after '#': first checksum digit */
    ST_CS2,      /* second checksum digit */
};

/* "c*N" repeats c a further N-29 times (gdb manual, "Overview": run-length encoding).  The count is
 * a printable character; '#' and '$' are never counts, so 29+3 (' ') .. 126
 * ('~', 97 repeats) is the whole legal range. */
#define RLE_BASE 29
#define RLE_MIN  ' '
#define RLE_MAX  '~'

static bool
rle_count_ok(uint8_t c)
{
    return c >= RLE_MIN && c <= RLE_MAX && c != '#' && c != '$';
}

int
rsp_dec_init(struct rsp_dec *d, size_t max_len)
{
    memset(d, 0, sizeof *d);
    d->max_len = max_len ? max_len : 1;
    /* Start small and grow on demand: most replies are a few bytes. */
    d->cap = d->max_len < 256 ? d->max_len + 1 : 256;
    d->pkt = sw_malloc(d->cap);
    if (d->pkt == NULL)
        return SW_ENOMEM;
    d->pkt[0] = 0;
    return 0;
}

void
rsp_dec_fini(struct rsp_dec *d)
{
    if (d == NULL)
        return;
    sw_free(d->pkt);
    d->pkt = NULL;
    d->pkt_len = d->cap = 0;
}

/* Make room for N more payload bytes; false past max_len (the overflow noted). */
static bool
reserve(struct rsp_dec *d, size_t n)
{
    if (d->overflow)
        return false;
    if (n > d->max_len - d->pkt_len) {
        d->overflow = true;
        return false;
    }
    if (d->pkt_len + n + 1 > d->cap) {
        size_t cap = d->cap;
        while (cap < d->pkt_len + n + 1)
            cap *= 2;
        if (cap > d->max_len + 1)
            cap = d->max_len + 1;
        uint8_t *p = sw_realloc(d->pkt, cap);
        if (p == NULL) {
            /* Out of memory is reported as an oversize packet: discarded. */
            d->overflow = true;
            return false;
        }
        d->pkt = p;
        d->cap = cap;
    }
    return true;
}

/* Append N copies of C to the payload; past max_len only note the overflow. */
static void
put(struct rsp_dec *d, uint8_t c, size_t n)
{
    if (!reserve(d, n))
        return;
    memset(d->pkt + d->pkt_len, c, n);
    d->pkt_len += n;
}

/* Append the N bytes at P, as put does one. */
static void
put_run(struct rsp_dec *d, const uint8_t *p, size_t n)
{
    if (!reserve(d, n))
        return;
    memcpy(d->pkt + d->pkt_len, p, n);
    d->pkt_len += n;
}

static void
start_packet(struct rsp_dec *d, bool notify)
{
    d->state = ST_DATA;
    d->is_notify = notify;
    d->sum = 0;
    d->pkt_len = 0;
    d->overflow = false;
    d->bad_rle = false;
}

size_t
rsp_dec_feed(struct rsp_dec *d, const uint8_t *buf, size_t len, enum rsp_dec_event *ev)
{
    *ev = RSP_DEC_NONE;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = buf[i];
        int v;
        switch (d->state) {
        case ST_IDLE:
            switch (c) {
            case '$':
                start_packet(d, false);
                break;
            case '%':
                start_packet(d, true);
                break;
            case '+':
                *ev = RSP_DEC_ACK;
                return i + 1;
            case '-':
                *ev = RSP_DEC_NAK;
                return i + 1;
            case 0x03:
                *ev = RSP_DEC_INTERRUPT;
                return i + 1;
            default:
                d->garbage++;
                break;
            }
            break;
        case ST_DATA:
            if (c != '#' && c != '$' && c != '*') {
                /* Most of a packet: a run of plain bytes, summed and kept at once. */
                size_t j = i;
                uint8_t sum = d->sum;
                while (j < len && buf[j] != '#' && buf[j] != '$' && buf[j] != '*')
                    sum = (uint8_t)(sum + buf[j++]);
                d->sum = sum;
                put_run(d, buf + i, j - i);
                i = j - 1;
                break;
            }
            if (c == '#') {
                d->state = ST_CS1;
            } else if (c == '$') {
                /* A raw '$' never appears inside a packet: the '#' was lost,
                 * so what came before is garbage and a new packet starts. */
                d->garbage += d->pkt_len + 1;
                start_packet(d, false);
            } else {
                d->sum += c; /* '*' */
                if (d->pkt_len == 0 && !d->overflow)
                    d->bad_rle = true; /* nothing to repeat */
                d->state = ST_COUNT;
            }
            break;
        case ST_COUNT:
            if (c == '#') {
                /* "*#": the count is missing; the packet ends here. */
                d->bad_rle = true;
                d->state = ST_CS1;
                break;
            }
            if (c == '$') {
                d->garbage += d->pkt_len + 1;
                start_packet(d, false);
                break;
            }
            d->sum += c;
            if (!rle_count_ok(c))
                d->bad_rle = true;
            else if (!d->bad_rle && !d->overflow && d->pkt_len > 0)
                put(d, d->pkt[d->pkt_len - 1], (size_t)(c - RLE_BASE));
            d->state = ST_DATA;
            break;
        case ST_CS1:
            if (c == '$') {
                d->garbage += d->pkt_len + 2;
                start_packet(d, false);
                break;
            }
            v = sw_hex_val(c);
            /* A bad first digit is kept as 0x10, which no second digit fixes. */
            d->cs_hi = (uint8_t)(v < 0 ? 0x10 : v);
            d->state = ST_CS2;
            break;
        case ST_CS2: {
            if (c == '$') {
                d->garbage += d->pkt_len + 3;
                start_packet(d, false);
                break;
            }
            v = sw_hex_val(c);
            bool good = v >= 0 && d->cs_hi < 0x10 && (uint8_t)(d->cs_hi << 4 | v) == d->sum;
            d->state = ST_IDLE;
            if (d->pkt != NULL)
                d->pkt[d->overflow ? 0 : d->pkt_len] = 0;
            if (d->overflow) {
                d->pkt_len = 0;
                *ev = d->is_notify ? RSP_DEC_NONE : RSP_DEC_OVERSIZE;
            } else if (!good) {
                /* Corrupt notifications are ignored silently (gdb manual,
                 * "Notification Packets"). */
                *ev = d->is_notify ? RSP_DEC_NONE : RSP_DEC_BAD_CHECKSUM;
            } else if (d->bad_rle) {
                *ev = d->is_notify ? RSP_DEC_NONE : RSP_DEC_BAD_RLE;
            } else {
                *ev = d->is_notify ? RSP_DEC_NOTIFY : RSP_DEC_PACKET;
            }
            if (*ev == RSP_DEC_NONE) {
                d->garbage++;
                break; /* keep scanning */
            }
            return i + 1;
        }
        default:
            d->state = ST_IDLE;
            break;
        }
    }
    return len;
}

long
rsp_rle_expand(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (in[i] != '*') {
            if (n >= cap)
                return -1;
            out[n++] = in[i];
            continue;
        }
        if (n == 0 || i + 1 >= len || !rle_count_ok(in[i + 1]))
            return -1;
        size_t rep = (size_t)(in[++i] - RLE_BASE);
        if (rep > cap - n)
            return -1;
        memset(out + n, out[n - 1], rep);
        n += rep;
    }
    return (long)n;
}

long
rsp_unescape(uint8_t *buf, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '}') {
            if (i + 1 >= len)
                return -1;
            buf[o++] = buf[++i] ^ 0x20;
        } else {
            buf[o++] = buf[i];
        }
    }
    return (long)o;
}

long
rsp_escape(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = in[i];
        if (c == '#' || c == '$' || c == '}' || c == '*') {
            if (cap - o < 2 || o >= cap)
                return -1;
            out[o++] = '}';
            out[o++] = c ^ 0x20;
        } else {
            if (o >= cap)
                return -1;
            out[o++] = c;
        }
    }
    return (long)o;
}

uint8_t
rsp_checksum(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint8_t sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += p[i];
    return sum;
}

long
rsp_frame(const char *payload, size_t len, char *out, size_t cap)
{
    static const char digits[] = "0123456789abcdef";
    if (cap < 4 || len > cap - 4)
        return -1;
    uint8_t sum = rsp_checksum(payload, len);
    out[0] = '$';
    memcpy(out + 1, payload, len);
    out[len + 1] = '#';
    out[len + 2] = digits[sum >> 4];
    out[len + 3] = digits[sum & 15];
    return (long)(len + 4);
}
