/* server/auth.h -- who may talk to rspwalkd: the bearer token and the Host check.
 *
 * Off loopback every request carries `Authorization: Bearer TOKEN` (RFC 6750),
 * the token read from a file only its owner can read.  On loopback without a
 * token, the Host header must name a loopback address, so a web page from
 * elsewhere cannot reach the server by DNS rebinding.  No HTTP here: the
 * functions take header values as strings.
 */
#ifndef RSPWALK_SERVER_AUTH_H
#define RSPWALK_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>

struct sockaddr;

/* Read the token in PATH: a regular file not readable or writable by others,
 * holding one line of 16 to 4096 visible ASCII characters (a trailing newline
 * is dropped).  Returns 0 and *TOKEN (caller frees with srv_token_free), or -1
 * with a one-line message naming PATH in ERR. */
int srv_token_load(const char *path, char **token, char *err, size_t errlen);

/* Wipe and free a token from srv_token_load; NULL is a no-op. */
void srv_token_free(char *token);

/* Whether the Authorization header value HEADER (NULL: absent) is
 * "Bearer TOKEN" with TOKEN equal to EXPECTED, compared in time that depends
 * only on the lengths, not on where the strings differ. */
bool srv_auth_bearer_ok(const char *expected, const char *header);

/* Whether GIVEN equals EXPECTED, in constant time for a given length of
 * EXPECTED. */
bool srv_token_equal(const char *expected, const char *given);

/* Whether the Host header value HOST names the loopback interface:
 * "localhost", an IPv4 address in 127.0.0.0/8 or "[::1]", each with an
 * optional ":PORT".  NULL (an HTTP/1.0 request without Host) is accepted:
 * browsers always send one. */
bool srv_host_is_loopback(const char *host);

/* Whether SA is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z). */
bool srv_addr_is_loopback(const struct sockaddr *sa);

#endif /* RSPWALK_SERVER_AUTH_H */
