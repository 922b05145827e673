/* rsp/exchange_wire.c -- the exchange's wire: the trace, writes, the wait for one packet.
 *
 * Every byte the exchange reads goes through rsp_wire_wait, whose deadline
 * is set when the wait starts and met only by the packet waited for.  What
 * the packets mean, and which request waits for what, is rsp/exchange.c's.
 */
#include "rsp/exchange_wire.h"

#include <stdio.h>
#include <string.h>

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

void
rsp_exchange_changed(struct rsp_exchange *x)
{
    if (x->hooks.changed != NULL)
        x->hooks.changed(x->hooks.arg);
}

/* ---- trace ------------------------------------------------------------- */

/* One trace line: DIR then the payload, non-printable bytes and '\' as \xNN,
 * which is the transcript format read by tests/tools/fake_transport.c. */
void
rsp_wire_trace_line(const char *dir, const void *payload, size_t len)
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
        rsp_wire_trace_line(dir, x->raw.data + 1, x->raw.len - 4);
    else
        rsp_wire_trace_line(dir, x->dec.pkt, x->dec.pkt_len);
    x->raw.len = 0;
}

/* RSPWALK_DEBUG=time without pkt: a short line per packet, for a timeline
 * of where a run waits and where it works. */
void
rsp_wire_trace_short(const struct rsp_exchange *x, const char *dir, const char *payload, size_t len)
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

int
rsp_wire_write(struct rsp_exchange *x, const void *buf, size_t len, const char *label)
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
    return rsp_wire_write(x, &c, 1, label);
}

/* Frame PAYLOAD into x->out and write it. */
int
rsp_wire_send_frame(struct rsp_exchange *x, const char *payload, size_t len, const char *label)
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
        rsp_wire_trace_line("-> ", payload, len);
    rsp_wire_trace_short(x, "-> ", payload, len);
    x->stats.packets_sent++;
    return rsp_wire_write(x, x->out.data, (size_t)n, label);
}

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
wait_expired(struct rsp_exchange *x, const struct rsp_waiter *w, bool by_run, size_t junk,
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
next_event(struct rsp_exchange *x, const struct rsp_waiter *w, uint64_t deadline_us, bool by_run,
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
            /* A poll (timeout 0) takes what has arrived and waits for no
             * more, but for the rest of a packet begun. */
            uint64_t left_ms =
                w->timeout_ms == 0 && x->dec.state == 0 ? 0 : (deadline_us - now + 999) / 1000;
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

static int wait_one(struct rsp_exchange *x, const struct rsp_waiter *w, bool *got_packet);

/* Every read of the link goes through here: afterwards the changed hook
 * learns what is left unread (the event descriptor, rsp/event_fd.c). */
int
rsp_wire_wait(struct rsp_exchange *x, const struct rsp_waiter *w, bool *got_packet)
{
    int rc = wait_one(x, w, got_packet);
    x->wait_deadline_us = 0;
    rsp_exchange_changed(x);
    return rc;
}

static int
wait_one(struct rsp_exchange *x, const struct rsp_waiter *w, bool *got_packet)
{
    int naks = 0, bad = 0;
    size_t garbage0 = x->dec.garbage;
    struct wait_noise noise = { 0 };
    /* One deadline for the whole wait, set here and never moved: only the
     * packet waited for meets it.  Timeout 0 is a poll
     * (handle_debug_event(false)): it still reads what has arrived, for
     * which the deadline must not have passed already, and waits up to it
     * only for the end of a packet begun (next_event). */
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
            if ((rc = rsp_wire_send_frame(x, w->payload, w->len, w->label)) < 0)
                return rc;
            break;
        case RSP_DEC_PACKET:
            x->stats.packets_received++;
            if (x->trace)
                trace_received(x, "<- ");
            rsp_wire_trace_short(x, "<- ", (const char *)x->dec.pkt, x->dec.pkt_len);
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
