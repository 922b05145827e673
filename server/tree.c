/* server/tree.c -- stack documents folded into the library's prefix tree (server/tree.h).
 *
 * Only the tree's construction is here: the tree itself, its task sets and
 * its three formats are the library's (render/).  Tasks are found by
 * (target, thread) in a hash table, since a long sample adds the same few
 * tasks thousands of times.
 */
#include "server/tree.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct task {
    char *key; /* "TARGET_ID\nTHREAD", owned; NULL: empty slot */
    size_t task;
};

struct srv_tree {
    struct sw_tree *tree;
    struct task *tasks; /* open addressing, NTASKS used of CAP (a power of 2) */
    size_t ntasks, cap;
    struct sw_tree_frame *path; /* scratch for one call path, PATH_CAP frames */
    size_t path_cap;
};

int
srv_tree_new(struct srv_tree **out)
{
    struct srv_tree *t = calloc(1, sizeof *t);
    if (!t || sw_tree_new(&t->tree) != 0) {
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void
srv_tree_free(struct srv_tree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++)
        free(t->tasks[i].key);
    free(t->tasks);
    free(t->path);
    sw_tree_free(t->tree);
    free(t);
}

/* FNV-1a: keys are short strings chosen by the server, not by a client. */
static uint64_t
key_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static int
tasks_grow(struct srv_tree *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    struct task *n = calloc(cap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->tasks[i].key)
            continue;
        size_t j = key_hash(t->tasks[i].key) & (cap - 1);
        while (n[j].key)
            j = (j + 1) & (cap - 1);
        n[j] = t->tasks[i];
    }
    free(t->tasks);
    t->tasks = n;
    t->cap = cap;
    return 0;
}

/* The task of thread THREAD (pid PID) of target TARGET_ID (named LABEL),
 * numbered on first sight. */
static int
task_of(struct srv_tree *t, int64_t target_id, const char *label, const char *thread, int64_t pid,
        size_t *task)
{
    if ((t->ntasks + 1) * 2 > t->cap && tasks_grow(t) < 0)
        return -1;
    size_t klen = strlen(thread) + 24;
    char *key = malloc(klen);
    if (!key)
        return -1;
    snprintf(key, klen, "%" PRId64 "\n%s", target_id, thread);
    size_t j = key_hash(key) & (t->cap - 1);
    for (; t->tasks[j].key; j = (j + 1) & (t->cap - 1)) {
        if (strcmp(t->tasks[j].key, key) == 0) {
            free(key);
            *task = t->tasks[j].task;
            return 0;
        }
    }
    if (sw_tree_add_task(t->tree, label, pid, thread, task) != 0) {
        free(key);
        return -1;
    }
    t->tasks[j] = (struct task){ .key = key, .task = *task };
    t->ntasks++;
    return 0;
}

/* The pid in a thread id "pPID.TID" (hex), else 0: unknown. */
static int64_t
thread_pid(const char *id)
{
    if (id[0] != 'p')
        return 0;
    char *end;
    long long v = strtoll(id + 1, &end, 16);
    return *end == '.' && v > 0 ? (int64_t)v : 0;
}

/* Room for a call path of N frames in T's scratch. */
static bool
grow_path(struct srv_tree *t, size_t n)
{
    struct sw_tree_frame *p = realloc(t->path, n * sizeof *p);
    if (!p)
        return false;
    t->path = p;
    t->path_cap = n;
    return true;
}

