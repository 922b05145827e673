/* server/api_stacks.c -- stacks now: one target's, every target's, and their merged tree.
 *
 * The stack documents are the registry's text, passed through unchanged (the
 * same bytes `rspwalk -f json` writes); the tree is built from them here
 * (server/tree.c) in the format asked.
 */
#include <stdlib.h>
#include <string.h>

#include "server/api_impl.h"
#include "server/tree.h"

void
srv_api_target_stacks(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                      struct srv_reply *out)
{
    struct srv_walk_opts o;
    if (srv_arg_walk_opts(rq, out, &o) < 0)
        return;
    struct srv_call_result res;
    if (srv_api_call(api, SRV_CALL_STACKS, id, NULL, 0, &o, &res, out) < 0)
        return;
    if (res.rc != 0) {
        free(res.doc);
        srv_reply_srv_error(out, res.rc, res.err);
        return;
    }
    srv_reply_take(out, 200, "application/json", res.doc);
}

/* The documents of ?targets= (all by default), walked concurrently; 0 and
 * *DOC (free()), or -1 after replying. */
static int
stacks_all(const struct srv_api_config *api, const struct srv_request *rq,
           const struct srv_walk_opts *o, char **doc, struct srv_reply *out)
{
    int64_t *ids;
    size_t n;
    if (srv_arg_ids(rq, out, "targets", &ids, &n) < 0)
        return -1;
    struct srv_call_result res;
    int rc = srv_api_call(api, SRV_CALL_STACKS_ALL, 0, ids, n, o, &res, out);
    free(ids);
    if (rc < 0)
        return -1;
    if (res.rc != 0) {
        free(res.doc);
        srv_reply_srv_error(out, res.rc, res.err);
        return -1;
    }
    *doc = res.doc;
    return 0;
}

void
srv_api_stacks(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
               struct srv_reply *out)
{
    (void)id;
    struct srv_walk_opts o;
    char *doc;
    if (srv_arg_walk_opts(rq, out, &o) < 0 || stacks_all(api, rq, &o, &doc, out) < 0)
        return;
    srv_reply_take(out, 200, "application/json", doc);
}

void
srv_api_tree(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
             struct srv_reply *out)
{
    (void)id;
    enum sw_tree_format format;
    const char *type;
    struct srv_walk_opts o;
    char *doc;
    /* The format is checked before any stub is asked. */
    if (srv_api_tree_format(rq, out, &format, &type) < 0 || srv_arg_walk_opts(rq, out, &o) < 0 ||
        stacks_all(api, rq, &o, &doc, out) < 0)
        return;
    struct srv_tree *t;
    char err[512];
    if (srv_tree_new(&t) < 0) {
        free(doc);
        srv_reply_error(out, 500, "out of memory");
        return;
    }
    if (srv_tree_add_stacks(t, doc, err, sizeof err) < 0)
        srv_reply_error(out, 500, "%s", err);
    else
        srv_api_tree_reply(t, rq, out);
    srv_tree_free(t);
    free(doc);
}
