/* door/door.c -- the RSP door: framing with the front end, pass-through, the stop's answers.
 *
 * One front end at a time.  Its packets go to the stub unchanged but for the
 * reads of the current stop: on the first of them the door walks every
 * thread once (with the walker's prefetch) and reads each walked stack in
 * one batch; 'Hg', 'g', 'p', 'm' and lldb's jThreadsInfo, qThreadStopInfo
 * and thread list (made by door/lldb.c) are then answered from those
 * registers and ranges, and anything they do not cover is passed through.
 * Every resume, memory write and stop drops what was read; a register write
 * drops only the registers of the thread written (breakpoints are hidden
 * from reads).
 */
#include "door/door.h"
#include "door/lldb.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rspwalk/errors.h"
#include "rspwalk/render.h"
#include "rspwalk/rsp.h"
#include "rspwalk/target.h"
#include "rspwalk/walker.h"

/* The most threads one stop's walk covers; more are passed through. */
#define DOOR_MAX_THREADS 4096
/* Past the outermost frame's SP, the bytes read with each stack (its frame
 * record and what a front end's unwinder looks at above it). */
#define DOOR_STACK_TAIL 512
/* Below the top frame's SP, the bytes read with each stack (the red zone,
 * and the aligned line a front end's cache reads the SP in). */
#define DOOR_STACK_BELOW 256
/* Front ends read memory in aligned lines: gdb's cache 64 bytes, lldb's
 * 512.  Ranges read ahead are widened to whole lines of the front end's
 * (lldb's only once it is known: wider than the stop's planned fetch, they
 * would cost gdb a round trip). */
#define DOOR_LINE_GDB  64
#define DOOR_LINE_LLDB 512
/* Around the stopped thread's PC, the code bytes read with the stacks. */
#define DOOR_PC_AROUND 16
/* The most bytes of one thread's stack read ahead. */
#define DOOR_STACK_MAX (1u << 20)
/* Ranges read ahead are cut at this size (a failed one costs only itself). */
#define DOOR_CHUNK 1024

struct door_buf {
    char *p; /* owned */
    size_t len, cap;
};

/* One thread's registers at this stop, as the 'g' reply's hex. */
struct door_regs {
    int64_t tid;
    char *hex; /* owned */
};

/* Memory read ahead at this stop. */
struct door_range {
    uint64_t addr;
    size_t len;
    uint8_t *data; /* owned */
};

struct door {
    const struct door_config *cfg;
    FILE *log;
    struct sw_walker *w; /* owned: owns the process, which owns the session */
    struct rsp_session *s;
    int fd; /* the front end; -1 between front ends */

    /* The front end's bytes and the packet being read. */
    uint8_t rbuf[4096];
    size_t rpos, rlen;
    struct door_buf pkt;
    bool ack;              /* the front end has not asked for QStartNoAckMode */
    struct door_buf out;   /* the frame being sent */
    struct door_buf last;  /* the last frame sent, for a '-' (ack mode) */
    struct door_buf reply; /* a reply being built */

    /* The current stop. */
    bool stopped; /* false after an exit reply */
    bool warm;    /* the walk was done (or tried) at this stop */
    sw_tid *tids; /* owned: the walked threads */
    size_t ntids;
    struct door_regs *regs; /* owned */
    size_t nregs;
    struct door_range *mem; /* owned */
    size_t nmem;
    char *doc; /* owned: the stack document, made on first ask */
    size_t doclen;
    struct door_buf xreq, xreply; /* the last qXfer:threads read passed through, and its reply */
    struct door_memo memo;        /* read-only queries answered at this stop */
    bool tlist_sent;              /* qfThreadInfo was answered whole: qsThreadInfo ends it */

    /* The front end's general thread (0: the stopped thread, as after a
     * stop), and whether the stub's is known to be the same. */
    int64_t fe_tid;
    bool up_synced;
    bool ended;           /* the front end detached or killed: the door ends with it */
    unsigned line;        /* the front end's memory line: DOOR_LINE_GDB, or _LLDB once it is lldb */
    bool fe_multiprocess; /* the front end's qSupported offered multiprocess+ */

    /* door_serve_link: the link is borrowed from its owner, who keeps the
     * stub.  The front end's detach is answered here (the stub would end
     * its only link), the target is stopped again when the front end
     * leaves it running, and the breakpoints it left inserted are removed. */
    bool borrowed;
    bool detached;     /* borrowed: the front end asked to detach */
    bool left_running; /* borrowed: the front end left while the target ran */
    struct door_buf
        bps; /* borrowed: the 'z' packets of the breakpoints inserted, '\n' after each */

    uint64_t packets, answered, rt0;
};

static void __attribute__((format(printf, 2, 3))) door_log(struct door *d, const char *fmt, ...)
{
    va_list ap;
    char line[1024];
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* Stub replies and names from the target: escaped, one line. */
    fputs("rspwalk: door: ", d->log);
    sw_text_fputs(d->log, line, 0);
    fputc('\n', d->log);
    fflush(d->log);
}

static int
buf_add(struct door_buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (q == NULL)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static int
buf_addc(struct door_buf *b, char c)
{
    return buf_add(b, &c, 1);
}

static const char hexdig[] = "0123456789abcdef";

static int
buf_hex(struct door_buf *b, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char h[2] = { hexdig[p[i] >> 4], hexdig[p[i] & 15] };
        if (buf_add(b, h, 2) < 0)
            return -1;
    }
    return 0;
}

/* ---- the stop's walk ----------------------------------------------------------------------- */

static void
door_drop(struct door *d)
{
    for (size_t i = 0; i < d->nregs; i++)
        free(d->regs[i].hex);
    for (size_t i = 0; i < d->nmem; i++)
        free(d->mem[i].data);
    free(d->regs);
    free(d->mem);
    free(d->tids);
    free(d->doc);
    d->regs = NULL;
    d->mem = NULL;
    d->tids = NULL;
    d->doc = NULL;
    d->nregs = d->nmem = d->ntids = d->doclen = 0;
    d->warm = false;
    d->xreq.len = 0;
    d->tlist_sent = false;
    door_memo_clear(&d->memo);
}

/* Thread TID's registers are being written: its 'g' is passed through from
 * now on, and the stack document is made again; the stacks read stay. */
static void
door_regs_written(struct door *d, int64_t tid)
{
    size_t k = 0;
    for (size_t i = 0; i < d->nregs; i++) {
        if (d->regs[i].tid == tid || tid <= 0)
            free(d->regs[i].hex);
        else
            d->regs[k++] = d->regs[i];
    }
    d->nregs = k;
    free(d->doc);
    d->doc = NULL;
    d->doclen = 0;
}

