/* tests/tools/fake_transport.c -- replay an RSP transcript as a fake stub.
 *
 * The session under test writes packets; the fake decodes them with the
 * library's own codec, compares them with the transcript and queues the
 * stub's answers.  Test-only (see fake_transport.h for the format).
 */
#include "tests/tools/fake_transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rsp/codec.h"
#include "util/util.h"

enum line_kind {
    L_SEND,      /* -> */
    L_REPLY,     /* <- */
    L_NOTIFY,    /* <% */
    L_INTERRUPT, /* -! interrupt */
    L_RAW,       /* <! garbage / raw */
    L_BADSUM,    /* <! badsum */
    L_NAK,       /* <! nak */
    L_HANGUP,    /* <! hangup */
    L_SILENCE,   /* <! silence */
    L_FLOOD,     /* <! flood */
};

struct line {
    enum line_kind kind;
    unsigned char *data;
    size_t len;
    unsigned lineno;
};

struct fake_script {
    struct line *lines;
    size_t n, pos;
    size_t chunk;

    unsigned char *out; /* bytes queued for the session */
    size_t out_len, out_cap, out_pos;

    struct rsp_dec dec;
    bool noack;
    bool await_ack;     /* a reply was sent in ack mode: the session must '+' it */
    bool await_nak;     /* a bad checksum was sent: the session must '-' it */
    bool noack_on_ok;   /* the session asked for QStartNoAckMode */
    bool switch_on_ack; /* the OK to it is out: no-ack after the session's '+' */
    const struct line *last_reply;
    bool hung;
    bool broken;
    size_t written;
    char error[512];
};

struct fake_transport {
    struct rsp_transport base;
    struct fake_script *fs;
};

static void fail(struct fake_script *fs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fail(struct fake_script *fs, const char *fmt, ...)
{
    if (fs->error[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(fs->error, sizeof fs->error, fmt, ap);
        va_end(ap);
    }
    fs->broken = true;
}

/* ---- parsing -------------------------------------------------------------- */

static size_t
unescape_line(const char *s, size_t len, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' &&
            sw_hex_val((unsigned char)s[i + 2]) >= 0 && sw_hex_val((unsigned char)s[i + 3]) >= 0) {
            out[o++] = (unsigned char)(sw_hex_val((unsigned char)s[i + 2]) << 4 |
                                       sw_hex_val((unsigned char)s[i + 3]));
            i += 3;
        } else {
            out[o++] = (unsigned char)s[i];
        }
    }
    return o;
}

static bool
starts(const char *s, size_t len, const char *pre)
{
    size_t n = strlen(pre);
    return len >= n && memcmp(s, pre, n) == 0;
}

static bool
add_line(struct fake_script *fs, enum line_kind k, const char *payload, size_t len, unsigned lineno)
{
    struct line *l = realloc(fs->lines, (fs->n + 1) * sizeof *l);
    if (l == NULL)
        return false;
    fs->lines = l;
    l = &fs->lines[fs->n];
    l->kind = k;
    l->data = malloc(len + 1);
    if (l->data == NULL)
        return false;
    l->len = unescape_line(payload, len, l->data);
    l->data[l->len] = 0;
    l->lineno = lineno;
    fs->n++;
    return true;
}

