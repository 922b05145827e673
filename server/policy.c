/* server/policy.c -- what a client of the HTTP API may register (server/policy.h).
 *
 * The checks run when a target is registered; a path is resolved once
 * (realpath) and the resolved path is what the registry gets, so a symbolic
 * link changed later does not move the server's reads.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "server/policy.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Longer strings are not targets or paths but payloads. */
#define TARGET_MAX 1024

static bool
has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

/* Absolute, with no empty, "." or ".." component: the path names what it
 * says before any resolution. */
static bool
path_is_plain(const char *p)
{
    if (p[0] != '/')
        return false;
    if (p[1] == '\0')
        return true;
    const char *c = p + 1;
    for (;;) {
        size_t n = strcspn(c, "/");
        if (n == 0 && c[0] == '/')
            return false;
        if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (c[n] == '\0')
            return true;
        c += n + 1;
        if (*c == '\0') /* one trailing slash is fine ("/srv/root/") */
            return true;
    }
}

static bool
under_root(const char *path, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return true;
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int
check_path(const struct srv_policy *p, const char *field, const char *path, bool want_dir,
           char **out, char *err, size_t errlen)
{
    if (strlen(path) >= PATH_MAX || has_control(path)) {
        snprintf(err, errlen, "%s: not a path", field);
        return 400;
    }
    if (!path_is_plain(path)) {
        snprintf(err, errlen, "%s: '%s' must be an absolute path without '.' or '..' components",
                 field, path);
        return 400;
    }
    if (p->nroots == 0) {
        snprintf(err, errlen,
                 "%s: refused: rspwalkd reads no file a client names unless started with "
                 "--allow-root DIR",
                 field);
        return 403;
    }
    char *real = realpath(path, NULL);
    if (!real) {
        snprintf(err, errlen, "%s: %s: %s", field, path, strerror(errno));
        return 400;
    }
    bool ok = false;
    for (size_t i = 0; i < p->nroots && !ok; i++)
        ok = under_root(real, p->roots[i]);
    if (!ok) {
        snprintf(err, errlen, "%s: refused: %s is not under a directory given with --allow-root",
                 field, path);
        free(real);
        return 403;
    }
    struct stat st;
    if (stat(real, &st) < 0 || (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
        snprintf(err, errlen, "%s: %s is not a %s", field, path,
                 want_dir ? "directory" : "regular file");
        free(real);
        return 400;
    }
    *out = real;
    return 0;
}

int
srv_policy_check(const struct srv_policy *p, const char *target, const char *exe,
                 const char *sysroot, struct srv_policy_target *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!target || !*target || strlen(target) > TARGET_MAX || has_control(target)) {
        snprintf(err, errlen,
                 "target: expected HOST:PORT, [V6ADDR]:PORT, unix:PATH, a device or "
                 "'|COMMAND' of at most 1024 printable characters");
        return 400;
    }
    if (target[0] == '|' && !p->allow_commands) {
        snprintf(err, errlen,
                 "target: refused: the '|COMMAND' form runs a program on the server; start "
                 "rspwalkd with --allow-commands to allow it");
        return 403;
    }
    if (target[0] == '/' && !p->allow_devices) {
        snprintf(err, errlen,
                 "target: refused: %s is a device path; start rspwalkd with --allow-devices to "
                 "allow it",
                 target);
        return 403;
    }
    if (strncmp(target, "unix:", 5) == 0 && !p->allow_devices) {
        snprintf(err, errlen,
                 "target: refused: Unix sockets are local endpoints; start rspwalkd with "
                 "--allow-devices to allow them");
        return 403;
    }
    int rc = 0;
    if (exe && (rc = check_path(p, "exe", exe, false, &out->exe, err, errlen)) != 0)
        return rc;
    if (sysroot &&
        (rc = check_path(p, "sysroot", sysroot, true, &out->sysroot, err, errlen)) != 0) {
        srv_policy_target_fini(out);
        return rc;
    }
    return 0;
}

void
srv_policy_target_fini(struct srv_policy_target *t)
{
    free(t->exe);
    free(t->sysroot);
    t->exe = t->sysroot = NULL;
}
