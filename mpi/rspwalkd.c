/* mpi/rspwalkd.c -- a targets-file line `http://HOST:PORT/`: an rspwalkd's targets, merged by it.
 *
 * The rank asks the server for the merged tree of its targets (GET
 * /v1/tree?format=json, docs/openapi.json) over HTTP/1.0 and adds the
 * tree's tasks and paths to its own: a task's path is the chain of nodes
 * down to where its task set stops (the node it is in and no child is).
 * No TLS: a server off loopback is reached through its token
 * (`--token-file`) on a trusted network, as docs/usage.md says.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>

#include "mpi/rmpi.h"

/* The largest reply taken: a tree of a few hundred thousand tasks. */
#define RSPWALKD_MAX_REPLY (256u << 20)

static int
fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* URL's host, port and query ("" when none) into the buffers. */
static int
parse_url(const char *url, char *host, size_t hostlen, char *port, size_t portlen,
          const char **query, char *err, size_t errlen)
{
    const char *p = url + strlen("http://"), *end;
    if (*p == '[') {
        end = strchr(p, ']');
        if (end == NULL)
            return fail(err, errlen, "an IPv6 address without its ']'");
        p++;
    } else {
        end = p + strcspn(p, ":/?");
    }
    if (end == p || (size_t)(end - p) >= hostlen)
        return fail(err, errlen, "no host, or a host name too long");
    memcpy(host, p, (size_t)(end - p));
    host[end - p] = '\0';
    p = end + (*end == ']');
    if (*p == ':') {
        p++;
        size_t n = strspn(p, "0123456789");
        if (n == 0 || n >= portlen)
            return fail(err, errlen, "a port that is not a number");
        memcpy(port, p, n);
        port[n] = '\0';
        p += n;
    } else {
        snprintf(port, portlen, "7411"); /* rspwalkd's default */
    }
    if (*p == '/')
        p++;
    if (*p != '\0' && *p != '?')
        return fail(err, errlen,
                    "a path other than '/' (the server's targets are "
                    "/v1/tree's; '?targets=1,2' chooses some)");
    *query = *p == '?' ? p + 1 : "";
    if (strpbrk(*query, " \r\n") != NULL)
        return fail(err, errlen, "blanks or line ends in the query");
    return 0;
}

/* The reply body of GET /v1/tree?format=json&QUERY from HOST:PORT into
 * *BODY (free) and *LEN.  TOKEN may be NULL. */
static int
http_get_tree(const char *host, const char *port, const char *query, const char *token,
              int timeout_ms, char **body, size_t *len, char *err, size_t errlen)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *a;
    int rc = getaddrinfo(host, port, &hints, &ai), fd = -1;
    if (rc != 0)
        return fail(err, errlen, "%s: %s", host, gai_strerror(rc));
    for (a = ai; a != NULL; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0)
            continue;
        struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        rc = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return fail(err, errlen, "connecting: %s", strerror(rc ? rc : ECONNREFUSED));
    bool v6 = strchr(host, ':') != NULL;
#define REQUEST_FMT                                                                                \
    "GET /v1/tree?format=json%s%s HTTP/1.0\r\nHost: %s%s%s:%s\r\n%s%s%sConnection: close\r\n\r\n"
#define REQUEST_ARGS                                                                               \
    *query ? "&" : "", query, v6 ? "[" : "", host, v6 ? "]" : "", port,                            \
        token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : ""
    int n = snprintf(NULL, 0, REQUEST_FMT, REQUEST_ARGS);
    char *req = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (req == NULL) {
        close(fd);
        return fail(err, errlen, "out of memory");
    }
    snprintf(req, (size_t)n + 1, REQUEST_FMT, REQUEST_ARGS);
