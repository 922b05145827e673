/* rsp/exchange.c -- the request/reply engine: packets out, replies in, acks, counters.
 *
 * Every packet we send goes through here: it is framed, counted and traced;
 * '+'/'-' are handled in ack mode, every request has a deadline that only
 * its own reply meets (acks, notifications, console output and stray stop
 * replies on the way do not move it), so has the run (x->run_deadline_us),
 * and empty and 'E' replies become codes.  What each packet means lives in the
 * rsp/ files above (they take the session); the bytes on the wire live in
 * transport*.c.  What those files add comes in through the hooks
 * (exchange.h), never by a call from here.
 */
#include "rsp/exchange.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pkt_row {
    const char *wire;
    int gate;
    enum rsp_reply_kind reply;
};

static const struct pkt_row pkt_rows[] = {
#define RSP_PKT(id, wire, gate, reply) [RSP_PKT_##id] = { wire, gate, reply },
#include "rsp/packets.def"
#undef RSP_PKT
};

_Static_assert(RSP_PKT__COUNT <= sizeof(((struct rsp_stats *)0)->by_kind) / sizeof(uint64_t),
               "rsp_stats.by_kind has a slot for every packet kind");

const char *
rsp_pkt_wire(enum rsp_pkt kind)
{
    return kind < RSP_PKT__COUNT ? pkt_rows[kind].wire : "?";
}

void
rsp_pkt_label(const char *payload, size_t len, char *buf, size_t cap)
{
    /* Long packets (qSupported, qXfer) are cut: the head names them. */
    size_t max = 60;
    size_t n = len < max ? len : max;
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)payload[i];
        if (c >= 0x20 && c < 0x7f)
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
    }
    if (len > n && o + 4 < cap) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o < cap ? o : cap - 1] = '\0';
}

/* ---- the exchange's lifetime ------------------------------------------- */

int
rsp_exchange_init(struct rsp_exchange *x, struct rsp_transport *t, struct sw_errbuf *err,
                  int timeout_ms, bool trace)
{
    x->t = t;
    x->err = err;
    x->timeout_ms = timeout_ms;
    x->trace = trace;
    sw_buf_init(&x->raw);
    sw_buf_init(&x->out);
    sw_buf_init(&x->pending);
    return rsp_dec_init(&x->dec, RSP_REPLY_MIN_LIMIT) != 0 ? SW_ENOMEM : 0;
}

void
rsp_exchange_set_deadline(struct rsp_exchange *x, int ms)
{
    x->run_deadline_ms = ms > 0 ? ms : 0;
    x->run_deadline_us = ms > 0 ? sw_now_us() + (uint64_t)ms * 1000 : 0;
}

void
rsp_exchange_fini(struct rsp_exchange *x)
{
    rsp_transport_close(x->t);
    x->t = NULL;
    rsp_dec_fini(&x->dec);
    sw_buf_fini(&x->raw);
    sw_buf_fini(&x->out);
    sw_buf_fini(&x->pending);
}

int
rsp_exchange_limit_replies(struct rsp_exchange *x)
{
    size_t lim = x->packet_size * 4;
    if (lim < RSP_REPLY_MIN_LIMIT)
        lim = RSP_REPLY_MIN_LIMIT;
    if (lim > RSP_REPLY_MAX_LIMIT)
        lim = RSP_REPLY_MAX_LIMIT;
    rsp_dec_fini(&x->dec);
    return rsp_dec_init(&x->dec, lim) != 0 ? SW_ENOMEM : 0;
}

bool
rsp_exchange_unread(const struct rsp_exchange *x)
{
    return x->rpos < x->rlen || x->has_pending;
}

void
rsp_exchange_changed(struct rsp_exchange *x)
{
    if (x->hooks.changed != NULL)
        x->hooks.changed(x->hooks.arg);
}

/* ---- trace ------------------------------------------------------------- */

/* One trace line: DIR then the payload, non-printable bytes and '\' as \xNN,
 * which is the transcript format read by tests/tools/fake_transport.c. */
static void
trace_line(const char *dir, const void *payload, size_t len)
{
    struct sw_buf b;
    const uint8_t *p = payload;
    sw_buf_init(&b);
    if (sw_buf_append(&b, dir, strlen(dir)) != 0)
        goto out;
    for (size_t i = 0; i < len; i++) {
        int rc;
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
            rc = sw_buf_append(&b, &p[i], 1);
        else
            rc = sw_buf_printf(&b, "\\x%02x", p[i]);
        if (rc != 0)
            goto out;
    }
    if (sw_buf_terminate(&b) == 0)
        sw_debug_printf("%s", b.data);
out:
    sw_buf_fini(&b);
}

