/* rsp/exchange.c -- the request/reply engine: packets out, replies in, acks, counters.
 *
 * Every request goes through here: gated, counted, sent (alone, in pairs or
 * batches) and answered, and empty and 'E' replies become codes.  The wait
 * for a reply, with its one deadline per request and the run's, acks and
 * retransmits, is rsp/exchange_wire.c's; what each packet means lives in
 * the rsp/ files above (they take the session); the bytes on the wire in
 * transport*.c.  What those files add comes in through the hooks
 * (exchange.h), never by a call from here.
 */
#include "rsp/exchange.h"

#include "rsp/exchange_wire.h"

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
    if ((rc = rsp_wire_send_frame(x, payload, len, label)) < 0)
        return rc;
    idle_while(x, while_fn, while_arg);
    struct rsp_waiter w = { label, payload,       len,           pkt_rows[kind].reply == RSP_R_STOP,
                            false, x->timeout_ms, no_stop(kind), false };
    if ((rc = rsp_wire_wait(x, &w, &got)) < 0)
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
        rsp_wire_trace_line("-> ", p1, l1);
        rsp_wire_trace_line("-> ", p2, l2);
    }
    rsp_wire_trace_short(x, "-> ", p1, l1);
    rsp_wire_trace_short(x, "-> ", p2, l2);
    x->stats.by_kind[k1]++;
    x->stats.by_kind[k2]++;
    x->stats.round_trips++;
    x->stats.packets_sent += 2;
    if ((rc = rsp_wire_write(x, x->out.data, (size_t)(n1 + n2), label1)) < 0)
        return rc;
    struct rsp_waiter w1 = { label1, NULL, 0, false, false, x->timeout_ms, no_stop(k1), false };
    if ((rc = rsp_wire_wait(x, &w1, &got)) < 0)
        return rc;
    struct rsp_reply first = { (const char *)x->dec.pkt, x->dec.pkt_len };
    *r1len = first.len < r1cap ? first.len : r1cap;
    memcpy(r1, first.p, *r1len);
    int rc1 = judge_reply(x, k1, label1, &first);
    struct rsp_waiter w2 = { label2, NULL, 0, false, false, x->timeout_ms, no_stop(k2), false };
    if ((rc = rsp_wire_wait(x, &w2, &got)) < 0)
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
                rsp_wire_trace_line("-> ", items[j].payload, items[j].len);
            rsp_wire_trace_short(x, "-> ", items[j].payload, items[j].len);
            x->stats.by_kind[items[j].kind]++;
        }
        x->stats.round_trips++;
        x->stats.packets_sent += k;
        if ((rc = rsp_wire_write(x, x->out.data, len, label)) < 0)
            return rc;
        /* The caller's work while the first write's replies are on their way. */
        idle_while(x, while_fn, while_arg);
        while_fn = NULL;
        /* Every reply is read, in order, even after a failure, so the next
         * request meets its own reply. */
        for (size_t j = i; j < i + k; j++) {
            rsp_pkt_label(items[j].payload, items[j].len, label, sizeof label);
            struct rsp_waiter w = {
                label, NULL, 0, false, false, x->timeout_ms, no_stop(items[j].kind), false
            };
            if ((rc = rsp_wire_wait(x, &w, &got)) < 0)
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
    if ((rc = rsp_wire_send_frame(x, payload, len, label)) < 0)
        return rc;
    struct rsp_waiter w = { label, payload, len, true, true, x->timeout_ms, false, false };
    if ((rc = rsp_wire_wait(x, &w, &got)) < 0)
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
    struct rsp_waiter w = { "stop reply", NULL, 0, true, false, timeout_ms, false, true };
    int rc = rsp_wire_wait(x, &w, &got);
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
    struct rsp_waiter w = { "stop notification", NULL, 0, true, false, timeout_ms, false, true };
    x->notify_waiting = true; /* rsp_wire_wait returns at the %Stop */
    int rc = rsp_wire_wait(x, &w, &got);
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
    return rsp_wire_write(x, &ctrl_c, 1, "interrupt");
}
