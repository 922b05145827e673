/* dap/session.c -- a Debug Adapter Protocol session: messages, attach, run control.
 *
 * Requests come in through dap/wire.c's framing, are checked (an object with
 * "seq", "type": "request", "command"), and dispatched from one table; every
 * request gets exactly one response, a malformed one an error response.  The
 * target is left as found: nothing here writes memory or registers, and the
 * link is closed without detaching unless the client asked the target to run.
 * The look at a stop (threads, frames, variables, memory) is dap/stacks.c's.
 */
#include "dap/session_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* gdb's signal numbers (include/gdb/signals.def), which RSP stop replies use. */
enum { GDB_SIGINT = 2, GDB_SIGTRAP = 5 };
static const char *const gdb_signal_names[] = {
    [1] = "SIGHUP",   [2] = "SIGINT",   [3] = "SIGQUIT",  [4] = "SIGILL",   [5] = "SIGTRAP",
    [6] = "SIGABRT",  [8] = "SIGFPE",   [9] = "SIGKILL",  [10] = "SIGBUS",  [11] = "SIGSEGV",
    [12] = "SIGSYS",  [13] = "SIGPIPE", [14] = "SIGALRM", [15] = "SIGTERM", [17] = "SIGSTOP",
    [30] = "SIGUSR1", [31] = "SIGUSR2",
};

void
dap_config_init(struct dap_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->timeout_ms = 10000;
    cfg->deadline_ms = 60000;
}

void
dap_log(struct dap_session *s, const char *fmt, ...)
{
    va_list ap;
    char line[1024];
    if (s->cfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* Target names, stub replies and client strings: escaped, one line. */
    fputs("rspwalk: dap: ", s->cfg.log);
    sw_text_fputs(s->cfg.log, line, 0);
    fputc('\n', s->cfg.log);
    fflush(s->cfg.log);
}

/* Frame MSG (taken) and write it; the session ends if the client is gone. */
static void
send_msg(struct dap_session *s, json_t *msg)
{
    if (msg == NULL || s->write_failed) {
        json_decref(msg);
        return;
    }
    json_object_set_new(msg, "seq", json_integer(++s->seq));
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text == NULL) {
        dap_log(s, "a message could not be written: out of memory");
        return;
    }
    size_t n = strlen(text);
    char head[64];
    int hl = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", n);
    if (s->write(s->write_arg, head, (size_t)hl) < 0 || s->write(s->write_arg, text, n) < 0) {
        s->write_failed = true;
        s->ended = true;
    }
    free(text);
}

static void
send_event(struct dap_session *s, const char *event, json_t *body)
{
    json_t *m = json_object();
    if (m == NULL) {
        json_decref(body);
        return;
    }
    json_object_set_new(m, "type", json_string("event"));
    json_object_set_new(m, "event", json_string(event));
    if (body != NULL)
        json_object_set_new(m, "body", body);
    send_msg(s, m);
}

void
dap_event_after(struct dap_session *s, const char *event, json_t *body)
{
    json_t *e = json_pack("{s:s, s:o?}", "event", event, "body", body);
    if (e != NULL)
        json_array_append_new(s->after, e);
}