#undef REQUEST_ARGS
#undef REQUEST_FMT
    for (size_t off = 0; off < (size_t)n;) {
        ssize_t w = send(fd, req + off, (size_t)n - off, MSG_NOSIGNAL);
        if (w <= 0) {
            free(req);
            close(fd);
            return fail(err, errlen, "sending the request: %s", strerror(errno));
        }
        off += (size_t)w;
    }
    free(req);
    size_t cap = 1 << 16, got = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (buf == NULL) {
            close(fd);
            return fail(err, errlen, "out of memory");
        }
        if (got == cap) {
            if (cap >= RSPWALKD_MAX_REPLY) {
                free(buf);
                close(fd);
                return fail(err, errlen, "a reply larger than %u MiB", RSPWALKD_MAX_REPLY >> 20);
            }
            char *g = realloc(buf, 2 * cap + 1);
            if (g == NULL)
                free(buf);
            buf = g;
            cap *= 2;
            continue;
        }
        ssize_t r = recv(fd, buf + got, cap - got, 0);
        if (r == 0)
            break;
        if (r < 0) {
            free(buf);
            close(fd);
            return fail(err, errlen, "reading the reply: %s",
                        errno == EAGAIN ? "no reply before the timeout" : strerror(errno));
        }
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    int status = 0;
    char *head_end = strstr(buf, "\r\n\r\n");
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1 || head_end == NULL) {
        free(buf);
        return fail(err, errlen, "not an HTTP reply");
    }
    char *b = head_end + 4;
    if (status != 200) {
        /* rspwalkd's errors are {"error": "one line"}. */
        json_t *e = json_loads(b, 0, NULL);
        const char *msg = json_string_value(json_object_get(e, "error"));
        fail(err, errlen, "GET /v1/tree: %d %s", status, msg ? msg : "(no message)");
        json_decref(e);
        free(buf);
        return -1;
    }
    *len = got - (size_t)(b - buf);
    memmove(buf, b, *len + 1);
    *body = buf;
    return 0;
}

/* A task set "[0-3,5]" into *R (pairs lo, hi; free) and *N pairs; every
 * task below NTASKS. */
static int
parse_set(const char *s, size_t ntasks, size_t **r, size_t *n)
{
    size_t cap = 8, k = 0;
    size_t *v = malloc(cap * 2 * sizeof *v);
    if (v == NULL || s == NULL || *s++ != '[')
        goto bad;
    while (*s != ']') {
        char *e;
        errno = 0;
        unsigned long long lo = strtoull(s, &e, 10), hi = lo;
        if (e == s || errno)
            goto bad;
        s = e;
        if (*s == '-') {
            hi = strtoull(++s, &e, 10);
            if (e == s || errno || hi < lo)
                goto bad;
            s = e;
        }
        if (hi >= ntasks || (k > 0 && lo <= v[2 * k - 1]))
            goto bad;
        if (k == cap) {
            size_t *g = realloc(v, cap * 4 * sizeof *v);
            if (g == NULL)
                goto bad;
            v = g;
            cap *= 2;
        }
        v[2 * k] = (size_t)lo;
        v[2 * k + 1] = (size_t)hi;
        k++;
        if (*s == ',')
            s++;
        else if (*s != ']')
            goto bad;
    }
    if (s[1] != '\0')
        goto bad;
    *r = v;
    *n = k;
    return 0;
bad:
    free(v);
    return -1;
}

/* One node of the server's tree on the walk's stack. */
struct open_node {
    json_t *node;
    size_t next; /* the next child to visit */
};