/* Add [LO, HI) to RANGES in pieces of DOOR_CHUNK bytes (buffers allocated). */
static int
add_ranges(struct rsp_mem_range **ranges, size_t *n, size_t *cap, uint64_t lo, uint64_t hi)
{
    for (uint64_t a = lo; a < hi; a += DOOR_CHUNK) {
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 64;
            struct rsp_mem_range *r = realloc(*ranges, c * sizeof *r);
            if (r == NULL)
                return -1;
            *ranges = r;
            *cap = c;
        }
        size_t len = hi - a < DOOR_CHUNK ? (size_t)(hi - a) : DOOR_CHUNK;
        void *buf = malloc(len);
        if (buf == NULL)
            return -1;
        (*ranges)[(*n)++] = (struct rsp_mem_range){ .addr = a, .len = len, .buf = buf };
    }
    return 0;
}

/* Whether a range starting at LO is already in RANGES. */
static bool
ranges_cover(const struct rsp_mem_range *r, size_t n, uint64_t lo)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].addr == lo)
            return true;
    return false;
}

/* The stopped thread (what the front end's thread 0 means after a stop). */
static int64_t
stop_tid(struct door *d)
{
    const struct rsp_stop *st = rsp_last_stop(d->s);
    return st != NULL && st->has_thread ? st->thread.tid : 0;
}

/* Walk every thread once and keep its registers and stack.  Failures leave
 * less kept: what is not kept is passed through.  -1 only for a lost link
 * (logged). */
static int
door_warm(struct door *d)
{
    if (d->warm || !d->stopped)
        return 0;
    d->warm = true;
    d->up_synced = false; /* the walk selects threads of its own */
    /* The process's list: it sends the stop's planned fetch (the list,
     * registers and stacks in one write) where the stub pipelines, and keeps
     * the list for the walks (a second list from the session would cost
     * QEMU, which sends one thread a reply, a round trip a thread). */
    size_t n = 0;
    d->tids = calloc(DOOR_MAX_THREADS, sizeof *d->tids);
    if (d->tids == NULL)
        return 0;
    if (sw_proc_threads(sw_walker_proc(d->w), d->tids, DOOR_MAX_THREADS, &n) < 0 || n == 0) {
        free(d->tids);
        d->tids = NULL;
        return 0;
    }
    if (n > DOOR_MAX_THREADS)
        n = DOOR_MAX_THREADS;
    const struct rsp_stop *stop = rsp_last_stop(d->s);
    int64_t pid = stop != NULL && stop->has_thread ? stop->thread.pid : 0;
    struct rsp_thread_id *ids = calloc(n, sizeof *ids);
    d->regs = calloc(n, sizeof *d->regs);
    if (ids == NULL || d->regs == NULL) {
        free(ids);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = (struct rsp_thread_id){ .pid = pid, .tid = (int64_t)d->tids[i] };
    d->ntids = n;
    (void)sw_walker_prefetch(d->w, d->tids, n);
    (void)rsp_regs_read_batch(d->s, ids, n);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *buf;
        size_t len;
        struct door_buf h = { 0 };
        if (rsp_regs_read(d->s, ids[i], &buf, &len) < 0 || buf_hex(&h, buf, len) < 0) {
            free(h.p);
            continue;
        }
        d->regs[d->nregs++] = (struct door_regs){ .tid = ids[i].tid, .hex = h.p };
    }
    free(ids);

    struct rsp_mem_range *ranges = NULL;
    size_t nr = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        struct sw_stack st;
        sw_stack_init(&st);
        if (sw_walk_stack(d->w, d->tids[i], &st) == 0 || st.n > 0) {
            uint64_t lo = UINT64_MAX, hi = 0;
            for (size_t k = 0; k < st.n; k++) {
                if (st.frames[k].sp == 0)
                    continue;
                lo = st.frames[k].sp < lo ? st.frames[k].sp : lo;
                hi = st.frames[k].sp > hi ? st.frames[k].sp : hi;
            }
            if (lo <= hi && hi - lo < DOOR_STACK_MAX) {
                /* The front end's cache lines around the top frame's SP. */
                lo = (lo - DOOR_STACK_BELOW) & ~(uint64_t)(d->line - 1);
                hi = (hi + DOOR_STACK_TAIL + d->line - 1) & ~(uint64_t)(d->line - 1);
                /* Threads' stacks do not overlap; a repeat is skipped whole. */
                if (!ranges_cover(ranges, nr, lo))
                    (void)add_ranges(&ranges, &nr, &cap, lo, hi); /* what was added is read */
            }
            /* The code around the stopped thread's PC, which gdb reads at a
             * breakpoint (the stop's planned fetch holds the same lines). */
            uint64_t pc = st.n > 0 ? st.frames[0].ra : 0;
            if ((int64_t)d->tids[i] == stop_tid(d) && pc > DOOR_PC_AROUND) {
                lo = (pc - DOOR_PC_AROUND) & ~(uint64_t)(d->line - 1);
                if (!ranges_cover(ranges, nr, lo))
                    (void)add_ranges(&ranges, &nr, &cap, lo,
                                     (pc + DOOR_PC_AROUND + d->line - 1) &
                                         ~(uint64_t)(d->line - 1));
            }
        }
        sw_stack_fini(&st);
    }
    /* Through the process: what its walk and the stop's fetch read is
     * served from its cache, the rest in one batch. */
    struct sw_mem_req *reqs = calloc(nr ? nr : 1, sizeof *reqs);
    int rc = reqs == NULL ? SW_ENOMEM : 0;
    for (size_t i = 0; i < nr && reqs != NULL; i++)
        reqs[i] = (struct sw_mem_req){ .addr = ranges[i].addr,
                                       .len = ranges[i].len,
                                       .buf = ranges[i].buf };
    if (rc == 0 && nr > 0)
        rc = sw_proc_read_mem_batch(sw_walker_proc(d->w), reqs, nr);
    d->mem = calloc(nr ? nr : 1, sizeof *d->mem);
    for (size_t i = 0; i < nr; i++) {
        if (rc == 0 && reqs[i].rc == 0 && d->mem != NULL)
            d->mem[d->nmem++] = (struct door_range){ .addr = ranges[i].addr,
                                                     .len = ranges[i].len,
                                                     .data = ranges[i].buf };
        else
            free(ranges[i].buf);
    }
    free(ranges);
    free(reqs);
    if (rc < 0 && rc != SW_EMEM && rc != SW_ENOMEM) {
        door_log(d, "reading the stacks ahead: %s", sw_proc_errmsg(sw_walker_proc(d->w)));
        return -1;
    }
    return 0;
}

/* LEN bytes at ADDR from the ranges read ahead into OUT: true when all are there. */
static bool
mem_lookup(struct door *d, uint64_t addr, size_t len, uint8_t *out)
{
    while (len > 0) {
        size_t i;
        for (i = 0; i < d->nmem; i++)
            if (addr >= d->mem[i].addr && addr - d->mem[i].addr < d->mem[i].len)
                break;
        if (i == d->nmem)
            return false;
        size_t off = (size_t)(addr - d->mem[i].addr);
        size_t take = d->mem[i].len - off < len ? d->mem[i].len - off : len;
        memcpy(out, d->mem[i].data + off, take);
        out += take;
        addr += take;
        len -= take;
    }
    return true;
}

