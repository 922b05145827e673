/* dap/dap.h -- the Debug Adapter Protocol front door: one session per client.
 *
 * `rspwalk --dap` serves one session on stdin/stdout; rspwalkd serves one per
 * TCP connection (dap_serve_fd on the accepted socket).  A session is
 * transport-neutral: it is fed bytes and writes framed messages through a
 * callback; dap_serve_fd is the poll loop over a pair of descriptors.  The
 * protocol: https://microsoft.github.io/debug-adapter-protocol/specification,
 * what is answered and how: docs/usage.md, "Debug Adapter Protocol".
 * Not part of librspwalk: it uses only the public API (include/rspwalk/).
 */
#ifndef RSPWALK_DAP_H
#define RSPWALK_DAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The largest message body accepted (the Content-Length header): requests are
 * small; a larger one is answered with an error and skipped unread. */
#define DAP_MAX_MESSAGE (1u << 20)

/* What attach gets from a registered target's id (rspwalkd's registry). */
struct dap_target {
    const char *target;  /* the CLI's TARGET; borrowed until the next lookup call */
    const char *exe;     /* may be NULL */
    const char *sysroot; /* may be NULL */
};

/* How a session works.  dap_config_init gives the defaults; every pointer is
 * borrowed and must outlive the sessions made with it. */
struct dap_config {
    /* Attach may name '|COMMAND' and /dev/ device targets.  Default false:
     * refused, since the attach arguments come from the client (rspwalkd
     * serves clients that must not run commands on its host).  rspwalk
     * --dap sets it: its client is its own user's editor. */
    bool allow_local;
    int timeout_ms; /* per protocol read; default 10000 */
    /* Each request's whole conversation with the stub, attach's connect
     * included (rsp_session_set_deadline); a request past it gets an error
     * response naming it and the link is given up (the stub may answer it
     * later, out of turn).  0: none; default 60000. */
    int deadline_ms;
    const int *pass;       /* signals (gdb numbers) passed to the target without a stop */
    size_t npass;          /* default: none */
    size_t max_frames;     /* per walk; 0: the walker's default */
    const char *debug_dir; /* NULL: the walker's default */
    const char *cache_dir; /* NULL: the walker's default */
    /* OPTIONAL: attach {"id": ID} asks this for the target registered as ID;
     * returns 0 with *OUT filled, or -1 (no such target).  NULL: attach
     * takes only {"target", ...}. */
    int (*lookup)(void *arg, const char *id, struct dap_target *out);
    void *lookup_arg;
    /* OPTIONAL: one line per protocol error and target event, for the
     * operator (rspwalk --dap: stderr).  NULL: none. */
    FILE *log;
};

void dap_config_init(struct dap_config *cfg);

struct dap_session;

/* Where a session writes: LEN bytes of framed messages at BUF, all of them.
 * Returns 0, or -1 when the client is gone (the session then ends). */
typedef int (*dap_write_fn)(void *arg, const void *buf, size_t len);

/* A new session with no target.  CFG (may be NULL: the defaults) is copied,
 * its pointers borrowed.  Returns 0 or -1 (out of memory); *OUT: caller frees
 * with dap_session_free. */
int dap_session_new(const struct dap_config *cfg, dap_write_fn write, void *write_arg,
                    struct dap_session **out);

/* The next LEN bytes from the client.  Every complete message is handled now
 * (its response and events written before this returns); a malformed one is
 * answered with an error response.  Returns 0, or -1 when the session has
 * ended (disconnect answered, or the client cannot be written to). */
int dap_session_feed(struct dap_session *s, const void *buf, size_t len);

/* The descriptor to poll for readability while the target runs (a stop may
 * be pending), or -1 when nothing is running.  Valid until the next call on S. */
int dap_session_target_fd(struct dap_session *s);

/* Called when dap_session_target_fd polled readable: takes in the stop or
 * exit, if one came, and writes its events.  Returns as dap_session_feed. */
int dap_session_target_event(struct dap_session *s);

/* Whether the session has ended (disconnect answered or the client gone). */
bool dap_session_ended(const struct dap_session *s);

/* End S: the target is left as the client last had it (stopped, or running
 * if it asked to continue; detached then) and the link closed.  NULL is a
 * no-op. */
void dap_session_free(struct dap_session *s);

/* Serve one session: read requests from IN_FD, write to OUT_FD (the same
 * descriptor for a socket), until disconnect or end of input, watching the
 * target while it runs.  Neither descriptor is closed.  Writes to a socket
 * raise no SIGPIPE.  Blocks the calling thread; sessions on different
 * threads share nothing.  Returns 0 at a clean end (disconnect or EOF), -1
 * when reading or writing failed (the reason on CFG->log). */
int dap_serve_fd(int in_fd, int out_fd, const struct dap_config *cfg);

#endif /* RSPWALK_DAP_H */
