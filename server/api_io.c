/* server/api_io.c -- what every /v1 endpoint reads and writes: parameters, bodies, replies.
 *
 * The router (api.c) and the handlers (api_targets.c, api_stacks.c,
 * api_history.c) share these: strict query and body parsing, JSON replies
 * and errors, registry calls with the request deadline, a tree in the format
 * asked.  No routing here and no endpoint.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/api_impl.h"
#include "server/deadline.h"
#include "server/tree.h"

/* Ids are positive and fit an int64 with room: at most 18 digits, no sign,
 * no leading zero.  0 when SEG (LEN bytes) is not one. */
int64_t
srv_parse_id(const char *seg, size_t len)
{
    if (len == 0 || len > 18 || seg[0] == '0')
        return 0;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)seg[i]))
            return 0;
        v = v * 10 + (seg[i] - '0');
    }
    return v;
}

/* ---- replies ------------------------------------------------------------ */

void
srv_reply_take(struct srv_reply *out, int status, const char *type, char *text)
{
    free(out->body);
    out->status = status;
    out->type = type;
    out->body = text;
    out->len = text ? strlen(text) : 0;
}

void
srv_reply_json(struct srv_reply *out, int status, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!text) {
        srv_reply_error(out, 500, "out of memory");
        return;
    }
    srv_reply_take(out, status, "application/json", text);
}

void
srv_reply_error(struct srv_reply *out, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    /* The message may echo a client's or a stub's bytes; jansson takes only
     * valid UTF-8, which the escaped copy is (render.h's sw_text_escape). */
    char *safe = sw_text_escape(msg, 0);
    json_t *j = json_pack("{s:s}", "error", safe ? safe : "out of memory");
    free(safe);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    free(out->body);
    out->status = status;
    out->type = "application/json";
    out->body = text ? text : strdup("{\"error\":\"out of memory\"}");
    out->len = out->body ? strlen(out->body) : 0;
}

