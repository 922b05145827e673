/* server/api_history.c -- what the store keeps: snapshots of a target, and sample runs.
 *
 * Every answer here comes from the store (server/store.h), not from a stub:
 * the documents as they were served then.  A sample run is started through
 * the registry, whose links store the samples as folded call paths with
 * counts; its progress and its merged tree (counts = samples through a
 * node) are read back from the store.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api_impl.h"
#include "server/store.h"
#include "server/tree.h"

/* A page of history: at most this many entries, 100 when not asked. */
#define LIMIT_MAX     1000
#define LIMIT_DEFAULT 100

/* A sample run: at most an hour, at most 10 kHz (the link, not this limit,
 * bounds the real rate: each tick is a stop, a walk and a resume). */
#define SAMPLE_SECONDS_MAX 3600.0
#define SAMPLE_HZ_MAX      10000.0

static bool
need_store(const struct srv_api_config *api, struct srv_reply *out)
{
    if (api->store)
        return true;
    srv_reply_error(out, 503, "rspwalkd runs without a store (--db none): no history");
    return false;
}

struct snap_list {
    json_t *items;
    int64_t last;
};

static int
snap_item(void *arg, const struct srv_doc_rec *r)
{
    struct snap_list *l = arg;
    l->last = r->id;
    return json_array_append_new(l->items, json_pack("{s:I, s:I, s:I}", "id", (json_int_t)r->id,
                                                     "target", (json_int_t)r->target_id, "time_us",
                                                     (json_int_t)r->time_us)) == 0
               ? 0
               : -1;
}

void
srv_api_snapshots_list(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                       struct srv_reply *out)
{
    uint64_t after = 0, limit = LIMIT_DEFAULT;
    if (!need_store(api, out) || srv_arg_uint(rq, out, "after", 0, INT64_MAX, &after) < 0 ||
        srv_arg_uint(rq, out, "limit", 1, LIMIT_MAX, &limit) < 0)
        return;
    /* The target must exist: an empty list would hide a wrong id. */
    char err[512] = "", *t = NULL;
    int rc = srv_target_json(api->registry, id, &t, err, sizeof err);
    free(t);
    if (rc != 0) {
        srv_reply_srv_error(out, rc, err);
        return;
    }
    struct snap_list l = { .items = json_array(), .last = 0 };
    if (!l.items || srv_store_snapshot_list(api->store, id, (int64_t)after, (size_t)limit, 0,
                                            snap_item, &l) != 0) {
        json_decref(l.items);
        srv_reply_error(out, 500, "snapshots of target %" PRId64 ": %s", id,
                        srv_store_errmsg(api->store));
        return;
    }
    /* "next": the ?after= of the following page, null on the last one. */
    json_t *next = json_array_size(l.items) == limit ? json_integer(l.last) : json_null();
    srv_reply_json(out, 200, json_pack("{s:o, s:o}", "snapshots", l.items, "next", next));
}

/* {"id", "target", "time_us", "document": <the stored text>}: the document
 * spliced in as stored, not parsed and written again. */
void
srv_api_snapshot_get(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                     struct srv_reply *out)
{
    (void)rq;
    if (!need_store(api, out))
        return;
    struct srv_doc_rec r = { 0 };
    int rc = srv_store_snapshot_get(api->store, id, &r);
    if (rc == 1) {
        srv_reply_error(out, 404, "no such snapshot: %" PRId64, id);
        return;
    }
    if (rc != 0) {
        srv_reply_error(out, 500, "snapshot %" PRId64 ": %s", id, srv_store_errmsg(api->store));
        return;
    }
    size_t n = strlen(r.doc) + 128;
    char *text = malloc(n);
    if (!text) {
        srv_doc_rec_fini(&r);
        srv_reply_error(out, 500, "out of memory");
        return;
    }
    snprintf(text, n,
             "{\"id\":%" PRId64 ",\"target\":%" PRId64 ",\"time_us\":%" PRId64 ",\"document\":%s}",
             r.id, r.target_id, r.time_us, r.doc);
    srv_doc_rec_fini(&r);
    srv_reply_take(out, 200, "application/json", text);
}