/* Keep the bytes of the current frame as received (before run-length
 * expansion) so the trace shows what the stub sent. */
static void
trace_raw(struct rsp_exchange *x, const uint8_t *p, size_t n)
{
    /* A small frame scanner of its own: '%' and '$'... are data or run-length
     * counts inside a frame, so only a '$'/'%' between frames starts one. */
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (x->raw_state == 0) {
            if (c != '$' && c != '%')
                continue;
            x->raw.len = 0;
            x->raw_state = 1;
        } else if (x->raw_state == 1 && c == '$') {
            x->raw.len = 0; /* a lost '#': the decoder restarts here too */
        } else if (x->raw_state == 1 && c == '#') {
            x->raw_state = 2;
        } else if (x->raw_state >= 2) {
            x->raw_state = x->raw_state == 2 ? 3 : 0;
        }
        if (x->raw.len < x->dec.max_len + 8)
            (void)sw_buf_append(&x->raw, &c, 1);
    }
}

/* The payload of the frame just decoded, as sent: between '$'/'%' and '#'. */
static void
trace_received(struct rsp_exchange *x, const char *dir)
{
    if (x->raw.len >= 4 && (x->raw.data[0] == '$' || x->raw.data[0] == '%'))
        trace_line(dir, x->raw.data + 1, x->raw.len - 4);
    else
        trace_line(dir, x->dec.pkt, x->dec.pkt_len);
    x->raw.len = 0;
}

/* RSPWALK_DEBUG=time without pkt: a short line per packet, for a timeline
 * of where a run waits and where it works. */
static void
trace_short(const struct rsp_exchange *x, const char *dir, const char *payload, size_t len)
{
    char label[96];
    if (x->trace || !(sw_debug_mask() & SW_DBG_TIME))
        return;
    rsp_pkt_label(payload, len, label, 40);
    sw_debug_printf("%s%s (%zu bytes)", dir, label, len);
}

/* ---- the wire ------------------------------------------------------------ */

/* "3", "1.5": seconds for messages. */
static void
secs(char *buf, size_t cap, int ms)
{
    snprintf(buf, cap, "%g", ms / 1000.0);
}

/* Milliseconds a write or a wait may take from now: the request's timeout,
 * cut to what is left of the run's deadline (*BY_RUN then true; 0 once it
 * has passed). */
static int
time_left(const struct rsp_exchange *x, int timeout_ms, bool *by_run)
{
    *by_run = false;
    if (x->run_deadline_us == 0)
        return timeout_ms;
    uint64_t now = sw_now_us();
    uint64_t left = now >= x->run_deadline_us ? 0 : (x->run_deadline_us - now + 999) / 1000;
    if (left < (uint64_t)timeout_ms) {
        *by_run = true;
        return (int)left;
    }
    return timeout_ms;
}

static int
wire_write(struct rsp_exchange *x, const void *buf, size_t len, const char *label)
{
    bool by_run;
    int left = time_left(x, x->timeout_ms, &by_run);
    if (x->wait_deadline_us != 0) {
        /* An ack or a resend within a wait: the wait's own deadline. */
        uint64_t now = sw_now_us();
        uint64_t w = now >= x->wait_deadline_us ? 0 : (x->wait_deadline_us - now + 999) / 1000;
        if (w < (uint64_t)left)
            left = w > 0 ? (int)w : 1;
    }
    if (left == 0 && by_run) {
        char s[32];
        secs(s, sizeof s, x->run_deadline_ms);
        return sw_fail(x->err, SW_ETIMEDOUT, "'%s' not sent: the run's deadline of %s s has passed",
                       label, s);
    }
    /* A stub that reads nothing must not block us: the write has the time
     * its reply would have. */
    x->t->write_timeout_ms = left;
    uint64_t t0 = sw_now_us();
    int rc = x->t->ops->write(x->t, buf, len);
    x->stats.elapsed_us += sw_now_us() - t0;
    if (rc < 0)
        return sw_fail(x->err, rc, "sending '%s': %s", label, x->t->err.msg);
    x->stats.bytes_sent += len;
    return 0;
}

static int
send_ack(struct rsp_exchange *x, char c, const char *label)
{
    return wire_write(x, &c, 1, label);
}

