/* dap/stacks.c -- the DAP requests that look at a stop: threads, stackTrace, scopes,
 * variables, readMemory.
 *
 * Each thread is walked once per stop, when a client first asks for its
 * frames, and its frames keep their ids until the target runs again; pages
 * of a stack (startFrame, levels) come from that one walk.  Frames and
 * variables are named and printed as `rspwalk` prints them (the library's
 * sw_render_* calls), so the editor shows what the CLI shows.
 */
#include "dap/session_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The most bytes one readMemory answers: a memory view asks for pages. */
#define DAP_MAX_READ (1u << 20)
/* Unreadable memory is looked for in steps of this (the smallest page). */
#define DAP_READ_STEP 4096u

static struct dap_thread *
thread_by_id(struct dap_session *s, int64_t id)
{
    if (id < 1 || (uint64_t)id > s->nthreads)
        return NULL;
    return &s->threads[id - 1];
}

int
dap_thread_id(struct dap_session *s, sw_tid tid)
{
    for (size_t i = 0; i < s->nthreads; i++)
        if (s->threads[i].tid == tid)
            return s->threads[i].id;
    if (s->nthreads == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct dap_thread *t = realloc(s->threads, cap * sizeof *t);
        if (t == NULL)
            return 0;
        s->threads = t;
        s->cap = cap;
    }
    struct dap_thread *t = &s->threads[s->nthreads];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->id = (int)++s->nthreads;
    sw_stack_init(&t->st);
    return t->id;
}

void
dap_stop_forget(struct dap_session *s)
{
    for (size_t i = 0; i < s->nthreads; i++) {
        struct dap_thread *t = &s->threads[i];
        if (t->walked)
            sw_stack_fini(&t->st);
        sw_stack_init(&t->st);
        t->walked = false;
        t->present = false;
    }
    for (size_t i = 0; i < s->nrefs; i++)
        free(s->refs[i].value);
    s->nrefs = 0;
    /* Frame ids are not reused within a session: a stale one fails cleanly. */
}

void
dap_stacks_free(struct dap_session *s)
{
    dap_stop_forget(s);
    free(s->threads);
    free(s->refs);
    s->threads = NULL;
    s->refs = NULL;
    s->nthreads = s->cap = s->nrefs = s->refs_cap = 0;
}

/* A new variablesReference; VALUE (may be NULL) is copied.  0 when out of memory. */
static int64_t
ref_new(struct dap_session *s, enum dap_ref_kind kind, int64_t frame_id, const char *value)
{
    if (s->nrefs == s->refs_cap) {
        size_t cap = s->refs_cap ? 2 * s->refs_cap : 64;
        struct dap_ref *r = realloc(s->refs, cap * sizeof *r);
        if (r == NULL)
            return 0;
        s->refs = r;
        s->refs_cap = cap;
    }
    char *copy = value ? strdup(value) : NULL;
    if (value && copy == NULL)
        return 0;
    s->refs[s->nrefs] = (struct dap_ref){ .kind = kind, .frame_id = frame_id, .value = copy };
    return (int64_t)++s->nrefs;
}

static int
need_stopped(struct dap_session *s, const char *what, char *err, size_t errlen)
{
    if (s->state == DAP_STOPPED)
        return 0;
    return dap_fail(err, errlen, "%s: %s", what,
                    s->state == DAP_RUNNING     ? "the target is running (pause it first)"
                    : s->state == DAP_NO_TARGET ? "not attached to a target"
                                                : "no target any more");
}

/* An integer member NAME of ARGS in [MIN, MAX], DEF when absent: 0, or -1
 * with the message in ERR. */