/* ---- the front end's side ------------------------------------------------------------------ */

static int
write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Send PAYLOAD (already escaped) framed. */
static int
send_packet(struct door *d, const char *payload, size_t len)
{
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += (unsigned char)payload[i];
    char tail[3] = { '#', hexdig[(sum >> 4) & 15], hexdig[sum & 15] };
    d->out.len = 0;
    if (buf_addc(&d->out, '$') < 0 || buf_add(&d->out, payload, len) < 0 ||
        buf_add(&d->out, tail, 3) < 0)
        return -1;
    if (d->ack) {
        d->last.len = 0;
        if (buf_add(&d->last, d->out.p, d->out.len) < 0)
            return -1;
    }
    return write_all(d->fd, d->out.p, d->out.len);
}

static int
send_str(struct door *d, const char *s)
{
    return send_packet(d, s, strlen(s));
}

/* More bytes from the front end into rbuf.  1, 0 at its end, -1 on error. */
static int
fill(struct door *d)
{
    if (d->rpos == d->rlen)
        d->rpos = d->rlen = 0;
    if (d->rlen == sizeof d->rbuf) {
        memmove(d->rbuf, d->rbuf + d->rpos, d->rlen - d->rpos);
        d->rlen -= d->rpos;
        d->rpos = 0;
    }
    for (;;) {
        ssize_t k = read(d->fd, d->rbuf + d->rlen, sizeof d->rbuf - d->rlen);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        d->rlen += (size_t)k;
        return k > 0;
    }
}

static int
next_byte(struct door *d)
{
    if (d->rpos == d->rlen) {
        int rc = fill(d);
        if (rc <= 0)
            return rc == 0 ? -2 : -1;
    }
    return d->rbuf[d->rpos++];
}

static int
hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The next packet into d->pkt (run-lengths expanded, escapes kept).
 * 1 a packet, 2 the interrupt byte, 0 the front end is gone, -1 error. */
static int
read_packet(struct door *d)
{
    for (;;) {
        int c = next_byte(d);
        if (c < 0)
            return c == -2 ? 0 : -1;
        if (c == 0x03)
            return 2;
        if (c == '-' && d->ack && d->last.len > 0) {
            if (write_all(d->fd, d->last.p, d->last.len) < 0)
                return -1;
            continue;
        }
        if (c != '$')
            continue; /* '+', noise */
        d->pkt.len = 0;
        unsigned sum = 0;
        bool bad = false;
        for (;;) {
            if ((c = next_byte(d)) < 0)
                return c == -2 ? 0 : -1;
            if (c == '#')
                break;
            sum += (unsigned)c;
            if (c == '*' && d->pkt.len > 0) {
                int n = next_byte(d);
                if (n < 0)
                    return n == -2 ? 0 : -1;
                sum += (unsigned)n;
                if (n < 29 + 3 || n > 126) {
                    bad = true;
                    continue;
                }
                char prev = d->pkt.p[d->pkt.len - 1];
                for (int k = 0; k < n - 29; k++)
                    if (buf_addc(&d->pkt, prev) < 0)
                        return -1;
                continue;
            }
            if (buf_addc(&d->pkt, (char)c) < 0)
                return -1;
        }
        int h1 = next_byte(d), h2 = h1 < 0 ? h1 : next_byte(d);
        if (h1 < 0 || h2 < 0)
            return (h1 == -2 || h2 == -2) ? 0 : -1;
        if (d->pkt.p == NULL && buf_add(&d->pkt, "", 0) < 0)
            return -1;
        bool good = !bad && hexval(h1) >= 0 && hexval(h2) >= 0 &&
                    (unsigned)(hexval(h1) * 16 + hexval(h2)) == (sum & 0xff);
        if (d->ack) {
            if (write_all(d->fd, good ? "+" : "-", 1) < 0)
                return -1;
            if (!good)
                continue;
        }
        return 1;
    }
}

/* ---- packets ----------------------------------------------------------------------------------
 */

static bool
starts(const char *p, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(p, prefix, n) == 0;
}

/* Parse a thread id as the front end writes it ("pPID.TID", "TID", "-1",
 * "0", hex) into *TID (0: any, -1: all). */
static bool
parse_tid(const char *p, size_t len, int64_t *tid)
{
    char tmp[64];
    if (len == 0 || len >= sizeof tmp)
        return false;
    memcpy(tmp, p, len);
    tmp[len] = '\0';
    const char *t = tmp;
    if (t[0] == 'p') {
        t = strchr(t, '.');
        if (t == NULL) {
            *tid = -1;
            return true;
        }
        t++;
    }
    if (strcmp(t, "-1") == 0) {
        *tid = -1;
        return true;
    }
    char *end;
    unsigned long long v = strtoull(t, &end, 16);
    if (*end != '\0' || end == t)
        return false;
    *tid = (int64_t)v;
    return true;
}

/* Make the stub's general thread the front end's, before a packet that reads or
 * writes through it is passed on. */
static int
sync_hg(struct door *d)
{
    if (d->up_synced)
        return 0;
    int64_t tid = d->fe_tid > 0 ? d->fe_tid : stop_tid(d);
    if (tid <= 0)
        return 0;
    const struct rsp_stop *st = rsp_last_stop(d->s);
    struct rsp_thread_id id = { .pid = st && st->has_thread ? st->thread.pid : 0, .tid = tid };
    if (rsp_thread_selected(d->s, id)) {
        d->up_synced = true; /* the walk left it selected, or never moved it */
        return 0;
    }
    char req[80] = "Hg";
    rsp_thread_id_format(d->s, id, req + 2, sizeof req - 2);
    const char *r;
    size_t rl;
    if (rsp_pass_request(d->s, req, strlen(req), &r, &rl) < 0)
        return -1;
    d->up_synced = true;
    return 0;
}

/* Pass PKT through and send the stub's reply back.  A read-only query
 * asked again at the same stop is answered with the reply kept (a failed
 * memory read only: the others the walk's ranges answer or not). */
static int
pass(struct door *d, const char *pkt, size_t len)
{
    const char *r;
    size_t rl;
    bool memo = d->stopped && door_memo_wanted(pkt, len);
    if (memo && door_memo_get(&d->memo, pkt, len, &r, &rl)) {
        d->answered++;
        return send_packet(d, r, rl);
    }
    if (rsp_pass_request(d->s, pkt, len, &r, &rl) < 0) {
        door_log(d, "%s", rsp_session_errmsg(d->s));
        return -1;
    }
    if (memo && (pkt[0] != 'm' || (rl > 0 && r[0] == 'E')))
        (void)door_memo_put(&d->memo, pkt, len, r, rl); /* not kept: asked again */
    return send_packet(d, r, rl);
}

