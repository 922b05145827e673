/* server/registry.c -- the targets rspwalkd serves, their ids, and requests across them.
 *
 * The registry keeps the list of targets (each with its link thread,
 * server/link.c), gives ids (the store's, or its own counter), answers from
 * the targets' cached documents where it can and posts walks to their links
 * otherwise, waiting no longer than the walk deadline, and keeps the sample
 * runs (server/sampler.c).  It never talks to a stub itself.
 */
#include "server/registry.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/rspwalk.h"
#include "server/link.h"
#include "server/sampler.h"
#include "server/store.h"

#define DEFAULT_MAX_TARGETS 1024
#define DEFAULT_TIMEOUT_MS  10000
#define DEFAULT_DEADLINE_MS 30000
/* Sample runs at once: each holds a thread and a request on every link it
 * samples. */
#define MAX_RUNS 8
/* Ids of targets not kept in the store, when there is a store: far above
 * the store's own (SQLite's rowids, counted from 1), so that the two never
 * meet. */
#define TRANSIENT_ID_BASE ((int64_t)1 << 40)
/* The longest TARGET, name, exe or sysroot string accepted (PATH_MAX). */
#define MAX_SPEC_STR 4096

struct srv_registry {
    struct srv_link_env env;
    char *cache_dir; /* owned: env.cache_dir */
    size_t max_targets;
    int deadline_ms;

    pthread_mutex_t mu;    /* below */
    struct srv_target **t; /* n, in id order; one reference each */
    size_t n, cap;
    struct srv_target **grave; /* deleted, link thread still ending; one reference each */
    size_t ngrave, gcap;
    struct srv_run *runs[MAX_RUNS];
    int64_t next_id;     /* transient targets */
    int64_t next_run_id; /* sample runs without a store */
};

static uint64_t
deadline(const struct srv_registry *r)
{
    return srv_now_us() + (uint64_t)r->deadline_ms * 1000u;
}

/* Index of ID in R->t, or where it would go; *FOUND says which.  R->mu held. */
static size_t
find_locked(const struct srv_registry *r, int64_t id, bool *found)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->t[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < r->n && r->t[lo]->id == id;
    return lo;
}

/* Target ID with a reference for the caller, or NULL. */
static struct srv_target *
get_target(struct srv_registry *r, int64_t id)
{
    bool found;
    struct srv_target *t = NULL;
    pthread_mutex_lock(&r->mu);
    size_t i = find_locked(r, id, &found);
    if (found) {
        t = r->t[i];
        srv_target_ref(t);
    }
    pthread_mutex_unlock(&r->mu);
    return t;
}

static int
no_target(int64_t id, char *err, size_t errlen)
{
    return srv_fail(err, errlen, SRV_ENOTFOUND, "no target %" PRId64, id);
}

/* Join and release the deleted targets whose link threads have ended. */
static void
reap_grave(struct srv_registry *r)
{
    for (;;) {
        struct srv_target *t = NULL;
        pthread_mutex_lock(&r->mu);
        for (size_t i = 0; i < r->ngrave; i++)
            if (srv_target_done(r->grave[i])) {
                t = r->grave[i];
                r->grave[i] = r->grave[--r->ngrave];
                break;
            }
        pthread_mutex_unlock(&r->mu);
        if (t == NULL)
            return;
        srv_target_join(t);
        srv_target_unref(t);
    }
}

static bool
spec_str_ok(const char *s, const char *what, bool required, char *err, size_t errlen)
{
    if (s == NULL) {
        if (required)
            srv_fail(err, errlen, SRV_EINVAL, "%s: missing", what);
        return !required;
    }
    size_t len = strnlen(s, MAX_SPEC_STR + 1);
    if ((required && len == 0) || len > MAX_SPEC_STR) {
        srv_fail(err, errlen, SRV_EINVAL, "%s: %s", what,
                 len == 0 ? "empty" : "longer than 4096 bytes");
        return false;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20) {
            srv_fail(err, errlen, SRV_EINVAL, "%s: a control character at byte %zu", what,
                     (size_t)(p - (const unsigned char *)s));
            return false;
        }
    return true;
}