struct fake_script *
fake_script_parse(const char *text)
{
    struct fake_script *fs = calloc(1, sizeof *fs);
    if (fs == NULL)
        return NULL;
    fs->chunk = 4096;
    if (rsp_dec_init(&fs->dec, 1u << 20) != 0) {
        free(fs);
        return NULL;
    }
    unsigned lineno = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *next = nl ? nl + 1 : p + len;
        lineno++;
        if (len > 0 && p[len - 1] == '\r')
            len--;
        bool ok = true;
        if (len == 0 || p[0] == '#') {
            /* comment */
        } else if (starts(p, len, "->") && (len == 2 || p[2] == ' ')) {
            ok = add_line(fs, L_SEND, p + 3, len > 3 ? len - 3 : 0, lineno);
        } else if (starts(p, len, "<-") && (len == 2 || p[2] == ' ')) {
            ok = add_line(fs, L_REPLY, p + 3, len > 3 ? len - 3 : 0, lineno);
        } else if (starts(p, len, "<% ")) {
            ok = add_line(fs, L_NOTIFY, p + 3, len - 3, lineno);
        } else if (starts(p, len, "-! interrupt")) {
            ok = add_line(fs, L_INTERRUPT, "", 0, lineno);
        } else if (starts(p, len, "<! garbage ")) {
            ok = add_line(fs, L_RAW, p + 11, len - 11, lineno);
        } else if (starts(p, len, "<! raw ")) {
            ok = add_line(fs, L_RAW, p + 7, len - 7, lineno);
        } else if (starts(p, len, "<! badsum ")) {
            ok = add_line(fs, L_BADSUM, p + 10, len - 10, lineno);
        } else if (starts(p, len, "<! badrle ")) {
            ok = add_line(fs, L_REPLY, p + 10, len - 10, lineno);
        } else if (starts(p, len, "<! flood ")) {
            ok = add_line(fs, L_FLOOD, p + 9, len - 9, lineno);
        } else if (starts(p, len, "<! nak")) {
            ok = add_line(fs, L_NAK, "", 0, lineno);
        } else if (starts(p, len, "<! hangup")) {
            ok = add_line(fs, L_HANGUP, "", 0, lineno);
        } else if (starts(p, len, "<! silence")) {
            ok = add_line(fs, L_SILENCE, p + 10, len - 10, lineno);
        } else {
            fprintf(stderr, "fake_script: line %u: cannot parse '%.*s'\n", lineno, (int)len, p);
            ok = false;
        }
        if (!ok) {
            fake_script_free(fs);
            return NULL;
        }
        p = next;
    }
    return fs;
}

struct fake_script *
fake_script_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "fake_script: cannot open %s\n", path);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf == NULL)
        return NULL;
    buf[len] = 0;
    struct fake_script *fs = fake_script_parse(buf);
    free(buf);
    return fs;
}

void
fake_script_free(struct fake_script *fs)
{
    if (fs == NULL)
        return;
    for (size_t i = 0; i < fs->n; i++)
        free(fs->lines[i].data);
    free(fs->lines);
    free(fs->out);
    rsp_dec_fini(&fs->dec);
    free(fs);
}

void
fake_script_set_chunk(struct fake_script *fs, size_t n)
{
    fs->chunk = n ? n : 1;
}

const char *
fake_script_error(const struct fake_script *fs)
{
    return fs->error;
}

bool
fake_script_done(const struct fake_script *fs)
{
    return fs->pos >= fs->n;
}

size_t
fake_script_bytes_written(const struct fake_script *fs)
{
    return fs->written;
}

/* ---- playing -------------------------------------------------------------- */

static void
queue(struct fake_script *fs, const void *p, size_t n)
{
    if (fs->out_pos == fs->out_len)
        fs->out_pos = fs->out_len = 0;
    if (fs->out_len + n > fs->out_cap) {
        size_t cap = (fs->out_len + n) * 2 + 64;
        unsigned char *o = realloc(fs->out, cap);
        if (o == NULL) {
            fail(fs, "fake: out of memory");
            return;
        }
        fs->out = o;
        fs->out_cap = cap;
    }
    memcpy(fs->out + fs->out_len, p, n);
    fs->out_len += n;
}

static void
queue_frame(struct fake_script *fs, char start, const struct line *l, bool good_sum)
{
    char tail[4];
    unsigned sum = rsp_checksum(l->data, l->len);
    if (!good_sum)
        sum = (sum + 1) & 0xff;
    snprintf(tail, sizeof tail, "#%02x", sum);
    queue(fs, &start, 1);
    queue(fs, l->data, l->len);
    queue(fs, tail, 3);
}