/* An "output" event: one line for the client's console. */
static void say(struct dap_session *s, const char *category, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
say(struct dap_session *s, const char *category, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* Target names and stub messages: escaped, one line for the console. */
    char *safe = sw_text_escape(line, 0);
    snprintf(line, sizeof line, "%s", safe != NULL ? safe : "out of memory");
    free(safe);
    size_t n = strlen(line);
    if (n + 1 < sizeof line)
        memcpy(line + n, "\n", 2);
    send_event(s, "output",
               json_pack("{s:s, s:o}", "category", category, "output", dap_json_str(line)));
}

static void
send_response(struct dap_session *s, int64_t request_seq, const char *command, bool ok,
              const char *message, json_t *body)
{
    json_t *m = json_object();
    if (m == NULL) {
        json_decref(body);
        return;
    }
    json_object_set_new(m, "type", json_string("response"));
    json_object_set_new(m, "request_seq", json_integer(request_seq));
    json_object_set_new(m, "success", json_boolean(ok));
    json_object_set_new(m, "command", dap_json_str(command));
    if (!ok) {
        /* One line that clients show as it is: what came from the target
         * (names, replies) escaped as the text output escapes it. */
        char line[512];
        char *safe = sw_text_escape(message, 0);
        snprintf(line, sizeof line, "%s", safe != NULL ? safe : "out of memory");
        free(safe);
        json_object_set_new(m, "message", dap_json_str(line));
        json_decref(body);
        body = json_pack("{s:{s:i, s:o, s:b}}", "error", "id", 1, "format", dap_json_str(line),
                         "showUser", 0);
    }
    if (body != NULL)
        json_object_set_new(m, "body", body);
    send_msg(s, m);
}

/* ---- the target's state ------------------------------------------------------------------ */

static struct sw_proc *
proc(struct dap_session *s)
{
    return sw_walker_proc(s->w);
}

/* The stop just taken in: a fresh look, and the "stopped" event (held back
 * until configurationDone, when the client is ready for it). */
static void
on_stop(struct dap_session *s, const char *reason, const char *description)
{
    s->state = DAP_STOPPED;
    dap_stop_forget(s);
    if (!s->configured) {
        s->stop_pending = true;
        return;
    }
    struct sw_proc *p = proc(s);
    const struct rsp_stop *st =
        sw_proc_rsp_session(p) ? rsp_last_stop(sw_proc_rsp_session(p)) : NULL;
    char text[96];
    if (reason == NULL) {
        int sig = st && st->kind == RSP_STOP_SIGNAL ? st->signal : 0;
        reason = sig == GDB_SIGTRAP ? "breakpoint" : sig == GDB_SIGINT ? "pause" : "exception";
        const char *name =
            sig > 0 && (size_t)sig < sizeof gdb_signal_names / sizeof gdb_signal_names[0]
                ? gdb_signal_names[sig]
                : NULL;
        if (name != NULL)
            snprintf(text, sizeof text, "stopped by %s", name);
        else
            snprintf(text, sizeof text, "stopped by signal %d (gdb's numbering)", sig);
        description = text;
    }
    int id = dap_thread_id(s, p->default_tid);
    dap_event_after(s, "stopped",
                    json_pack("{s:s, s:s, s:i, s:b, s:b}", "reason", reason, "description",
                              description, "threadId", id, "allThreadsStopped", 1,
                              "preserveFocusHint", 0));
}

/* The target is gone: exited (EXITED) or the link failed. */
static void
on_end(struct dap_session *s, bool exited)
{
    dap_stop_forget(s);
    if (exited) {
        s->state = DAP_EXITED;
        struct rsp_session *rs = sw_proc_rsp_session(proc(s));
        const struct rsp_stop *st = rs ? rsp_last_stop(rs) : NULL;
        int code = st && st->kind == RSP_STOP_EXITED ? st->code : st ? 128 + st->signal : -1;
        dap_event_after(s, "exited", json_pack("{s:i}", "exitCode", code));
    } else {
        s->state = DAP_LOST;
        dap_log(s, "%s: %s", s->target, sw_proc_errmsg(proc(s)));
    }
    dap_event_after(s, "terminated", NULL);
}

/* Flush the events queued by a handler or a target event. */
static void
flush_after(struct dap_session *s)
{
    size_t i;
    json_t *e;
    json_array_foreach(s->after, i, e)
    {
        json_t *body = json_object_get(e, "body");
        send_event(s, json_string_value(json_object_get(e, "event")),
                   body && !json_is_null(body) ? json_incref(body) : NULL);
    }
    json_array_clear(s->after);
}

int
dap_session_target_event(struct dap_session *s)
{
    if (s->state != DAP_RUNNING)
        return s->ended ? -1 : 0;
    struct sw_proc *p = proc(s);
    int rc = p->debug->handle_debug_event(p, false);
    if (rc == SW_ETIMEDOUT)
        return 0; /* console output, or nothing yet */
    if (rc == 0) {
        dap_log(s, "%s: stopped", s->target);
        on_stop(s, NULL, NULL);
    } else {
        if (rc != SW_EEXITED)
            say(s, "stderr", "%s: %s", s->target, sw_proc_errmsg(p));
        on_end(s, rc == SW_EEXITED);
    }
    flush_after(s);
    return s->ended ? -1 : 0;
}

int
dap_session_target_fd(struct dap_session *s)
{
    if (s->state != DAP_RUNNING)
        return -1;
    struct sw_proc *p = proc(s);
    return p->debug->notification_fd(p);
}

/* ---- requests ---------------------------------------------------------------------------- */

static int
req_initialize(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)s, (void)args, (void)err, (void)errlen;
    /* Only what is answered: no breakpoints, stepping or expressions. */
    *body = json_pack(
        "{s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b}", "supportsConfigurationDoneRequest", 1,
        "supportsDelayedStackTraceLoading", 1, "supportsReadMemoryRequest", 1,
        "supportSuspendDebuggee", 1, "supportTerminateDebuggee", 0, "supportsTerminateRequest", 0,
        "supportsEvaluateForHovers", 0, "supportsSetVariable", 0, "supportsStepBack", 0);
    return 0;
}

