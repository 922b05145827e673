/* server/store_impl.h -- what the store's two files share: server/store_open.c
 * (the file, its schema and migrations, open and close) and server/store.c
 * (the calls on an open store).  Not for the rest of the server: store.h is
 * the store's interface.
 */
#ifndef RSPWALK_SERVER_STORE_IMPL_H
#define RSPWALK_SERVER_STORE_IMPL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>
#include <sys/types.h>

#include "server/store.h"

/* A one-line message: the path (truncated when longer) and the cause. */
#define STORE_ERR_MAX 1024

/* Every statement a call runs, prepared once at open (store.c's table). */
enum store_sql {
    SQ_TARGET_ADD,
    SQ_TARGET_DELETE,
    SQ_TARGET_GET,
    SQ_TARGET_EACH,
    SQ_SNAP_ADD,
    SQ_SNAP_LIST,
    SQ_SNAP_GET,
    SQ_SAMPLE_NEW,
    SQ_SAMPLE_ADD,
    SQ_SAMPLE_FINISH,
    SQ_SAMPLE_GET,
    SQ_SAMPLE_STACKS,
    SQ_SAMPLE_EACH,
    SQ_PATH_ADD,
    SQ_PATH_COUNT,
    SQ_PATH_EACH,
    SQ_COUNT
};

struct srv_store {
    pthread_mutex_t lock; /* serialises every call: the statements and the connection */
    sqlite3 *db;
    sqlite3_stmt *sql[SQ_COUNT];
    int lock_fd; /* the file, flock'ed: one process per store */
    dev_t dev;   /* the file's identity, in store_open.c's list of open stores */
    ino_t ino;
    struct srv_store *next_open;
    char *path; /* owned; every message names it */
};

/* Prepare every statement of store.c on ST->db: 0, or -1 with ERR naming
 * the path.  Finalize: those prepared; the connection stays open. */
int srv_store_stmts_prepare(struct srv_store *st, char *err, size_t errlen);
void srv_store_stmts_finalize(struct srv_store *st);

/* ST is being freed: drop its last message in this thread. */
void srv_store_err_forget(const struct srv_store *st);

/* Replace control characters (a newline in a path) with '?': a message
 * stays one line. */
void srv_store_msg_oneline(char *s);

#endif /* RSPWALK_SERVER_STORE_IMPL_H */