/* Play stub lines until the session has to do something. */
static void
run(struct fake_script *fs)
{
    while (!fs->broken && !fs->await_ack && !fs->await_nak && fs->pos < fs->n) {
        const struct line *l = &fs->lines[fs->pos];
        switch (l->kind) {
        case L_SEND:
        case L_INTERRUPT:
        case L_SILENCE:
        case L_FLOOD:
            return;
        case L_REPLY:
            queue_frame(fs, '$', l, true);
            fs->pos++;
            if (fs->noack_on_ok && l->len == 2 && memcmp(l->data, "OK", 2) == 0)
                fs->switch_on_ack = true;
            fs->noack_on_ok = false;
            if (!fs->noack) {
                fs->await_ack = true;
                fs->last_reply = l;
            } else if (fs->switch_on_ack) {
                fs->switch_on_ack = false;
            }
            break;
        case L_NOTIFY:
            queue_frame(fs, '%', l, true);
            fs->pos++;
            break;
        case L_RAW:
            queue(fs, l->data, l->len);
            fs->pos++;
            break;
        case L_BADSUM:
            queue_frame(fs, '$', l, false);
            fs->pos++;
            if (!fs->noack)
                fs->await_nak = true;
            break;
        case L_HANGUP:
            fs->hung = true;
            fs->pos++;
            return;
        case L_NAK:
            fail(fs, "transcript line %u: '<! nak' not right after a '->' line", l->lineno);
            return;
        }
    }
}

static void
got_packet(struct fake_script *fs, const unsigned char *p, size_t len)
{
    if (fs->await_ack) {
        fail(fs, "transcript line %u: the session sent '%.*s' without acking the reply",
             fs->last_reply ? fs->last_reply->lineno : 0, (int)(len > 80 ? 80 : len), p);
        return;
    }
    if (fs->pos >= fs->n) {
        fail(fs, "end of transcript: the session sent '%.*s'", (int)(len > 80 ? 80 : len), p);
        return;
    }
    const struct line *l = &fs->lines[fs->pos];
    if (l->kind != L_SEND || l->len != len || memcmp(l->data, p, len) != 0) {
        fail(fs, "transcript line %u: expected %s'%.*s', the session sent '%.*s'", l->lineno,
             l->kind == L_SEND ? "-> " : "a stub line, not ", (int)(l->len > 80 ? 80 : l->len),
             l->data, (int)(len > 80 ? 80 : len), p);
        return;
    }
    fs->pos++;
    if (len == 15 && memcmp(p, "QStartNoAckMode", 15) == 0)
        fs->noack_on_ok = true;
    if (!fs->noack) {
        if (fs->pos < fs->n && fs->lines[fs->pos].kind == L_NAK) {
            fs->pos++;
            queue(fs, "-", 1);
            return;
        }
        queue(fs, "+", 1);
    }
    run(fs);
}

static int
fake_write(struct rsp_transport *t, const void *buf, size_t len)
{
    struct fake_script *fs = ((struct fake_transport *)t)->fs;
    const unsigned char *p = buf;
    fs->written += len;
    if (fs->broken)
        return sw_fail(&t->err, SW_ECONN, "fake: %s", fs->error);
    if (fs->hung)
        return sw_fail(&t->err, SW_ECONN, "fake: the stub hung up");
    size_t off = 0;
    while (off < len && !fs->broken) {
        enum rsp_dec_event ev;
        off += rsp_dec_feed(&fs->dec, p + off, len - off, &ev);
        switch (ev) {
        case RSP_DEC_NONE:
            break;
        case RSP_DEC_ACK:
            if (fs->await_ack) {
                fs->await_ack = false;
                if (fs->switch_on_ack) {
                    fs->switch_on_ack = false;
                    fs->noack = true;
                }
                run(fs);
            } else {
                fail(fs, "transcript line %u: unexpected '+' from the session (%s mode)",
                     fs->pos < fs->n ? fs->lines[fs->pos].lineno : 0, fs->noack ? "no-ack" : "ack");
            }
            break;
        case RSP_DEC_NAK:
            if (fs->await_nak) {
                fs->await_nak = false;
                run(fs);
            } else if (fs->await_ack && fs->last_reply != NULL) {
                queue_frame(fs, '$', fs->last_reply, true);
            } else {
                fail(fs, "transcript line %u: unexpected '-' from the session",
                     fs->pos < fs->n ? fs->lines[fs->pos].lineno : 0);
            }
            break;
        case RSP_DEC_PACKET:
            got_packet(fs, fs->dec.pkt, fs->dec.pkt_len);
            break;
        case RSP_DEC_INTERRUPT:
            if (fs->pos < fs->n && fs->lines[fs->pos].kind == L_INTERRUPT) {
                fs->pos++;
                run(fs);
            } else {
                fail(fs, "transcript line %u: unexpected interrupt byte",
                     fs->pos < fs->n ? fs->lines[fs->pos].lineno : 0);
            }
            break;
        default:
            fail(fs, "the session sent a malformed packet (event %d)", (int)ev);
            break;
        }
    }
    if (fs->broken)
        return sw_fail(&t->err, SW_ECONN, "fake: %s", fs->error);
    return 0;
}

