/* util/util.h -- shared internals: error messages, allocation, the environment, debug output, hex.
 *
 * The lowest layer: used by rsp/, arch/, targets/, walker/ and cli/; calls
 * nothing above it.  Not installed.
 */
#ifndef RSPWALK_UTIL_H
#define RSPWALK_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "rspwalk/errors.h"
#include "rspwalk/types.h"

/* Write a message into E and return CODE:
 *   return sw_fail(&s->err, SW_EPROTO, "reply to 'm%llx,%zx': ...", ...); */
int sw_fail(struct sw_errbuf *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sw_vfail(struct sw_errbuf *e, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Put "<prefix>" in front of the message already in E (context from a
 * higher layer).  Returns E->code. */
int sw_err_prefix(struct sw_errbuf *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy the message and code of SRC into DST; returns SRC->code. */
int sw_err_copy(struct sw_errbuf *dst, const struct sw_errbuf *src);

void sw_err_clear(struct sw_errbuf *e);

/* Whether CODE from a ProcessState read is a link failure (ends the walk)
 * rather than a fact about the frame or the file (NOT_ME, no symbols). */
static inline bool
sw_is_link_error(int code)
{
    return code == SW_ETIMEDOUT || code == SW_ECONN || code == SW_EEXITED || code == SW_ENOMEM;
}

/* Every allocation in the library goes through these, so the test build can
 * make the Nth one fail (sw_test_fail_alloc_at). */
void *sw_malloc(size_t n);
void *sw_calloc(size_t n, size_t size);
void *sw_realloc(void *p, size_t n);
char *sw_strdup(const char *s);
/* The array P of *CAP elements of SIZE bytes with room for NEED of them: P
 * itself when it has that room, else P reallocated to twice its capacity
 * (FIRST at least, NEED at least) with *CAP updated; the caller stores the
 * result back.  NULL when out of memory: P and *CAP are then unchanged and P
 * is still the caller's. */
void *sw_grow(void *p, size_t *cap, size_t need, size_t size, size_t first);
char *sw_strndup(const char *s, size_t n);
void sw_free(void *p);

/* Test hooks: make allocation number N (1-based, counted from this call)
 * fail; 0 turns failures off.  sw_test_alloc_count returns allocations so far.
 * The count is atomic (walkers in several threads allocate at once); a sweep
 * sets N while one thread runs. */
void sw_test_fail_alloc_at(unsigned long n);
unsigned long sw_test_alloc_count(void);

/* Debug channels from RSPWALK_DEBUG=pkt,step,cache,time,all (struct sw_env:
 * read once, from any thread).  TIME prefixes every debug line with the
 * milliseconds since the environment was read (then the packet trace is no
 * transcript for tests/tools/fake_transport.c). */
enum sw_debug_chan {
    SW_DBG_PKT = 1u << 0,
    SW_DBG_STEP = 1u << 1,
    SW_DBG_CACHE = 1u << 2,
    SW_DBG_TIME = 1u << 3,
};

/* The environment variables rspwalk reads (docs/usage.md, "Environment"),
 * read once per process on the first call (util/env.c): every getenv of the
 * library is there.  Code with a config reads its config, whose *_config_init
 * takes the default from here; code without one reads this. */
struct sw_env {
    bool no_cache;        /* RSPWALK_NO_CACHE set: caches off (the configs' no_cache) */
    bool no_pipeline;     /* RSPWALK_NO_PIPELINE set (rsp_session_config.no_pipeline) */
    bool cfi_whole_table; /* RSPWALK_CFI_WHOLE_TABLE=1: read the whole .eh_frame */
    unsigned debug;       /* RSPWALK_DEBUG: enum sw_debug_chan bits */
    char *xdg_cache_home; /* $XDG_CACHE_HOME, NULL if unset (the cache directory) */
    char *home;           /* $HOME, NULL if unset */
    uint64_t t0_us;       /* sw_now_us when it was read */
};

/* The environment, read on the first call; safe from any thread.  Borrowed,
 * valid for the life of the process. */
const struct sw_env *sw_env_get(void);

/* Test hook: read the environment again after setenv (tests only: not safe
 * while another thread uses the library). */
void sw_test_env_reread(void);

unsigned sw_debug_mask(void);
void sw_debug_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define sw_debug(chan, ...)                                                                        \
    do {                                                                                           \
        if (sw_debug_mask() & (chan))                                                              \
            sw_debug_printf(__VA_ARGS__);                                                          \
    } while (0)

/* Hex helpers.  sw_hex_val returns 0-15 or -1. */
int sw_hex_val(int c);
/* Decode 2*N hex digits at S into N bytes at OUT; returns 0 or -1 on a bad digit. */
int sw_hex_decode(const char *s, size_t n, uint8_t *out);
/* Encode N bytes at IN as 2*N lowercase hex digits at OUT (not terminated). */
void sw_hex_encode(const uint8_t *in, size_t n, char *out);

/* A growable byte buffer.  Owned data; sw_buf_fini frees it. */
struct sw_buf {
    char *data;
    size_t len, cap;
};
void sw_buf_init(struct sw_buf *b);
void sw_buf_fini(struct sw_buf *b);
int sw_buf_append(struct sw_buf *b, const void *p, size_t n); /* 0 or SW_ENOMEM */
int sw_buf_printf(struct sw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Keep data NUL-terminated after the last byte (not counted in len). */
int sw_buf_terminate(struct sw_buf *b);

/* mkdir -p PATH (modified while it runs, restored): the cache directories,
 * each one made mode 0700.
 * Returns 0 or SW_EIO naming the directory that cannot be made, in ERR. */
int sw_dirs_make(char *path, struct sw_errbuf *err);

/* Monotonic microseconds. */
uint64_t sw_now_us(void);

#endif /* RSPWALK_UTIL_H */
