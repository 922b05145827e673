/* server/api.c -- the /v1 router: which endpoint answers a method and a path.
 *
 * The route table below is the API's index (docs/openapi.json describes each
 * row); the handlers live in api_targets.c, api_stacks.c and api_history.c.
 * Parameters and bodies are checked strictly: an unknown query parameter or
 * body member is a 400 naming it, so a client's typo is not silently ignored.
 */
#include "server/api.h"

#include <stdio.h>
#include <string.h>

#include "server/api_impl.h"

static void api_version(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                        struct srv_reply *out);

/* PATTERN: '/'-separated segments; "#" is an id (a positive decimal number)
 * of the thing NOUN names.  ARGS: the query parameters allowed, between
 * commas. */
struct route {
    const char *method;
    const char *pattern;
    const char *noun;
    const char *args;
    srv_handler_fn fn;
};

static const struct route routes[] = {
    { "GET", "/v1/version", NULL, "", api_version },
    { "GET", "/v1/targets", NULL, "", srv_api_targets_list },
    { "POST", "/v1/targets", NULL, "", srv_api_targets_add },
    { "GET", "/v1/targets/#", "target", "", srv_api_target_get },
    { "DELETE", "/v1/targets/#", "target", "", srv_api_target_delete },
    { "GET", "/v1/targets/#/stacks", "target", ",thread,locals,lines,max_frames,",
      srv_api_target_stacks },
    { "GET", "/v1/targets/#/snapshots", "target", ",after,limit,", srv_api_snapshots_list },
    { "POST", "/v1/targets/#/resume", "target", "", srv_api_target_resume },
    { "POST", "/v1/targets/#/pause", "target", "", srv_api_target_pause },
    { "GET", "/v1/snapshots/#", "snapshot", "", srv_api_snapshot_get },
    { "GET", "/v1/stacks", NULL, ",targets,thread,locals,lines,max_frames,", srv_api_stacks },
    { "GET", "/v1/tree", NULL, ",targets,format,max_frames,", srv_api_tree },
    { "POST", "/v1/samples", NULL, "", srv_api_samples_start },
    { "GET", "/v1/samples", NULL, ",limit,", srv_api_samples_list },
    { "GET", "/v1/samples/#", "sample", ",format,", srv_api_sample_get },
    { "DELETE", "/v1/samples/#", "sample", "", srv_api_sample_stop },
};

/* Whether PATH matches PATTERN; *ID gets the '#' segment's id (0 when that
 * segment is not an id), *IDSEG the segment itself. */
static bool
route_match(const char *pattern, const char *path, int64_t *id, const char **idseg, size_t *idlen)
{
    *id = 0;
    while (*pattern && *path) {
        if (*pattern == '#') {
            size_t n = strcspn(path, "/");
            if (n == 0)
                return false;
            *id = srv_parse_id(path, n);
            *idseg = path;
            *idlen = n;
            path += n;
            pattern++;
            continue;
        }
        if (*pattern != *path)
            return false;
        pattern++;
        path++;
    }
    return *pattern == '\0' && *path == '\0';
}

static bool
arg_allowed(const char *list, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = strstr(list, key); p; p = strstr(p + 1, key))
        if (p > list && p[-1] == ',' && p[n] == ',')
            return true;
    return false;
}

void
srv_api_handle(const struct srv_api_config *api, const struct srv_request *rq,
               struct srv_reply *out)
{
    memset(out, 0, sizeof *out);
    /* The methods the path allows, for a 405's Allow header. */
    static const char *const allow_sets[] = { "GET", "POST", "GET, POST", "DELETE", "GET, DELETE" };
    bool path_known = false, get = false, post = false, del = false;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        const struct route *r = &routes[i];
        int64_t id;
        const char *idseg = NULL;
        size_t idlen = 0;
        if (!route_match(r->pattern, rq->path, &id, &idseg, &idlen))
            continue;
        path_known = true;
        get |= strcmp(r->method, "GET") == 0;
        post |= strcmp(r->method, "POST") == 0;
        del |= strcmp(r->method, "DELETE") == 0;
        if (strcmp(r->method, rq->method) != 0)
            continue;
        if (idseg && id == 0) {
            srv_reply_error(out, 404, "no such %s: '%.*s'", r->noun, (int)(idlen > 64 ? 64 : idlen),
                            idseg);
            return;
        }
        for (size_t k = 0; k < rq->nargs; k++) {
            if (!arg_allowed(r->args, rq->args[k].key)) {
                /* ",a,b," is listed as "a, b". */
                char list[128] = "none";
                size_t len = strlen(r->args);
                if (len > 2 && len < sizeof list) {
                    size_t j = 0;
                    for (size_t m = 1; m + 1 < len; m++) {
                        list[j++] = r->args[m];
                        if (r->args[m] == ',')
                            list[j++] = ' ';
                    }
                    list[j] = '\0';
                }
                srv_reply_error(out, 400,
                                "unknown query parameter '%.64s' (this endpoint takes %s)",
                                rq->args[k].key, list);
                return;
            }
            for (size_t m = 0; m < k; m++) {
                if (strcmp(rq->args[m].key, rq->args[k].key) == 0) {
                    srv_reply_error(out, 400, "query parameter '%.64s' given twice",
                                    rq->args[k].key);
                    return;
                }
            }
        }
        r->fn(api, rq, id, out);
        return;
    }
    if (!path_known) {
        srv_reply_error(out, 404, "no such endpoint: %.200s", rq->path);
        return;
    }
    out->allow = allow_sets[(get && post) ? 2 : (get && del) ? 4 : post ? 1 : del ? 3 : 0];
    srv_reply_error(out, 405, "method %.16s not allowed on %.200s (allowed: %s)", rq->method,
                    rq->path, out->allow);
}

static void
api_version(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
            struct srv_reply *out)
{
    (void)api, (void)rq, (void)id;
    srv_reply_json(
        out, 200,
        json_pack("{s:s, s:s, s:i}", "name", "rspwalkd", "version", SW_VERSION, "api", 1));
}
