/* server/doors.h -- rspwalkd's front doors beside HTTP: DAP and RSP listeners.
 *
 * One thread per session; a session on a registered target borrows its
 * link (srv_target_door in server/registry.h): the stub serves one client,
 * the server's.  Not the HTTP server (server/http.h).
 */
#ifndef RSPWALK_SERVER_DOORS_H
#define RSPWALK_SERVER_DOORS_H

#include <stddef.h>
#include <stdint.h>

struct srv_registry;
struct srv_doors;

struct srv_doors_config {
    struct srv_registry *registry; /* borrowed; outlives the doors */
    int timeout_ms;                /* per protocol read of a DAP session's own link */
    int deadline_ms;               /* per DAP request on it (dap_config.deadline_ms); 0: none */
    const char *cache_dir;         /* borrowed; NULL: the library's default */
};

/* No listeners yet.  Returns 0 or -1 with the message in ERR.  *OUT:
 * srv_doors_free. */
int srv_doors_new(const struct srv_doors_config *cfg, struct srv_doors **out, char *err,
                  size_t errlen);

/* Listen on SPEC (HOST:PORT, a loopback address: neither protocol has
 * authentication) and serve DAP sessions there: attach {"target", "exe",
 * "sysroot"} opens the session's own link (HOST:PORT targets only), attach
 * {"id": "ID"} borrows registered target ID's.  *BOUND (when not NULL, of
 * BOUNDLEN bytes): the address bound, with the port the kernel chose for
 * port 0.  Returns 0 or -1 with the message in ERR. */
int srv_doors_dap_listen(struct srv_doors *d, const char *spec, char *bound, size_t boundlen,
                         char *err, size_t errlen);

/* Listen on SPEC (HOST:PORT=ID, loopback) and serve each connection the
 * RSP door over registered target ID's link, one session at a time (a
 * connection while one goes is closed, with the reason on stderr).
 * Returns 0 or -1 with the message in ERR. */
int srv_doors_rsp_listen(struct srv_doors *d, const char *spec, char *bound, size_t boundlen,
                         char *err, size_t errlen);

/* Close the listeners, end every session (its socket shut down, so its
 * target is left as on a client's disconnect) and join their threads.
 * Before srv_registry_free.  NULL is a no-op. */
void srv_doors_free(struct srv_doors *d);

#endif /* RSPWALK_SERVER_DOORS_H */
