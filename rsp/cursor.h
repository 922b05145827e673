/* rsp/cursor.h -- a reply cursor whose error is sticky.
 *
 * Read straight through a reply, check `failed` once, report the offset.
 * Borrowed views only; nothing is allocated.
 */
#ifndef RSPWALK_RSP_CURSOR_H
#define RSPWALK_RSP_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rsp_cur {
    const char *what; /* "stop reply", "qSupported": used in messages */
    const char *start, *p, *end;
    bool failed; /* sticky: the first failure stops all later reads */
};

struct rsp_span {
    const char *p;
    size_t len;
};

void rsp_cur_init(struct rsp_cur *c, const char *what, const char *buf, size_t len);
bool rsp_cur_eof(const struct rsp_cur *c);
size_t rsp_cur_offset(const struct rsp_cur *c);
/* Up to MAX_DIGITS hex digits (at least one) as a number; fails on none or overflow past 64 bits.
 */
uint64_t rsp_cur_hex(struct rsp_cur *c, size_t max_digits);
/* A '-'-prefixed or plain hex number ("-1" in thread ids). */
int64_t rsp_cur_shex(struct rsp_cur *c, size_t max_digits);
/* Consume CH or fail. */
bool rsp_cur_lit(struct rsp_cur *c, char ch);
/* Consume CH if it is next; never fails. */
bool rsp_cur_accept(struct rsp_cur *c, char ch);
/* Consume the literal string S if it is next; never fails. */
bool rsp_cur_accept_str(struct rsp_cur *c, const char *s);
/* The bytes up to (not including) the next DELIM or the end; DELIM is not consumed. */
struct rsp_span rsp_cur_until(struct rsp_cur *c, char delim);
/* The rest of the input. */
struct rsp_span rsp_cur_rest(struct rsp_cur *c);
/* 2*N hex digits into N bytes at OUT; fails on a short or bad run. */
bool rsp_cur_bytes(struct rsp_cur *c, uint8_t *out, size_t n);
/* key:value; pairs as in stop replies: KEY up to ':', VAL up to ';' (';' consumed). */
bool rsp_cur_kv(struct rsp_cur *c, struct rsp_span *key, struct rsp_span *val);
/* Mark the cursor failed (a semantic error found by the caller). */
void rsp_cur_fail(struct rsp_cur *c);

bool rsp_span_eq(struct rsp_span s, const char *lit);

#endif /* RSPWALK_RSP_CURSOR_H */