static int
fake_read(struct rsp_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got)
{
    struct fake_script *fs = ((struct fake_transport *)t)->fs;
    *got = 0;
    if (fs->broken)
        return sw_fail(&t->err, SW_ECONN, "fake: %s", fs->error);
    if (fs->out_pos < fs->out_len) {
        size_t n = fs->out_len - fs->out_pos;
        if (n > cap)
            n = cap;
        if (n > fs->chunk)
            n = fs->chunk;
        memcpy(buf, fs->out + fs->out_pos, n);
        fs->out_pos += n;
        *got = n;
        return 0;
    }
    if (fs->hung)
        return sw_fail(&t->err, SW_ECONN, "connection closed by the stub");
    if (fs->pos < fs->n && fs->lines[fs->pos].kind == L_SILENCE) {
        const struct line *l = &fs->lines[fs->pos];
        long ms = l->len > 0 ? strtol((const char *)l->data, NULL, 10) : 0;
        if (ms > 0) {
            struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };
            nanosleep(&d, NULL);
        }
        fs->pos++;
        run(fs);
        return sw_fail(&t->err, SW_ETIMEDOUT, "fake: silence");
    }
    if (fs->pos < fs->n && fs->lines[fs->pos].kind == L_FLOOD) {
        const struct line *l = &fs->lines[fs->pos];
        size_t n = cap < fs->chunk ? cap : fs->chunk;
        unsigned char *o = buf;
        for (size_t i = 0; i < n && l->len > 0; i++)
            o[i] = l->data[i % l->len];
        *got = l->len > 0 ? n : 0;
        return l->len > 0 ? 0 : sw_fail(&t->err, SW_ETIMEDOUT, "fake: empty flood");
    }
    if (fs->pos >= fs->n)
        return sw_fail(&t->err, SW_ECONN, "fake: end of transcript");
    /* A look without waiting (a timeout of 0) is no wait for the stub. */
    if (!fs->await_ack && !fs->await_nak && timeout_ms != 0) {
        const struct line *l = &fs->lines[fs->pos];
        fail(fs,
             "transcript line %u: the session waits for the stub, but the transcript expects "
             "'-> %.*s'",
             l->lineno, (int)(l->len > 80 ? 80 : l->len), l->data);
    }
    return sw_fail(&t->err, SW_ETIMEDOUT, "fake: nothing to send");
}

static void
fake_close(struct rsp_transport *t)
{
    free(t->name);
    free(t);
}

static const struct rsp_transport_ops fake_ops = {
    .write = fake_write,
    .read = fake_read,
    .close = fake_close,
};

struct rsp_transport *
fake_transport_new(struct fake_script *fs)
{
    struct fake_transport *ft = calloc(1, sizeof *ft);
    if (ft == NULL)
        return NULL;
    ft->base.ops = &fake_ops;
    ft->base.fd = -1;
    ft->base.name = strdup("fake");
    ft->fs = fs;
    run(fs);
    return &ft->base;
}
