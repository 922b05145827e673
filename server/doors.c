/* server/doors.c -- rspwalkd's DAP and RSP listeners: a thread per listener, one per session.
 *
 * RSP sessions and DAP sessions on registered targets are served by the
 * target's link thread (srv_target_door); a DAP session reaches it as the
 * target "unix:PATH", a socket in a private directory.  Not the protocols.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include "server/doors.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dap/dap.h"
#include "door/door.h"
#include "server/registry.h"
#include "server/util.h"

/* Connections waiting to be accepted on a listener. */
#define DOORS_BACKLOG 8

struct listener {
    struct listener *next;
    struct srv_doors *d;
    int fd;
    bool dap;   /* else RSP */
    int64_t id; /* RSP: the target served */
    char addr[128];
    pthread_t th;
};

/* One connection.  A DAP session on a registered target has a helper
 * thread: it accepts the session's own connection on SOCK and serves the
 * door there through the target's link until the session closes it. */
struct session {
    struct session *next;
    struct srv_doors *d;
    struct listener *l;
    int fd;
    char peer[64];
    pthread_t th;
    bool done; /* under d->mu: the thread has ended, join it */

    bool helper; /* started, not joined */
    pthread_t helper_th;
    int helper_lfd;
    int64_t helper_id;
    char sock[PATH_MAX];
    char target[PATH_MAX + 8]; /* "unix:" SOCK, for attach */
    char *exe, *sysroot;       /* owned: the registered target's */
};

struct srv_doors {
    struct srv_doors_config cfg;
    int wake[2];        /* a pipe: written once at srv_doors_free */
    pthread_mutex_t mu; /* below */
    struct listener *listeners;
    struct session *sessions;
    bool stopping;
    char dir[PATH_MAX]; /* the private directory of DAP sessions' sockets; "" until made */
    unsigned next_sock;
};

int
srv_doors_new(const struct srv_doors_config *cfg, struct srv_doors **out, char *err, size_t errlen)
{
    struct srv_doors *d = calloc(1, sizeof *d);
    if (d == NULL)
        return srv_fail(err, errlen, -1, "doors: out of memory");
    if (pipe(d->wake) < 0) {
        free(d);
        return srv_fail(err, errlen, -1, "doors: pipe: %s", strerror(errno));
    }
    d->cfg = *cfg;
    pthread_mutex_init(&d->mu, NULL);
    *out = d;
    return 0;
}

/* ---- listening ------------------------------------------------------------------------------ */