/* A string member NAME of ARGS: NULL when absent; *BAD when present and not
 * a non-empty string. */
static const char *
arg_str(json_t *args, const char *name, bool *bad)
{
    json_t *v = json_object_get(args, name);
    if (v == NULL || json_is_null(v))
        return NULL;
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        *bad = true;
        return NULL;
    }
    return json_string_value(v);
}

static int
req_attach(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)body;
    bool bad = false;
    const char *target = arg_str(args, "target", &bad);
    const char *id = arg_str(args, "id", &bad);
    const char *exe = arg_str(args, "exe", &bad);
    const char *sysroot = arg_str(args, "sysroot", &bad);
    const char *lib_path = arg_str(args, "libPath", &bad);

    if (s->w != NULL)
        return dap_fail(err, errlen, "attach: this session is already attached to %s", s->target);
    if (bad)
        return dap_fail(err, errlen,
                        "attach: target, id, exe, sysroot and libPath must be non-empty strings");
    if ((target == NULL) == (id == NULL))
        return dap_fail(err, errlen, "attach: give either \"target\" (HOST:PORT, ...) or \"id\"");
    if (id != NULL) {
        struct dap_target t = { 0 };
        if (s->cfg.lookup == NULL)
            return dap_fail(err, errlen, "attach: id '%s': this adapter has no registered targets",
                            id);
        if (s->cfg.lookup(s->cfg.lookup_arg, id, &t) < 0 || t.target == NULL)
            return dap_fail(err, errlen, "attach: id '%s': no such registered target", id);
        target = t.target;
        exe = exe ? exe : t.exe;
        sysroot = sysroot ? sysroot : t.sysroot;
    } else if (!s->cfg.allow_local &&
               (target[0] == '|' || target[0] == '/' || strncmp(target, "unix:", 5) == 0)) {
        /* Commands, devices and local sockets are the serving host's: not
         * for a client to name. */
        return dap_fail(err, errlen,
                        "attach: target '%s': commands, device paths and unix: sockets are not "
                        "allowed here; give HOST:PORT",
                        target);
    }

    struct rsp_session_config scfg;
    struct rsp_session *rs = NULL;
    struct sw_errbuf e = { 0 };
    struct sw_proc *p = NULL;
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = s->cfg.timeout_ms;
    scfg.deadline_ms = s->cfg.deadline_ms;
    if (rsp_session_open(target, &scfg, &rs, &e) < 0)
        return dap_fail(err, errlen, "attach: %s", e.msg);
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = exe;
    if (sw_proc_rsp_new(rs, &pcfg, &p, &e) < 0) /* closes RS on failure */
        return dap_fail(err, errlen, "attach: %s", e.msg);
    if (p->debug == NULL || p->debug->is_terminated(p)) {
        sw_proc_free(p);
        return dap_fail(err, errlen, "attach: %s: the target has already exited", target);
    }
    if (s->cfg.npass > 0 && sw_proc_rsp_set_pass(p, s->cfg.pass, s->cfg.npass) < 0) {
        snprintf(err, errlen, "attach: %s", sw_proc_errmsg(p));
        sw_proc_free(p);
        return -1;
    }
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.sysroot = sysroot;
    wcfg.exe = exe;
    wcfg.lib_path = lib_path;
    wcfg.debug_dir = s->cfg.debug_dir;
    wcfg.cache_dir = s->cfg.cache_dir;
    wcfg.max_frames = s->cfg.max_frames;
    if (sw_walker_new(p, &wcfg, &s->w, &e) < 0) /* frees P on failure */
        return dap_fail(err, errlen, "attach: %s", e.msg);
    if ((s->target = strdup(target)) == NULL) {
        sw_walker_free(s->w);
        s->w = NULL;
        return dap_fail(err, errlen, "attach: out of memory");
    }
    /* Stubs report a stopped target on connect (docs/design.md). */
    dap_log(s, "attached to %s (%s)", target, p->arch->name);
    on_stop(s, "entry", "stopped when attached");
    dap_event_after(s, "initialized", NULL);
    return 0;
}