void
srv_api_samples_start(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                      struct srv_reply *out)
{
    (void)id;
    static const struct srv_field fields[] = { { "targets", "I" },
                                               { "hz", "n" },
                                               { "seconds", "n" } };
    json_t *body;
    if (!need_store(api, out) || srv_body_object(rq, out, false, &body) < 0)
        return;
    if (srv_body_check(body, fields, sizeof fields / sizeof fields[0], out) < 0) {
        json_decref(body);
        return;
    }
    json_t *jt = json_object_get(body, "targets"), *jh = json_object_get(body, "hz"),
           *js = json_object_get(body, "seconds");
    double hz = json_is_number(jh) ? json_number_value(jh) : 100.0;
    double seconds = json_is_number(js) ? json_number_value(js) : 5.0;
    if (!(hz > 0 && hz <= SAMPLE_HZ_MAX) || !(seconds > 0 && seconds <= SAMPLE_SECONDS_MAX)) {
        json_decref(body);
        srv_reply_error(out, 400, "hz must be in (0, %g] and seconds in (0, %g]", SAMPLE_HZ_MAX,
                        SAMPLE_SECONDS_MAX);
        return;
    }
    size_t n = json_array_size(jt);
    int64_t *ids = n ? malloc(n * sizeof *ids) : NULL;
    if (n && !ids) {
        json_decref(body);
        srv_reply_error(out, 500, "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = (int64_t)json_integer_value(json_array_get(jt, i));
    json_decref(body);
    char err[512] = "";
    int64_t sid = 0;
    int rc = srv_sample_start(api->registry, ids, n, hz, seconds, &sid, err, sizeof err);
    free(ids);
    if (rc != 0) {
        srv_reply_srv_error(out, rc, err);
        return;
    }
    srv_reply_json(out, 201, json_pack("{s:I}", "id", (json_int_t)sid));
    snprintf(out->location, sizeof out->location, "/v1/samples/%" PRId64, sid);
}

/* A sample run's record as JSON (no tree). */
static json_t *
sample_json(const struct srv_sample_rec *r)
{
    json_t *targets = json_loads(r->targets ? r->targets : "[]", 0, NULL);
    return json_pack("{s:I, s:o, s:f, s:f, s:I, s:o, s:s, s:I}", "id", (json_int_t)r->id, "targets",
                     targets ? targets : json_array(), "hz", r->hz, "seconds", r->seconds,
                     "started_us", (json_int_t)r->started_us, "ended_us",
                     r->ended_us ? json_integer(r->ended_us) : json_null(), "state",
                     r->state ? r->state : "unknown", "ticks", (json_int_t)r->ticks);
}

static int
sample_item(void *arg, const struct srv_sample_rec *r)
{
    return json_array_append_new(arg, sample_json(r)) == 0 ? 0 : -1;
}

void
srv_api_samples_list(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                     struct srv_reply *out)
{
    (void)id;
    uint64_t limit = LIMIT_DEFAULT;
    if (!need_store(api, out) || srv_arg_uint(rq, out, "limit", 1, LIMIT_MAX, &limit) < 0)
        return;
    json_t *items = json_array();
    if (!items || srv_store_sample_each(api->store, (size_t)limit, sample_item, items) != 0) {
        json_decref(items);
        srv_reply_error(out, 500, "sample runs: %s", srv_store_errmsg(api->store));
        return;
    }
    srv_reply_json(out, 200, json_pack("{s:o}", "samples", items));
}

struct sample_fold {
    struct srv_tree *tree;
    char err[512];
};

static int
sample_stack(void *arg, const struct srv_doc_rec *r)
{
    struct sample_fold *f = arg;
    return srv_tree_add_doc(f->tree, r->target_id, r->doc, 1, f->err, sizeof f->err);
}

static int
sample_path(void *arg, const struct srv_path_rec *r)
{
    struct sample_fold *f = arg;
    return srv_tree_add_path(f->tree, r->target_id, r->target, r->thread, r->path,
                             (uint64_t)r->count, f->err, sizeof f->err);
}

void
srv_api_sample_get(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                   struct srv_reply *out)
{
    if (!need_store(api, out))
        return;
    struct srv_sample_rec rec = { 0 };
    int rc = srv_store_sample_get(api->store, id, &rec);
    if (rc == 1) {
        srv_reply_error(out, 404, "no such sample: %" PRId64, id);
        return;
    }
    if (rc != 0) {
        srv_reply_error(out, 500, "sample %" PRId64 ": %s", id, srv_store_errmsg(api->store));
        return;
    }
    struct sample_fold f = { .err = "" };
    if (srv_tree_new(&f.tree) < 0) {
        srv_sample_rec_fini(&rec);
        srv_reply_error(out, 500, "out of memory");
        return;
    }
    /* A run stored before the store kept paths has documents instead. */
    if (srv_store_sample_stacks(api->store, id, sample_stack, &f) != 0 ||
        srv_store_sample_paths(api->store, id, sample_path, &f) != 0) {
        srv_reply_error(out, 500, "sample %" PRId64 ": %s", id,
                        f.err[0] ? f.err : srv_store_errmsg(api->store));
        goto done;
    }
    const char *format = srv_arg_get(rq, "format");
    if (format && strcmp(format, "json") != 0) {
        srv_api_tree_reply(f.tree, rq, out);
        goto done;
    }
    /* JSON: the run's record with its tree so far. */
    char *text;
    size_t len;
    if (srv_tree_write(f.tree, SW_TREE_JSON, &text, &len) < 0) {
        srv_reply_error(out, 500, "the tree could not be written (out of memory)");
        goto done;
    }
    json_t *tree = json_loadb(text, len, 0, NULL);
    free(text);
    json_t *j = sample_json(&rec);
    if (!tree || !j) {
        json_decref(tree);
        json_decref(j);
        srv_reply_error(out, 500, "the tree could not be written (out of memory)");
        goto done;
    }
    json_object_set_new(j, "tree", tree);
    srv_reply_json(out, 200, j);
done:
    srv_tree_free(f.tree);
    srv_sample_rec_fini(&rec);
}

/* End a going run; answers its record as it ended (no tree).  A run that
 * has ended already is a conflict, one that never was is not found. */
void
srv_api_sample_stop(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                    struct srv_reply *out)
{
    (void)rq;
    if (!need_store(api, out))
        return;
    char err[512] = "";
    int stop_rc = srv_sample_stop(api->registry, id, err, sizeof err);
    struct srv_sample_rec rec = { 0 };
    int rc = srv_store_sample_get(api->store, id, &rec);
    if (rc == 1) {
        srv_reply_error(out, 404, "no such sample: %" PRId64, id);
        return;
    }
    if (rc != 0) {
        srv_reply_error(out, 500, "sample %" PRId64 ": %s", id, srv_store_errmsg(api->store));
        return;
    }
    if (stop_rc != 0)
        srv_reply_error(out, 409, "sample %" PRId64 ": not going (%s)", id,
                        rec.state ? rec.state : "unknown");
    else
        srv_reply_json(out, 200, sample_json(&rec));
    srv_sample_rec_fini(&rec);
}