/* Frame PAYLOAD into x->out and write it. */
static int
send_frame(struct rsp_exchange *x, const char *payload, size_t len, const char *label)
{
    if (x->out.cap < len + 4) {
        char *p = sw_realloc(x->out.data, len + 4);
        if (p == NULL)
            return sw_fail(x->err, SW_ENOMEM, "sending '%s': out of memory", label);
        x->out.data = p;
        x->out.cap = len + 4;
    }
    long n = rsp_frame(payload, len, x->out.data, x->out.cap);
    if (n < 0)
        return sw_fail(x->err, SW_EINVAL, "sending '%s': cannot frame", label);
    if (x->trace)
        trace_line("-> ", payload, len);
    trace_short(x, "-> ", payload, len);
    x->stats.packets_sent++;
    return wire_write(x, x->out.data, (size_t)n, label);
}

/* Wait for a packet (not an ack) after having sent LABEL.  RETRANSMIT
 * re-sends our packet on '-' (NULL: a '-' is unexpected).  SKIP_CONSOLE
 * skips 'O' packets.  ACK_ONLY returns as soon as our packet is acked.
 * NO_STOP: no stop reply answers the request (a 'T'/'S' packet is a stray
 * stop, a 'W'/'X' the process's end, an 'O' console output).  BARE: LABEL
 * names what is waited for ("stop reply") rather than a request. */
struct waiter {
    const char *label;
    const char *payload; /* for retransmits; NULL if none */
    size_t len;
    bool skip_console;
    bool ack_only;
    int timeout_ms;
    bool no_stop;
    bool bare;
};

/* What came during one wait and did not end it, for the message at its expiry. */
struct wait_noise {
    size_t acks, naks, intrs, notes, console, stops;
};

static void
noise_add(char *buf, size_t cap, size_t *o, size_t n, const char *one, const char *many)
{
    if (n == 0 || *o >= cap)
        return;
    int k = snprintf(buf + *o, cap - *o, "%s%zu %s", *o ? ", " : " (", n, n == 1 ? one : many);
    if (k > 0)
        *o += (size_t)k;
}

/* The expiry of wait W: one line naming the request and what kept coming. */
static int
wait_expired(struct rsp_exchange *x, const struct waiter *w, bool by_run, size_t junk,
             const struct wait_noise *n)
{
    char what[140], within[64], extra[200];
    size_t o = 0;
    if (w->bare)
        snprintf(what, sizeof what, "%s", w->label);
    else
        snprintf(what, sizeof what, "%s '%s'", w->ack_only ? "ack of" : "reply to", w->label);
    char s[32];
    secs(s, sizeof s, by_run ? x->run_deadline_ms : w->timeout_ms);
    if (by_run)
        snprintf(within, sizeof within, "the run's deadline of %s s", s);
    else
        snprintf(within, sizeof within, "%s s", s);
    extra[0] = '\0';
    noise_add(extra, sizeof extra, &o, junk, "byte of garbage", "bytes of garbage");
    noise_add(extra, sizeof extra, &o, n->acks, "ack", "acks");
    noise_add(extra, sizeof extra, &o, n->naks, "stray nak", "stray naks");
    noise_add(extra, sizeof extra, &o, n->intrs, "interrupt byte", "interrupt bytes");
    noise_add(extra, sizeof extra, &o, n->notes, "notification", "notifications");
    noise_add(extra, sizeof extra, &o, n->console, "console packet", "console packets");
    noise_add(extra, sizeof extra, &o, n->stops, "stray stop reply", "stray stop replies");
    if (o > 0 && o + 1 < sizeof extra)
        memcpy(extra + o, ")", 2);
    return sw_fail(x->err, SW_ETIMEDOUT, "no %s within %s%s", what, within, extra);
}

/* The next decoder event, reading the transport as needed until DEADLINE. */
static int
next_event(struct rsp_exchange *x, const struct waiter *w, uint64_t deadline_us, bool by_run,
           size_t garbage0, const struct wait_noise *noise, enum rsp_dec_event *ev)
{
    const char *label = w->label;
    for (;;) {
        if (x->rpos < x->rlen) {
            size_t n = rsp_dec_feed(&x->dec, x->rbuf + x->rpos, x->rlen - x->rpos, ev);
            if (x->trace)
                trace_raw(x, x->rbuf + x->rpos, n);
            x->rpos += n;
            if (*ev != RSP_DEC_NONE)
                return 0;
            continue;
        }
        uint64_t now = sw_now_us();
        int rc = SW_ETIMEDOUT;
        size_t got = 0;
        if (now < deadline_us) {
            uint64_t left_ms = (deadline_us - now + 999) / 1000;
            rc = x->t->ops->read(x->t, x->rbuf, sizeof x->rbuf, (int)left_ms, &got);
            x->stats.elapsed_us += sw_now_us() - now;
        }
        if (rc == SW_ETIMEDOUT)
            return wait_expired(x, w, by_run, x->dec.garbage - garbage0, noise);
        if (rc < 0) {
            bool mid = x->dec.state != 0;
            return sw_fail(x->err, rc, "waiting for the reply to '%s': %s%s", label, x->t->err.msg,
                           mid ? " (in the middle of a packet)" : "");
        }
        x->stats.bytes_received += got;
        x->rpos = 0;
        x->rlen = got;
    }
}