static bool
same_str(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Add T (one reference, the registry's) at its id.  R->mu held. */
static int
insert_locked(struct srv_registry *r, struct srv_target *t, char *err, size_t errlen)
{
    bool found;
    size_t i = find_locked(r, t->id, &found);
    if (found)
        return srv_fail(err, errlen, SRV_ECONFLICT, "target id %" PRId64 " is taken", t->id);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        struct srv_target **nt = realloc(r->t, cap * sizeof *nt);
        if (nt == NULL)
            return srv_fail(err, errlen, SRV_EINTERNAL, "adding target: out of memory");
        r->t = nt;
        r->cap = cap;
    }
    memmove(r->t + i + 1, r->t + i, (r->n - i) * sizeof *r->t);
    r->t[i] = t;
    r->n++;
    return 0;
}

/* Register SPEC as ID (a new id when ID is 0) and start its link.  R->mu
 * held. */
static int
add_locked(struct srv_registry *r, const struct srv_target_spec *spec, bool persist, int64_t id,
           int64_t *out, char *err, size_t errlen)
{
    if (!spec_str_ok(spec->target, "target", true, err, errlen) ||
        !spec_str_ok(spec->exe, "exe", false, err, errlen) ||
        !spec_str_ok(spec->sysroot, "sysroot", false, err, errlen) ||
        !spec_str_ok(spec->name, "name", false, err, errlen))
        return SRV_EINVAL;
    if (spec->rtos != NULL && strcmp(spec->rtos, "freertos") != 0 &&
        strcmp(spec->rtos, "auto") != 0)
        return srv_fail(err, errlen, SRV_EINVAL, "rtos: '%s' is not one of freertos, auto",
                        spec->rtos);
    if (spec->rtos != NULL && spec->exe == NULL)
        return srv_fail(err, errlen, SRV_EINVAL,
                        "rtos: needs exe, the image the board runs with its symbols");
    if (r->n >= r->max_targets)
        return srv_fail(err, errlen, SRV_ELIMIT, "too many targets: at most %zu", r->max_targets);
    /* One link per stub (gdbserver serves one client): the same target
     * again is the target already there, unless it asks for other files. */
    for (size_t i = 0; i < r->n; i++) {
        struct srv_target *t = r->t[i];
        if (strcmp(t->target, spec->target) != 0)
            continue;
        if (!same_str(t->exe, spec->exe) || !same_str(t->sysroot, spec->sysroot) ||
            !same_str(t->rtos, spec->rtos))
            return srv_fail(err, errlen, SRV_ECONFLICT,
                            "target %s is already registered (id %" PRId64
                            ") with another exe, sysroot or rtos",
                            spec->target, t->id);
        *out = t->id;
        return 0;
    }
    bool stored = id != 0;
    if (id == 0 && persist && r->env.store != NULL) {
        struct srv_target_rec rec = { .name = (char *)spec->name,
                                      .target = (char *)spec->target,
                                      .exe = (char *)spec->exe,
                                      .sysroot = (char *)spec->sysroot,
                                      .rtos = (char *)spec->rtos };
        if (srv_store_target_add(r->env.store, &rec, &id) < 0)
            return srv_fail(err, errlen, SRV_EINTERNAL, "storing target %s: %s", spec->target,
                            srv_store_errmsg(r->env.store));
        stored = true;
    } else if (id == 0) {
        id = r->next_id++;
    }
    struct srv_target *t;
    int rc = srv_target_start(&r->env, spec, id, stored, &t, err, errlen);
    if (rc == 0 && (rc = insert_locked(r, t, err, errlen)) < 0) {
        srv_target_quit(t);
        srv_target_join(t);
        srv_target_unref(t);
    }
    if (rc < 0) {
        if (stored && persist)
            srv_store_target_delete(r->env.store, id);
        return rc;
    }
    *out = id;
    return 0;
}

/* The store's targets, added back.  Runs under the store's lock: no store
 * calls here (add_locked makes none for an id given). */
static int
add_back(void *arg, const struct srv_target_rec *rec)
{
    struct srv_registry *r = arg;
    struct srv_target_spec spec = {
        .target = rec->target,
        .exe = rec->exe,
        .sysroot = rec->sysroot,
        .name = rec->name,
        .rtos = rec->rtos,
    };
    char err[320];
    int64_t id;
    if (add_locked(r, &spec, false, rec->id, &id, err, sizeof err) < 0)
        srv_log("stored target %" PRId64 " (%s) not added back: %s", rec->id, rec->target, err);
    return 0;
}

int
srv_registry_new(const struct srv_registry_config *cfg, struct srv_registry **out, char *err,
                 size_t errlen)
{
    struct srv_registry_config c = cfg ? *cfg : (struct srv_registry_config){ 0 };
    if (c.timeout_ms < 0 || c.walk_deadline_ms < 0 || c.link_deadline_ms < 0)
        return srv_fail(err, errlen, SRV_EINVAL, "registry: negative timeout or deadline");
    struct srv_registry *r = calloc(1, sizeof *r);
    if (r == NULL)
        return srv_fail(err, errlen, SRV_EINTERNAL, "registry: out of memory");
    r->env.store = c.store;
    r->env.timeout_ms = c.timeout_ms ? c.timeout_ms : DEFAULT_TIMEOUT_MS;
    r->env.event = c.event;
    r->env.event_arg = c.event_arg;
    r->max_targets = c.max_targets ? c.max_targets : DEFAULT_MAX_TARGETS;
    r->deadline_ms = c.walk_deadline_ms ? c.walk_deadline_ms : DEFAULT_DEADLINE_MS;
    r->env.deadline_ms =
        c.link_deadline_ms ? c.link_deadline_ms : r->deadline_ms - r->deadline_ms / 10;
    r->env.max_threads = c.max_threads;
    r->next_id = c.store ? TRANSIENT_ID_BASE : 1;
    r->next_run_id = 1;
    pthread_mutex_init(&r->mu, NULL);
    if (c.cache_dir != NULL && (r->cache_dir = strdup(c.cache_dir)) == NULL) {
        srv_registry_free(r);
        return srv_fail(err, errlen, SRV_EINTERNAL, "registry: out of memory");
    }
    r->env.cache_dir = r->cache_dir;
    int rc = sw_modcache_new(NULL, r->cache_dir, &r->env.mc);
    if (rc < 0) {
        srv_registry_free(r);
        return srv_fail(err, errlen, rc == SW_ENOMEM ? SRV_EINTERNAL : SRV_EINVAL,
                        "registry: module cache: %s", sw_strerror(rc));
    }
    if (rsp_tdesc_cache_new(0, &r->env.tdc) < 0) {
        srv_registry_free(r);
        return srv_fail(err, errlen, SRV_EINTERNAL, "registry: out of memory");
    }
    if (c.store != NULL) {
        pthread_mutex_lock(&r->mu);
        rc = srv_store_target_each(c.store, add_back, r);
        pthread_mutex_unlock(&r->mu);
        if (rc < 0) {
            char msg[320];
            snprintf(msg, sizeof msg, "%s", srv_store_errmsg(c.store));
            srv_registry_free(r);
            return srv_fail(err, errlen, SRV_EINTERNAL, "registry: reading the stored targets: %s",
                            msg);
        }
    }
    *out = r;
    return 0;
}

void
srv_registry_free(struct srv_registry *r)
{
    if (r == NULL)
        return;
    /* Runs first: each stops again the targets it found stopped, through
     * their links, which must still be there. */
    for (size_t i = 0; i < MAX_RUNS; i++)
        if (r->runs[i] != NULL)
            srv_run_stop(r->runs[i]);
    for (size_t i = 0; i < MAX_RUNS; i++) {
        srv_run_free(r->runs[i]);
        r->runs[i] = NULL;
    }
    for (size_t i = 0; i < r->n; i++)
        srv_target_quit(r->t[i]);
    for (size_t i = 0; i < r->n; i++) {
        srv_target_join(r->t[i]);
        srv_target_unref(r->t[i]);
    }
    for (size_t i = 0; i < r->ngrave; i++) {
        srv_target_join(r->grave[i]);
        srv_target_unref(r->grave[i]);
    }
    free(r->t);
    free(r->grave);
    sw_modcache_free(r->env.mc);
    rsp_tdesc_cache_free(r->env.tdc);
    free(r->cache_dir);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

int
srv_target_add(struct srv_registry *r, const struct srv_target_spec *spec, bool persist,
               int64_t *id, char *err, size_t errlen)
{
    if (spec == NULL)
        return srv_fail(err, errlen, SRV_EINVAL, "target: missing");
    reap_grave(r);
    pthread_mutex_lock(&r->mu);
    int rc = add_locked(r, spec, persist, 0, id, err, errlen);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int
srv_target_delete(struct srv_registry *r, int64_t id, char *err, size_t errlen)
{
    bool found;
    struct srv_target *t = NULL;
    int rc = 0;

    pthread_mutex_lock(&r->mu);
    size_t i = find_locked(r, id, &found);
    if (found && r->ngrave == r->gcap) {
        size_t cap = r->gcap ? r->gcap * 2 : 8;
        struct srv_target **ng = realloc(r->grave, cap * sizeof *ng);
        if (ng == NULL)
            rc = srv_fail(err, errlen, SRV_EINTERNAL, "deleting target %" PRId64 ": out of memory",
                          id);
        else
            r->grave = ng, r->gcap = cap;
    }
    if (found && rc == 0) {
        t = r->t[i];
        memmove(r->t + i, r->t + i + 1, (r->n - i - 1) * sizeof *r->t);
        r->n--;
        r->grave[r->ngrave++] = t;
        srv_target_ref(t);
    }
    pthread_mutex_unlock(&r->mu);
    if (rc < 0)
        return rc;
    if (t == NULL)
        return no_target(id, err, errlen);
    srv_target_quit(t);
    if (t->persisted && r->env.store != NULL && srv_store_target_delete(r->env.store, id) < 0)
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "deleting target %" PRId64 " from the store: %s",
                      id, srv_store_errmsg(r->env.store));
    /* The answer waits (within the deadline) until the link is closed, so
     * that the target is as found when the client hears "deleted". */
    srv_target_wait_done(t, deadline(r));
    srv_target_unref(t);
    reap_grave(r);
    return rc;
}

int
srv_target_json(struct srv_registry *r, int64_t id, char **out, char *err, size_t errlen)
{
    struct srv_target *t = get_target(r, id);
    if (t == NULL)
        return no_target(id, err, errlen);
    json_t *o = srv_target_info(t);
    srv_target_unref(t);
    *out = o ? json_dumps(o, 0) : NULL;
    json_decref(o);
    return *out ? 0 : srv_fail(err, errlen, SRV_EINTERNAL, "target %" PRId64 ": out of memory", id);
}

/* References to every target, in id order.  *T: caller frees the array
 * with free() and unrefs each. */
static int
all_targets(struct srv_registry *r, struct srv_target ***t, size_t *n)
{
    pthread_mutex_lock(&r->mu);
    *n = r->n;
    *t = calloc(r->n ? r->n : 1, sizeof **t);
    if (*t != NULL)
        for (size_t i = 0; i < r->n; i++) {
            (*t)[i] = r->t[i];
            srv_target_ref(r->t[i]);
        }
    pthread_mutex_unlock(&r->mu);
    return *t ? 0 : SRV_EINTERNAL;
}

int
srv_targets_json(struct srv_registry *r, char **out, char *err, size_t errlen)
{
    struct srv_target **t;
    size_t n;
    if (all_targets(r, &t, &n) < 0)
        return srv_fail(err, errlen, SRV_EINTERNAL, "listing targets: out of memory");
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        if (a != NULL && json_array_append_new(a, srv_target_info(t[i])) < 0) {
            json_decref(a);
            a = NULL;
        }
        srv_target_unref(t[i]);
    }
    free(t);
    *out = a ? json_dumps(a, 0) : NULL;
    json_decref(a);
    return *out ? 0 : srv_fail(err, errlen, SRV_EINTERNAL, "listing targets: out of memory");
}

static struct srv_walk_key
key_of(const struct srv_walk_opts *o)
{
    struct srv_walk_key k = { 0 };
    if (o != NULL) {
        k.thread = (char *)o->thread; /* borrowed: read only */
        k.locals = o->locals;
        k.lines = o->lines;
        k.max_frames = o->max_frames;
    }
    return k;
}

/* One target's walk within the deadline: *DOC, or a code and ERR. */
static int
walk_one(struct srv_registry *r, struct srv_target *t, const struct srv_walk_key *key, char **doc,
         char *err, size_t errlen)
{
    if (srv_target_cached(t, key, doc))
        return 0;
    struct srv_req *q = srv_req_new(SRV_REQ_WALK, key);
    if (q == NULL)
        return srv_fail(err, errlen, SRV_EINTERNAL, "target %" PRId64 ": out of memory", t->id);
    struct srv_waiter w;
    srv_waiter_init(&w);
    int rc = srv_target_post(t, q, &w, err, errlen);
    if (rc < 0) {
        srv_req_free(q);
        srv_waiter_fini(&w);
        return rc;
    }
    srv_waiter_wait(&w, deadline(r));
    if (srv_req_settle(t, q)) {
        rc = q->rc;
        if (rc < 0)
            srv_fail(err, errlen, rc, "%s", q->err);
        *doc = q->doc;
        q->doc = NULL;
        srv_req_free(q);
    } else {
        rc = srv_fail(err, errlen, SRV_ETIMEOUT, "target %" PRId64 " (%s): no answer within %d ms",
                      t->id, t->target, r->deadline_ms);
    }
    srv_waiter_fini(&w);
    return rc;
}

int
srv_target_stacks(struct srv_registry *r, int64_t id, const struct srv_walk_opts *o, char **doc,
                  char *err, size_t errlen)
{
    struct srv_target *t = get_target(r, id);
    if (t == NULL)
        return no_target(id, err, errlen);
    struct srv_walk_key key = key_of(o);
    int rc = walk_one(r, t, &key, doc, err, errlen);
    srv_target_unref(t);
    return rc;
}

/* One member of {"targets": [...]}: {"id": ID, <DOC's members>}, or
 * {"id": ID, "error": MSG}. */
static void
write_entry(FILE *f, int64_t id, const char *doc, const char *msg)
{
    if (doc != NULL) {
        const char *b = strchr(doc, '{'), *e = strrchr(doc, '}');
        if (b != NULL && e != NULL && e > b) {
            const char *in = b + 1;
            while (in < e && (*in == ' ' || *in == '\n'))
                in++;
            fprintf(f, "{\"id\": %" PRId64 "%s%.*s}", id, in < e ? ", " : "", (int)(e - in), in);
            return;
        }
        msg = "the walk gave no document";
    }
    /* MSG may quote the stub's bytes: escaped, valid UTF-8 for jansson. */
    char *safe = sw_text_escape(msg ? msg : "", 0);
    json_t *o = safe ? json_pack("{s:I, s:s}", "id", (json_int_t)id, "error", safe) : NULL;
    free(safe);
    char *s = o ? json_dumps(o, 0) : NULL;
    fputs(s ? s : "{\"error\": \"out of memory\"}", f);
    free(s);
    json_decref(o);
}

int
srv_stacks_all(struct srv_registry *r, const int64_t *ids, size_t n, const struct srv_walk_opts *o,
               char **doc, char *err, size_t errlen)
{
    struct srv_target **t = NULL;
    size_t nt = n;
    int rc = 0;

    if (n == 0) {
        if (all_targets(r, &t, &nt) < 0)
            return srv_fail(err, errlen, SRV_EINTERNAL, "walking: out of memory");
    } else if ((t = calloc(n, sizeof *t)) == NULL) {
        return srv_fail(err, errlen, SRV_EINTERNAL, "walking: out of memory");
    } else {
        for (size_t i = 0; i < n; i++)
            t[i] = get_target(r, ids[i]);
    }
    struct srv_walk_key key = key_of(o);
    struct srv_req **q = calloc(nt ? nt : 1, sizeof *q);
    char **docs = calloc(nt ? nt : 1, sizeof *docs);
    char(*msgs)[320] = calloc(nt ? nt : 1, sizeof *msgs);
    struct srv_waiter w;
    srv_waiter_init(&w);
    if (q == NULL || docs == NULL || msgs == NULL) {
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "walking: out of memory");
        goto out;
    }
    /* Cached answers first, then every other walk posted before waiting
     * for any: the links walk at once, and the wait has one deadline. */
    for (size_t i = 0; i < nt; i++) {
        if (t[i] == NULL) {
            no_target(ids[i], msgs[i], sizeof msgs[i]);
            continue;
        }
        if (srv_target_cached(t[i], &key, &docs[i]))
            continue;
        if ((q[i] = srv_req_new(SRV_REQ_WALK, &key)) == NULL) {
            srv_fail(msgs[i], sizeof msgs[i], SRV_EINTERNAL, "out of memory");
            continue;
        }
        if (srv_target_post(t[i], q[i], &w, msgs[i], sizeof msgs[i]) < 0) {
            srv_req_free(q[i]);
            q[i] = NULL;
        }
    }
    srv_waiter_wait(&w, deadline(r));
    for (size_t i = 0; i < nt; i++) {
        if (q[i] == NULL)
            continue;
        if (!srv_req_settle(t[i], q[i])) {
            srv_fail(msgs[i], sizeof msgs[i], SRV_ETIMEOUT,
                     "target %" PRId64 " (%s): no answer within %d ms", t[i]->id, t[i]->target,
                     r->deadline_ms);
            continue;
        }
        if (q[i]->rc == 0)
            docs[i] = q[i]->doc, q[i]->doc = NULL;
        else
            snprintf(msgs[i], sizeof msgs[i], "%s", q[i]->err);
        srv_req_free(q[i]);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) {
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "walking: out of memory");
        goto out;
    }
    fputs("{\"targets\": [", f);
    for (size_t i = 0; i < nt; i++) {
        fputs(i ? ",\n" : "\n", f);
        write_entry(f, t[i] ? t[i]->id : ids[i], docs[i], msgs[i]);
    }
    fputs("\n]}\n", f);
    if (fclose(f) != 0) {
        free(buf);
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "walking: out of memory");
        goto out;
    }
    *doc = buf;
