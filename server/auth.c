/* server/auth.c -- the bearer token and the Host check (server/auth.h).
 *
 * Pure functions over strings and addresses, plus the token file's checks.
 * What a request may do once it is let in is server/api.c's and
 * server/policy.c's business.
 */
#include "server/auth.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A token shorter than this is guessable by an online search; longer than
 * the maximum is not a token but a mistake (a key file, a binary). */
#define TOKEN_MIN 16
#define TOKEN_MAX 4096

int
srv_token_load(const char *path, char **token, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "token file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "token file %s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_mode & (S_IROTH | S_IWOTH)) {
        snprintf(err, errlen,
                 "token file %s: readable or writable by others (mode %04o); chmod 600 it", path,
                 (unsigned)(st.st_mode & 07777));
        close(fd);
        return -1;
    }
    char *buf = malloc(TOKEN_MAX + 2);
    if (!buf) {
        snprintf(err, errlen, "token file %s: out of memory", path);
        close(fd);
        return -1;
    }
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, TOKEN_MAX + 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "token file %s: %s", path, strerror(errno));
            goto fail;
        }
        if (n == 0 || (len += (size_t)n) > TOKEN_MAX)
            break;
    }
    close(fd);
    fd = -1;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        len--;
    if (len > TOKEN_MAX) {
        snprintf(err, errlen, "token file %s: longer than %d bytes", path, TOKEN_MAX);
        goto fail;
    }
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++) {
        if (buf[i] < 0x21 || buf[i] > 0x7e) {
            snprintf(err, errlen,
                     "token file %s: byte %zu is not a visible ASCII character (one line, no "
                     "spaces)",
                     path, i);
            goto fail;
        }
    }
    if (len < TOKEN_MIN) {
        snprintf(err, errlen, "token file %s: the token is shorter than %d characters", path,
                 TOKEN_MIN);
        goto fail;
    }
    *token = buf;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    srv_token_free(buf);
    return -1;
}

void
srv_token_free(char *token)
{
    if (!token)
        return;
    /* The volatile pointer keeps the compiler from dropping the wipe of
     * memory about to be freed. */
    volatile char *p = token;
    while (*p)
        *p++ = 0;
    free(token);
}

bool
srv_token_equal(const char *expected, const char *given)
{
    size_t n = strlen(expected), m = strlen(given);
    /* Every byte of EXPECTED is compared whatever GIVEN holds: the time
     * depends on the lengths only. */
    size_t diff = n ^ m;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)expected[i] ^ (unsigned char)(i < m ? given[i] : 0);
    return diff == 0;
}

bool
srv_auth_bearer_ok(const char *expected, const char *header)
{
    if (!header)
        return false;
    /* RFC 7235: the scheme is case-insensitive; one or more spaces follow. */
    if (strncasecmp(header, "Bearer ", 7) != 0)
        return false;
    header += 7;
    while (*header == ' ')
        header++;
    return srv_token_equal(expected, header);
}

bool
srv_host_is_loopback(const char *host)
{
    if (!host)
        return true;
    char name[64];
    size_t len;
    if (host[0] == '[') {
        const char *close = strchr(host, ']');
        if (!close || (size_t)(close - host - 1) >= sizeof name)
            return false;
        len = (size_t)(close - host - 1);
        memcpy(name, host + 1, len);
        name[len] = '\0';
        host = close + 1;
        struct in6_addr a6;
        if (inet_pton(AF_INET6, name, &a6) != 1 || !IN6_IS_ADDR_LOOPBACK(&a6))
            return false;
    } else {
        len = strcspn(host, ":");
        if (len == 0 || len >= sizeof name)
            return false;
        memcpy(name, host, len);
        name[len] = '\0';
        host += len;
        struct in_addr a4;
        if (strcasecmp(name, "localhost") != 0 && strcasecmp(name, "localhost.") != 0 &&
            (inet_pton(AF_INET, name, &a4) != 1 || (ntohl(a4.s_addr) >> 24) != 127))
            return false;
    }
    if (*host == '\0')
        return true;
    if (*host++ != ':' || *host == '\0')
        return false;
    for (; *host; host++)
        if (!isdigit((unsigned char)*host))
            return false;
    return true;
}

bool
srv_addr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
            return true;
        return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
    }
    return false;
}
