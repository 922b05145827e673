/* door/lldb.c -- LLDB's packets at the RSP door, made from the stop's walk.
 *
 * The formats are those of lldb's docs/lldb-gdb-remote.txt (jThreadsInfo,
 * qThreadStopInfo) as debugserver and lldb-server fill them.  Only
 * formatting: door.c reads the registers and stacks, and sends the reply.
 */
#include "door/lldb.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/errors.h"

static const char lldb_hexdig[] = "0123456789abcdef";

bool
door_lldb_reg_hex(const struct rsp_tdesc *td, const char *ghex, unsigned regnum, const char **p,
                  size_t *n)
{
    if (td == NULL || ghex == NULL)
        return false;
    for (size_t i = 0; i < td->nregs; i++) {
        const struct rsp_treg *r = &td->regs[i];
        if (r->regnum != regnum)
            continue;
        size_t off = 2 * r->offset, len = r->bitsize / 4;
        if (len == 0 || r->bitsize % 8 != 0 || strlen(ghex) < off + len ||
            memchr(ghex + off, 'x', len) != NULL)
            return false;
        *p = ghex + off;
        *n = len;
        return true;
    }
    return false;
}

/* The registers a front end's unwinder starts from: the description's core
 * feature (general registers, PC, SP, flags) up to 64 bits, and what the
 * stop reply expedited (some stubs expedite registers outside it). */
static bool
lldb_reg_wanted(const struct door_lldb_stop *st, const struct rsp_treg *r)
{
    if (st->stop != NULL)
        for (size_t i = 0; i < st->stop->nexpedited; i++)
            if (st->stop->expedited[i].regnum == r->regnum)
                return true;
    return r->bitsize <= 64 && r->feature != NULL && strstr(r->feature, ".core") != NULL;
}

static const struct door_lldb_thread *
lldb_thread_find(const struct door_lldb_stop *st, int64_t tid)
{
    for (size_t i = 0; i < st->nthreads; i++)
        if (st->threads[i].tid == tid)
            return &st->threads[i];
    return NULL;
}

/* The value of the register named by one of NAMES, read little-endian: on a
 * big-endian target it is wrong, and only moves the stack chunks to the
 * stopped thread's object (lldb caches every thread's chunks alike). */
static bool
lldb_reg_value(const struct door_lldb_stop *st, const char *ghex, const char *const *names,
               uint64_t *v)
{
    if (st->tdesc == NULL || ghex == NULL)
        return false;
    for (size_t k = 0; names[k] != NULL; k++)
        for (size_t i = 0; i < st->tdesc->nregs; i++) {
            const struct rsp_treg *r = &st->tdesc->regs[i];
            const char *p;
            size_t n;
            if (r->name == NULL || strcmp(r->name, names[k]) != 0 || r->bitsize > 64 ||
                !door_lldb_reg_hex(st->tdesc, ghex, r->regnum, &p, &n))
                continue;
            uint64_t x = 0;
            for (size_t b = n; b >= 2; b -= 2) {
                char h[3] = { p[b - 2], p[b - 1], '\0' };
                x = (x << 8) | (uint64_t)strtoul(h, NULL, 16);
            }
            *v = x;
            return true;
        }
    return false;
}

static const char *const lldb_sp_names[] = { "rsp", "esp", "sp", "r1", NULL };

/* Merged runs of adjacent ranges: [FIRST, END) of st->mem from index I. */
static size_t
lldb_run_end(const struct door_lldb_stop *st, size_t i)
{
    size_t k = i + 1;
    while (k < st->nmem && st->mem[k].addr == st->mem[k - 1].addr + st->mem[k - 1].len)
        k++;
    return k;
}

/* Write the runs of memory whose owner (the thread whose SP falls in the run,
 * else the stopped thread) is thread index T. */
static void
lldb_put_memory(FILE *f, const struct door_lldb_stop *st, const uint64_t *sps, size_t t,
                size_t stopped)
{
    bool first = true;
    fputs(",\"memory\":[", f);
    for (size_t i = 0; i < st->nmem;) {
        size_t end = lldb_run_end(st, i);
        uint64_t lo = st->mem[i].addr, hi = st->mem[end - 1].addr + st->mem[end - 1].len;
        size_t owner = stopped;
        for (size_t k = 0; k < st->nthreads; k++)
            if (sps[k] != 0 && sps[k] >= lo && sps[k] < hi) {
                owner = k;
                break;
            }
        if (owner == t) {
            fprintf(f, "%s{\"address\":%" PRIu64 ",\"bytes\":\"", first ? "" : ",", lo);
            for (size_t k = i; k < end; k++)
                for (size_t b = 0; b < st->mem[k].len; b++) {
                    fputc(lldb_hexdig[st->mem[k].data[b] >> 4], f);
                    fputc(lldb_hexdig[st->mem[k].data[b] & 15], f);
                }
            fputs("\"}", f);
            first = false;
        }
        i = end;
    }
    fputc(']', f);
}