out:
    srv_waiter_fini(&w);
    for (size_t i = 0; i < nt; i++) {
        if (docs != NULL)
            free(docs[i]);
        srv_target_unref(t[i]);
    }
    free(t);
    free(q);
    free(docs);
    free(msgs);
    return rc;
}

static int
control(struct srv_registry *r, int64_t id, enum srv_req_kind kind, char *err, size_t errlen)
{
    struct srv_target *t = get_target(r, id);
    if (t == NULL)
        return no_target(id, err, errlen);
    struct srv_req *q = srv_req_new(kind, NULL);
    struct srv_waiter w;
    int rc;
    srv_waiter_init(&w);
    if (q == NULL)
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "target %" PRId64 ": out of memory", id);
    else if ((rc = srv_target_post(t, q, &w, err, errlen)) < 0)
        srv_req_free(q);
    else {
        srv_waiter_wait(&w, deadline(r));
        if (srv_req_settle(t, q)) {
            rc = q->rc;
            if (rc < 0)
                srv_fail(err, errlen, rc, "%s", q->err);
            srv_req_free(q);
        } else {
            rc = srv_fail(err, errlen, SRV_ETIMEOUT,
                          "target %" PRId64 " (%s): no answer within %d ms", id, t->target,
                          r->deadline_ms);
        }
    }
    srv_waiter_fini(&w);
    srv_target_unref(t);
    return rc;
}