static int
arg_int(json_t *args, const char *name, int64_t min, int64_t max, int64_t def, int64_t *out,
        const char *what, char *err, size_t errlen)
{
    json_t *v = json_object_get(args, name);
    if (v == NULL || json_is_null(v)) {
        if (def < min)
            return dap_fail(err, errlen, "%s: no \"%s\"", what, name);
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return dap_fail(err, errlen, "%s: \"%s\" is not an integer from %" PRId64 " to %" PRId64,
                        what, name, min, max);
    *out = json_integer_value(v);
    return 0;
}

/* ---- threads ----------------------------------------------------------------------------- */

/* List the threads of the current stop (marking them present). */
static int
list_threads(struct dap_session *s, char *err, size_t errlen)
{
    size_t cap = 64, n = 0;
    sw_tid *tids = NULL;
    for (;;) {
        sw_tid *t = realloc(tids, cap * sizeof *t);
        if (t == NULL) {
            free(tids);
            return dap_fail(err, errlen, "threads: out of memory");
        }
        tids = t;
        if (sw_threads(s->w, tids, cap, &n) < 0) {
            free(tids);
            return dap_fail(err, errlen, "threads: %s", sw_walker_errmsg(s->w));
        }
        if (n <= cap)
            break;
        cap = n;
    }
    for (size_t i = 0; i < s->nthreads; i++)
        s->threads[i].present = false;
    for (size_t i = 0; i < n; i++) {
        int id = dap_thread_id(s, tids[i]);
        if (id == 0) {
            free(tids);
            return dap_fail(err, errlen, "threads: out of memory");
        }
        s->threads[id - 1].present = true;
    }
    free(tids);
    return 0;
}

int
dap_req_threads(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)args;
    /* Running: the list of the last stop (an all-stop link cannot list
     * threads while they run).  No target: none. */
    if (s->state == DAP_STOPPED && list_threads(s, err, errlen) < 0)
        return -1;
    json_t *list = json_array();
    struct sw_proc *p = s->w ? sw_walker_proc(s->w) : NULL;
    for (size_t i = 0;
         p != NULL && (s->state == DAP_STOPPED || s->state == DAP_RUNNING) && i < s->nthreads;
         i++) {
        const struct dap_thread *t = &s->threads[i];
        if (!t->present)
            continue;
        char label[64], name[128];
        sw_proc_thread_label(p, t->tid, label, sizeof label);
        snprintf(name, sizeof name, "LWP %" PRIu64 " (%s)", t->tid, label);
        json_array_append_new(list, json_pack("{s:i, s:s}", "id", t->id, "name", name));
    }
    *body = json_pack("{s:o}", "threads", list);
    return 0;
}

/* ---- stackTrace -------------------------------------------------------------------------- */

/* T's walk of this stop: 0, or -1 with the message in ERR. */
static int
walk_thread(struct dap_session *s, struct dap_thread *t, char *err, size_t errlen)
{
    if (!t->walked) {
        t->walk_rc = sw_walk_stack(s->w, t->tid, &t->st);
        if (t->walk_rc < 0)
            snprintf(t->walk_err, sizeof t->walk_err, "%s", sw_walker_errmsg(s->w));
        t->frame_base = s->next_frame_id + 1;
        s->next_frame_id += t->st.n ? (int64_t)t->st.n : 1;
        t->walked = true;
    }
    if (t->walk_rc < 0)
        return dap_fail(err, errlen, "stackTrace: thread %d: %s", t->id, t->walk_err);
    return 0;
}

/* The thread and frame index of FRAME_ID, or NULL. */
static struct dap_thread *
frame_by_id(struct dap_session *s, int64_t frame_id, size_t *k)
{
    for (size_t i = 0; i < s->nthreads; i++) {
        struct dap_thread *t = &s->threads[i];
        if (t->walked && t->walk_rc == 0 && frame_id >= t->frame_base &&
            frame_id < t->frame_base + (int64_t)t->st.n) {
            *k = (size_t)(frame_id - t->frame_base);
            return t;
        }
    }
    return NULL;
}

static json_t *
frame_json(struct dap_session *s, const struct dap_thread *t, size_t k)
{
    const struct sw_frame *fr = &t->st.frames[k];
    struct sw_symbol sym;
    bool have = sw_frame_symbol(s->w, fr, &sym) == 0;
    char *fn = NULL, pc[32];
    const char *name;

    /* gdb's names: its placeholder for the kernel's signal frame, "??"
     * where nothing names the pc. */
    if (fr->kind == SW_FRAME_SIGNAL)
        name = "<signal handler called>";
    else if ((fn = sw_render_frame_function(fr, have ? &sym : NULL)) != NULL)
        name = fn;
    else
        name = fr->vname ? fr->vname : have ? sym.name : "??";
    snprintf(pc, sizeof pc, "0x%" PRIx64, fr->ra);

    json_t *j = json_pack("{s:I, s:o, s:i, s:i, s:s}", "id",
                          (json_int_t)(t->frame_base + (int64_t)k), "name", dap_json_str(name),
                          "line", 0, "column", 0, "instructionPointerReference", pc);
    free(fn);
    if (j == NULL)
        return NULL;
    struct sw_source_line src;
    if (sw_frame_source(s->w, &t->st, k, &src) == 0) {
        /* An editor opens the file: a relative name is made whole with the
         * compilation directory (gdb's "fullname"). */
        char *path = NULL;
        const char *base = strrchr(src.file, '/');
        if (src.file[0] != '/' && src.dir != NULL &&
            (path = malloc(strlen(src.dir) + strlen(src.file) + 2)) != NULL)
            sprintf(path, "%s/%s", src.dir, src.file);
        json_object_set_new(j, "source",
                            json_pack("{s:o, s:o}", "name",
                                      dap_json_str(base ? base + 1 : src.file), "path",
                                      dap_json_str(path ? path : src.file)));
        json_object_set_new(j, "line", json_integer(src.line));
        json_object_set_new(j, "column", json_integer(1));
        free(path);
    }
    /* A signal frame is a marker, not code; a frame found by scanning the
     * stack may be a stale return address. */
    const char *hint = fr->kind == SW_FRAME_SIGNAL  ? "label"
                       : fr->trust == SW_TRUST_SCAN ? "subtle"
                                                    : "normal";
    json_object_set_new(j, "presentationHint", json_string(hint));
    return j;
}