/* Escape '#', '$', '}' and '*' of RAW (RLEN bytes) into *OUT (caller frees). */
static int
lldb_escape(const char *raw, size_t rlen, char **out, size_t *len)
{
    size_t n = 0;
    for (size_t i = 0; i < rlen; i++)
        n += strchr("#$}*", raw[i]) != NULL && raw[i] != '\0' ? 2 : 1;
    char *e = malloc(n + 1);
    if (e == NULL)
        return SW_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < rlen; i++) {
        if (raw[i] != '\0' && strchr("#$}*", raw[i]) != NULL) {
            e[k++] = '}';
            e[k++] = (char)(raw[i] ^ 0x20);
        } else {
            e[k++] = raw[i];
        }
    }
    e[k] = '\0';
    *out = e;
    *len = k;
    return 0;
}

static int64_t
lldb_stopped_tid(const struct door_lldb_stop *st)
{
    return st->stop != NULL && st->stop->has_thread ? st->stop->thread.tid : 0;
}

int
door_lldb_threads_info(const struct door_lldb_stop *st, char **out, size_t *len)
{
    char *raw = NULL;
    size_t rlen = 0;
    uint64_t *sps = calloc(st->nthreads ? st->nthreads : 1, sizeof *sps);
    FILE *f = sps != NULL ? open_memstream(&raw, &rlen) : NULL;
    if (f == NULL) {
        free(sps);
        return SW_ENOMEM;
    }
    size_t stopped = 0;
    for (size_t t = 0; t < st->nthreads; t++) {
        (void)lldb_reg_value(st, st->threads[t].regs_hex, lldb_sp_names, &sps[t]);
        if (st->threads[t].tid == lldb_stopped_tid(st))
            stopped = t;
    }
    fputc('[', f);
    for (size_t t = 0; t < st->nthreads; t++) {
        const struct door_lldb_thread *th = &st->threads[t];
        bool is_stop = th->tid == lldb_stopped_tid(st);
        int sig = is_stop && st->stop != NULL ? st->stop->signal : 0;
        fprintf(f, "%s{\"tid\":%" PRId64 ",\"signal\":%d", t ? "," : "", th->tid, sig);
        if (is_stop && st->stop != NULL && (st->stop->swbreak || st->stop->hwbreak))
            fputs(",\"reason\":\"breakpoint\"", f);
        if (st->tdesc != NULL && th->regs_hex != NULL) {
            bool first = true;
            fputs(",\"registers\":{", f);
            for (size_t i = 0; i < st->tdesc->nregs; i++) {
                const struct rsp_treg *r = &st->tdesc->regs[i];
                const char *p;
                size_t n;
                if (!lldb_reg_wanted(st, r) ||
                    !door_lldb_reg_hex(st->tdesc, th->regs_hex, r->regnum, &p, &n))
                    continue;
                fprintf(f, "%s\"%u\":\"%.*s\"", first ? "" : ",", r->regnum, (int)n, p);
                first = false;
            }
            fputc('}', f);
        }
        lldb_put_memory(f, st, sps, t, stopped);
        fputc('}', f);
    }
    fputc(']', f);
    free(sps);
    if (fclose(f) != 0) {
        free(raw);
        return SW_ENOMEM;
    }
    int rc = lldb_escape(raw, rlen, out, len);
    free(raw);
    return rc;
}

