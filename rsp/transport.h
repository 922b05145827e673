/* rsp/transport.h -- byte transports under the RSP codec.
 *
 * TCP (HOST:PORT, [V6]:PORT, TCP_NODELAY), Unix sockets (unix:PATH), serial
 * devices (/dev/ttyX[@BAUD], raw termios) and a spawned command over a
 * socketpair ('|COMMAND', its child reaped by close).  Bytes only: no framing.
 * rsp/transport_open.c turns a spec into one of them (the top of the
 * transport files); each constructor builds on rsp/transport.c's descriptor
 * transport (the bottom).
 */
#ifndef RSPWALK_RSP_TRANSPORT_H
#define RSPWALK_RSP_TRANSPORT_H

#include <stddef.h>
#include <sys/types.h>

#include "rspwalk/types.h"

struct rsp_transport;

/* Every member REQUIRED.  Results are 0 or a negative SW_E* code, with the
 * message in T->err. */
struct rsp_transport_ops {
    /* Write all LEN bytes (retrying short writes) within T->write_timeout_ms.
     * SW_ECONN if the peer is gone, SW_ETIMEDOUT if it read too little. */
    int (*write)(struct rsp_transport *t, const void *buf, size_t len);
    /* Read at least 1 and at most CAP bytes, waiting up to TIMEOUT_MS (-1:
     * forever).  *GOT is the count.  SW_ETIMEDOUT when nothing came,
     * SW_ECONN when the peer hung up. */
    int (*read)(struct rsp_transport *t, void *buf, size_t cap, int timeout_ms, size_t *got);
    /* Release everything; the transport is freed. */
    void (*close)(struct rsp_transport *t);
};

struct rsp_transport {
    const struct rsp_transport_ops *ops; /* borrowed, static */
    int fd;                              /* the descriptor read, for poll(); -1 if none */
    char *name;                          /* owned: the spec, for messages */
    /* How long one write may wait for the peer to read (a stub that reads
     * nothing), set by the exchange before each write; 0 or less: forever. */
    int write_timeout_ms;
    struct sw_errbuf err;
};

/* Open SPEC (rsp/transport_open.c), waiting up to TIMEOUT_MS to connect.
 * Returns 0 or a code with a message in ERR naming SPEC and the cause
 * ("127.0.0.1:1: connection refused").  *OUT: close with rsp_transport_close. */
int rsp_transport_open(const char *spec, int timeout_ms, struct rsp_transport **out,
                       struct sw_errbuf *err);

/* Close T (its ops->close).  NULL is a no-op. */
void rsp_transport_close(struct rsp_transport *t);

/* The constructors behind rsp_transport_open, for tests. */
int rsp_transport_tcp_open(const char *host, const char *port, int timeout_ms,
                           struct rsp_transport **out, struct sw_errbuf *err);
int rsp_transport_unix_open(const char *path, int timeout_ms, struct rsp_transport **out,
                            struct sw_errbuf *err);
int rsp_transport_serial_open(const char *dev, unsigned baud, struct rsp_transport **out,
                              struct sw_errbuf *err);
int rsp_transport_pipe_open(const char *command, struct rsp_transport **out, struct sw_errbuf *err);
/* A transport over an already connected descriptor FD (taken over, closed
 * even on failure), e.g. one end of a socketpair in tests.  Sockets are
 * written with MSG_NOSIGNAL, other descriptors (ttys) with write(): hand it
 * a socketpair rather than a pipe, whose dead reader would raise SIGPIPE. */
int rsp_transport_fd_open(int fd, const char *name, struct rsp_transport **out,
                          struct sw_errbuf *err);

/* The process id of a '|COMMAND' transport's child (-1 for any other
 * transport, or once the child has been reaped). */
pid_t rsp_transport_pipe_pid(const struct rsp_transport *t);

/* ---- for the rsp/transport_*.c constructors only ----------------------- */

/* Milliseconds left until DEADLINE_US (sw_now_us() clock), for poll(); a
 * negative TIMEOUT_MS (forever) gives -1. */
int rsp_transport_ms_left(uint64_t deadline_us, int timeout_ms);

/* Allocate SIZE bytes (a struct whose first member is the rsp_transport) with
 * OPS, FD (taken over, closed on failure) and a copy of NAME. */
int rsp_transport_fd_new(int fd, const char *name, const struct rsp_transport_ops *ops, size_t size,
                         struct rsp_transport **out, struct sw_errbuf *err);
/* The read op of every descriptor transport: poll() then read(). */
int rsp_transport_fd_read(struct rsp_transport *t, void *buf, size_t cap, int timeout_ms,
                          size_t *got);
/* The write op of every socket transport: send() with MSG_NOSIGNAL. */
int rsp_transport_sock_write(struct rsp_transport *t, const void *buf, size_t len);

#endif /* RSPWALK_RSP_TRANSPORT_H */