/* qXfer:threads:read: the same request at the same stop gets the same
 * reply (a register write or a breakpoint changes no thread). */
static int
on_xfer_threads(struct door *d, const char *pkt, size_t len)
{
    if (d->stopped && d->xreq.len > 0 && d->xreq.len == len && memcmp(d->xreq.p, pkt, len) == 0) {
        d->answered++;
        return send_packet(d, d->xreply.p, d->xreply.len);
    }
    const char *r;
    size_t rl;
    if (rsp_pass_request(d->s, pkt, len, &r, &rl) < 0) {
        door_log(d, "%s", rsp_session_errmsg(d->s));
        return -1;
    }
    d->xreq.len = d->xreply.len = 0;
    if (d->stopped && rl > 0 && (r[0] == 'm' || r[0] == 'l') &&
        (buf_add(&d->xreq, pkt, len) < 0 || buf_add(&d->xreply, r, rl) < 0))
        d->xreq.len = 0; /* not kept: asked again */
    return send_packet(d, r, rl);
}

/* 'T': a thread listed at this stop is alive until the next resume. */
static int
on_thread_alive(struct door *d, const char *pkt, size_t len)
{
    int64_t tid;
    if (d->stopped && d->warm && parse_tid(pkt + 1, len - 1, &tid) && tid > 0)
        for (size_t i = 0; i < d->ntids; i++)
            if ((int64_t)d->tids[i] == tid) {
                d->answered++;
                return send_str(d, "OK");
            }
    return pass(d, pkt, len);
}

static const struct door_regs *
regs_of(struct door *d, int64_t tid)
{
    for (size_t i = 0; i < d->nregs; i++)
        if (d->regs[i].tid == tid)
            return &d->regs[i];
    return NULL;
}

static int
on_hg(struct door *d, const char *pkt, size_t len)
{
    int64_t tid;
    if (!parse_tid(pkt + 2, len - 2, &tid))
        return pass(d, pkt, len);
    if (tid > 0 && d->stopped) {
        if (door_warm(d) < 0)
            return -1;
        if (regs_of(d, tid) != NULL) {
            d->fe_tid = tid;
            d->up_synced = false;
            d->answered++;
            return send_str(d, "OK");
        }
    }
    d->fe_tid = tid > 0 ? tid : 0;
    const char *r;
    size_t rl;
    if (rsp_pass_request(d->s, pkt, len, &r, &rl) < 0) {
        door_log(d, "%s", rsp_session_errmsg(d->s));
        return -1;
    }
    d->up_synced = rl == 2 && memcmp(r, "OK", 2) == 0;
    return send_packet(d, r, rl);
}

static int
on_g(struct door *d, const char *pkt, size_t len)
{
    if (d->stopped) {
        if (door_warm(d) < 0)
            return -1;
        const struct door_regs *rg = regs_of(d, d->fe_tid > 0 ? d->fe_tid : stop_tid(d));
        if (rg != NULL) {
            d->answered++;
            return send_str(d, rg->hex);
        }
    }
    return sync_hg(d) < 0 ? -1 : pass(d, pkt, len);
}

static int
on_m(struct door *d, const char *pkt, size_t len)
{
    char tmp[64];
    unsigned long long addr, n;
    char *end;
    if (d->stopped && len < sizeof tmp) {
        memcpy(tmp, pkt + 1, len - 1);
        tmp[len - 1] = '\0';
        addr = strtoull(tmp, &end, 16);
        if (*end == ',' && (n = strtoull(end + 1, &end, 16), *end == '\0') && n > 0 && n <= 65536) {
            if (door_warm(d) < 0)
                return -1;
            uint8_t *b = malloc(n);
            if (b != NULL && mem_lookup(d, addr, n, b)) {
                d->reply.len = 0;
                int rc = buf_hex(&d->reply, b, n);
                free(b);
                if (rc < 0)
                    return -1;
                d->answered++;
                return send_packet(d, d->reply.p, d->reply.len);
            }
            free(b);
        }
    }
    return sync_hg(d) < 0 ? -1 : pass(d, pkt, len);
}

/* ---- lldb's packets (formatted by door/lldb.c) ------------------------------------------- */

/* The stop as door/lldb.c reads it: *V's arrays are allocated (freed with
 * lldb_view_fini), their contents borrowed from D until the next drop. */
static int
lldb_view_init(struct door *d, struct door_lldb_stop *v)
{
    *v = (struct door_lldb_stop){ .tdesc = rsp_session_tdesc(d->s),
                                  .stop = rsp_last_stop(d->s),
                                  .multiprocess = d->fe_multiprocess };
    struct door_lldb_thread *t = calloc(d->ntids ? d->ntids : 1, sizeof *t);
    struct door_lldb_range *m = calloc(d->nmem ? d->nmem : 1, sizeof *m);
    if (t == NULL || m == NULL) {
        free(t);
        free(m);
        return -1;
    }
    for (size_t i = 0; i < d->ntids; i++) {
        const struct door_regs *rg = regs_of(d, (int64_t)d->tids[i]);
        t[i] = (struct door_lldb_thread){ .tid = (int64_t)d->tids[i],
                                          .regs_hex = rg != NULL ? rg->hex : NULL };
    }
    for (size_t i = 0; i < d->nmem; i++)
        m[i] = (struct door_lldb_range){ .addr = d->mem[i].addr,
                                         .len = d->mem[i].len,
                                         .data = d->mem[i].data };
    v->threads = t;
    v->nthreads = d->ntids;
    v->mem = m;
    v->nmem = d->nmem;
    return 0;
}

static void
lldb_view_fini(struct door_lldb_stop *v)
{
    free((void *)v->threads);
    free((void *)v->mem);
}

/* jThreadsInfo: every walked thread with its registers and stack, so that
 * lldb's unwinder reads neither (lldb caches the chunks until it resumes).
 * Not stopped, or no thread walked: passed through. */
static int
on_jthreads(struct door *d, const char *pkt, size_t len)
{
    if (d->stopped) {
        if (door_warm(d) < 0)
            return -1;
        struct door_lldb_stop v;
        char *out = NULL;
        size_t olen = 0;
        if (d->ntids > 0 && lldb_view_init(d, &v) == 0) {
            int rc = door_lldb_threads_info(&v, &out, &olen);
            lldb_view_fini(&v);
            if (rc == 0) {
                d->answered++;
                rc = send_packet(d, out, olen);
                free(out);
                return rc;
            }
        }
    }
    return pass(d, pkt, len);
}

/* qThreadStopInfoTID: a walked thread's stop reply, its registers expedited. */
static int
on_thread_stop_info(struct door *d, const char *pkt, size_t len)
{
    const size_t pre = strlen("qThreadStopInfo");
    int64_t tid;
    if (d->stopped && parse_tid(pkt + pre, len - pre, &tid) && tid > 0) {
        if (door_warm(d) < 0)
            return -1;
        struct door_lldb_stop v;
        char *out = NULL;
        size_t olen = 0;
        if (lldb_view_init(d, &v) == 0) {
            int rc = door_lldb_thread_stop_info(&v, tid, &out, &olen);
            lldb_view_fini(&v);
            if (rc == 0) {
                d->answered++;
                rc = send_packet(d, out, olen);
                free(out);
                return rc;
            }
        }
    }
    return pass(d, pkt, len);
}