static bool
is_console(const uint8_t *p, size_t len)
{
    /* "O<hex>" console output and OpenOCD's empty "O" keep-alive; "OK" and
     * other text that starts with 'O' are not. */
    if (len < 1 || p[0] != 'O' || len % 2 == 0)
        return false;
    for (size_t i = 1; i < len; i++)
        if (sw_hex_val(p[i]) < 0)
            return false;
    return true;
}

/* "T05...", "S02": a stop reply, which no other request is answered with
 * (their replies are hex, "OK", "E", 'l'/'m' or text of another shape). */
static bool
is_stop_reply(const uint8_t *p, size_t len)
{
    return len >= 3 && (p[0] == 'T' || p[0] == 'S') && sw_hex_val(p[1]) >= 0 &&
           sw_hex_val(p[2]) >= 0 && (len == 3 || p[0] == 'T');
}

/* "W00", "X09;process:1f": the process's end, which no request other than
 * a resume or '?' is answered with. */
static bool
is_exit_reply(const uint8_t *p, size_t len)
{
    return len >= 3 && (p[0] == 'W' || p[0] == 'X') && sw_hex_val(p[1]) >= 0 &&
           sw_hex_val(p[2]) >= 0 && (len == 3 || p[3] == ';');
}

static int wait_packet_1(struct rsp_exchange *x, const struct waiter *w, bool *got_packet);

/* Every read of the link goes through here: afterwards the changed hook
 * learns what is left unread (the event descriptor, rsp/event_fd.c). */
static int
wait_packet(struct rsp_exchange *x, const struct waiter *w, bool *got_packet)
{
    int rc = wait_packet_1(x, w, got_packet);
    x->wait_deadline_us = 0;
    rsp_exchange_changed(x);
    return rc;
}

