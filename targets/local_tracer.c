/* targets/local_tracer.c -- a stub on this host that traces the target, and the signal
 * that stops the target when the stub's own interrupt cannot.
 *
 * The stub is found from the link's socket: the socket at its far end (by
 * /proc/net/tcp, tcp6 or unix) must be among the descriptors of the process
 * /proc/PID/status names as PID's tracer.  Nothing here speaks RSP.
 */
#define _DEFAULT_SOURCE

#include "targets/local_tracer.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stddef.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rspwalk/errors.h"

/* The lines of /proc/net/{tcp,tcp6,unix} looked at: a host with more
 * sockets than this is not searched to the end. */
#define LT_MAX_LINES 65536

/* Field NAME ("TracerPid:") of /proc/PID/status as a number; -1 if none. */
static int64_t
status_field(int64_t pid, const char *name, unsigned base)
{
    char path[64], line[256];
    int64_t v = -1;
    size_t nl = strlen(name);
    snprintf(path, sizeof path, "/proc/%" PRId64 "/status", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, name, nl) == 0) {
            char *end;
            errno = 0;
            unsigned long long x = strtoull(line + nl, &end, (int)base);
            if (errno == 0 && end != line + nl)
                v = (int64_t)(x & INT64_MAX);
            break;
        }
    fclose(f);
    return v;
}

/* The inode of the established TCP socket whose local port is LPORT and
 * remote port RPORT (both on this host), from FILE; 0 if none. */
static unsigned long
tcp_inode(const char *file, unsigned lport, unsigned rport)
{
    char line[512];
    unsigned long inode = 0;
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return 0;
    for (int i = 0; i < LT_MAX_LINES && fgets(line, sizeof line, f) != NULL; i++) {
        char local[64], remote[64];
        unsigned st;
        unsigned long ino;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*s %63s %63s %x %*s %*s %*s %*s %*s %lu", local, remote, &st, &ino) !=
            4)
            continue;
        const char *lp = strrchr(local, ':'), *rp = strrchr(remote, ':');
        if (lp == NULL || rp == NULL || st != 1 /* TCP_ESTABLISHED */)
            continue;
        if (strtoul(lp + 1, NULL, 16) == lport && strtoul(rp + 1, NULL, 16) == rport) {
            inode = ino;
            break;
        }
    }
    fclose(f);
    return inode;
}

static unsigned
port_of(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)a)->sin_port);
    return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
}

/* Inodes of the unix sockets bound to PATH other than MINE (the far ends
 * of connections to a listener at PATH, and the listener), up to MAX. */
static size_t
unix_inodes(const char *path, unsigned long mine, unsigned long *out, size_t max)
{
    char line[512 + sizeof(((struct sockaddr_un *)0)->sun_path)];
    size_t n = 0;
    FILE *f = fopen("/proc/net/unix", "r");
    if (f == NULL)
        return 0;
    for (int i = 0; i < LT_MAX_LINES && n < max && fgets(line, sizeof line, f) != NULL; i++) {
        unsigned long ino;
        int off = 0;
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(line, " %*s %*s %*s %*s %*s %*s %lu %n", &ino, &off) != 1 || off == 0)
            continue;
        char *p = line + off;
        p[strcspn(p, "\n")] = '\0';
        if (ino != mine && strcmp(p, path) == 0)
            out[n++] = ino;
    }
    fclose(f);
    return n;
}

/* Whether process PID holds a socket with one of the N inodes. */
static bool
holds_socket(int64_t pid, const unsigned long *inodes, size_t n)
{
    char path[64], link[64], want[48];
    bool found = false;
    snprintf(path, sizeof path, "/proc/%" PRId64 "/fd", pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        char fdpath[64 + sizeof e->d_name];
        if (e->d_name[0] == '.')
            continue;
        snprintf(fdpath, sizeof fdpath, "%s/%s", path, e->d_name);
        ssize_t len = readlink(fdpath, link, sizeof link - 1);
        if (len <= 0)
            continue;
        link[len] = '\0';
        for (size_t i = 0; i < n && !found; i++) {
            snprintf(want, sizeof want, "socket:[%lu]", inodes[i]);
            found = strcmp(link, want) == 0;
        }
    }
    closedir(d);
    return found;
}

