/* server/api_targets.c -- /v1/targets: register, list, show, forget, resume and pause targets.
 *
 * What a client may register is server/policy.c's decision; the registry
 * does the rest.  Calls that talk to a stub (delete, resume, pause) run with
 * the request deadline.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api_impl.h"
#include "server/policy.h"

/* A target's name is a label for people, not a payload. */
#define NAME_MAX_LEN 256

void
srv_api_targets_list(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                     struct srv_reply *out)
{
    (void)rq, (void)id;
    char err[512] = "", *list = NULL;
    int rc = srv_targets_json(api->registry, &list, err, sizeof err);
    if (rc != 0) {
        srv_reply_srv_error(out, rc, err);
        return;
    }
    /* {"targets": [...]}: an object, so that members can be added later. */
    size_t n = strlen(list) + 16;
    char *text = malloc(n);
    if (!text) {
        free(list);
        srv_reply_error(out, 500, "out of memory");
        return;
    }
    snprintf(text, n, "{\"targets\":%s}", list);
    free(list);
    srv_reply_take(out, 200, "application/json", text);
}

/* Reply STATUS with target ID's JSON. */
static void
reply_target(const struct srv_api_config *api, int64_t id, int status, struct srv_reply *out)
{
    char err[512] = "", *text = NULL;
    int rc = srv_target_json(api->registry, id, &text, err, sizeof err);
    if (rc != 0) {
        srv_reply_srv_error(out, rc, err);
        return;
    }
    srv_reply_take(out, status, "application/json", text);
}

void
srv_api_targets_add(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                    struct srv_reply *out)
{
    (void)id;
    static const struct srv_field fields[] = {
        { "target", "s!" }, { "exe", "s" },     { "sysroot", "s" },
        { "name", "s" },    { "persist", "b" }, { "rtos", "s" },
    };
    json_t *body;
    if (srv_body_object(rq, out, false, &body) < 0)
        return;
    if (srv_body_check(body, fields, sizeof fields / sizeof fields[0], out) < 0) {
        json_decref(body);
        return;
    }
    const char *target = json_string_value(json_object_get(body, "target"));
    const char *exe = json_string_value(json_object_get(body, "exe"));
    const char *sysroot = json_string_value(json_object_get(body, "sysroot"));
    const char *name = json_string_value(json_object_get(body, "name"));
    const char *rtos = json_string_value(json_object_get(body, "rtos"));
    json_t *persist = json_object_get(body, "persist");
    if (name && (strlen(name) > NAME_MAX_LEN || !*name)) {
        srv_reply_error(out, 400, "name: from 1 to %d bytes", NAME_MAX_LEN);
        json_decref(body);
        return;
    }
    struct srv_policy_target checked;
    char err[512] = "";
    int status = srv_policy_check(api->policy, target, exe, sysroot, &checked, err, sizeof err);
    if (status != 0) {
        srv_reply_error(out, status, "%s", err);
        json_decref(body);
        return;
    }
    struct srv_target_spec spec = {
        .target = target,
        .exe = checked.exe,
        .sysroot = checked.sysroot,
        .name = name,
        .rtos = rtos,
    };
    int64_t new_id = 0;
    int rc =
        srv_target_add(api->registry, &spec, !json_is_false(persist), &new_id, err, sizeof err);
    srv_policy_target_fini(&checked);
    json_decref(body);
    if (rc != 0) {
        srv_reply_srv_error(out, rc, err);
        return;
    }
    reply_target(api, new_id, 201, out);
    if (out->status != 201) {
        /* Added, but gone (deleted meanwhile) or not describable: the id is
         * what the contract promises. */
        srv_reply_json(out, 201, json_pack("{s:I}", "id", (json_int_t)new_id));
    }
    snprintf(out->location, sizeof out->location, "/v1/targets/%" PRId64, new_id);
}

void
srv_api_target_get(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                   struct srv_reply *out)
{
    (void)rq;
    reply_target(api, id, 200, out);
}

void
srv_api_target_delete(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                      struct srv_reply *out)
{
    (void)rq;
    struct srv_call_result res;
    if (srv_api_call(api, SRV_CALL_DELETE, id, NULL, 0, NULL, &res, out) < 0)
        return;
    if (res.rc != 0) {
        srv_reply_srv_error(out, res.rc, res.err);
        return;
    }
    srv_reply_take(out, 204, NULL, NULL);
}

static void
control(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
        enum srv_call_kind kind, struct srv_reply *out)
{
    json_t *body;
    if (srv_body_object(rq, out, true, &body) < 0)
        return;
    int rc = srv_body_check(body, NULL, 0, out);
    json_decref(body);
    if (rc < 0)
        return;
    struct srv_call_result res;
    if (srv_api_call(api, kind, id, NULL, 0, NULL, &res, out) < 0)
        return;
    if (res.rc != 0) {
        srv_reply_srv_error(out, res.rc, res.err);
        return;
    }
    reply_target(api, id, 200, out);
}

void
srv_api_target_resume(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                      struct srv_reply *out)
{
    control(api, rq, id, SRV_CALL_RESUME, out);
}

void
srv_api_target_pause(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                     struct srv_reply *out)
{
    control(api, rq, id, SRV_CALL_PAUSE, out);
}