int
srv_target_resume(struct srv_registry *r, int64_t id, char *err, size_t errlen)
{
    return control(r, id, SRV_REQ_RESUME, err, errlen);
}

int
srv_target_pause(struct srv_registry *r, int64_t id, char *err, size_t errlen)
{
    return control(r, id, SRV_REQ_PAUSE, err, errlen);
}

/* The finished runs' slots freed. */
static void
reap_runs(struct srv_registry *r)
{
    for (size_t i = 0; i < MAX_RUNS; i++) {
        struct srv_run *run = NULL;
        pthread_mutex_lock(&r->mu);
        if (r->runs[i] != NULL && srv_run_finished(r->runs[i])) {
            run = r->runs[i];
            r->runs[i] = NULL;
        }
        pthread_mutex_unlock(&r->mu);
        srv_run_free(run);
    }
}

int
srv_sample_start(struct srv_registry *r, const int64_t *ids, size_t n, double hz, double seconds,
                 int64_t *id, char *err, size_t errlen)
{
    /* The bounds of what one run may ask: a tick at least every 100 s and
     * at most a million a second (the links set the real pace); a day. */
    if (!(hz >= 0.01 && hz <= 1e6))
        return srv_fail(err, errlen, SRV_EINVAL, "hz: %g is not between 0.01 and 1000000", hz);
    if (!(seconds > 0 && seconds <= 86400))
        return srv_fail(err, errlen, SRV_EINVAL, "seconds: %g is not between 0 and 86400", seconds);
    reap_runs(r);
    struct srv_target **t = NULL;
    size_t nt = n;
    if (n == 0) {
        if (all_targets(r, &t, &nt) < 0)
            return srv_fail(err, errlen, SRV_EINTERNAL, "sampling: out of memory");
    } else {
        if ((t = calloc(n, sizeof *t)) == NULL)
            return srv_fail(err, errlen, SRV_EINTERNAL, "sampling: out of memory");
        for (size_t i = 0; i < n; i++)
            if ((t[i] = get_target(r, ids[i])) == NULL) {
                for (size_t k = 0; k < i; k++)
                    srv_target_unref(t[k]);
                free(t);
                return no_target(ids[i], err, errlen);
            }
    }
    int rc = 0;
    json_t *a = json_array();
    for (size_t i = 0; i < nt && a != NULL; i++)
        json_array_append_new(a, json_integer(t[i]->id));
    char *targets = a ? json_dumps(a, 0) : NULL;
    json_decref(a);
    pthread_mutex_lock(&r->mu);
    size_t slot = MAX_RUNS;
    for (size_t i = 0; i < MAX_RUNS && slot == MAX_RUNS; i++)
        if (r->runs[i] == NULL)
            slot = i;
    int64_t run_id = 0;
    if (nt == 0)
        rc = srv_fail(err, errlen, SRV_EINVAL, "sampling: no targets");
    else if (targets == NULL)
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "sampling: out of memory");
    else if (slot == MAX_RUNS)
        rc = srv_fail(err, errlen, SRV_ELIMIT, "sampling: %d runs already going", MAX_RUNS);
    else if (r->env.store != NULL &&
             srv_store_sample_new(r->env.store, targets, hz, seconds, srv_wall_us(), &run_id) < 0)
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "sampling: storing the run: %s",
                      srv_store_errmsg(r->env.store));
    else if (r->env.store == NULL)
        run_id = r->next_run_id++;
    if (rc == 0) {
        rc = srv_run_start(&r->env, r->deadline_ms, run_id, t, nt, hz, seconds, &r->runs[slot], err,
                           errlen);
        free(t);
        t = NULL; /* the run has the references, also on failure */
        if (rc < 0 && r->env.store != NULL)
            srv_store_sample_finish(r->env.store, run_id, "failed", srv_wall_us());
    }
    pthread_mutex_unlock(&r->mu);
    if (t != NULL) {
        for (size_t i = 0; i < nt; i++)
            srv_target_unref(t[i]);
        free(t);
    }
    free(targets);
    if (rc == 0)
        *id = run_id;
    return rc;
}