int
dap_req_stack_trace(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    int64_t id, start, levels;
    if (arg_int(args, "threadId", 1, INT32_MAX, -1, &id, "stackTrace", err, errlen) < 0 ||
        arg_int(args, "startFrame", 0, INT32_MAX, 0, &start, "stackTrace", err, errlen) < 0 ||
        arg_int(args, "levels", 0, INT32_MAX, 0, &levels, "stackTrace", err, errlen) < 0 ||
        need_stopped(s, "stackTrace", err, errlen) < 0)
        return -1;
    struct dap_thread *t = thread_by_id(s, id);
    if (t == NULL || (!t->present && list_threads(s, err, errlen) == 0 && !t->present))
        return dap_fail(err, errlen, "stackTrace: no thread %" PRId64 " at this stop", id);
    if (walk_thread(s, t, err, errlen) < 0)
        return -1;
    size_t n = t->st.n, from = (size_t)start < n ? (size_t)start : n;
    size_t to = levels == 0 || (size_t)levels > n - from ? n : from + (size_t)levels;
    json_t *frames = json_array();
    for (size_t k = from; k < to; k++)
        json_array_append_new(frames, frame_json(s, t, k));
    *body = json_pack("{s:o, s:I}", "stackFrames", frames, "totalFrames", (json_int_t)n);
    return 0;
}

/* ---- scopes and variables ---------------------------------------------------------------- */

int
dap_req_scopes(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    int64_t fid;
    size_t k;
    if (arg_int(args, "frameId", 1, INT64_MAX, -1, &fid, "scopes", err, errlen) < 0 ||
        need_stopped(s, "scopes", err, errlen) < 0)
        return -1;
    struct dap_thread *t = frame_by_id(s, fid, &k);
    if (t == NULL)
        return dap_fail(err, errlen, "scopes: no frame %" PRId64 " at this stop", fid);
    json_t *list = json_array();
    struct sw_function *fn;
    /* No debug information, a tail-call or signal frame: no scopes. */
    if (sw_frame_function(s->w, &t->st, k, &fn) == 0) {
        size_t nargs = 0;
        for (size_t i = 0; i < fn->nvars; i++)
            nargs += fn->vars[i].kind == SW_VAR_PARAM;
        size_t nlocals = fn->nvars - nargs;
        sw_function_free(fn);
        static const struct {
            const char *name, *hint;
            enum dap_ref_kind kind;
        } scopes[] = { { "Arguments", "arguments", DAP_REF_ARGS },
                       { "Locals", "locals", DAP_REF_LOCALS } };
        for (size_t i = 0; i < 2; i++)
            json_array_append_new(
                list, json_pack("{s:s, s:s, s:I, s:I, s:b}", "name", scopes[i].name,
                                "presentationHint", scopes[i].hint, "variablesReference",
                                (json_int_t)ref_new(s, scopes[i].kind, fid, NULL), "namedVariables",
                                (json_int_t)(i == 0 ? nargs : nlocals), "expensive", 0));
    }
    *body = json_pack("{s:o}", "scopes", list);
    return 0;
}

/* One variable: NAME, VALUE, TYPE (may be NULL), expandable when VALUE is an
 * aggregate with members. */
static json_t *
var_json(struct dap_session *s, const char *name, const char *value, const char *type)
{
    int64_t ref = 0;
    if (dap_value_expandable(value))
        ref = ref_new(s, DAP_REF_VALUE, 0, value);
    json_t *j = json_pack("{s:o, s:o, s:I}", "name", dap_json_str(name), "value",
                          dap_json_str(value), "variablesReference", (json_int_t)ref);
    if (j != NULL && type != NULL)
        json_object_set_new(j, "type", dap_json_str(type));
    return j;
}