void
srv_reply_fini(struct srv_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

int
srv_api_status(int srv_err)
{
    switch (srv_err) {
    case SRV_EINVAL:
        return 400;
    case SRV_ENOTFOUND:
        return 404;
    case SRV_ECONFLICT:
        return 409;
    case SRV_ELIMIT:
        return 429;
    case SRV_ESTUB:
        return 502;
    case SRV_ETIMEOUT:
        return 504;
    default:
        return 500;
    }
}

void
srv_reply_srv_error(struct srv_reply *out, int rc, const char *err)
{
    srv_reply_error(out, srv_api_status(rc), "%s", err && *err ? err : "internal error");
}

/* ---- query parameters --------------------------------------------------- */

const char *
srv_arg_get(const struct srv_request *rq, const char *key)
{
    for (size_t i = 0; i < rq->nargs; i++)
        if (strcmp(rq->args[i].key, key) == 0)
            return rq->args[i].value ? rq->args[i].value : "";
    return NULL;
}

static bool
parse_u64(const char *s, uint64_t *v)
{
    if (!isdigit((unsigned char)*s))
        return false;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *v = x;
    return true;
}

int
srv_arg_uint(const struct srv_request *rq, struct srv_reply *out, const char *key, uint64_t min,
             uint64_t max, uint64_t *val)
{
    const char *s = srv_arg_get(rq, key);
    if (!s)
        return 0;
    uint64_t v;
    if (!parse_u64(s, &v) || v < min || v > max) {
        srv_reply_error(out, 400, "%s: '%.32s' is not a number from %" PRIu64 " to %" PRIu64, key,
                        s, min, max);
        return -1;
    }
    *val = v;
    return 0;
}

int
srv_arg_bool(const struct srv_request *rq, struct srv_reply *out, const char *key, bool *val)
{
    const char *s = srv_arg_get(rq, key);
    if (!s)
        return 0;
    if (strcmp(s, "1") == 0 || strcmp(s, "true") == 0 || *s == '\0') {
        *val = true;
    } else if (strcmp(s, "0") == 0 || strcmp(s, "false") == 0) {
        *val = false;
    } else {
        srv_reply_error(out, 400, "%s: '%.32s' is not 1, 0, true or false", key, s);
        return -1;
    }
    return 0;
}

/* More ids than this in one list is not a selection but a flood. */
#define IDS_MAX 4096

int
srv_arg_ids(const struct srv_request *rq, struct srv_reply *out, const char *key, int64_t **ids,
            size_t *n)
{
    *ids = NULL;
    *n = 0;
    const char *s = srv_arg_get(rq, key);
    if (!s || !*s)
        return 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    if (cap > IDS_MAX) {
        srv_reply_error(out, 400, "%s: more than %d ids", key, IDS_MAX);
        return -1;
    }
    int64_t *v = malloc(cap * sizeof *v);
    if (!v) {
        srv_reply_error(out, 500, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        int64_t id = srv_parse_id(p, len);
        if (id == 0) {
            srv_reply_error(out, 400, "%s: '%.*s' is not a target id", key,
                            (int)(len > 32 ? 32 : len), p);
            free(v);
            return -1;
        }
        v[k++] = id;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *ids = v;
    *n = k;
    return 0;
}

/* A walk deeper than this is a runaway, whatever the client asks. */
#define MAX_FRAMES_MAX 65536

int
srv_arg_walk_opts(const struct srv_request *rq, struct srv_reply *out, struct srv_walk_opts *o)
{
    memset(o, 0, sizeof *o);
    const char *thread = srv_arg_get(rq, "thread");
    if (thread) {
        bool ok = *thread && strlen(thread) <= 64;
        for (const char *p = thread; *p && ok; p++)
            ok = isxdigit((unsigned char)*p) || *p == 'p' || *p == '.' || *p == '-';
        if (!ok) {
            srv_reply_error(out, 400,
                            "thread: '%.64s' is not a thread id (pPID.TID in hex, or a number)",
                            thread);
            return -1;
        }
        o->thread = thread;
    }
    uint64_t max = 0;
    if (srv_arg_bool(rq, out, "locals", &o->locals) < 0 ||
        srv_arg_bool(rq, out, "lines", &o->lines) < 0 ||
        srv_arg_uint(rq, out, "max_frames", 1, MAX_FRAMES_MAX, &max) < 0)
        return -1;
    o->max_frames = (size_t)max;
    return 0;
}

/* ---- bodies ------------------------------------------------------------- */

int
srv_body_object(const struct srv_request *rq, struct srv_reply *out, bool empty_ok, json_t **obj)
{
    if (rq->body_len == 0 && empty_ok) {
        *obj = json_object();
        if (!*obj)
            srv_reply_error(out, 500, "out of memory");
        return *obj ? 0 : -1;
    }
    /* Only JSON is taken, which also keeps a page elsewhere from posting a
     * form here: a cross-site application/json request needs a CORS
     * preflight, which this server never grants (server/http.c refuses a
     * foreign Origin as well). */
    const char *ct = rq->content_type;
    size_t n = ct ? strcspn(ct, "; ") : 0;
    if (!ct || n != 16 || strncasecmp(ct, "application/json", 16) != 0) {
        srv_reply_error(out, 415, "the request body must be application/json (Content-Type: %.64s)",
                        ct ? ct : "none");
        return -1;
    }
    if (rq->body_len == 0) {
        srv_reply_error(out, 400, "the request has no body: a JSON object is expected");
        return -1;
    }
    json_error_t je;
    json_t *j = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        srv_reply_error(out, 400, "request body: line %d column %d: %s", je.line, je.column,
                        je.text);
        return -1;
    }
    if (!json_is_object(j)) {
        srv_reply_error(out, 400, "request body: expected a JSON object");
        json_decref(j);
        return -1;
    }
    *obj = j;
    return 0;
}

static const char *
json_kind_name(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

int
srv_body_check(json_t *obj, const struct srv_field *fields, size_t n, struct srv_reply *out)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        size_t i = 0;
        while (i < n && strcmp(fields[i].name, key) != 0)
            i++;
        if (i == n) {
            srv_reply_error(out, 400, "request body: unknown member \"%.64s\"", key);
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        v = json_object_get(obj, fields[i].name);
        char kind = fields[i].kind[0];
        bool required = fields[i].kind[1] == '!';
        if (!v || json_is_null(v)) {
            if (required) {
                srv_reply_error(out, 400, "request body: \"%s\" is required", fields[i].name);
                return -1;
            }
            continue;
        }
        bool ok = false;
        const char *want = "";
        switch (kind) {
        case 's':
            ok = json_is_string(v);
            want = "a string";
            break;
        case 'b':
            ok = json_is_boolean(v);
            want = "a boolean";
            break;
        case 'n':
            ok = json_is_number(v);
            want = "a number";
            break;
        case 'I': {
            ok = json_is_array(v) && json_array_size(v) <= IDS_MAX;
            size_t k;
            json_t *e;
            json_array_foreach(v, k, e) ok = ok && json_is_integer(e) && json_integer_value(e) > 0;
            want = "an array of target ids";
            break;
        }
        }
        if (!ok) {
            srv_reply_error(out, 400, "request body: \"%s\" must be %s, not %s", fields[i].name,
                            want, json_kind_name(v));
            return -1;
        }
    }
    return 0;
}

/* ---- registry calls with a deadline ------------------------------------- */

struct call {
    enum srv_call_kind kind;
    struct srv_registry *r;
    int64_t id;
    int64_t *ids;
    size_t n;
    struct srv_walk_opts o;
    char *thread; /* O.thread's own copy */
    struct srv_call_result res;
};

static void
call_run(void *arg)
{
    struct call *c = arg;
    struct srv_call_result *res = &c->res;
    switch (c->kind) {
    case SRV_CALL_STACKS:
        res->rc = srv_target_stacks(c->r, c->id, &c->o, &res->doc, res->err, sizeof res->err);
        break;
    case SRV_CALL_STACKS_ALL:
        res->rc = srv_stacks_all(c->r, c->ids, c->n, &c->o, &res->doc, res->err, sizeof res->err);
        break;
    case SRV_CALL_RESUME:
        res->rc = srv_target_resume(c->r, c->id, res->err, sizeof res->err);
        break;
    case SRV_CALL_PAUSE:
        res->rc = srv_target_pause(c->r, c->id, res->err, sizeof res->err);
        break;
    case SRV_CALL_DELETE:
        res->rc = srv_target_delete(c->r, c->id, res->err, sizeof res->err);
        break;
    }
}

static void
call_free(void *arg)
{
    struct call *c = arg;
    free(c->res.doc);
    free(c->ids);
    free(c->thread);
    free(c);
}

int
srv_api_call(const struct srv_api_config *api, enum srv_call_kind kind, int64_t id,
             const int64_t *ids, size_t n, const struct srv_walk_opts *o,
             struct srv_call_result *res, struct srv_reply *out)
{
    /* The call outlives this request when the deadline passes: it gets its
     * own copies of everything it reads. */
    struct call *c = calloc(1, sizeof *c);
    if (!c)
        goto nomem;
    c->kind = kind;
    c->r = api->registry;
    c->id = id;
    if (o)
        c->o = *o;
    if (o && o->thread && !(c->thread = strdup(o->thread)))
        goto nomem;
    c->o.thread = c->thread;
    if (n > 0) {
        if (!(c->ids = malloc(n * sizeof *ids)))
            goto nomem;
        memcpy(c->ids, ids, n * sizeof *ids);
        c->n = n;
    }
    int rc = srv_deadline_run(api->pool, call_run, call_free, c, api->request_timeout_ms);
    if (rc == 1) {
        srv_reply_error(out, 504, "no answer within the request timeout (%d ms)",
                        api->request_timeout_ms);
        return -1;
    }
    if (rc < 0) {
        call_free(c);
        srv_reply_error(out, 503, "no thread for the request: try again");
        return -1;
    }
    *res = c->res;
    c->res.doc = NULL;
    call_free(c);
    return 0;
nomem:
    if (c)
        call_free(c);
    srv_reply_error(out, 500, "out of memory");
    return -1;
}

/* ?format= of a tree: 0 and *FORMAT, *TYPE, or -1 after replying 400. */
int
srv_api_tree_format(const struct srv_request *rq, struct srv_reply *out,
                    enum sw_tree_format *format, const char **type)
{
    const char *f = srv_arg_get(rq, "format");
    if (!f || strcmp(f, "json") == 0) {
        *format = SW_TREE_JSON;
        *type = "application/json";
    } else if (strcmp(f, "dot") == 0) {
        *format = SW_TREE_DOT;
        *type = "text/vnd.graphviz; charset=utf-8";
    } else if (strcmp(f, "folded") == 0) {
        *format = SW_TREE_FOLDED;
        *type = "text/plain; charset=utf-8";
    } else if (strcmp(f, "speedscope") == 0) {
        *format = SW_TREE_SPEEDSCOPE;
        *type = "application/json";
    } else {
        srv_reply_error(out, 400, "format: '%.32s' is not json, dot, folded or speedscope", f);
        return -1;
    }
    return 0;
}

int
srv_api_tree_reply(struct srv_tree *t, const struct srv_request *rq, struct srv_reply *out)
{
    enum sw_tree_format format;
    const char *type;
    if (srv_api_tree_format(rq, out, &format, &type) < 0)
        return -1;
    char *text;
    size_t len;
    if (srv_tree_write(t, format, &text, &len) < 0) {
        srv_reply_error(out, 500, "the tree could not be written (out of memory)");
        return -1;
    }
    srv_reply_take(out, 200, type, text);
    out->len = len;
    return 0;
}
