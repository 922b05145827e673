/* tests/fuzz/fuzz_session.c -- libFuzzer target for a session over a stub that says anything.
 *
 * The input is [flags:1] then replies, each [len:2 LE][payload]: every packet
 * the session sends (and every interrupt) is answered with the next reply,
 * framed with a good checksum ('+' first: a stray ack in no-ack mode is
 * noise the decoder drops).  LEN bit 15 chains the next reply to the same
 * request (console output, a stop after an 'O'); LEN 0x7fff is a read that
 * times out.  With no reply left the stub hangs up.  The session connects
 * (qSupported, target.xml, '?'), then does what a walk does: threads, 'g',
 * 'p', 'm', qXfer objects (reassembled), vFile, resume and the wait loop.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/session.h"
#include "rsp/transport.h"
#include "rspwalk/errors.h"
#include "rspwalk/rsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SILENCE 0x7fffu
#define CHAIN   0x8000u

struct fz_transport {
    struct rsp_transport base;
    const uint8_t *in; /* borrowed: the replies not yet served */
    size_t in_len;
    uint8_t *q; /* owned: bytes to deliver */
    size_t q_len, q_off, q_cap;
    unsigned silences; /* reads left to time out */
};

static void
q_put(struct fz_transport *t, const void *p, size_t n)
{
    if (t->q_len + n > t->q_cap) {
        size_t cap = (t->q_len + n) * 2 + 64;
        t->q = realloc(t->q, cap);
        if (t->q == NULL)
            abort();
        t->q_cap = cap;
    }
    memcpy(t->q + t->q_len, p, n);
    t->q_len += n;
}

/* Queue the next reply (and those chained to it). */
static void
serve(struct fz_transport *t)
{
    for (;;) {
        if (t->in_len < 2)
            return;
        unsigned len = t->in[0] | (unsigned)t->in[1] << 8;
        t->in += 2;
        t->in_len -= 2;
        if ((len & ~CHAIN) == SILENCE) {
            t->silences++;
            if (!(len & CHAIN))
                return;
            continue;
        }
        size_t n = len & ~CHAIN;
        if (n > t->in_len)
            n = t->in_len;
        unsigned sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += t->in[i];
        char tail[4];
        static const char hex[] = "0123456789abcdef";
        tail[0] = '#';
        tail[1] = hex[(sum >> 4) & 15];
        tail[2] = hex[sum & 15];
        q_put(t, "+$", 2);
        q_put(t, t->in, n);
        q_put(t, tail, 3);
        t->in += n;
        t->in_len -= n;
        if (!(len & CHAIN))
            return;
    }
}

static int
fz_write(struct rsp_transport *bt, const void *buf, size_t len)
{
    struct fz_transport *t = (struct fz_transport *)bt;
    const uint8_t *b = buf;
    for (size_t i = 0; i < len; i++)
        if (b[i] == '$' || b[i] == 0x03)
            serve(t);
    return 0;
}

static int
fz_read(struct rsp_transport *bt, void *buf, size_t cap, int timeout_ms, size_t *got)
{
    struct fz_transport *t = (struct fz_transport *)bt;
    (void)timeout_ms;
    *got = 0;
    if (t->silences > 0) {
        t->silences--;
        sw_fail(&bt->err, SW_ETIMEDOUT, "fuzz: read timed out");
        return SW_ETIMEDOUT;
    }
    if (t->q_off == t->q_len) {
        sw_fail(&bt->err, SW_ECONN, "fuzz: stub hung up");
        return SW_ECONN;
    }
    size_t n = t->q_len - t->q_off;
    if (n > cap)
        n = cap;
    memcpy(buf, t->q + t->q_off, n);
    t->q_off += n;
    *got = n;
    return 0;
}

static void
fz_close(struct rsp_transport *bt)
{
    struct fz_transport *t = (struct fz_transport *)bt;
    free(t->q);
    free(bt->name);
    free(t);
}

static const struct rsp_transport_ops fz_ops = { .write = fz_write,
                                                 .read = fz_read,
                                                 .close = fz_close };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct fz_transport *t = calloc(1, sizeof *t);
    t->base.ops = &fz_ops;
    t->base.fd = -1;
    t->base.name = strdup("fuzz");
    t->in = data + 1;
    t->in_len = size - 1;

    unsigned flags = data[0];
    struct rsp_session_config cfg;
    rsp_session_config_init(&cfg);
    cfg.timeout_ms = 100;
    cfg.keep_acks = flags & 1;
    cfg.no_prefetch = flags & 2;
    cfg.no_cache = flags & 4;
    cfg.non_stop = flags & 8;
    cfg.no_pipeline = flags & 16;

    struct rsp_session *s;
    struct sw_errbuf err = { 0, "" };
    if (rsp_session_connect(&t->base, &cfg, &s, &err) != 0) {
        if (err.msg[0] == 0)
            abort(); /* a failure says why */
        return 0;
    }
    /* the order of tests/unit/rsp/test_session.c's replays, so that the
     * recorded transcripts (the seeds) answer the requests they answered */
    struct rsp_thread_id any = { 0, 0 };
    struct rsp_stop st;
    if (rsp_resume(s, any, false, 0) == 0)
        (void)rsp_wait_stop(s, 100, &st);
    struct rsp_thread_id *ids = NULL;
    size_t n = 0;
    uint64_t sp = 0x7fffffffe000;
    if (rsp_threads(s, &ids, &n) == 0 && n > 0) {
        const uint8_t *regs;
        size_t len;
        for (size_t i = 0; i < n && i < 8; i++)
            (void)rsp_regs_read(s, ids[i], &regs, &len);
        if (rsp_regs_read(s, ids[0], &regs, &len) == 0 && len >= 64)
            memcpy(&sp, regs + 56, 8);
        uint8_t reg[64];
        size_t rl;
        (void)rsp_reg_read(s, ids[0], 7, reg, sizeof reg, &rl);
        (void)rsp_reg_read(s, ids[0], 7, reg, sizeof reg, &rl);
        if (n > 1)
            (void)rsp_regs_read_batch(s, ids, n < 8 ? n : 8);
    }
    free(ids);
    size_t mem_len = flags & 32 ? 12000 : 5000;
    uint8_t *mem = malloc(mem_len);
    (void)rsp_mem_read(s, sp + 64 - mem_len, mem, mem_len);
    (void)rsp_mem_read(s, 0, mem, 16);
    free(mem);
    char *obj;
    size_t olen;
    static const char *const objects[] = { "exec-file", "auxv", "libraries-svr4" };
    for (size_t i = 0; i < 3; i++)
        if (rsp_xfer_read(s, objects[i], "", &obj, &olen) == 0)
            free(obj);
    uint8_t *file;
    size_t flen;
    if (rsp_vfile_read_all(s, "/lib/x86_64-linux-gnu/libc.so.6", 1 << 22, &file, &flen) == 0)
        free(file);
    (void)rsp_interrupt(s);
    (void)rsp_query_stop(s, &st);
    (void)rsp_detach(s);
    rsp_session_close(s);
    return 0;
}