static int
req_configuration_done(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)args, (void)body, (void)err, (void)errlen;
    s->configured = true;
    if (s->stop_pending && s->state == DAP_STOPPED) {
        s->stop_pending = false;
        on_stop(s, "entry", "stopped when attached");
    }
    return 0;
}

static int
need_target(struct dap_session *s, const char *what, char *err, size_t errlen)
{
    static const char *const why[] = {
        [DAP_NO_TARGET] = "not attached to a target",
        [DAP_EXITED] = "the target has exited",
        [DAP_LOST] = "the link to the target is lost",
    };
    if (s->state == DAP_STOPPED || s->state == DAP_RUNNING)
        return 0;
    return dap_fail(err, errlen, "%s: %s", what, why[s->state]);
}

static int
req_continue(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)args;
    if (need_target(s, "continue", err, errlen) < 0)
        return -1;
    if (s->state == DAP_RUNNING)
        return dap_fail(err, errlen, "continue: the target is already running");
    struct sw_proc *p = proc(s);
    /* Every thread, no signal: all-stop links resume them all anyway. */
    if (p->debug->resume(p, SW_TID_DEFAULT, 0) < 0)
        return dap_fail(err, errlen, "continue: %s", sw_proc_errmsg(p));
    dap_stop_forget(s);
    s->state = DAP_RUNNING;
    *body = json_pack("{s:b}", "allThreadsContinued", 1);
    dap_event_after(s, "continued",
                    json_pack("{s:i, s:b}", "threadId", dap_thread_id(s, p->default_tid),
                              "allThreadsContinued", 1));
    return 0;
}

static int
req_pause(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)args, (void)body;
    if (need_target(s, "pause", err, errlen) < 0)
        return -1;
    if (s->state == DAP_STOPPED)
        return 0; /* already stopped: nothing to do, no event */
    struct sw_proc *p = proc(s);
    int rc = p->debug->pause(p, SW_TID_DEFAULT);
    if (rc == SW_EEXITED) {
        on_end(s, true);
        return 0;
    }
    if (rc < 0)
        return dap_fail(err, errlen, "pause: %s", sw_proc_errmsg(p));
    on_stop(s, "pause", "paused");
    return 0;
}

/* Whether disconnect's SUSPEND member asks to leave the target stopped:
 * 1 yes, 0 no, -1 not said. */
static int
suspend_wish(json_t *args)
{
    json_t *v = json_object_get(args, "suspendDebuggee");
    return json_is_boolean(v) ? json_is_true(v) : -1;
}

/* Leave the target as the client had it: running (detached, so the stub
 * lets it run) or stopped (the link closed without detaching), unless WISH
 * (suspend_wish) says otherwise. */
static int
leave_target(struct dap_session *s, int wish, char *err, size_t errlen)
{
    if (s->state != DAP_RUNNING && s->state != DAP_STOPPED)
        return 0;
    struct sw_proc *p = proc(s);
    bool run = wish == -1 ? s->state == DAP_RUNNING : wish == 0;
    if (run) {
        /* An all-stop stub reads no packet while its target runs: stop it
         * for the detach, which resumes it. */
        if (s->state == DAP_RUNNING && p->debug->pause(p, SW_TID_DEFAULT) < 0)
            return dap_fail(err, errlen, "disconnect: pausing to detach: %s", sw_proc_errmsg(p));
        if (p->debug->detach(p, false) < 0)
            return dap_fail(err, errlen, "disconnect: detaching: %s", sw_proc_errmsg(p));
        dap_log(s, "%s: detached, the target runs", s->target);
    } else {
        if (s->state == DAP_RUNNING && p->debug->pause(p, SW_TID_DEFAULT) < 0)
            return dap_fail(err, errlen, "disconnect: pausing: %s", sw_proc_errmsg(p));
        dap_log(s, "%s: left stopped", s->target);
    }
    s->state = DAP_NO_TARGET;
    return 0;
}