/* qfThreadInfo at a stop: every walked thread in one reply (gdbserver sends
 * one a reply, lldb asks until 'l'); the qsThreadInfo after it ends the list. */
static int
on_thread_list(struct door *d, const char *pkt, size_t len)
{
    if (pkt[1] == 's') {
        if (!d->tlist_sent)
            return pass(d, pkt, len);
        d->answered++;
        return send_str(d, "l");
    }
    if (!d->stopped)
        return pass(d, pkt, len);
    if (door_warm(d) < 0)
        return -1;
    if (d->ntids == 0)
        return pass(d, pkt, len);
    /* Ids as the stub writes them to this front end: with its pid only when
     * the front end asked for multiprocess+. */
    const struct rsp_stop *st = rsp_last_stop(d->s);
    int64_t pid = d->fe_multiprocess && st != NULL && st->has_thread ? st->thread.pid : 0;
    d->reply.len = 0;
    if (buf_addc(&d->reply, 'm') < 0)
        return -1;
    for (size_t i = 0; i < d->ntids; i++) {
        char id[80];
        if (pid > 0)
            snprintf(id, sizeof id, "p%" PRIx64 ".%" PRIx64, (uint64_t)pid, (uint64_t)d->tids[i]);
        else
            snprintf(id, sizeof id, "%" PRIx64, (uint64_t)d->tids[i]);
        if ((i > 0 && buf_addc(&d->reply, ',') < 0) || buf_add(&d->reply, id, strlen(id)) < 0)
            return -1;
    }
    d->tlist_sent = true;
    d->answered++;
    return send_packet(d, d->reply.p, d->reply.len);
}

/* 'pN': one register of the front end's thread, from its 'g' at this stop. */
static int
on_p(struct door *d, const char *pkt, size_t len)
{
    char tmp[16];
    if (d->stopped && len - 1 < sizeof tmp) {
        memcpy(tmp, pkt + 1, len - 1);
        tmp[len - 1] = '\0';
        char *end;
        unsigned long regnum = strtoul(tmp, &end, 16);
        if (*end == '\0' && end != tmp) {
            if (door_warm(d) < 0)
                return -1;
            const struct door_regs *rg = regs_of(d, d->fe_tid > 0 ? d->fe_tid : stop_tid(d));
            const char *p;
            size_t n;
            if (rg != NULL &&
                door_lldb_reg_hex(rsp_session_tdesc(d->s), rg->hex, (unsigned)regnum, &p, &n)) {
                d->answered++;
                return send_packet(d, p, n);
            }
        }
    }
    /* A register 'g' leaves out (lldb asks for aarch64's vg of every thread
     * at every stop, and twice): kept for the thread until the stop ends. */
    char key[96];
    const char *r;
    size_t rl;
    int64_t tid = d->fe_tid > 0 ? d->fe_tid : stop_tid(d);
    int kl =
        snprintf(key, sizeof key, "%.*s@%" PRIx64, (int)(len < 32 ? len : 32), pkt, (uint64_t)tid);
    bool keep = d->stopped && len < 32 && kl > 0 && (size_t)kl < sizeof key;
    if (keep && door_memo_get(&d->memo, key, (size_t)kl, &r, &rl)) {
        d->answered++;
        return send_packet(d, r, rl);
    }
    if (sync_hg(d) < 0 || rsp_pass_request(d->s, pkt, len, &r, &rl) < 0) {
        door_log(d, "%s", rsp_session_errmsg(d->s));
        return -1;
    }
    if (keep)
        (void)door_memo_put(&d->memo, key, (size_t)kl, r, rl); /* not kept: asked again */
    return send_packet(d, r, rl);
}

/* qXfer:rspwalk-stacks:read::OFF,LEN: the stack document in chunks. */
static int
on_stacks(struct door *d, const char *pkt, size_t len)
{
    const char *p = pkt + strlen("qXfer:rspwalk-stacks:read:");
    char tmp[64];
    size_t rest = len - (size_t)(p - pkt);
    if (rest == 0 || p[0] != ':' || rest >= sizeof tmp)
        return send_str(d, "E00");
    memcpy(tmp, p + 1, rest - 1);
    tmp[rest - 1] = '\0';
    char *end;
    unsigned long long off = strtoull(tmp, &end, 16), want;
    if (*end != ',' || (want = strtoull(end + 1, &end, 16), *end != '\0') || want == 0)
        return send_str(d, "E00");
    if (!d->stopped)
        return send_str(d, "E01");
    if (d->doc == NULL) {
        if (door_warm(d) < 0)
            return -1;
        FILE *f = open_memstream(&d->doc, &d->doclen);
        if (f == NULL)
            return send_str(d, "E01");
        struct sw_render_opts o = { 0 };
        struct sw_errbuf e = { 0 };
        o.target = d->cfg->target;
        o.max_frames = d->cfg->max_frames;
        (void)sw_render_stacks_json(f, &o, d->w, d->tids, d->ntids, &e);
        if (fclose(f) != 0) {
            free(d->doc);
            d->doc = NULL;
            return send_str(d, "E01");
        }
        d->up_synced = false;
    }
    d->reply.len = 0;
    if (buf_addc(&d->reply, 'm') < 0)
        return -1;
    size_t i = off < d->doclen ? (size_t)off : d->doclen;
    while (i < d->doclen) {
        char c = d->doc[i];
        bool esc = c == '#' || c == '$' || c == '}' || c == '*';
        if (d->reply.len - 1 + (esc ? 2 : 1) > want)
            break;
        if (esc ? (buf_addc(&d->reply, '}') < 0 || buf_addc(&d->reply, (char)(c ^ 0x20)) < 0)
                : buf_addc(&d->reply, c) < 0)
            return -1;
        i++;
    }
    if (i == d->doclen)
        d->reply.p[0] = 'l';
    d->answered++;
    return send_packet(d, d->reply.p, d->reply.len);
}

static int
on_qsupported(struct door *d, const char *pkt, size_t len)
{
    const char *r;
    size_t rl;
    d->fe_multiprocess = strstr(pkt, "multiprocess+") != NULL; /* PKT: NUL-terminated */
    if (rsp_pass_request(d->s, pkt, len, &r, &rl) < 0) {
        door_log(d, "%s", rsp_session_errmsg(d->s));
        return -1;
    }
    d->reply.len = 0;
    if (buf_add(&d->reply, r, rl) < 0)
        return -1;
    /* The door keeps its own acks with the front end, whatever the stub does. */
    if (strstr(d->reply.p, "QStartNoAckMode+") == NULL &&
        buf_add(&d->reply, ";QStartNoAckMode+", 17) < 0)
        return -1;
    if (buf_add(&d->reply, ";qXfer:rspwalk-stacks:read+", 27) < 0)
        return -1;
    return send_packet(d, d->reply.p, d->reply.len);
}