int
dap_req_variables(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    int64_t refno, start, count;
    if (arg_int(args, "variablesReference", 1, INT64_MAX, -1, &refno, "variables", err, errlen) <
            0 ||
        arg_int(args, "start", 0, INT32_MAX, 0, &start, "variables", err, errlen) < 0 ||
        arg_int(args, "count", 0, INT32_MAX, 0, &count, "variables", err, errlen) < 0 ||
        need_stopped(s, "variables", err, errlen) < 0)
        return -1;
    if ((uint64_t)refno > s->nrefs)
        return dap_fail(err, errlen, "variables: no reference %" PRId64 " at this stop", refno);
    /* REFS may move as members are added: copy what this one says. */
    struct dap_ref ref = s->refs[refno - 1];
    json_t *list = json_array();
    size_t at = 0, end = count ? (size_t)start + (size_t)count : SIZE_MAX;

    if (ref.kind == DAP_REF_VALUE) {
        struct dap_member *m = NULL;
        long n = dap_value_split(ref.value, &m);
        if (n < 0) {
            json_decref(list);
            return dap_fail(err, errlen, "variables: out of memory");
        }
        for (long i = 0; i < n; i++, at++)
            if (at >= (size_t)start && at < end)
                json_array_append_new(list, var_json(s, m[i].name, m[i].value, NULL));
        dap_members_free(m, (size_t)n);
    } else {
        size_t k;
        struct dap_thread *t = frame_by_id(s, ref.frame_id, &k);
        struct sw_function *fn;
        if (t == NULL || sw_frame_function(s->w, &t->st, k, &fn) < 0) {
            json_decref(list);
            return dap_fail(err, errlen, "variables: frame %" PRId64 ": %s", ref.frame_id,
                            t ? sw_walker_errmsg(s->w) : "not at this stop");
        }
        enum sw_var_kind want = ref.kind == DAP_REF_ARGS ? SW_VAR_PARAM : SW_VAR_LOCAL;
        char val[1024];
        for (size_t i = 0; i < fn->nvars; i++) {
            const struct sw_local_var *v = &fn->vars[i];
            if (v->kind != want)
                continue;
            if (at >= (size_t)start && at < end) {
                sw_render_local_value(s->w, &t->st, k, v, val, sizeof val);
                json_array_append_new(list, var_json(s, v->name, val, v->type_name));
            }
            at++;
        }
        sw_function_free(fn);
    }
    *body = json_pack("{s:o}", "variables", list);
    return 0;
}

/* ---- readMemory -------------------------------------------------------------------------- */

static char *
base64(const unsigned char *in, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

int
dap_req_read_memory(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    int64_t offset, count;
    json_t *mr = json_object_get(args, "memoryReference");
    if (arg_int(args, "offset", INT32_MIN, INT32_MAX, 0, &offset, "readMemory", err, errlen) < 0 ||
        arg_int(args, "count", 0, DAP_MAX_READ, -1, &count, "readMemory", err, errlen) < 0 ||
        need_stopped(s, "readMemory", err, errlen) < 0)
        return -1;
    const char *ref = json_string_value(mr), *p = ref;
    char *end = NULL;
    if (ref != NULL && (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))
        p += 2;
    errno = 0;
    unsigned long long base = ref && *p && *p != '-' ? strtoull(p, &end, 16) : 0;
    if (ref == NULL || end == NULL || *end != '\0' || errno)
        return dap_fail(err, errlen, "readMemory: memoryReference is not an address in hex");
    sw_addr addr = (sw_addr)base + (sw_addr)offset;
    unsigned char *buf = malloc(count ? (size_t)count : 1);
    if (buf == NULL)
        return dap_fail(err, errlen, "readMemory: out of memory");
    struct sw_proc *pr = sw_walker_proc(s->w);
    size_t got = 0;
    if (count > 0 && pr->ops->read_mem(pr, addr, buf, (size_t)count) == 0) {
        got = (size_t)count;
    } else {
        /* Readable up to the first page that is not. */
        while (got < (size_t)count) {
            size_t step = DAP_READ_STEP - (size_t)((addr + got) % DAP_READ_STEP);
            if (step > (size_t)count - got)
                step = (size_t)count - got;
            if (pr->ops->read_mem(pr, addr + got, buf + got, step) < 0)
                break;
            got += step;
        }
    }
    char *data = base64(buf, got), a[32];
    free(buf);
    if (data == NULL)
        return dap_fail(err, errlen, "readMemory: out of memory");
    snprintf(a, sizeof a, "0x%" PRIx64, addr);
    *body = json_pack("{s:s, s:I, s:s}", "address", a, "unreadableBytes",
                      (json_int_t)((size_t)count - got), "data", data);
    free(data);
    return 0;
}
