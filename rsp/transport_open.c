/* rsp/transport_open.c -- a transport from a spec: the TARGET forms of the CLI contract.
 *
 * Parses HOST:PORT, [V6]:PORT, tcp:HOST:PORT, unix:PATH, /dev/ttyX[@BAUD] and
 * '|COMMAND' and hands each to its constructor (transport_tcp.c,
 * transport_serial.c, transport_pipe.c).  Not the bytes: rsp/transport.c.
 */
#include "rsp/transport.h"

#include <stdio.h>
#include <string.h>

#include "util/util.h"

#define SPEC_FORMS "HOST:PORT, [V6ADDR]:PORT, unix:PATH, /dev/ttyX[@BAUD] or |COMMAND"

static int
bad_spec(struct sw_errbuf *err, const char *spec, const char *why)
{
    return sw_fail(err, SW_EINVAL, "'%s': %s; expected " SPEC_FORMS, spec, why);
}

/* PORT must be a decimal 1-65535, as getaddrinfo would otherwise take a
 * service name and turn a typo into a confusing resolver error. */
static bool
port_ok(const char *port)
{
    unsigned long v = 0;
    if (*port == '\0' || strlen(port) > 5)
        return false;
    for (const char *c = port; *c; c++) {
        if (*c < '0' || *c > '9')
            return false;
        v = v * 10 + (unsigned long)(*c - '0');
    }
    return v >= 1 && v <= 65535;
}

static int
open_tcp_spec(const char *spec, const char *hostport, int timeout_ms, struct rsp_transport **out,
              struct sw_errbuf *err)
{
    char host[256];
    const char *port;
    size_t hlen;

    if (hostport[0] == '[') {
        const char *close_br = strchr(hostport, ']');
        if (close_br == NULL)
            return bad_spec(err, spec, "no ']' after the IPv6 address");
        if (close_br[1] != ':')
            return bad_spec(err, spec, "no ':PORT' after the ']'");
        hlen = (size_t)(close_br - hostport - 1);
        if (hlen == 0)
            return bad_spec(err, spec, "empty IPv6 address");
        if (hlen >= sizeof host)
            return bad_spec(err, spec, "host name too long");
        memcpy(host, hostport + 1, hlen);
        port = close_br + 2;
    } else {
        const char *colon = strrchr(hostport, ':');
        if (colon == NULL)
            return bad_spec(err, spec, "no ':PORT'");
        hlen = (size_t)(colon - hostport);
        if (memchr(hostport, ':', hlen) != NULL)
            return bad_spec(err, spec, "an IPv6 address needs brackets, [V6ADDR]:PORT");
        if (hlen >= sizeof host)
            return bad_spec(err, spec, "host name too long");
        memcpy(host, hostport, hlen);
        port = colon + 1;
    }
    host[hlen] = '\0';
    if (!port_ok(port)) {
        return sw_fail(err, SW_EINVAL,
                       "'%s': bad port '%s'; expected HOST:PORT with PORT a number 1-65535", spec,
                       port);
    }
    /* ":1234" means the local host, as in gdb's "target remote :1234". */
    return rsp_transport_tcp_open(hlen == 0 ? "localhost" : host, port, timeout_ms, out, err);
}

static int
open_serial_spec(const char *spec, struct rsp_transport **out, struct sw_errbuf *err)
{
    const char *at = strrchr(spec, '@');
    unsigned long baud = 0;

    if (at == NULL)
        return rsp_transport_serial_open(spec, 0, out, err);
    if (at[1] == '\0' || strlen(at + 1) > 9)
        return sw_fail(err, SW_EINVAL, "'%s': bad baud rate '%s'; expected /dev/ttyX@BAUD", spec,
                       at + 1);
    for (const char *c = at + 1; *c; c++) {
        if (*c < '0' || *c > '9')
            return sw_fail(err, SW_EINVAL, "'%s': bad baud rate '%s'; expected /dev/ttyX@BAUD",
                           spec, at + 1);
        baud = baud * 10 + (unsigned long)(*c - '0');
    }
    char *dev = sw_strndup(spec, (size_t)(at - spec));
    if (dev == NULL)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", spec);
    int rc = baud == 0 ? sw_fail(err, SW_EINVAL, "'%s': bad baud rate 0", spec)
                       : rsp_transport_serial_open(dev, (unsigned)baud, out, err);
    sw_free(dev);
    return rc;
}

static int
open_spec(const char *spec, int timeout_ms, struct rsp_transport **out, struct sw_errbuf *err)
{
    if (spec[0] == '|') {
        if (spec[1 + strspn(spec + 1, " \t")] == '\0')
            return bad_spec(err, spec, "no command after '|'");
        return rsp_transport_pipe_open(spec + 1, out, err);
    }
    if (strncmp(spec, "unix:", 5) == 0) {
        if (spec[5] == '\0')
            return bad_spec(err, spec, "no path after 'unix:'");
        return rsp_transport_unix_open(spec + 5, timeout_ms, out, err);
    }
    if (spec[0] == '/')
        return open_serial_spec(spec, out, err);
    /* gdb's own spelling of the same thing. */
    if (strncmp(spec, "tcp:", 4) == 0)
        return open_tcp_spec(spec, spec + 4, timeout_ms, out, err);
    return open_tcp_spec(spec, spec, timeout_ms, out, err);
}

int
rsp_transport_open(const char *spec, int timeout_ms, struct rsp_transport **out,
                   struct sw_errbuf *err)
{
    struct rsp_transport *t = NULL;

    *out = NULL;
    if (spec == NULL || spec[0] == '\0')
        return sw_fail(err, SW_EINVAL, "empty target; expected " SPEC_FORMS);
    int rc = open_spec(spec, timeout_ms, &t, err);
    if (rc != 0)
        return rc;
    /* The name is the spec as the user wrote it, so every later message
     * names what they typed. */
    if (strcmp(t->name, spec) != 0) {
        char *copy = sw_strdup(spec);
        if (copy == NULL) {
            rsp_transport_close(t);
            return sw_fail(err, SW_ENOMEM, "%s: out of memory", spec);
        }
        sw_free(t->name);
        t->name = copy;
    }
    *out = t;
    return 0;
}