static int
wait_packet_1(struct rsp_exchange *x, const struct waiter *w, bool *got_packet)
{
    int naks = 0, bad = 0;
    size_t garbage0 = x->dec.garbage;
    struct wait_noise noise = { 0 };
    /* One deadline for the whole wait, set here and never moved: only the
     * packet waited for meets it.  Timeout 0 is a poll
     * (handle_debug_event(false)): it still reads what has arrived, for
     * which the deadline must not have passed already. */
    bool by_run;
    int ms = time_left(x, w->timeout_ms > 0 ? w->timeout_ms : 1, &by_run);
    uint64_t deadline = sw_now_us() + (uint64_t)ms * 1000;
    x->wait_deadline_us = deadline;
    *got_packet = false;
    if (w->ack_only && x->noack)
        return 0;
    for (;;) {
        enum rsp_dec_event ev;
        int rc = next_event(x, w, deadline, by_run, garbage0, &noise, &ev);
        if (rc < 0)
            return rc;
        switch (ev) {
        case RSP_DEC_ACK:
            if (w->ack_only)
                return 0;
            noise.acks++;
            break;
        case RSP_DEC_NAK:
            if (w->payload == NULL || x->noack) {
                noise.naks++;
                break; /* a stray '-': nothing of ours to resend */
            }
            if (++naks > RSP_MAX_RETRIES)
                return sw_fail(x->err, SW_EPROTO, "sending '%s': the stub refused it %d times",
                               w->label, naks);
            x->stats.retransmits++;
            if ((rc = send_frame(x, w->payload, w->len, w->label)) < 0)
                return rc;
            break;
        case RSP_DEC_PACKET:
            x->stats.packets_received++;
            if (x->trace)
                trace_received(x, "<- ");
            trace_short(x, "<- ", (const char *)x->dec.pkt, x->dec.pkt_len);
            if (!x->noack && (rc = send_ack(x, '+', w->label)) < 0)
                return rc;
            if ((w->skip_console || w->no_stop) && is_console(x->dec.pkt, x->dec.pkt_len)) {
                noise.console++; /* console output, never a request's reply */
                break;
            }
            /* Not a stop we wait for: a reply to another request, or what
             * comes before the ack of a resume (a stop after it comes after). */
            if ((w->no_stop || (x->intr_unanswered && (!w->skip_console || w->ack_only))) &&
                is_stop_reply(x->dec.pkt, x->dec.pkt_len)) {
                x->intr_unanswered = false; /* the stub's late answer to our 0x03 */
                x->stats.stray_stops++;
                noise.stops++;
                if (x->trace)
                    sw_debug_printf("-! a stop reply in place of the reply to '%s', set aside",
                                    w->label);
                if (x->hooks.stray_stop != NULL)
                    x->hooks.stray_stop(x->hooks.arg, x->dec.pkt, x->dec.pkt_len);
                break;
            }
            if (w->no_stop && is_exit_reply(x->dec.pkt, x->dec.pkt_len))
                return sw_fail(
                    x->err, SW_EEXITED, "'%s': the process has %s (the stub replied %.*s)",
                    w->label, x->dec.pkt[0] == 'W' ? "exited" : "been killed",
                    (int)(x->dec.pkt_len > 40 ? 40 : x->dec.pkt_len), (const char *)x->dec.pkt);
            *got_packet = true;
            return 0;
        case RSP_DEC_NOTIFY:
            x->stats.notifications++;
            noise.notes++;
            if (x->trace)
                trace_received(x, "<% ");
            /* Non-stop: a stop, queued by the hook whatever we wait for. */
            if (x->hooks.notify != NULL &&
                x->hooks.notify(x->hooks.arg, x->dec.pkt, x->dec.pkt_len) && x->notify_waiting)
                return 0;
            break;
        case RSP_DEC_BAD_CHECKSUM:
        case RSP_DEC_BAD_RLE:
            x->stats.packets_received++;
            if (x->trace)
                trace_received(x, ev == RSP_DEC_BAD_CHECKSUM ? "<! badsum " : "<! badrle ");
            if (x->noack)
                return sw_fail(x->err, SW_EPROTO, "reply to '%s': %s (no-ack mode: no resend)",
                               w->label,
                               ev == RSP_DEC_BAD_CHECKSUM ? "bad checksum" : "bad run-length");
            if (++bad > RSP_MAX_RETRIES)
                return sw_fail(x->err, SW_EPROTO, "reply to '%s': %s %d times", w->label,
                               ev == RSP_DEC_BAD_CHECKSUM ? "bad checksum" : "bad run-length", bad);
            if ((rc = send_ack(x, '-', w->label)) < 0)
                return rc;
            break;
        case RSP_DEC_OVERSIZE:
            x->stats.packets_received++;
            /* Acknowledge so the stub does not resend what we cannot hold. */
            if (!x->noack && (rc = send_ack(x, '+', w->label)) < 0)
                return rc;
            return sw_fail(x->err, SW_EPROTO, "reply to '%s': longer than %zu bytes", w->label,
                           x->dec.max_len);
        case RSP_DEC_INTERRUPT:
            noise.intrs++;
            break;
        case RSP_DEC_NONE:
            break;
        }
    }
}

/* Whether no stop reply answers KIND: every request but '?', the attaches
 * and vStopped (stop replies), the resumes, and what a front end passes
 * through (whatever its packet is). */
static bool
no_stop(enum rsp_pkt kind)
{
    enum rsp_reply_kind r = pkt_rows[kind].reply;
    return r != RSP_R_STOP && r != RSP_R_NONE && kind != RSP_PKT_PASS;
}

static int
gate(struct rsp_exchange *x, enum rsp_pkt kind, const char *label)
{
    int g = pkt_rows[kind].gate;
    if (x->unsup[kind])
        return sw_fail(x->err, SW_EUNSUP, "'%s': not supported by the stub (empty reply earlier)",
                       label);
    if (g != RSP_GATE_NONE && !x->feat[g])
        return sw_fail(x->err, SW_EUNSUP, "'%s': not offered by the stub in qSupported", label);
    return 0;
}

/* "E NN" or "E.text": the stub's error. */
static bool
is_error_reply(const char *p, size_t len)
{
    if (len >= 2 && p[0] == 'E' && p[1] == '.')
        return true;
    return len == 3 && p[0] == 'E' && sw_hex_val((unsigned char)p[1]) >= 0 &&
           sw_hex_val((unsigned char)p[2]) >= 0;
}