static int
req_disconnect(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)body;
    if (json_is_true(json_object_get(args, "terminateDebuggee")))
        say(s, "console", "rspwalk does not terminate targets: %s is left as it is",
            s->target ? s->target : "the target");
    int rc = leave_target(s, suspend_wish(args), err, errlen);
    /* Answered either way, and the session ends. */
    s->ended = true;
    return rc;
}

static int
req_unsupported(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)s, (void)args, (void)body;
    return dap_fail(err, errlen, "rspwalk walks stacks; it does not evaluate expressions");
}

/* setBreakpoints and its kin: answered, every breakpoint unverified (a
 * client sends them during configuration whatever the capabilities say). */
static int
req_breakpoints(struct dap_session *s, json_t *args, json_t **body, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    json_t *list = json_array(), *bps = json_object_get(args, "breakpoints");
    size_t n = json_is_array(bps) ? json_array_size(bps) : 0;
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_pack("{s:b, s:s}", "verified", 0, "message",
                                              "rspwalk does not set breakpoints"));
    *body = json_pack("{s:o}", "breakpoints", list);
    return 0;
}

static const struct {
    const char *command;
    dap_handler fn;
} handlers[] = {
    { "initialize", req_initialize },
    { "attach", req_attach },
    { "configurationDone", req_configuration_done },
    { "threads", dap_req_threads },
    { "stackTrace", dap_req_stack_trace },
    { "scopes", dap_req_scopes },
    { "variables", dap_req_variables },
    { "continue", req_continue },
    { "pause", req_pause },
    { "readMemory", dap_req_read_memory },
    { "disconnect", req_disconnect },
    { "evaluate", req_unsupported },
    { "setBreakpoints", req_breakpoints },
    { "setFunctionBreakpoints", req_breakpoints },
};

static uint64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Run FN for COMMAND within the configured deadline: every request on the
 * link fails once it has passed (rsp_session_set_deadline).  A request that
 * ran past it is an error response, whatever FN made of the failed reads (a
 * walk ends early and keeps its frames), and the link is given up: the
 * stub may still answer what it was asked, out of turn. */
static int
run_in_deadline(struct dap_session *s, const char *command, dap_handler fn, json_t *args,
                json_t **body, char *err, size_t errlen)
{
    int dl = s->cfg.deadline_ms;
    bool linked = s->w != NULL && (s->state == DAP_STOPPED || s->state == DAP_RUNNING);
    if (linked && dl > 0)
        rsp_session_set_deadline(sw_proc_rsp_session(proc(s)), dl);
    uint64_t t0 = now_ms();
    int rc = fn(s, args, body, err, errlen);
    bool past = dl > 0 && now_ms() - t0 >= (uint64_t)dl;
    if (s->w == NULL || s->state == DAP_EXITED || s->state == DAP_LOST)
        return rc;
    struct rsp_session *rs = sw_proc_rsp_session(proc(s));
    if (rs != NULL)
        rsp_session_set_deadline(rs, 0);
    if (past) {
        /* The failure that the deadline caused: the handler's, else the
         * link's last (which names the request that was cut). */
        const char *cause = rc < 0 ? err : rs != NULL ? rsp_session_errmsg(rs) : "";
        char why[256];
        size_t wl = strnlen(cause, sizeof why - 1);
        memcpy(why, cause, wl);
        why[wl] = '\0';
        snprintf(err, errlen,
                 "%.40s: the request's deadline of %g s has passed, the link to %.120s "
                 "is given up: %.200s",
                 command, dl / 1000.0, s->target ? s->target : "the target", why);
        json_decref(*body);
        *body = NULL;
        rc = -1;
        s->state = DAP_LOST;
        dap_stop_forget(s);
        dap_event_after(s, "terminated", NULL);
    }
    return rc;
}