/* Add DOC's tasks and paths (the merged tree's JSON) to T. */
static int
add_document(struct sw_tree *t, json_t *doc, char *err, size_t errlen)
{
    json_t *index = json_object_get(doc, "tasks_index"), *root = json_object_get(doc, "tree");
    if (!json_is_array(index) || !json_is_object(root))
        return fail(err, errlen, "the reply is not a merged tree (no tasks_index and tree)");
    size_t base = sw_tree_tasks(t), ntasks = json_array_size(index);
    for (size_t i = 0; i < ntasks; i++) {
        json_t *k = json_array_get(index, i);
        json_t *pid = json_object_get(k, "pid");
        if (json_integer_value(json_object_get(k, "task")) != (json_int_t)i ||
            !(json_is_integer(pid) || json_is_null(pid)))
            return fail(err, errlen, "tasks_index[%zu] is not task %zu", i, i);
        if (sw_tree_add_task(t, json_string_value(json_object_get(k, "target")),
                             json_is_integer(pid) ? json_integer_value(pid) : 0,
                             json_string_value(json_object_get(k, "thread")), NULL) < 0)
            return fail(err, errlen, "out of memory");
    }
    /* Depth-first; FRAMES[d - 1] is the frame of the node at depth d. */
    struct open_node *stack = NULL;
    struct sw_tree_frame *frames = NULL;
    size_t cap = 0, depth = 0;
    int rc = 0;
    json_t *node = root;
    for (;;) {
        if (node != NULL) {
            if (depth + 1 > cap) {
                size_t ncap = cap ? 2 * cap : 64;
                struct open_node *s = realloc(stack, ncap * sizeof *s);
                struct sw_tree_frame *f = s ? realloc(frames, ncap * sizeof *f) : NULL;
                if (s != NULL)
                    stack = s;
                if (f == NULL) {
                    rc = fail(err, errlen, "out of memory");
                    break;
                }
                frames = f;
                cap = ncap;
            }
            const char *fn = json_string_value(json_object_get(node, "function"));
            json_t *kids = json_object_get(node, "children");
            if (fn == NULL || !json_is_array(kids)) {
                rc = fail(err, errlen, "a node without function or children");
                break;
            }
            if (depth > 0)
                frames[depth - 1] =
                    (struct sw_tree_frame){ fn, json_string_value(json_object_get(node, "module")),
                                            0 };
            /* The tasks whose path ends here: in this node and in no child. */
            size_t *mine = NULL, nmine = 0;
            if (parse_set(json_string_value(json_object_get(node, "tasks")), ntasks, &mine,
                          &nmine) < 0) {
                rc = fail(err, errlen, "a node's tasks are not a task set of the tree's tasks");
                break;
            }
            for (size_t r = 0; rc == 0 && r < nmine; r++)
                for (size_t task = mine[2 * r]; rc == 0 && task <= mine[2 * r + 1]; task++) {
                    bool below = false;
                    for (size_t c = 0; !below && c < json_array_size(kids); c++) {
                        size_t *ks = NULL, nks = 0;
                        json_t *kt = json_object_get(json_array_get(kids, c), "tasks");
                        if (parse_set(json_string_value(kt), ntasks, &ks, &nks) < 0) {
                            rc = fail(err, errlen, "a node's tasks are not a task set");
                            break;
                        }
                        for (size_t q = 0; q < nks && !below; q++)
                            below = ks[2 * q] <= task && task <= ks[2 * q + 1];
                        free(ks);
                    }
                    if (rc == 0 && !below && sw_tree_add_path(t, base + task, frames, depth, 1) < 0)
                        rc = fail(err, errlen, "out of memory");
                }
            free(mine);
            if (rc < 0)
                break;
            stack[depth++] = (struct open_node){ node, 0 };
        }
        /* The next child of the deepest open node, or up. */
        node = NULL;
        while (depth > 0) {
            struct open_node *top = &stack[depth - 1];
            json_t *kids = json_object_get(top->node, "children");
            if (top->next < json_array_size(kids)) {
                node = json_array_get(kids, top->next++);
                break;
            }
            depth--;
        }
        if (node == NULL)
            break;
    }
    free(stack);
    free(frames);
    return rc;
}

int
rmpi_rspwalkd_tree(struct sw_tree *t, const struct rmpi_target *tg, char *err, size_t errlen)
{
    char host[256], port[16], token[4200];
    const char *query = "";
    const char *tok = NULL;

    if (parse_url(tg->target, host, sizeof host, port, sizeof port, &query, err, errlen) < 0)
        return -1;
    if (tg->token_file != NULL) {
        FILE *f = fopen(tg->token_file, "r");
        if (f == NULL)
            return fail(err, errlen, "--token-file %s: %s", tg->token_file, strerror(errno));
        if (fgets(token, sizeof token, f) == NULL)
            token[0] = '\0';
        fclose(f);
        token[strcspn(token, "\r\n")] = '\0';
        if (token[0] == '\0')
            return fail(err, errlen, "--token-file %s: no token on its first line", tg->token_file);
        tok = token;
    }
    char *body = NULL;
    size_t len = 0;
    if (http_get_tree(host, port, query, tok, tg->timeout_ms > 0 ? tg->timeout_ms : 60000, &body,
                      &len, err, errlen) < 0)
        return -1;
    json_error_t je;
    json_t *doc = json_loadb(body, len, 0, &je);
    free(body);
    if (doc == NULL)
        return fail(err, errlen, "GET /v1/tree: not JSON: %s at line %d", je.text, je.line);
    int rc = add_document(t, doc, err, errlen);
    json_decref(doc);
    return rc;
}