/* Take in a stop reply R of RL bytes passed through. */
static void
took_stop(struct door *d, const char *r, size_t rl)
{
    door_drop(d);
    d->stopped = !(rl > 0 && (r[0] == 'W' || r[0] == 'X'));
    d->fe_tid = 0;
    d->up_synced = true; /* the stub selects the stopped thread */
    sw_proc_rsp_retake_stop(sw_walker_proc(d->w));
}

/* A resume: the stub's stop reply, or the front end's interrupt first. */
static int
on_resume(struct door *d, const char *pkt, size_t len)
{
    door_drop(d);
    /* The walk's threads and stacks are planned for the next stop's fetch. */
    sw_proc_rsp_prepare_resume(sw_walker_proc(d->w));
    if (rsp_pass_resume(d->s, pkt, len) < 0) {
        door_log(d, "%s", rsp_session_errmsg(d->s));
        return -1;
    }
    int ev = rsp_session_event_fd(d->s);
    if (ev < 0)
        ev = rsp_session_fd(d->s);
    for (;;) {
        struct pollfd pf[2] = { { .fd = ev, .events = POLLIN }, { .fd = d->fd, .events = POLLIN } };
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (pf[0].revents) {
            const char *r;
            size_t rl;
            int rc = rsp_pass_wait_stop(d->s, 200, &r, &rl);
            if (rc == SW_ETIMEDOUT)
                continue;
            if (rc < 0) {
                door_log(d, "waiting for the stop: %s", rsp_session_errmsg(d->s));
                return -1;
            }
            /* Forward before taking in: taking in reads nothing, but keeps R
             * valid only until the session's next request. */
            if (send_packet(d, r, rl) < 0)
                return -1;
            took_stop(d, r, rl);
            return 0;
        }
        if (pf[1].revents) {
            int rc = fill(d);
            if (rc <= 0) {
                d->left_running = true;
                return 0; /* the front end left with the target running */
            }
            /* While the target runs the front end sends only the interrupt
             * (and acks): any other bytes wait for the stop. */
            for (size_t i = d->rpos; i < d->rlen; i++)
                if (d->rbuf[i] == 0x03) {
                    memmove(d->rbuf + i, d->rbuf + i + 1, d->rlen - i - 1);
                    d->rlen--;
                    if (rsp_interrupt(d->s) < 0) {
                        door_log(d, "interrupting: %s", rsp_session_errmsg(d->s));
                        return -1;
                    }
                    break;
                }
        }
    }
}

/* Borrowed link: '?' answered from the link's last stop.  The owner
 * stopped the target for the door, maybe with an interrupt whose stop the
 * session took; the stub's own answer to '?' would look to the session
 * like a late second answer to that interrupt. */
static int
on_status(struct door *d, const char *pkt, size_t len)
{
    const struct rsp_stop *st = rsp_last_stop(d->s);
    char tmp[80];
    if (st == NULL || st->kind == RSP_STOP_NONE || st->kind == RSP_STOP_NO_RESUMED)
        return pass(d, pkt, len);
    d->reply.len = 0;
    if (st->kind == RSP_STOP_EXITED || st->kind == RSP_STOP_KILLED) {
        snprintf(tmp, sizeof tmp, "%c%02x", st->kind == RSP_STOP_EXITED ? 'W' : 'X',
                 (st->kind == RSP_STOP_EXITED ? st->code : st->signal) & 0xff);
        if (buf_add(&d->reply, tmp, strlen(tmp)) < 0)
            return -1;
    } else {
        /* As gdbserver writes it: the signal, the expedited registers, the
         * thread (with its pid only when the front end asked for
         * multiprocess+), the core, the breakpoint kind. */
        snprintf(tmp, sizeof tmp, "T%02x", st->signal & 0xff);
        if (buf_add(&d->reply, tmp, 3) < 0)
            return -1;
        for (size_t i = 0; i < st->nexpedited; i++) {
            snprintf(tmp, sizeof tmp, "%02x:", st->expedited[i].regnum);
            if (buf_add(&d->reply, tmp, strlen(tmp)) < 0 ||
                buf_hex(&d->reply, st->expedited[i].bytes, st->expedited[i].len) < 0 ||
                buf_addc(&d->reply, ';') < 0)
                return -1;
        }
        if (st->has_thread && d->fe_multiprocess && st->thread.pid > 0)
            snprintf(tmp, sizeof tmp, "thread:p%" PRIx64 ".%" PRIx64 ";", (uint64_t)st->thread.pid,
                     (uint64_t)st->thread.tid);
        else if (st->has_thread)
            snprintf(tmp, sizeof tmp, "thread:%" PRIx64 ";", (uint64_t)st->thread.tid);
        else
            tmp[0] = '\0';
        if (buf_add(&d->reply, tmp, strlen(tmp)) < 0)
            return -1;
        if (st->core >= 0) {
            snprintf(tmp, sizeof tmp, "core:%x;", (unsigned)st->core);
            if (buf_add(&d->reply, tmp, strlen(tmp)) < 0)
                return -1;
        }
        if ((st->swbreak && buf_add(&d->reply, "swbreak:;", 9) < 0) ||
            (st->hwbreak && buf_add(&d->reply, "hwbreak:;", 9) < 0))
            return -1;
    }
    d->answered++;
    return send_packet(d, d->reply.p, d->reply.len);
}

/* Borrowed link: 'Z' and 'z' passed through, the breakpoints the stub
 * took kept as the 'z' that removes each, so that none outlives the door. */
static int
on_breakpoint(struct door *d, const char *pkt, size_t len)
{
    const char *r;
    size_t rl;
    if (rsp_pass_request(d->s, pkt, len, &r, &rl) < 0) {
        door_log(d, "%s", rsp_session_errmsg(d->s));
        return -1;
    }
    if (rl == 2 && memcmp(r, "OK", 2) == 0) {
        /* Forget an earlier record of the same breakpoint either way. */
        char *p = d->bps.p;
        while (p != NULL && p < d->bps.p + d->bps.len) {
            char *nl = strchr(p, '\n');
            if ((size_t)(nl - p) == len && memcmp(p + 1, pkt + 1, len - 1) == 0) {
                memmove(p, nl + 1, (size_t)(d->bps.p + d->bps.len - (nl + 1)) + 1);
                d->bps.len -= (size_t)(nl + 1 - p);
                continue;
            }
            p = nl + 1;
        }
        if (pkt[0] == 'Z' &&
            (buf_addc(&d->bps, 'z') < 0 || buf_add(&d->bps, pkt + 1, len - 1) < 0 ||
             buf_addc(&d->bps, '\n') < 0))
            return -1;
    }
    return send_packet(d, r, rl);
}