/* The verdict on reply R to KIND, as rsp_request gives it. */
static int
judge_reply(struct rsp_exchange *x, enum rsp_pkt kind, const char *label, const struct rsp_reply *r)
{
    if (r->len == 0) {
        /* Empty means unsupported; generic qXfer objects are judged one by one. */
        if (kind != RSP_PKT_XFER_OTHER && kind != RSP_PKT_PASS)
            x->unsup[kind] = true;
        return sw_fail(x->err, SW_EUNSUP, "'%s': not supported by the stub (empty reply)", label);
    }
    if (is_error_reply(r->p, r->len))
        return sw_fail(x->err, SW_ESTUB, "'%s': stub replied %.*s", label,
                       (int)(r->len > 200 ? 200 : r->len), r->p);
    return 0;
}

/* Whether a reply has begun to arrive: bytes read ahead, or the link readable
 * now.  True when the transport has no descriptor to ask (nothing is known). */
static bool
reply_arriving(struct rsp_exchange *x)
{
    if (x->rpos < x->rlen || x->t->fd < 0)
        return true;
    struct pollfd pfd = { .fd = x->t->fd, .events = POLLIN };
    return poll(&pfd, 1, 0) != 0;
}

/* The caller's work while a reply is on its way: WHILE_FN(ARG), one bounded
 * piece at a time, until it has nothing left or the reply is here (so the
 * work never delays the reply by more than one piece).  Without a
 * descriptor to ask, every piece is done. */
static void
idle_while(struct rsp_exchange *x, bool (*while_fn)(void *), void *arg)
{
    if (while_fn == NULL)
        return;
    bool unknown = x->t->fd < 0;
    while ((unknown || !reply_arriving(x)) && while_fn(arg))
        ;
}

/* rsp_request, doing the caller's work (idle_while) once the packet is out. */
static int
request_1(struct rsp_exchange *x, enum rsp_pkt kind, const char *payload, size_t len,
          struct rsp_reply *r, bool (*while_fn)(void *), void *while_arg)
{
    char label[96];
    bool got;
    int rc;
    rsp_pkt_label(payload, len, label, sizeof label);
    r->p = NULL;
    r->len = 0;
    if ((rc = gate(x, kind, label)) < 0)
        return rc;
    /* Asked for ahead of time in this stop (rsp/prefetch.c): no packet. */
    if (x->hooks.lookup_reply != NULL && x->hooks.lookup_reply(x->hooks.arg, payload, len, r)) {
        x->stats.cached_replies++;
        return judge_reply(x, kind, label, r);
    }
    x->stats.by_kind[kind]++;
    x->stats.round_trips++;
    if ((rc = send_frame(x, payload, len, label)) < 0)
        return rc;
    idle_while(x, while_fn, while_arg);
    struct waiter w = { label, payload,       len,           pkt_rows[kind].reply == RSP_R_STOP,
                        false, x->timeout_ms, no_stop(kind), false };
    if ((rc = wait_packet(x, &w, &got)) < 0)
        return rc;
    r->p = (const char *)x->dec.pkt;
    r->len = x->dec.pkt_len;
    return judge_reply(x, kind, label, r);
}

int
rsp_request(struct rsp_exchange *x, enum rsp_pkt kind, const char *payload, size_t len,
            struct rsp_reply *r)
{
    return request_1(x, kind, payload, len, r, NULL, NULL);
}