static const char *
str_or_null(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int
add_thread(struct srv_tree *t, int64_t target_id, const char *label, json_t *thread, uint64_t count,
           char *err, size_t errlen)
{
    const char *id = str_or_null(thread, "id");
    json_t *frames = json_object_get(thread, "frames");
    if (!id || (frames && !json_is_array(frames))) {
        snprintf(err, errlen, "stack document of %s: a thread without \"id\" or \"frames\"", label);
        return -1;
    }
    size_t n = json_array_size(frames);
    if (n > t->path_cap && !grow_path(t, n)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* Documents list frames top first; a call path goes outermost first. */
    for (size_t i = 0; i < n; i++) {
        json_t *f = json_array_get(frames, i);
        const char *pc = str_or_null(f, "pc");
        t->path[n - 1 - i] = (struct sw_tree_frame){
            .function = str_or_null(f, "function"),
            .module = str_or_null(f, "module"),
            .pc = pc ? (sw_addr)strtoull(pc, NULL, 16) : 0,
        };
    }
    size_t task;
    if (task_of(t, target_id, label, id, thread_pid(id), &task) < 0 ||
        sw_tree_add_path(t->tree, task, t->path, n, count) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int
add_doc_json(struct srv_tree *t, int64_t target_id, json_t *doc, uint64_t count, char *err,
             size_t errlen)
{
    char idbuf[32];
    const char *label = str_or_null(doc, "target");
    if (!label) {
        snprintf(idbuf, sizeof idbuf, "%" PRId64, target_id);
        label = idbuf;
    }
    json_t *threads = json_object_get(doc, "threads");
    if (!json_is_array(threads)) {
        snprintf(err, errlen, "stack document of %s: no \"threads\" array", label);
        return -1;
    }
    size_t i;
    json_t *th;
    json_array_foreach(threads, i, th)
    {
        if (add_thread(t, target_id, label, th, count, err, errlen) < 0)
            return -1;
    }
    return 0;
}

int
srv_tree_add_doc(struct srv_tree *t, int64_t target_id, const char *doc, uint64_t count, char *err,
                 size_t errlen)
{
    json_error_t je;
    json_t *j = json_loads(doc, 0, &je);
    if (!j) {
        snprintf(err, errlen, "stack document of target %" PRId64 ": %s", target_id, je.text);
        return -1;
    }
    int rc = add_doc_json(t, target_id, j, count, err, errlen);
    json_decref(j);
    return rc;
}

int
srv_tree_add_path(struct srv_tree *t, int64_t target_id, const char *target, const char *thread,
                  const char *path, uint64_t count, char *err, size_t errlen)
{
    char idbuf[32];
    if (!target) {
        snprintf(idbuf, sizeof idbuf, "%" PRId64, target_id);
        target = idbuf;
    }
    size_t n = *path ? 1 : 0;
    for (const char *c = path; *c; c++)
        n += *c == '\n';
    char *copy = strdup(path);
    if (!copy || (n > t->path_cap && !grow_path(t, n))) {
        free(copy);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* Cut the copy in place: "F\tM\nF\tM" into its frames' names. */
    char *c = copy;
    for (size_t i = 0; i < n; i++) {
        char *end = strchr(c, '\n'), *tab;
        if (end)
            *end = '\0';
        if ((tab = strchr(c, '\t')) != NULL)
            *tab = '\0';
        t->path[i] = (struct sw_tree_frame){
            .function = c,
            .module = tab && tab[1] ? tab + 1 : NULL,
        };
        c = end ? end + 1 : c + strlen(c);
    }
    size_t task;
    int rc = task_of(t, target_id, target, thread, thread_pid(thread), &task);
    if (rc == 0)
        rc = sw_tree_add_path(t->tree, task, t->path, n, count) == 0 ? 0 : -1;
    free(copy);
    if (rc < 0)
        snprintf(err, errlen, "out of memory");
    return rc;
}

int
srv_tree_add_stacks(struct srv_tree *t, const char *stacks, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j = json_loads(stacks, 0, &je);
    json_t *targets = json_object_get(j, "targets");
    if (!json_is_array(targets)) {
        snprintf(err, errlen, "stacks of all targets: %s", j ? "no \"targets\" array" : je.text);
        json_decref(j);
        return -1;
    }
    int rc = 0;
    size_t i;
    json_t *e;
    json_array_foreach(targets, i, e)
    {
        if (json_object_get(e, "error") && !json_object_get(e, "threads"))
            continue;
        int64_t id = (int64_t)json_integer_value(json_object_get(e, "id"));
        if ((rc = add_doc_json(t, id, e, 1, err, errlen)) < 0)
            break;
    }
    json_decref(j);
    return rc;
}

int
srv_tree_write(struct srv_tree *t, enum sw_tree_format format, char **out, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return -1;
    int rc = sw_tree_write(t->tree, format, f);
    if (fclose(f) != 0 || rc != 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    *len = n;
    return 0;
}