static bool
is_resume(const char *p, size_t len)
{
    if (len == 0)
        return false;
    if (strchr("cCsS", p[0]) != NULL)
        return true;
    return starts(p, len, "vCont;");
}

static uint64_t
door_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int handle_packet(struct door *d, const char *pkt, size_t len);

/* One packet within the configured deadline (rsp_session_set_deadline), a
 * resume's wait for its stop excepted.  A packet that failed past it is
 * logged naming it; the caller then gives the front end and link up. */
static int
handle(struct door *d, const char *pkt, size_t len)
{
    int dl = d->cfg->deadline_ms;
    if (dl <= 0 || is_resume(pkt, len))
        return handle_packet(d, pkt, len);
    rsp_session_set_deadline(d->s, dl);
    uint64_t t0 = door_now_ms();
    int rc = handle_packet(d, pkt, len);
    rsp_session_set_deadline(d->s, 0);
    if (rc < 0 && door_now_ms() - t0 >= (uint64_t)dl)
        door_log(d, "packet '%.*s%s': its deadline of %g s has passed", (int)(len > 40 ? 40 : len),
                 pkt, len > 40 ? "..." : "", dl / 1000.0);
    return rc;
}

/* One packet.  0, or -1 when the door cannot go on with this front end. */
static int
handle_packet(struct door *d, const char *pkt, size_t len)
{
    d->packets++;
    if (len == 15 && starts(pkt, len, "QStartNoAckMode")) {
        int rc = send_str(d, "OK");
        d->ack = false;
        return rc;
    }
    if (starts(pkt, len, "qSupported"))
        return on_qsupported(d, pkt, len);
    /* Packets only lldb sends (at its connect, before any memory read). */
    if (starts(pkt, len, "QThreadSuffixSupported") || starts(pkt, len, "qHostInfo") ||
        starts(pkt, len, "jThreadsInfo"))
        d->line = DOOR_LINE_LLDB;
    if (d->borrowed && len == 1 && pkt[0] == '?')
        return on_status(d, pkt, len);
    if (starts(pkt, len, "qXfer:rspwalk-stacks:read:"))
        return on_stacks(d, pkt, len);
    if (starts(pkt, len, "Hg"))
        return on_hg(d, pkt, len);
    if (starts(pkt, len, "qXfer:threads:read:"))
        return on_xfer_threads(d, pkt, len);
    if (len > 1 && pkt[0] == 'T')
        return on_thread_alive(d, pkt, len);
    if (len == 1 && pkt[0] == 'g')
        return on_g(d, pkt, len);
    if (len > 1 && pkt[0] == 'm')
        return on_m(d, pkt, len);
    if (len > 1 && pkt[0] == 'p')
        return on_p(d, pkt, len);
    if (len == 12 && starts(pkt, len, "jThreadsInfo"))
        return on_jthreads(d, pkt, len);
    if (starts(pkt, len, "qThreadStopInfo"))
        return on_thread_stop_info(d, pkt, len);
    if (len == 12 && (starts(pkt, len, "qfThreadInfo") || starts(pkt, len, "qsThreadInfo")))
        return on_thread_list(d, pkt, len);
    if (is_resume(pkt, len))
        return on_resume(d, pkt, len);
    if (len > 0 && strchr("MXGPZz", pkt[0]) != NULL) {
        /* The stub hides its breakpoints from reads: 'Z' and 'z' change
         * nothing read.  A register write ('P', 'G': gdb moving the PC back
         * over a breakpoint) changes the registers of the thread written,
         * and the walk's frames, not memory or the other threads. */
        if (pkt[0] == 'M' || pkt[0] == 'X')
            door_drop(d);
        if (pkt[0] != 'Z' && pkt[0] != 'z' && sync_hg(d) < 0)
            return -1;
        int64_t tid = d->fe_tid > 0 ? d->fe_tid : stop_tid(d);
        if (pkt[0] == 'P' || pkt[0] == 'G') {
            door_regs_written(d, tid);
            door_memo_clear(&d->memo); /* the 'p' replies kept */
        }
        int rc = d->borrowed && (pkt[0] == 'Z' || pkt[0] == 'z') ? on_breakpoint(d, pkt, len)
                                                                 : pass(d, pkt, len);
        /* Memory writes change what the process read (not its library list). */
        if (pkt[0] == 'M' || pkt[0] == 'X')
            sw_proc_rsp_forget_reads(sw_walker_proc(d->w));
        else if (pkt[0] == 'P' || pkt[0] == 'G')
            sw_proc_rsp_forget_regs(sw_walker_proc(d->w), (sw_tid)tid);
        return rc;
    }
    if (d->borrowed && len > 0 && pkt[0] == 'D') {
        /* The owner's link stays: the target runs on when the door ends. */
        door_drop(d);
        d->ended = d->detached = true;
        return send_str(d, "OK");
    }
    if ((len > 0 && (pkt[0] == 'D' || pkt[0] == 'k')) || starts(pkt, len, "vKill")) {
        door_drop(d);
        d->ended = true;
        if (pkt[0] == 'k') /* no reply: the stub ends */
            return rsp_pass_resume(d->s, pkt, len) < 0 ? -1 : 0;
        return pass(d, pkt, len);
    }
    if (starts(pkt, len, "vRun") || starts(pkt, len, "vAttach")) {
        const char *r;
        size_t rl;
        door_drop(d);
        if (rsp_pass_request(d->s, pkt, len, &r, &rl) < 0) {
            door_log(d, "%s", rsp_session_errmsg(d->s));
            return -1;
        }
        if (send_packet(d, r, rl) < 0)
            return -1;
        took_stop(d, r, rl);
        return 0;
    }
    return pass(d, pkt, len);
}

/* ---- listening ---------------------------------------------------------------------------- */

static bool
is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, &in6addr_loopback,
                      sizeof in6addr_loopback) == 0;
    return false;
}

int
door_listen_loopback(const char *hp, int backlog, char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(hp, ':');
    if (colon == NULL || colon == hp || colon[1] == '\0' || (size_t)(colon - hp) >= sizeof host) {
        snprintf(err, errlen, "not HOST:PORT");
        return -1;
    }
    memcpy(host, hp, (size_t)(colon - hp));
    host[colon - hp] = '\0';
    char *h = host;
    if (h[0] == '[' && h[strlen(h) - 1] == ']') {
        h[strlen(h) - 1] = '\0';
        h++;
    }
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
    int rc = getaddrinfo(h, colon + 1, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "%s", gai_strerror(rc));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *a = ai; a != NULL; a = a->ai_next) {
        if (!is_loopback(a->ai_addr)) {
            freeaddrinfo(ai);
            snprintf(err, errlen,
                     "not a loopback address (the protocol has no authentication: it is "
                     "served on this host only)");
            return -1;
        }
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, backlog) == 0)
            break;
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        snprintf(err, errlen, "cannot listen: %s", strerror(e));
    return fd;
}