static void
name_of(const struct sockaddr *sa, socklen_t sl, char *buf, size_t len)
{
    char host[64], port[16];
    if (getnameinfo(sa, sl, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        snprintf(buf, len, "?");
    else
        snprintf(buf, len, "%s%s%s:%s", sa->sa_family == AF_INET6 ? "[" : "", host,
                 sa->sa_family == AF_INET6 ? "]" : "", port);
}

/* A listening socket on HP (HOST:PORT, [V6]:PORT; SPEC as the option gave
 * it, for messages), loopback only; its bound address into BOUND. */
static int
listen_on(const char *opt, const char *spec, const char *hp, char *bound, size_t boundlen,
          char *err, size_t errlen)
{
    char why[200];
    int fd = door_listen_loopback(hp, DOORS_BACKLOG, why, sizeof why);
    if (fd < 0)
        return srv_fail(err, errlen, -1, "%s '%s': %s", opt, spec, why);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        name_of((struct sockaddr *)&ss, sl, bound, boundlen);
    return fd;
}

/* ---- sessions ------------------------------------------------------------------------------- */

/* The helper of a DAP session on a registered target: accept the session's
 * link, then lend it the target's. */
static void *
helper_main(void *arg)
{
    struct session *s = arg;
    struct pollfd pf = { .fd = s->helper_lfd, .events = POLLIN };
    int timeout_ms = s->d->cfg.timeout_ms > 0 ? s->d->cfg.timeout_ms : 10000;
    int fd = poll(&pf, 1, timeout_ms) > 0 ? accept(s->helper_lfd, NULL, NULL) : -1;
    unlink(s->sock);
    close(s->helper_lfd);
    s->helper_lfd = -1;
    if (fd < 0) {
        srv_log("DAP session from %s: target %" PRId64 ": the session did not "
                "connect to its door",
                s->peer, s->helper_id);
        return NULL;
    }
    char who[128], err[512];
    snprintf(who, sizeof who, "DAP session from %s", s->peer);
    if (srv_target_door(s->d->cfg.registry, s->helper_id, fd, who, err, sizeof err) < 0)
        srv_log("%s: %s", who, err);
    close(fd);
    return NULL;
}

static void
helper_join(struct session *s)
{
    if (!s->helper)
        return;
    pthread_join(s->helper_th, NULL);
    s->helper = false;
    free(s->exe);
    free(s->sysroot);
    s->exe = s->sysroot = NULL;
}

/* The private directory of the sockets, made on first use.  D->mu held. */
static int
sock_dir_locked(struct srv_doors *d, char *err, size_t errlen)
{
    if (d->dir[0] != '\0')
        return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(d->dir, sizeof d->dir, "%s/rspwalkd-doors.XXXXXX",
             tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (mkdtemp(d->dir) == NULL) { /* mode 0700 */
        int e = errno;
        d->dir[0] = '\0';
        return srv_fail(err, errlen, -1, "a directory for the door's socket: %s", strerror(e));
    }
    return 0;
}

/* dap_config.lookup: attach {"id": ID} on registered target ID. */
static int
dap_lookup(void *arg, const char *id, struct dap_target *out)
{
    struct session *s = arg;
    struct srv_doors *d = s->d;
    char err[512], *end;
    errno = 0;
    long long v = strtoll(id, &end, 10);
    helper_join(s); /* an earlier attach that failed */
    if (*id == '\0' || *end != '\0' || errno != 0 || v <= 0) {
        srv_log("DAP session from %s: attach id '%s': not a target id", s->peer, id);
        return -1;
    }
    if (srv_target_door_check(d->cfg.registry, v, &s->exe, &s->sysroot, err, sizeof err) < 0) {
        srv_log("DAP session from %s: attach id %lld: %s", s->peer, v, err);
        return -1;
    }
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    pthread_mutex_lock(&d->mu);
    int rc = sock_dir_locked(d, err, sizeof err);
    unsigned n = d->next_sock++;
    pthread_mutex_unlock(&d->mu);
    int fd = -1;
    if (rc == 0) {
        int len = snprintf(s->sock, sizeof s->sock, "%.4000s/dap-%u.sock", d->dir, n);
        if (len < 0 || (size_t)len >= sizeof sun.sun_path)
            rc = srv_fail(err, sizeof err, -1, "%s: path too long for a socket", s->sock);
    }
    if (rc == 0) {
        memcpy(sun.sun_path, s->sock, strlen(s->sock) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof sun) < 0 || listen(fd, 1) < 0)
            rc = srv_fail(err, sizeof err, -1, "%s: %s", s->sock, strerror(errno));
    }
    if (rc == 0) {
        s->helper_lfd = fd;
        s->helper_id = v;
        if ((rc = pthread_create(&s->helper_th, NULL, helper_main, s)) != 0)
            srv_fail(err, sizeof err, -1, "no thread for the door: %s", strerror(rc));
    }
    if (rc != 0) {
        srv_log("DAP session from %s: attach id %lld: %s", s->peer, v, err);
        if (fd >= 0) {
            close(fd);
            unlink(s->sock);
        }
        free(s->exe);
        free(s->sysroot);
        s->exe = s->sysroot = NULL;
        return -1;
    }
    s->helper = true;
    snprintf(s->target, sizeof s->target, "unix:%s", s->sock);
    out->target = s->target;
    out->exe = s->exe;
    out->sysroot = s->sysroot;
    return 0;
}

static void *
session_main(void *arg)
{
    struct session *s = arg;
    struct srv_doors *d = s->d;
    char err[512];

    if (s->l->dap) {
        struct dap_config cfg;
        dap_config_init(&cfg);
        cfg.timeout_ms = d->cfg.timeout_ms > 0 ? d->cfg.timeout_ms : 10000;
        cfg.deadline_ms = d->cfg.deadline_ms;
        cfg.cache_dir = d->cfg.cache_dir;
        cfg.lookup = dap_lookup;
        cfg.lookup_arg = s;
        cfg.log = stderr;
        (void)dap_serve_fd(s->fd, s->fd, &cfg); /* failures logged */
        helper_join(s);
    } else {
        char who[224];
        snprintf(who, sizeof who, "RSP client %s on %s", s->peer, s->l->addr);
        if (srv_target_door(d->cfg.registry, s->l->id, s->fd, who, err, sizeof err) < 0)
            srv_log("--rsp-listen %s: %s: %s", s->l->addr, s->peer, err);
    }
    pthread_mutex_lock(&d->mu);
    close(s->fd);
    s->fd = -1;
    s->done = true;
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* Join and free the sessions that have ended.  D->mu held. */
static void
reap_locked(struct srv_doors *d)
{
    for (struct session **pp = &d->sessions; *pp != NULL;) {
        struct session *s = *pp;
        if (!s->done) {
            pp = &s->next;
            continue;
        }
        *pp = s->next;
        pthread_join(s->th, NULL);
        free(s);
    }
}

static void *
listener_main(void *arg)
{
    struct listener *l = arg;
    struct srv_doors *d = l->d;
    for (;;) {
        struct pollfd pf[2] = { { .fd = l->fd, .events = POLLIN },
                                { .fd = d->wake[0], .events = POLLIN } };
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            srv_log("%s: poll: %s", l->addr, strerror(errno));
            return NULL;
        }
        if (pf[1].revents)
            return NULL; /* srv_doors_free */
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept(l->fd, (struct sockaddr *)&ss, &sl);
        if (fd < 0)
            continue; /* the peer gave up, or out of descriptors for now */
        struct session *s = calloc(1, sizeof *s);
        if (s == NULL) {
            close(fd);
            continue;
        }
        s->d = d;
        s->l = l;
        s->fd = fd;
        s->helper_lfd = -1;
        name_of((struct sockaddr *)&ss, sl, s->peer, sizeof s->peer);
        pthread_mutex_lock(&d->mu);
        reap_locked(d);
        int rc = d->stopping ? -1 : pthread_create(&s->th, NULL, session_main, s);
        if (rc == 0) {
            s->next = d->sessions;
            d->sessions = s;
        }
        pthread_mutex_unlock(&d->mu);
        if (rc != 0) {
            srv_log("%s: %s: no thread for the session", l->addr, s->peer);
            close(fd);
            free(s);
        }
    }
}

static int
add_listener(struct srv_doors *d, const char *opt, const char *spec, const char *hp, bool dap,
             int64_t id, char *bound, size_t boundlen, char *err, size_t errlen)
{
    struct listener *l = calloc(1, sizeof *l);
    if (l == NULL)
        return srv_fail(err, errlen, -1, "%s: out of memory", opt);
    l->fd = listen_on(opt, spec, hp, l->addr, sizeof l->addr, err, errlen);
    if (l->fd < 0) {
        free(l);
        return -1;
    }
    l->d = d;
    l->dap = dap;
    l->id = id;
    int rc = pthread_create(&l->th, NULL, listener_main, l);
    if (rc != 0) {
        close(l->fd);
        free(l);
        return srv_fail(err, errlen, -1, "%s '%s': no thread: %s", opt, spec, strerror(rc));
    }
    pthread_mutex_lock(&d->mu);
    l->next = d->listeners;
    d->listeners = l;
    pthread_mutex_unlock(&d->mu);
    if (bound != NULL)
        snprintf(bound, boundlen, "%s", l->addr);
    return 0;
}

int
srv_doors_dap_listen(struct srv_doors *d, const char *spec, char *bound, size_t boundlen, char *err,
                     size_t errlen)
{
    return add_listener(d, "--dap-listen", spec, spec, true, 0, bound, boundlen, err, errlen);
}

int
srv_doors_rsp_listen(struct srv_doors *d, const char *spec, char *bound, size_t boundlen, char *err,
                     size_t errlen)
{
    char hp[300], *end;
    const char *eq = strrchr(spec, '=');
    if (eq == NULL || (size_t)(eq - spec) >= sizeof hp)
        return srv_fail(err, errlen, -1, "--rsp-listen '%s': not HOST:PORT=ID", spec);
    errno = 0;
    long long id = strtoll(eq + 1, &end, 10);
    if (eq[1] == '\0' || *end != '\0' || errno != 0 || id <= 0)
        return srv_fail(err, errlen, -1, "--rsp-listen '%s': '%s' is not a target id", spec,
                        eq + 1);
    memcpy(hp, spec, (size_t)(eq - spec));
    hp[eq - spec] = '\0';
    return add_listener(d, "--rsp-listen", spec, hp, false, id, bound, boundlen, err, errlen);
}

void
srv_doors_free(struct srv_doors *d)
{
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    d->stopping = true;
    pthread_mutex_unlock(&d->mu);
    ssize_t n = write(d->wake[1], "x", 1);
    (void)n;
    for (struct listener *l = d->listeners, *next; l != NULL; l = next) {
        next = l->next;
        pthread_join(l->th, NULL);
        close(l->fd);
        free(l);
    }
    /* Every session ends as on its client's disconnect. */
    pthread_mutex_lock(&d->mu);
    for (struct session *s = d->sessions; s != NULL; s = s->next)
        if (s->fd >= 0)
            shutdown(s->fd, SHUT_RDWR);
    struct session *all = d->sessions;
    d->sessions = NULL;
    pthread_mutex_unlock(&d->mu);
    for (struct session *s = all, *next; s != NULL; s = next) {
        next = s->next;
        pthread_join(s->th, NULL);
        free(s);
    }
    if (d->dir[0] != '\0')
        rmdir(d->dir);
    close(d->wake[0]);
    close(d->wake[1]);
    pthread_mutex_destroy(&d->mu);
    free(d);
}
