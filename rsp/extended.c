/* rsp/extended.c -- extended remote: '!', vAttach, vRun, D;PID and the Hg
 * selection of one process among several on one link.
 *
 * The gdb manual ("Packets", "Extended Remote"): '!' -> OK enables vAttach and vRun; "vAttach;PID"
 * -> a stop reply; "vRun;HEXFILE;HEXARG..." -> the stop of the new process at its entry; "D;PID" ->
 * OK detaches one process, which the stub resumes.  With multiprocess ids every thread is
 * "pPID.TID", and 'm' reads through the process of the Hg thread (gdbserver's set_desired_thread).
 * Not the walker set: compose/walker_set.c.
 */
#include "rsp/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsp/nonstop.h"
#include "rsp/threads.h"
#include "rsp/xfer.h"

int
rsp_extended_mode(struct rsp_session *s)
{
    struct rsp_reply r;
    int rc = rsp_request(&s->x, RSP_PKT_EXTENDED, "!", 1, &r);
    if (rc == SW_EUNSUP)
        return sw_fail(&s->err, SW_EUNSUP, "'!': the stub has no extended mode (empty reply)");
    if (rc < 0)
        return rc;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to '!': expected OK, got '%.*s'",
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    return 0;
}

/* Take in stop reply R of WHAT for a new process: the session's last stop,
 * and target.xml when the stub had none (gdbserver --multi before its
 * first process). */
static int
take_new_process(struct rsp_session *s, const struct rsp_reply *r, const char *what,
                 struct rsp_stop *out)
{
    struct rsp_stop st;
    int rc;
    if ((rc = rsp_stop_parse(r->p, r->len, &st, &s->err)) < 0)
        return sw_err_prefix(&s->err, "reply to '%s': ", what);
    if (st.kind == RSP_STOP_EXITED || st.kind == RSP_STOP_KILLED)
        return sw_fail(&s->err, SW_EEXITED, "%s: the process exited", what);
    rsp_caches_drop(s);
    s->last_stop = st;
    s->has_stop = true;
    if (out != NULL)
        *out = st;
    if (s->tdesc == NULL && s->x.feat[RSP_FEAT_XFER_FEATURES] &&
        (rc = rsp_tdesc_fetch(s, NULL, 0)) < 0)
        return sw_err_prefix(&s->err, "%s: ", what);
    return 0;
}

int
rsp_attach(struct rsp_session *s, int64_t pid, struct rsp_stop *out)
{
    struct rsp_reply r;
    char what[48];
    if (pid <= 0)
        return sw_fail(&s->err, SW_EINVAL, "attaching: bad pid %lld", (long long)pid);
    if (s->nonstop) /* the stub answers OK and reports each thread later */
        return sw_fail(&s->err, SW_EUNSUP,
                       "attaching to process %lld: not supported on a non-stop link (open the "
                       "session without non_stop)",
                       (long long)pid);
    snprintf(what, sizeof what, "vAttach;%llx", (unsigned long long)pid);
    int rc = rsp_requestf(&s->x, RSP_PKT_VATTACH, &r, "%s", what);
    if (rc == SW_EUNSUP)
        return sw_fail(&s->err, SW_EUNSUP,
                       "attaching to process %lld: '%s' not supported (is the stub in extended "
                       "mode, gdbserver --multi?)",
                       (long long)pid, what);
    if (rc == SW_ESTUB)
        return sw_fail(&s->err, SW_ENOENT, "attaching to process %lld: '%s': stub replied %.*s",
                       (long long)pid, what, (int)(r.len > 40 ? 40 : r.len), r.p);
    if (rc < 0)
        return rc;
    return take_new_process(s, &r, what, out);
}

int
rsp_run(struct rsp_session *s, const char *const *argv, size_t argc, struct rsp_stop *out)
{
    struct sw_buf b;
    struct rsp_reply r;
    char what[96];
    int rc = 0;
    if (argc == 0 || argv == NULL || argv[0] == NULL)
        return sw_fail(&s->err, SW_EINVAL, "running a program: no program named");
    snprintf(what, sizeof what, "vRun %.70s", argv[0]);
    if (s->nonstop)
        return sw_fail(&s->err, SW_EUNSUP, "%s: not supported on a non-stop link", what);
    sw_buf_init(&b);
    rc = sw_buf_append(&b, "vRun", 4);
    for (size_t i = 0; i < argc && rc == 0; i++) {
        size_t n = strlen(argv[i]);
        char *hex = malloc(2 * n + 1);
        if (hex == NULL) {
            rc = SW_ENOMEM;
            break;
        }
        sw_hex_encode((const uint8_t *)argv[i], n, hex);
        rc = sw_buf_printf(&b, ";%.*s", (int)(2 * n), hex);
        free(hex);
    }
    if (rc < 0) {
        sw_buf_fini(&b);
        return sw_fail(&s->err, SW_ENOMEM, "%s: out of memory", what);
    }
    rc = rsp_request(&s->x, RSP_PKT_VRUN, b.data, b.len, &r);
    sw_buf_fini(&b);
    if (rc == SW_EUNSUP)
        return sw_fail(&s->err, SW_EUNSUP,
                       "%s: not supported (is the stub in extended mode, gdbserver --multi?)",
                       what);
    if (rc == SW_ESTUB)
        return sw_fail(&s->err, SW_ENOENT, "%s: stub replied %.*s (no such program?)", what,
                       (int)(r.len > 40 ? 40 : r.len), r.p);
    if (rc < 0)
        return rc;
    return take_new_process(s, &r, what, out);
}

int
rsp_detach_pid(struct rsp_session *s, int64_t pid)
{
    struct rsp_reply r;
    int rc;
    if (s->x.feat[RSP_FEAT_MULTIPROCESS] && pid > 0)
        rc = rsp_requestf(&s->x, RSP_PKT_DETACH, &r, "D;%llx", (unsigned long long)pid);
    else
        rc = rsp_request(&s->x, RSP_PKT_DETACH, "D", 1, &r);
    if (rc < 0)
        return sw_err_prefix(&s->err, "detaching from process %lld: ", (long long)pid);
    rsp_caches_drop(s);
    rsp_ns_forget(s, pid);
    if (s->has_stop && s->last_stop.has_thread && s->last_stop.thread.pid == pid)
        s->has_stop = false;
    if (r.len != 2 || memcmp(r.p, "OK", 2) != 0)
        return sw_fail(&s->err, SW_EPROTO, "reply to 'D;%llx': expected OK, got '%.*s'",
                       (unsigned long long)pid, (int)(r.len > 40 ? 40 : r.len), r.p);
    return 0;
}

int
rsp_select_thread(struct rsp_session *s, struct rsp_thread_id id)
{
    return rsp_thread_select(s, id);
}