/* A listening socket on SPEC (HOST:PORT, [V6]:PORT), loopback only. */
static int
door_listen(struct door *d, const char *spec)
{
    char why[200];
    int fd = door_listen_loopback(spec, 1, why, sizeof why);
    if (fd < 0) {
        door_log(d, "--rsp-listen '%s': %s", spec, why);
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char nhost[256], nport[32];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, nhost, sizeof nhost, nport, sizeof nport,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        door_log(d, "listening on %s%s%s:%s", ss.ss_family == AF_INET6 ? "[" : "", nhost,
                 ss.ss_family == AF_INET6 ? "]" : "", nport);
    return fd;
}

/* Serve the front end on d->fd until it leaves.  -1 when the stub's link is lost. */
static int
serve_one(struct door *d)
{
    d->ack = true;
    d->line = DOOR_LINE_GDB;
    d->fe_multiprocess = false;
    d->rpos = d->rlen = 0;
    d->last.len = 0;
    d->packets = d->answered = 0;
    d->rt0 = rsp_session_stats(d->s)->round_trips;
    int rc;
    while ((rc = read_packet(d)) > 0) {
        if (rc == 2) {
            /* An interrupt while stopped: the stub answers with a stop. */
            const char *r;
            size_t rl;
            if (rsp_interrupt(d->s) < 0 || rsp_pass_wait_stop(d->s, 1000, &r, &rl) < 0)
                continue;
            if (send_packet(d, r, rl) < 0)
                break;
            took_stop(d, r, rl);
            continue;
        }
        if (handle(d, d->pkt.p, d->pkt.len) < 0) {
            rc = -1;
            break;
        }
    }
    door_log(d,
             "front end left: %" PRIu64 " packets, %" PRIu64 " answered from the stop's walk, "
             "%" PRIu64 " upstream round trips",
             d->packets, d->answered, rsp_session_stats(d->s)->round_trips - d->rt0);
    return rc < 0 ? -1 : 0;
}

int
door_serve(const struct door_config *cfg)
{
    struct door d = { .cfg = cfg,
                      .log = cfg->log ? cfg->log : stderr,
                      .fd = -1,
                      .stopped = true,
                      .up_synced = true };
    struct rsp_session_config scfg;
    struct sw_errbuf e = { 0 };
    struct rsp_session *rs = NULL;
    struct sw_proc *p = NULL;
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 10000;
    scfg.deadline_ms = cfg->deadline_ms > 0 ? cfg->deadline_ms : 0;
    /* The stub first: "listening" then means ready to serve. */
    if (rsp_session_open(cfg->target, &scfg, &rs, &e) < 0) {
        door_log(&d, "%s", e.msg);
        return -1;
    }
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = cfg->exe;
    if (sw_proc_rsp_new(rs, &pcfg, &p, &e) < 0) { /* closes RS on failure */
        door_log(&d, "%s", e.msg);
        return -1;
    }
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.exe = cfg->exe;
    wcfg.sysroot = cfg->sysroot;
    wcfg.lib_path = cfg->lib_path;
    wcfg.debug_dir = cfg->debug_dir;
    wcfg.cache_dir = cfg->cache_dir;
    wcfg.max_frames = cfg->max_frames;
    if (sw_walker_new(p, &wcfg, &d.w, &e) < 0) { /* frees P on failure */
        door_log(&d, "%s", e.msg);
        return -1;
    }
    rsp_session_set_deadline(rs, 0); /* from now on, each packet's (handle) */
    int lfd = door_listen(&d, cfg->listen);
    if (lfd < 0) {
        sw_walker_free(d.w);
        return -1;
    }
    d.s = rs;
    const struct rsp_stop *st = rsp_last_stop(rs);
    d.stopped = !(st != NULL && (st->kind == RSP_STOP_EXITED || st->kind == RSP_STOP_KILLED));
    int rc = 0;
    while (!d.ended) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            door_log(&d, "accept: %s", strerror(errno));
            rc = -1;
            break;
        }
        /* An ack and its reply are two writes: without this, the second
         * waits for the front end's delayed ack of the first. */
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        d.fd = fd;
        rc = serve_one(&d);
        close(fd);
        d.fd = -1;
        if (rc < 0)
            break;
    }
    close(lfd);
    door_drop(&d);
    free(d.pkt.p);
    free(d.out.p);
    free(d.last.p);
    free(d.xreq.p);
    free(d.xreply.p);
    free(d.reply.p);
    door_memo_fini(&d.memo);
    sw_walker_free(d.w);
    return rc;
}

/* Borrowed link, the front end gone: a target it left running is stopped
 * (the owner resumes it through its own session, which then knows), and
 * its breakpoints still inserted are removed. */
static int
door_hand_back(struct door *d)
{
    const char *r;
    size_t rl;
    if (d->left_running) {
        if (rsp_interrupt(d->s) < 0 ||
            rsp_pass_wait_stop(d->s, d->cfg->timeout_ms > 0 ? d->cfg->timeout_ms : 10000, &r, &rl) <
                0) {
            door_log(d, "stopping the target the front end left running: %s",
                     rsp_session_errmsg(d->s));
            return -1;
        }
        took_stop(d, r, rl);
    }
    if (!d->stopped)
        return 0; /* exited: nothing to remove */
    unsigned n = 0;
    for (char *p = d->bps.p; p != NULL && p < d->bps.p + d->bps.len; n++) {
        char *nl = strchr(p, '\n');
        if (rsp_pass_request(d->s, p, (size_t)(nl - p), &r, &rl) < 0) {
            door_log(d, "removing a breakpoint the front end left: %s", rsp_session_errmsg(d->s));
            return -1;
        }
        p = nl + 1;
    }
    if (n > 0)
        door_log(d, "removed %u breakpoint%s the front end left inserted", n, n == 1 ? "" : "s");
    d->bps.len = 0;
    return 0;
}

int
door_serve_link(const struct door_config *cfg, struct sw_walker *w, int fd, bool *detached)
{
    struct door d = { .cfg = cfg,
                      .log = cfg->log ? cfg->log : stderr,
                      .w = w,
                      .s = sw_proc_rsp_session(sw_walker_proc(w)),
                      .fd = fd,
                      .borrowed = true };
    const struct rsp_stop *st = rsp_last_stop(d.s);
    d.stopped = !(st != NULL && (st->kind == RSP_STOP_EXITED || st->kind == RSP_STOP_KILLED));
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int rc = serve_one(&d);
    if (rc == 0)
        rc = door_hand_back(&d);
    *detached = rc == 0 && d.stopped && d.detached;
    door_drop(&d);
    free(d.pkt.p);
    free(d.out.p);
    free(d.last.p);
    free(d.xreq.p);
    free(d.xreply.p);
    free(d.reply.p);
    free(d.bps.p);
    door_memo_fini(&d.memo);
    return rc;
}