int64_t
tgt_local_tracer(int link_fd, int64_t pid, char *msg, size_t msglen)
{
    struct sockaddr_storage me, peer;
    socklen_t mel = sizeof me, peerl = sizeof peer;
    /* Process 1 is never signalled, nor is a group (kill's -1 and 0). */
    if (pid <= 1 || link_fd < 0 || getsockname(link_fd, (struct sockaddr *)&me, &mel) != 0 ||
        getpeername(link_fd, (struct sockaddr *)&peer, &peerl) != 0) {
        snprintf(msg, msglen, "the link is no socket");
        return SW_ENOENT;
    }
    /* gdbserver's interrupt is kill (-PID, SIGINT): it reaches a process
     * group PID leads, and then the stop is only late, not missing. */
    if (kill(-(pid_t)pid, 0) == 0 || errno != ESRCH) {
        snprintf(msg, msglen,
                 "process %" PRId64 " leads a process group, which the stub's interrupt reaches",
                 pid);
        return SW_ENOENT;
    }
    int64_t tracer = status_field(pid, "TracerPid:", 10);
    if (tracer <= 0) {
        snprintf(msg, msglen, "process %" PRId64 " of this host is %s", pid,
                 tracer < 0 ? "not there" : "traced by nobody");
        return SW_ENOENT;
    }
    unsigned long inodes[16];
    size_t n = 0;
    if (me.ss_family == AF_INET || me.ss_family == AF_INET6) {
        /* The far end's socket has the ports the other way round. */
        const char *file = me.ss_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6";
        unsigned long ino = tcp_inode(file, port_of(&peer), port_of(&me));
        if (ino != 0)
            inodes[n++] = ino;
    } else if (me.ss_family == AF_UNIX) {
        const struct sockaddr_un *un = (const struct sockaddr_un *)&peer;
        char mine[48], link[64];
        unsigned long my_ino = 0;
        snprintf(mine, sizeof mine, "/proc/self/fd/%d", link_fd);
        ssize_t len = readlink(mine, link, sizeof link - 1);
        if (len > 0) {
            link[len] = '\0';
            sscanf(link, "socket:[%lu]", &my_ino);
        }
        if (peerl > offsetof(struct sockaddr_un, sun_path) && un->sun_path[0] != '\0') {
            char path[sizeof un->sun_path + 1];
            size_t plen = peerl - offsetof(struct sockaddr_un, sun_path);
            if (plen > sizeof un->sun_path)
                plen = sizeof un->sun_path;
            memcpy(path, un->sun_path, plen);
            path[plen] = '\0';
            n = unix_inodes(path, my_ino, inodes, sizeof inodes / sizeof inodes[0]);
        }
    }
    if (n == 0) {
        snprintf(msg, msglen, "the link's far end is no socket of this host");
        return SW_ENOENT;
    }
    if (!holds_socket(tracer, inodes, n)) {
        snprintf(msg, msglen,
                 "process %" PRId64 "'s tracer (%" PRId64 ") is not the stub at the link's far end",
                 pid, tracer);
        return SW_ENOENT;
    }
    return tracer;
}

int
tgt_local_interrupt(int64_t pid, char *msg, size_t msglen)
{
    if (pid <= 1) {
        snprintf(msg, msglen, "process %" PRId64 " is not signalled", pid);
        return SW_EIO;
    }
    uint64_t mask = 1ULL << (SIGINT - 1);
    int64_t shd = status_field(pid, "ShdPnd:", 16), own = status_field(pid, "SigPnd:", 16);
    if ((shd > 0 && ((uint64_t)shd & mask)) || (own > 0 && ((uint64_t)own & mask)))
        return 0;
    if (kill((pid_t)pid, SIGINT) != 0) {
        snprintf(msg, msglen, "signalling process %" PRId64 ": %s", pid, strerror(errno));
        return SW_EIO;
    }
    return 1;
}
