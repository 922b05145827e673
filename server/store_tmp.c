/* server/store_tmp.c -- a stand-in for server/store.c until it lands: every call fails.
 *
 * Lets rspwalkd link while the store is written elsewhere; the registry is
 * used with no store (NULL) meanwhile.  Goes when server/store.c arrives.
 */
#include "server/store.h"

#include <stdio.h>

int
srv_store_open(const char *path, struct srv_store **out, char *err, size_t errlen)
{
    (void)out;
    snprintf(err, errlen, "%s: the store is not built yet", path);
    return -1;
}

void
srv_store_close(struct srv_store *st)
{
    (void)st;
}

const char *
srv_store_errmsg(struct srv_store *st)
{
    (void)st;
    return "the store is not built yet";
}

int
srv_store_target_add(struct srv_store *st, const struct srv_target_rec *in, int64_t *id)
{
    (void)st, (void)in, (void)id;
    return -1;
}

int
srv_store_target_delete(struct srv_store *st, int64_t id)
{
    (void)st, (void)id;
    return -1;
}

int
srv_store_target_each(struct srv_store *st, int (*fn)(void *arg, const struct srv_target_rec *r),
                      void *arg)
{
    (void)st, (void)fn, (void)arg;
    return -1;
}

int
srv_store_snapshot_add(struct srv_store *st, int64_t target_id, int64_t time_us, const char *doc,
                       int64_t *id)
{
    (void)st, (void)target_id, (void)time_us, (void)doc, (void)id;
    return -1;
}

int
srv_store_sample_new(struct srv_store *st, const char *targets, double hz, double seconds,
                     int64_t started_us, int64_t *id)
{
    (void)st, (void)targets, (void)hz, (void)seconds, (void)started_us, (void)id;
    return -1;
}

int
srv_store_sample_add(struct srv_store *st, int64_t sample_id, int64_t target_id, int64_t time_us,
                     const char *doc)
{
    (void)st, (void)sample_id, (void)target_id, (void)time_us, (void)doc;
    return -1;
}

int
srv_store_sample_finish(struct srv_store *st, int64_t sample_id, const char *state,
                        int64_t ended_us)
{
    (void)st, (void)sample_id, (void)state, (void)ended_us;
    return -1;
}