int
rsp_request_pair(struct rsp_exchange *x, enum rsp_pkt k1, const char *p1, size_t l1, char *r1,
                 size_t r1cap, size_t *r1len, enum rsp_pkt k2, const char *p2, size_t l2,
                 struct rsp_reply *r2)
{
    char label1[96], label2[96];
    bool got;
    int rc;
    rsp_pkt_label(p1, l1, label1, sizeof label1);
    rsp_pkt_label(p2, l2, label2, sizeof label2);
    r2->p = NULL;
    r2->len = 0;
    *r1len = 0;
    if (!x->pipeline || !x->noack)
        return sw_fail(x->err, SW_EINVAL, "'%s' with '%s': no pipelining on this link", label1,
                       label2);
    if ((rc = gate(x, k1, label1)) < 0 || (rc = gate(x, k2, label2)) < 0)
        return rc;
    size_t need = l1 + l2 + 8;
    if (x->out.cap < need) {
        char *p = sw_realloc(x->out.data, need);
        if (p == NULL)
            return sw_fail(x->err, SW_ENOMEM, "sending '%s': out of memory", label1);
        x->out.data = p;
        x->out.cap = need;
    }
    long n1 = rsp_frame(p1, l1, x->out.data, x->out.cap);
    long n2 = n1 < 0 ? -1 : rsp_frame(p2, l2, x->out.data + n1, x->out.cap - (size_t)n1);
    if (n1 < 0 || n2 < 0)
        return sw_fail(x->err, SW_EINVAL, "sending '%s': cannot frame", label1);
    if (x->trace) {
        trace_line("-> ", p1, l1);
        trace_line("-> ", p2, l2);
    }
    trace_short(x, "-> ", p1, l1);
    trace_short(x, "-> ", p2, l2);
    x->stats.by_kind[k1]++;
    x->stats.by_kind[k2]++;
    x->stats.round_trips++;
    x->stats.packets_sent += 2;
    if ((rc = wire_write(x, x->out.data, (size_t)(n1 + n2), label1)) < 0)
        return rc;
    struct waiter w1 = { label1, NULL, 0, false, false, x->timeout_ms, no_stop(k1), false };
    if ((rc = wait_packet(x, &w1, &got)) < 0)
        return rc;
    struct rsp_reply first = { (const char *)x->dec.pkt, x->dec.pkt_len };
    *r1len = first.len < r1cap ? first.len : r1cap;
    memcpy(r1, first.p, *r1len);
    int rc1 = judge_reply(x, k1, label1, &first);
    struct waiter w2 = { label2, NULL, 0, false, false, x->timeout_ms, no_stop(k2), false };
    if ((rc = wait_packet(x, &w2, &got)) < 0)
        return rc;
    r2->p = (const char *)x->dec.pkt;
    r2->len = x->dec.pkt_len;
    if (rc1 < 0 && rc1 != SW_EUNSUP)
        return rc1;
    rc = judge_reply(x, k2, label2, r2);
    return rc < 0 ? rc : rc1;
}

/* Frame items [I, J) of ITEMS into x->out: how many fit in one write of at
 * most one PacketSize (the stub reads into a buffer of that size: cap the
 * bytes in flight), at least one.  *LEN: the bytes framed. */
static size_t
frame_run(struct rsp_exchange *x, const struct rsp_batch_item *items, size_t i, size_t n,
          size_t *len)
{
    size_t j = i, used = 0;
    while (j < n) {
        size_t need = items[j].len + 4;
        if (j > i && used + need > x->packet_size)
            break;
        if (x->out.cap < used + need) {
            size_t cap = (used + need) * 2;
            char *p = sw_realloc(x->out.data, cap);
            if (p == NULL)
                break;
            x->out.data = p;
            x->out.cap = cap;
        }
        long k = rsp_frame(items[j].payload, items[j].len, x->out.data + used, x->out.cap - used);
        if (k < 0)
            break;
        used += (size_t)k;
        j++;
    }
    *len = used;
    return j - i;
}

int
rsp_request_batch(struct rsp_exchange *x, const struct rsp_batch_item *items, size_t n,
                  rsp_batch_fn fn, void *arg)
{
    return rsp_request_batch_while(x, items, n, fn, arg, NULL, NULL);
}

int
rsp_request_batch_while(struct rsp_exchange *x, const struct rsp_batch_item *items, size_t n,
                        rsp_batch_fn fn, void *arg, bool (*while_fn)(void *), void *while_arg)
{
    char label[96];
    bool got;
    int rc, first_err = 0;
    if (!x->pipeline || !x->noack) {
        /* One request at a time: the work goes while the first is on its way. */
        for (size_t i = 0; i < n; i++) {
            struct rsp_reply r;
            rc = request_1(x, items[i].kind, items[i].payload, items[i].len, &r,
                           i == 0 ? while_fn : NULL, while_arg);
            if (rc < 0 && rc != SW_EUNSUP && rc != SW_ESTUB)
                return rc;
            if ((rc = fn(arg, i, rc, &r)) < 0)
                return rc;
        }
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = gate(x, items[i].kind, "batch")) < 0)
            return sw_fail(x->err, rc, "'%s' in a batch: %s", rsp_pkt_wire(items[i].kind),
                           x->err->msg);
    for (size_t i = 0; i < n;) {
        size_t len, k = frame_run(x, items, i, n, &len);
        if (k == 0)
            return sw_fail(x->err, SW_ENOMEM, "sending a batch of %zu requests: out of memory",
                           n - i);
        rsp_pkt_label(items[i].payload, items[i].len, label, sizeof label);
        for (size_t j = i; j < i + k; j++) {
            if (x->trace)
                trace_line("-> ", items[j].payload, items[j].len);
            trace_short(x, "-> ", items[j].payload, items[j].len);
            x->stats.by_kind[items[j].kind]++;
        }
        x->stats.round_trips++;
        x->stats.packets_sent += k;
        if ((rc = wire_write(x, x->out.data, len, label)) < 0)
            return rc;
        /* The caller's work while the first write's replies are on their way. */
        idle_while(x, while_fn, while_arg);
        while_fn = NULL;
        /* Every reply is read, in order, even after a failure, so the next
         * request meets its own reply. */
        for (size_t j = i; j < i + k; j++) {
            rsp_pkt_label(items[j].payload, items[j].len, label, sizeof label);
            struct waiter w = { label, NULL, 0, false, false, x->timeout_ms, no_stop(items[j].kind),
                                false };
            if ((rc = wait_packet(x, &w, &got)) < 0)
                return rc;
            struct rsp_reply r = { (const char *)x->dec.pkt, x->dec.pkt_len };
            rc = judge_reply(x, items[j].kind, label, &r);
            rc = fn(arg, j, rc, &r);
            if (rc < 0 && first_err == 0)
                first_err = rc;
        }
        if (first_err < 0)
            return first_err;
        i += k;
    }
    return 0;
}

