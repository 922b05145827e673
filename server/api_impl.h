/* server/api_impl.h -- what the files of the /v1 endpoints share (server/api*.c).
 *
 * Not a public contract: the router (api.c) calls the handlers of
 * api_targets.c, api_stacks.c and api_history.c through these prototypes,
 * and all of them use the request and reply helpers of api_io.c.
 */
#ifndef RSPWALK_SERVER_API_IMPL_H
#define RSPWALK_SERVER_API_IMPL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "rspwalk/render.h"
#include "server/api.h"
#include "server/registry.h"

/* An endpoint: ID is the number in the path's '#' segment (0: none). */
typedef void (*srv_handler_fn)(const struct srv_api_config *api, const struct srv_request *rq,
                               int64_t id, struct srv_reply *out);

/* SEG (LEN bytes) as an id: a positive decimal number of at most 18 digits,
 * no sign, no leading zero; 0 when it is not one. */
int64_t srv_parse_id(const char *seg, size_t len);

/* The HTTP status of a registry failure (server/registry.h lists them). */
int srv_api_status(int srv_err);

/* Reply with the registry's failure RC and its message ERR. */
void srv_reply_srv_error(struct srv_reply *out, int rc, const char *err);

/* Reply STATUS with the JSON text TEXT (taken: freed with the reply). */
void srv_reply_take(struct srv_reply *out, int status, const char *type, char *text);

/* Reply STATUS with J's text (J's reference is consumed). */
void srv_reply_json(struct srv_reply *out, int status, json_t *j);

/* The value of query parameter KEY, or NULL. */
const char *srv_arg_get(const struct srv_request *rq, const char *key);

/* Query parameter parsers: 0 and *OUT, or -1 after replying 400 naming the
 * parameter.  Absent parameters leave *OUT as it was. */
int srv_arg_uint(const struct srv_request *rq, struct srv_reply *out, const char *key, uint64_t min,
                 uint64_t max, uint64_t *val);
int srv_arg_bool(const struct srv_request *rq, struct srv_reply *out, const char *key, bool *val);
/* "1,2,3": *IDS (caller frees with free()) and *N; absent or empty: NULL, 0. */
int srv_arg_ids(const struct srv_request *rq, struct srv_reply *out, const char *key, int64_t **ids,
                size_t *n);

/* The walk options of ?thread=&locals=&lines=&max_frames=; THREAD borrowed from RQ. */
int srv_arg_walk_opts(const struct srv_request *rq, struct srv_reply *out, struct srv_walk_opts *o);

/* The request's body as a JSON object: 0 and *OBJ (json_decref), or -1 after
 * replying 400/415.  An empty body is {} when EMPTY_OK. */
int srv_body_object(const struct srv_request *rq, struct srv_reply *out, bool empty_ok,
                    json_t **obj);

/* Members an object may have: "s" string, "b" boolean, "n" number,
 * "I" array of positive integers; a '!' after the letter: required.  null is
 * the absence of an optional member.  0, or -1 after replying 400 naming the
 * first unknown, missing or mistyped member. */
struct srv_field {
    const char *name;
    const char *kind;
};
int srv_body_check(json_t *obj, const struct srv_field *fields, size_t n, struct srv_reply *out);

/* Run a registry call with the request deadline (server/deadline.h). */
enum srv_call_kind {
    SRV_CALL_STACKS,
    SRV_CALL_STACKS_ALL,
    SRV_CALL_RESUME,
    SRV_CALL_PAUSE,
    SRV_CALL_DELETE,
};
struct srv_call_result {
    int rc;
    char *doc; /* owned by the caller after srv_api_call: free() */
    char err[512];
};
/* 0 with *RES filled (RES->rc the registry's code), or -1 after replying 504
 * (deadline) or 500 (no thread). */
int srv_api_call(const struct srv_api_config *api, enum srv_call_kind kind, int64_t id,
                 const int64_t *ids, size_t n, const struct srv_walk_opts *o,
                 struct srv_call_result *res, struct srv_reply *out);

struct srv_tree;
/* ?format= of a tree (json by default): 0 and *FORMAT, *TYPE (its
 * Content-Type), or -1 after replying 400. */
int srv_api_tree_format(const struct srv_request *rq, struct srv_reply *out,
                        enum sw_tree_format *format, const char **type);
/* Reply with T in the ?format= RQ asks (json, dot, folded); 0, or -1 after
 * replying 400 (an unknown format) or 500. */
int srv_api_tree_reply(struct srv_tree *t, const struct srv_request *rq, struct srv_reply *out);

/* The handlers. */
void srv_api_targets_list(const struct srv_api_config *api, const struct srv_request *rq,
                          int64_t id, struct srv_reply *out);
void srv_api_targets_add(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                         struct srv_reply *out);
void srv_api_target_get(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                        struct srv_reply *out);
void srv_api_target_delete(const struct srv_api_config *api, const struct srv_request *rq,
                           int64_t id, struct srv_reply *out);
void srv_api_target_resume(const struct srv_api_config *api, const struct srv_request *rq,
                           int64_t id, struct srv_reply *out);
void srv_api_target_pause(const struct srv_api_config *api, const struct srv_request *rq,
                          int64_t id, struct srv_reply *out);
void srv_api_target_stacks(const struct srv_api_config *api, const struct srv_request *rq,
                           int64_t id, struct srv_reply *out);
void srv_api_stacks(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                    struct srv_reply *out);
void srv_api_tree(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                  struct srv_reply *out);
void srv_api_snapshots_list(const struct srv_api_config *api, const struct srv_request *rq,
                            int64_t id, struct srv_reply *out);
void srv_api_snapshot_get(const struct srv_api_config *api, const struct srv_request *rq,
                          int64_t id, struct srv_reply *out);
void srv_api_samples_start(const struct srv_api_config *api, const struct srv_request *rq,
                           int64_t id, struct srv_reply *out);
void srv_api_samples_list(const struct srv_api_config *api, const struct srv_request *rq,
                          int64_t id, struct srv_reply *out);
void srv_api_sample_stop(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                         struct srv_reply *out);
void srv_api_sample_get(const struct srv_api_config *api, const struct srv_request *rq, int64_t id,
                        struct srv_reply *out);

#endif /* RSPWALK_SERVER_API_IMPL_H */