/* One message body: check it, answer it. */
static void
handle_message(struct dap_session *s, const char *text, size_t len)
{
    json_error_t jerr;
    json_t *msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    char err[512] = "";

    if (msg == NULL) {
        snprintf(err, sizeof err, "malformed message: not JSON (line %d, column %d: %s)", jerr.line,
                 jerr.column, jerr.text);
        dap_log(s, "%s", err);
        send_response(s, 0, "", false, err, NULL);
        return;
    }
    json_t *seq = json_object_get(msg, "seq"), *type = json_object_get(msg, "type");
    json_t *cmd = json_object_get(msg, "command"), *args = json_object_get(msg, "arguments");
    int64_t rseq = json_is_integer(seq) ? json_integer_value(seq) : 0;
    const char *command = json_is_string(cmd) ? json_string_value(cmd) : "";

    if (!json_is_object(msg))
        snprintf(err, sizeof err, "malformed message: not a JSON object");
    else if (!json_is_integer(seq) || rseq < 0)
        snprintf(err, sizeof err, "malformed message: no \"seq\" number");
    else if (!json_is_string(type) || strcmp(json_string_value(type), "request") != 0)
        snprintf(err, sizeof err, "malformed message: \"type\" is not \"request\"");
    else if (!json_is_string(cmd))
        snprintf(err, sizeof err, "malformed request: no \"command\" string");
    else if (args != NULL && !json_is_object(args))
        snprintf(err, sizeof err, "malformed request %s: \"arguments\" is not an object", command);
    if (err[0] != '\0') {
        dap_log(s, "%s", err);
        send_response(s, rseq, command, false, err, NULL);
        json_decref(msg);
        return;
    }
    json_t *empty = NULL;
    if (args == NULL)
        args = empty = json_object();
    dap_handler fn = NULL;
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        if (strcmp(command, handlers[i].command) == 0)
            fn = handlers[i].fn;
    json_t *body = NULL;
    int rc;
    if (fn == NULL)
        rc = dap_fail(err, sizeof err, "unknown or unsupported request '%s'", command);
    else
        rc = run_in_deadline(s, command, fn, args, &body, err, sizeof err);
    if (rc < 0)
        dap_log(s, "%s", err);
    send_response(s, rseq, command, rc == 0, err, body);
    flush_after(s);
    json_decref(empty);
    json_decref(msg);
}

int
dap_session_feed(struct dap_session *s, const void *buf, size_t len)
{
    if (s->ended)
        return -1;
    if (dap_wire_push(&s->wire, buf, len) < 0) {
        dap_log(s, "reading a message: out of memory");
        s->ended = true;
        return -1;
    }
    for (;;) {
        const char *body;
        size_t n;
        char why[256];
        enum dap_wire_result r = dap_wire_next(&s->wire, &body, &n, why, sizeof why);
        if (r == DAP_WIRE_MORE)
            break;
        if (r == DAP_WIRE_BAD) {
            dap_log(s, "%s", why);
            send_response(s, 0, "", false, why, NULL);
        } else {
            handle_message(s, body, n);
        }
        if (s->ended)
            return -1;
    }
    return 0;
}

bool
dap_session_ended(const struct dap_session *s)
{
    return s->ended;
}

int
dap_session_new(const struct dap_config *cfg, dap_write_fn write, void *write_arg,
                struct dap_session **out)
{
    struct dap_session *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    if (cfg != NULL)
        s->cfg = *cfg;
    else
        dap_config_init(&s->cfg);
    s->write = write;
    s->write_arg = write_arg;
    dap_wire_init(&s->wire, DAP_MAX_MESSAGE);
    if ((s->after = json_array()) == NULL) {
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void
dap_session_free(struct dap_session *s)
{
    if (s == NULL)
        return;
    char err[512];
    /* The end of input without disconnect: as disconnect without arguments. */
    if (leave_target(s, -1, err, sizeof err) < 0)
        dap_log(s, "%s", err);
    dap_stacks_free(s);
    sw_walker_free(s->w); /* closes the link without detaching */
    free(s->target);
    json_decref(s->after);
    dap_wire_fini(&s->wire);
    free(s);
}