int
rsp_requestf(struct rsp_exchange *x, enum rsp_pkt kind, struct rsp_reply *r, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf)
        return sw_fail(x->err, SW_EINVAL, "'%s': packet too long", rsp_pkt_wire(kind));
    return rsp_request(x, kind, buf, (size_t)n, r);
}

static int
send_noreply(struct rsp_exchange *x, enum rsp_pkt kind, const char *payload, size_t len)
{
    char label[96];
    bool got;
    int rc;
    rsp_pkt_label(payload, len, label, sizeof label);
    if ((rc = gate(x, kind, label)) < 0)
        return rc;
    x->stats.by_kind[kind]++;
    if ((rc = send_frame(x, payload, len, label)) < 0)
        return rc;
    struct waiter w = { label, payload, len, true, true, x->timeout_ms, false, false };
    if ((rc = wait_packet(x, &w, &got)) < 0)
        return rc;
    if (got) {
        /* The stop came before the ack (a lost '+'): keep it for rsp_recv_stop. */
        x->pending.len = 0;
        if (sw_buf_append(&x->pending, x->dec.pkt, x->dec.pkt_len) != 0)
            return sw_fail(x->err, SW_ENOMEM, "'%s': out of memory", label);
        x->has_pending = true;
    }
    return 0;
}

int
rsp_send_resume(struct rsp_exchange *x, enum rsp_pkt kind, const char *payload, size_t len)
{
    int rc = send_noreply(x, kind, payload, len);
    x->intr_unanswered = false; /* a stop from now on is the resume's */
    return rc;
}

int
rsp_recv_stop(struct rsp_exchange *x, int timeout_ms, struct rsp_reply *r)
{
    bool got;
    if (x->has_pending) {
        x->has_pending = false;
        r->p = x->pending.data;
        r->len = x->pending.len;
        rsp_exchange_changed(x);
        return 0;
    }
    struct waiter w = { "stop reply", NULL, 0, true, false, timeout_ms, false, true };
    int rc = wait_packet(x, &w, &got);
    if (rc < 0)
        return rc;
    r->p = (const char *)x->dec.pkt;
    r->len = x->dec.pkt_len;
    return 0;
}

int
rsp_recv_notify(struct rsp_exchange *x, int timeout_ms)
{
    bool got;
    struct waiter w = { "stop notification", NULL, 0, true, false, timeout_ms, false, true };
    x->notify_waiting = true; /* wait_packet returns at the %Stop */
    int rc = wait_packet(x, &w, &got);
    x->notify_waiting = false;
    if (rc < 0)
        return rc;
    if (got)
        return sw_fail(x->err, SW_EPROTO,
                       "waiting for a stop notification: unexpected packet '%.*s' (non-stop)",
                       (int)(x->dec.pkt_len > 40 ? 40 : x->dec.pkt_len), (const char *)x->dec.pkt);
    return 0;
}

int
rsp_send_interrupt(struct rsp_exchange *x)
{
    static const uint8_t ctrl_c = 0x03;
    x->intr_unanswered = true;
    /* Its reply is the stop reply that handle_debug_event reads: a round
     * trip like any request's, though no packet goes out. */
    x->stats.round_trips++;
    x->stats.interrupts++;
    if (x->trace)
        sw_debug_printf("-! %s", "interrupt");
    return wire_write(x, &ctrl_c, 1, "interrupt");
}
