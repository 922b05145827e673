/* server/registry.h -- the targets rspwalkd serves: one supervised link each.
 *
 * The registry holds every target the server knows (from the command line,
 * the API and the store), keeps one link per target (states below; reconnect
 * with backoff; a stub that dies or hangs affects only its own target), and
 * walks them: concurrently across targets, one conversation at a time on each
 * link.  Every target's walker shares one module cache (one parsed ELF, DWARF
 * and CFI per build-id).  A walk of a target that has not resumed since its
 * last walk is answered from that walk's document.  The HTTP layer
 * (server/http.c) calls only what this header declares, and the types of
 * server/registry_types.h, which it includes.
 *
 * Threads: every function may be called from any thread at once.
 */
#ifndef RSPWALK_SERVER_REGISTRY_H
#define RSPWALK_SERVER_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/registry_types.h"

struct srv_registry;
struct srv_store;

struct srv_registry_config {
    struct srv_store *store; /* borrowed; targets and snapshots kept there; NULL: none */
    size_t max_targets;      /* 0: 1024 */
    int timeout_ms;          /* per protocol read; 0: 10000 */
    int walk_deadline_ms;    /* a whole walk of one target; 0: 30000 */
    /* Each request's conversation on a link (struct srv_link_env.deadline_ms);
     * 0: walk_deadline_ms less a tenth, so that the link's own error, which
     * names the request, comes before the waiting request gives up. */
    int link_deadline_ms;
    size_t max_threads;    /* per target's thread list; 0: the library's default */
    const char *cache_dir; /* the library's cache directory; NULL: its default */
    srv_event_fn event;    /* NULL: none */
    void *event_arg;
};

/* A new registry; the store's targets are added back (links started).
 * Returns 0, or a code with the message in ERR.  *OUT: srv_registry_free. */
int srv_registry_new(const struct srv_registry_config *cfg, struct srv_registry **out, char *err,
                     size_t errlen);

/* Stop every link and free.  Each target is left as found: one the server
 * stopped for a walk is resumed, one it found stopped stays stopped; the
 * links are closed without detaching.  NULL is a no-op. */
void srv_registry_free(struct srv_registry *r);

/* Register SPEC and start its link (connecting in the background: the call
 * does not wait for the stub).  PERSIST: keep it in the store.  *ID gets its
 * id: the store's when kept there, else the registry's own (from 1 without
 * a store, from 2^40 with one, so that the two never meet).  A TARGET
 * already registered with the same exe and sysroot is that target (0 and
 * its id; one link per stub); with others, SRV_ECONFLICT.  Returns 0 or a
 * code with the message in ERR. */
int srv_target_add(struct srv_registry *r, const struct srv_target_spec *spec, bool persist,
                   int64_t *id, char *err, size_t errlen);

/* Forget target ID (and its stored history), leaving it as found. */
int srv_target_delete(struct srv_registry *r, int64_t id, char *err, size_t errlen);

/* JSON text of one target ({"id", "name", "target", "exe", "sysroot", "arch",
 * "stub", "state", "error", "signal", "stats"}) or of all ([...], in id
 * order).  "signal": the stop's signal (gdb's numbering) while stopped, else
 * null; "stats": {"walks", "cached_walks" (answered from the document of the
 * same stop), "round_trips" (every round trip on its links, interrupts
 * counted), "last_walk_round_trips" (of the last walk that talked to the
 * stub: stop, walk and resume), "reconnects"}.  *OUT: caller frees with
 * free(). */
int srv_target_json(struct srv_registry *r, int64_t id, char **out, char *err, size_t errlen);
int srv_targets_json(struct srv_registry *r, char **out, char *err, size_t errlen);

/* Options of a walk. */
struct srv_walk_opts {
    const char *thread; /* one thread by its label or number; NULL: all */
    bool locals;
    bool lines;        /* each frame's source file and line */
    size_t max_frames; /* 0: the library's default */
};

/* The stack document (docs/json.md, as `rspwalk -f json` writes it) of target
 * ID.  A running target is stopped for the walk and resumed after it; a
 * stopped one stays stopped.  The snapshot is kept in the store.  *DOC:
 * caller frees with free(). */
int srv_target_stacks(struct srv_registry *r, int64_t id, const struct srv_walk_opts *o, char **doc,
                      char *err, size_t errlen);

/* The documents of the N targets IDS (N == 0: every target), walked
 * concurrently: {"targets": [{"id": ID, <the document's members>} or
 * {"id": ID, "error": "..."}]}, in the order asked.  One slow or dead stub
 * delays no other beyond the walk deadline. */
int srv_stacks_all(struct srv_registry *r, const int64_t *ids, size_t n,
                   const struct srv_walk_opts *o, char **doc, char *err, size_t errlen);

/* Resume target ID (state running), or stop it (state stopped). */
int srv_target_resume(struct srv_registry *r, int64_t id, char *err, size_t errlen);
int srv_target_pause(struct srv_registry *r, int64_t id, char *err, size_t errlen);

/* Start sampling the N targets IDS (N == 0: all) at HZ for SECONDS in the
 * background: each tick stops, walks every thread, resumes, and stores the
 * documents (srv_store_sample_add) before the next tick.  Targets are left
 * as found at the end.  *ID gets the run's id; its progress comes as
 * "sample" events and from the store. */
int srv_sample_start(struct srv_registry *r, const int64_t *ids, size_t n, double hz,
                     double seconds, int64_t *id, char *err, size_t errlen);

/* End sample run ID now: its links end at their next sample and leave
 * their targets as found; the run is then "interrupted".  Waits for it to
 * end, at most the walk deadline.  Returns 0, or SRV_ENOTFOUND when no run
 * with ID is going (ended, or never started) with the message in ERR. */
int srv_sample_stop(struct srv_registry *r, int64_t id, char *err, size_t errlen);

/* Lend target ID's link to a door session: its link thread serves the
 * front end on FD (connected; borrowed, not closed) with the RSP door
 * until the front end leaves (server/doors.h), stopping the target for it
 * and leaving it after as srv_walk_door says.  Meanwhile the target's other
 * requests get SRV_ECONFLICT naming WHO.  Blocks until the session ends
 * (no deadline: the front end decides); srv_registry_free and
 * srv_target_delete end it by shutting FD.  Returns 0, or a code with the
 * message in ERR (no such target, no link, the link held by another door
 * session or a sample run, the link lost during the session). */
int srv_target_door(struct srv_registry *r, int64_t id, int fd, const char *who, char *err,
                    size_t errlen);

/* Whether target ID could take a door session now (it exists, has a link,
 * and no door session or sample run holds it): 0, or a code with the
 * message in ERR.  *EXE and *SYSROOT: its registered files, or NULL;
 * caller frees both with free().  A check, not a reservation. */
int srv_target_door_check(struct srv_registry *r, int64_t id, char **exe, char **sysroot, char *err,
                          size_t errlen);

#endif /* RSPWALK_SERVER_REGISTRY_H */