int
door_lldb_thread_stop_info(const struct door_lldb_stop *st, int64_t tid, char **out, size_t *len)
{
    const struct door_lldb_thread *th = lldb_thread_find(st, tid);
    if (th == NULL)
        return SW_ENOENT;
    char *raw = NULL;
    size_t rlen = 0;
    FILE *f = open_memstream(&raw, &rlen);
    if (f == NULL)
        return SW_ENOMEM;
    bool is_stop = tid == lldb_stopped_tid(st);
    int sig = is_stop && st->stop != NULL ? st->stop->signal : 0;
    int64_t pid =
        st->multiprocess && st->stop != NULL && st->stop->has_thread ? st->stop->thread.pid : 0;
    fprintf(f, "T%02x", (unsigned)sig & 0xff);
    if (pid > 0)
        fprintf(f, "thread:p%" PRIx64 ".%" PRIx64 ";", (uint64_t)pid, (uint64_t)tid);
    else
        fprintf(f, "thread:%" PRIx64 ";", (uint64_t)tid);
    if (is_stop && st->stop != NULL && st->stop->swbreak)
        fputs("swbreak:;", f);
    if (is_stop && st->stop != NULL && st->stop->hwbreak)
        fputs("hwbreak:;", f);
    for (size_t i = 0; st->tdesc != NULL && th->regs_hex != NULL && i < st->tdesc->nregs; i++) {
        const struct rsp_treg *r = &st->tdesc->regs[i];
        const char *p;
        size_t n;
        if (lldb_reg_wanted(st, r) && door_lldb_reg_hex(st->tdesc, th->regs_hex, r->regnum, &p, &n))
            fprintf(f, "%02x:%.*s;", r->regnum, (int)n, p);
    }
    if (fclose(f) != 0) {
        free(raw);
        return SW_ENOMEM;
    }
    int rc = lldb_escape(raw, rlen, out, len);
    free(raw);
    return rc;
}

/* ---- replies kept for the stop ------------------------------------------------------------- */

/* Reads whose reply depends only on the stopped process: what lldb asks
 * more than once between two resumes.  Memory ('m') is kept only when the
 * stub refused it (door.c answers the rest from the walk).  qSymbol is a
 * conversation, but the same request at the same stop gets the same reply
 * (lldb goes through gdbserver's "qSymbol::" look-up five times a stop). */
static const char *const memo_prefixes[] = {
    "qProcessInfo",
    "qHostInfo",
    "qOffsets",
    "qShlibInfoAddr",
    "qStructuredDataPlugins",
    "jThreadExtendedInfo:",
    "qMemoryRegionInfo:",
    "qXfer:features:read:",
    "qXfer:auxv:read:",
    "qXfer:libraries-svr4:read:",
    "qXfer:libraries:read:",
    "qXfer:exec-file:read:",
    "qFileLoadAddress:",
    "QThreadSuffixSupported",
    "qVAttachOrWaitSupported",
    "qGetWorkingDir",
    "qQueryGDBServer",
    "qSymbol:",
    NULL,
};

bool
door_memo_wanted(const char *pkt, size_t len)
{
    for (size_t i = 0; memo_prefixes[i] != NULL; i++) {
        size_t n = strlen(memo_prefixes[i]);
        if (len >= n && memcmp(pkt, memo_prefixes[i], n) == 0)
            return true;
    }
    return len > 1 && pkt[0] == 'm';
}

bool
door_memo_get(const struct door_memo *m, const char *pkt, size_t len, const char **reply,
              size_t *rlen)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->req_len[i] == len && memcmp(m->req[i], pkt, len) == 0) {
            *reply = m->reply[i];
            *rlen = m->reply_len[i];
            return true;
        }
    return false;
}

int
door_memo_put(struct door_memo *m, const char *pkt, size_t len, const char *reply, size_t rlen)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        char **rq = realloc(m->req, cap * sizeof *rq);
        if (rq != NULL)
            m->req = rq;
        char **rp = realloc(m->reply, cap * sizeof *rp);
        if (rp != NULL)
            m->reply = rp;
        size_t *ql = realloc(m->req_len, cap * sizeof *ql);
        if (ql != NULL)
            m->req_len = ql;
        size_t *pl = realloc(m->reply_len, cap * sizeof *pl);
        if (pl != NULL)
            m->reply_len = pl;
        if (rq == NULL || rp == NULL || ql == NULL || pl == NULL)
            return SW_ENOMEM;
        m->cap = cap;
    }
    char *q = malloc(len + 1), *r = malloc(rlen + 1);
    if (q == NULL || r == NULL) {
        free(q);
        free(r);
        return SW_ENOMEM;
    }
    memcpy(q, pkt, len);
    q[len] = '\0';
    memcpy(r, reply, rlen);
    r[rlen] = '\0';
    m->req[m->n] = q;
    m->reply[m->n] = r;
    m->req_len[m->n] = len;
    m->reply_len[m->n] = rlen;
    m->n++;
    return 0;
}

void
door_memo_clear(struct door_memo *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->req[i]);
        free(m->reply[i]);
    }
    m->n = 0;
}

void
door_memo_fini(struct door_memo *m)
{
    door_memo_clear(m);
    free(m->req);
    free(m->reply);
    free(m->req_len);
    free(m->reply_len);
    *m = (struct door_memo){ 0 };
}