/* The slot of the going run ID, or MAX_RUNS.  With R's lock held. */
static size_t
run_slot_locked(struct srv_registry *r, int64_t id)
{
    for (size_t i = 0; i < MAX_RUNS; i++)
        if (r->runs[i] != NULL && srv_run_id(r->runs[i]) == id)
            return i;
    return MAX_RUNS;
}

int
srv_sample_stop(struct srv_registry *r, int64_t id, char *err, size_t errlen)
{
    pthread_mutex_lock(&r->mu);
    size_t i = run_slot_locked(r, id);
    bool going = i < MAX_RUNS && !srv_run_finished(r->runs[i]);
    if (going)
        srv_run_stop(r->runs[i]);
    pthread_mutex_unlock(&r->mu);
    if (!going)
        return srv_fail(err, errlen, SRV_ENOTFOUND, "no sample run %" PRId64 " is going", id);
    /* Found again by id each time: a finished run may be reaped (freed) by
     * another request's srv_sample_start meanwhile. */
    uint64_t until = deadline(r);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        i = run_slot_locked(r, id);
        bool done = i == MAX_RUNS || srv_run_finished(r->runs[i]);
        pthread_mutex_unlock(&r->mu);
        if (done || srv_now_us() >= until)
            return 0;
        struct timespec ts = { .tv_nsec = 10 * 1000000 };
        nanosleep(&ts, NULL);
    }
}

