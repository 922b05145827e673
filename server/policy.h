/* server/policy.h -- what a client of the HTTP API may register.
 *
 * A target registered over the API makes the server connect somewhere and
 * read files; the operator's options decide how far: the '|COMMAND' form runs
 * a program (--allow-commands), device paths and Unix sockets open local
 * endpoints (--allow-devices), and "exe" and "sysroot" must resolve under a
 * directory given with --allow-root.  Targets from rspwalkd's own command
 * line are the operator's and are not checked here.
 */
#ifndef RSPWALK_SERVER_POLICY_H
#define RSPWALK_SERVER_POLICY_H

#include <stdbool.h>
#include <stddef.h>

struct srv_policy {
    bool allow_commands;
    bool allow_devices;
    const char *const *roots; /* borrowed; resolved directories (realpath), NROOTS of them */
    size_t nroots;
};

/* What a client asked to register, checked.  EXE and SYSROOT become the
 * resolved paths the server will use (owned; srv_policy_target_fini). */
struct srv_policy_target {
    char *exe;     /* NULL: none asked */
    char *sysroot; /* NULL: none asked */
};

/* Check TARGET, EXE and SYSROOT (either may be NULL) against P.  Returns 0
 * and fills *OUT; 400 (malformed) or 403 (refused by the policy), the HTTP
 * status, with a one-line message naming the field in ERR. */
int srv_policy_check(const struct srv_policy *p, const char *target, const char *exe,
                     const char *sysroot, struct srv_policy_target *out, char *err, size_t errlen);

void srv_policy_target_fini(struct srv_policy_target *t);

#endif /* RSPWALK_SERVER_POLICY_H */
