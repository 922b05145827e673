/* door/door.h -- the RSP door: a GDB stub for a front end, a client of the real stub.
 *
 * `rspwalk --rsp-listen HOST:PORT TARGET` serves one front end (gdb, lldb)
 * at a time on HOST:PORT and passes its packets through to the stub at
 * TARGET, except the register and memory reads of the current stop, which
 * it answers from one walk of every thread, and qXfer:rspwalk-stacks (the
 * stack document).  What is answered and how: docs/usage.md, "The RSP door".
 * Not part of librspwalk: it uses only the public API (include/rspwalk/).
 */
#ifndef RSPWALK_DOOR_H
#define RSPWALK_DOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct sw_walker;

/* How the door works.  Every pointer is borrowed for door_serve's run. */
struct door_config {
    const char *listen;    /* HOST:PORT, a loopback address (port 0: any) */
    const char *target;    /* the stub: the CLI's TARGET */
    const char *exe;       /* local executable; NULL: ask the stub */
    const char *sysroot;   /* NULL: none */
    const char *lib_path;  /* NULL: none */
    const char *debug_dir; /* NULL: the walker's default */
    const char *cache_dir; /* NULL: the walker's default */
    int timeout_ms;        /* per upstream read; 0: 10000 */
    /* Each front-end packet's whole conversation with the stub (the wait of
     * a resume for its stop excepted: the program runs as long as it
     * runs), and the connect's; past it the packet fails, logged naming
     * it, and the link is given up.  0: none. */
    int deadline_ms;
    size_t max_frames; /* per walk; 0: the walker's default */
    /* One line per front end served and per failure; the first line is
     * "rspwalk: door: listening on HOST:PORT" (the port the kernel chose
     * when PORT is 0).  NULL: stderr. */
    FILE *log;
};

/* Connect to CFG->target, listen on CFG->listen and serve front ends one
 * after another until the stub's link ends (a front end's detach or kill
 * usually ends it).  Returns 0 when the link ended after serving, or -1
 * with the cause logged: a listen address that is not loopback or cannot
 * be bound, a stub that cannot be reached, a link lost mid-request. */
int door_serve(const struct door_config *cfg);

/* A socket listening on HP (HOST:PORT or [V6]:PORT) with BACKLOG, on a loopback
 * address only (neither the door nor the Debug Adapter Protocol has
 * authentication): the descriptor (the caller's), or -1 with the cause in
 * ERR (ERRLEN bytes). */
int door_listen_loopback(const char *hp, int backlog, char *err, size_t errlen);

/* Serve the one front end on FD over W's link, which stays its owner's
 * (rspwalkd's link thread): borrowed for the call, and FD too (not
 * closed).  Of CFG only target (the name in the stack document), log,
 * timeout_ms, deadline_ms and max_frames are used.  The target must be stopped (or
 * exited) when it begins.  Unlike door_serve, a detach ('D') is answered
 * here and not passed on, since the stub would end the owner's link with
 * it; when the front end leaves, the target is stopped again if it left it
 * running and the breakpoints it left inserted are removed, so that it is
 * stopped (or exited) on return.  *DETACHED: the front end detached (the
 * owner should let the target run).  Returns 0 when the front end left, or
 * -1 when the link was lost (logged). */
int door_serve_link(const struct door_config *cfg, struct sw_walker *w, int fd, bool *detached);

#endif /* RSPWALK_DOOR_H */