int
srv_target_door(struct srv_registry *r, int64_t id, int fd, const char *who, char *err,
                size_t errlen)
{
    struct srv_target *t = get_target(r, id);
    if (t == NULL)
        return no_target(id, err, errlen);
    struct srv_req *q = srv_req_new(SRV_REQ_DOOR, NULL);
    struct srv_waiter w;
    int rc;
    srv_waiter_init(&w);
    if (q == NULL) {
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "target %" PRId64 ": out of memory", id);
    } else {
        q->door.fd = fd;
        snprintf(q->door.who, sizeof q->door.who, "%s", who);
        if ((rc = srv_target_post(t, q, &w, err, errlen)) < 0) {
            srv_req_free(q);
        } else {
            /* No deadline: the session lasts as long as its front end. */
            srv_waiter_wait(&w, 0);
            srv_req_settle(t, q);
            rc = q->rc;
            if (rc < 0)
                srv_fail(err, errlen, rc, "%s", q->err);
            srv_req_free(q);
        }
    }
    srv_waiter_fini(&w);
    srv_target_unref(t);
    return rc;
}

int
srv_target_door_check(struct srv_registry *r, int64_t id, char **exe, char **sysroot, char *err,
                      size_t errlen)
{
    struct srv_target *t = get_target(r, id);
    *exe = *sysroot = NULL;
    if (t == NULL)
        return no_target(id, err, errlen);
    int rc = 0;
    pthread_mutex_lock(&t->mu);
    if (t->state != SRV_STOPPED && t->state != SRV_RUNNING)
        rc = srv_target_no_link_locked(t, err, errlen);
    else if (t->door != NULL)
        rc = srv_fail(err, errlen, SRV_ECONFLICT,
                      "target %" PRId64 ": its link is held by a door session (%s)", id,
                      t->door->door.who);
    else if (t->sampling != NULL)
        rc = srv_fail(err, errlen, SRV_ECONFLICT, "target %" PRId64 ": sampling (run %" PRId64 ")",
                      id, t->sampling->sample.run_id);
    pthread_mutex_unlock(&t->mu);
    if (rc == 0 && ((t->exe != NULL && (*exe = strdup(t->exe)) == NULL) ||
                    (t->sysroot != NULL && (*sysroot = strdup(t->sysroot)) == NULL))) {
        free(*exe);
        *exe = NULL;
        rc = srv_fail(err, errlen, SRV_EINTERNAL, "target %" PRId64 ": out of memory", id);
    }
    srv_target_unref(t);
    return rc;
}
