/* tests/server/regdrive.c -- drives rspwalkd's registry from commands on stdin.
 *
 * A test program, not a server: tests/integration/run-server-registry.sh
 * starts stubs, feeds this program one command a line and checks the
 * answers, one line each ("ok ..." or "err CODE message").  Events go to
 * the --events file, one "TYPE JSON" line each.
 *
 *   add TARGET [EXE|- [SYSROOT]]  register (sysroot / by default), print the id
 *   stacks ID FILE [THREAD [MAX]]  the document of ID into FILE
 *   all FILE [ID...]      srv_stacks_all into FILE, print the milliseconds taken
 *   info [ID]             the target's (or every target's) JSON
 *   wait ID STATE SEC     until ID is in STATE (or fail after SEC)
 *   resume ID | pause ID | delete ID
 *   sample SEC HZ [ID...] start a run and wait for its end, print its last event
 *   stress THREADS SEC [ID...]  THREADS threads call walks, srv_stacks_all, info, pause
 *                         and resume on the IDs at random for SEC seconds; print the
 *                         answers by code ("0:N -3:M ...") and the slowest in ms
 */
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/registry.h"
#include "server/store.h"

static FILE *g_events;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static char g_last_sample[512];

static void
on_event(void *arg, const char *type, const char *json)
{
    (void)arg;
    pthread_mutex_lock(&g_mu);
    if (g_events != NULL) {
        fprintf(g_events, "%s %s\n", type, json);
        fflush(g_events);
    }
    if (strcmp(type, "sample") == 0)
        snprintf(g_last_sample, sizeof g_last_sample, "%s", json);
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fputs(s, f);
    return fclose(f);
}

static const char *
state_of(struct srv_registry *r, int64_t id, char *buf, size_t len)
{
    char err[320], *js = NULL;
    if (srv_target_json(r, id, &js, err, sizeof err) < 0)
        return NULL;
    json_t *o = json_loads(js, 0, NULL);
    free(js);
    snprintf(buf, len, "%s", o ? json_string_value(json_object_get(o, "state")) : "?");
    json_decref(o);
    return buf;
}

/* One stress thread's work and what it saw. */
struct stress {
    struct srv_registry *r;
    const int64_t *ids;
    size_t n;
    double until_ms;
    unsigned seed;
    long counts[8]; /* by -code */
    double worst_ms;
};

static void *
stress_main(void *arg)
{
    struct stress *s = arg;
    char err[512];
    while (now_ms() < s->until_ms) {
        int64_t id = s->ids[rand_r(&s->seed) % s->n];
        char *out = NULL;
        int rc, op = (int)(rand_r(&s->seed) % 10);
        double t0 = now_ms();
        if (op < 5) {
            struct srv_walk_opts o = { .max_frames = op == 4 ? 2 : 0 };
            rc = srv_target_stacks(s->r, id, &o, &out, err, sizeof err);
        } else if (op < 7) {
            rc = srv_stacks_all(s->r, NULL, 0, NULL, &out, err, sizeof err);
        } else if (op < 8) {
            rc = srv_targets_json(s->r, &out, err, sizeof err);
        } else if (op < 9) {
            rc = srv_target_pause(s->r, id, err, sizeof err);
        } else {
            rc = srv_target_resume(s->r, id, err, sizeof err);
        }
        double ms = now_ms() - t0;
        if (ms > s->worst_ms)
            s->worst_ms = ms;
        /* An answer that is not JSON counts as an internal failure. */
        if (rc == 0 && op < 8 && (out == NULL || (out[0] != '{' && out[0] != '[')))
            rc = -7;
        s->counts[-rc < 8 ? -rc : 7]++;
        free(out);
    }
    return NULL;
}

static void reply(int rc, const char *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
reply(int rc, const char *err, const char *fmt, ...)
{
    if (rc < 0) {
        printf("err %d %s\n", rc, err);
    } else {
        va_list ap;
        fputs("ok", stdout);
        if (fmt != NULL && *fmt) {
            fputc(' ', stdout);
            va_start(ap, fmt);
            vprintf(fmt, ap);
            va_end(ap);
        }
        fputc('\n', stdout);
    }
    fflush(stdout);
}

/* The ids in the remaining words of the line (strtok state). */
static size_t
read_ids(int64_t *ids, size_t max)
{
    size_t n = 0;
    char *w;
    while (n < max && (w = strtok(NULL, " \t\n")) != NULL)
        ids[n++] = strtoll(w, NULL, 10);
    return n;
}

int
main(int argc, char **argv)
{
    struct srv_registry_config cfg = { .event = on_event };
    const char *db = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc)
            cfg.timeout_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--deadline-ms") == 0 && i + 1 < argc)
            cfg.walk_deadline_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
            g_events = fopen(argv[++i], "w");
        else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
            db = argv[++i];
        else if (strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc)
            cfg.cache_dir = argv[++i];
        else {
            fprintf(stderr, "regdrive: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    char err[512];
    struct srv_store *store = NULL;
    if (db != NULL && srv_store_open(db, &store, err, sizeof err) < 0) {
        fprintf(stderr, "regdrive: %s\n", err);
        return 1;
    }
    cfg.store = store;
    struct srv_registry *r;
    if (srv_registry_new(&cfg, &r, err, sizeof err) < 0) {
        fprintf(stderr, "regdrive: %s\n", err);
        return 1;
    }
    char line[4096];
    while (fgets(line, sizeof line, stdin) != NULL) {
        char *cmd = strtok(line, " \t\n");
        if (cmd == NULL)
            continue;
        char *a1 = NULL, *a2 = NULL, *a3 = NULL, *a4 = NULL;
        int rc;
        if (strcmp(cmd, "quit") == 0)
            break;
        if (strcmp(cmd, "add") == 0) {
            a1 = strtok(NULL, " \t\n");
            a2 = strtok(NULL, " \t\n");
            a3 = strtok(NULL, " \t\n");
            struct srv_target_spec spec = { .target = a1,
                                            .exe = a2 && strcmp(a2, "-") ? a2 : NULL,
                                            .sysroot = a3 ? a3 : "/" };
            int64_t id = 0;
            rc = srv_target_add(r, &spec, true, &id, err, sizeof err);
            reply(rc, err, "%" PRId64, id);
        } else if (strcmp(cmd, "stacks") == 0) {
            a1 = strtok(NULL, " \t\n");
            a2 = strtok(NULL, " \t\n");
            a3 = strtok(NULL, " \t\n");
            a4 = strtok(NULL, " \t\n");
            struct srv_walk_opts o = { .thread = a3 && strcmp(a3, "-") ? a3 : NULL,
                                       .max_frames = a4 ? strtoul(a4, NULL, 10) : 0 };
            char *doc = NULL;
            double t0 = now_ms();
            rc = srv_target_stacks(r, a1 ? strtoll(a1, NULL, 10) : 0, &o, &doc, err, sizeof err);
            double ms = now_ms() - t0;
            if (rc == 0 && (a2 == NULL || write_file(a2, doc) < 0))
                rc = -100, snprintf(err, sizeof err, "cannot write %s", a2 ? a2 : "(none)");
            free(doc);
            reply(rc, err, "%.3f", ms);
        } else if (strcmp(cmd, "all") == 0) {
            a1 = strtok(NULL, " \t\n");
            int64_t ids[1024];
            size_t n = read_ids(ids, 1024);
            char *doc = NULL;
            double t0 = now_ms();
            rc = srv_stacks_all(r, ids, n, NULL, &doc, err, sizeof err);
            double ms = now_ms() - t0;
            if (rc == 0 && (a1 == NULL || write_file(a1, doc) < 0))
                rc = -100, snprintf(err, sizeof err, "cannot write %s", a1 ? a1 : "(none)");
            free(doc);
            reply(rc, err, "%.3f", ms);
        } else if (strcmp(cmd, "info") == 0) {
            a1 = strtok(NULL, " \t\n");
            char *js = NULL;
            rc = a1 ? srv_target_json(r, strtoll(a1, NULL, 10), &js, err, sizeof err)
                    : srv_targets_json(r, &js, err, sizeof err);
            reply(rc, err, "%s", js ? js : "");
            free(js);
        } else if (strcmp(cmd, "wait") == 0) {
            a1 = strtok(NULL, " \t\n");
            a2 = strtok(NULL, " \t\n");
            a3 = strtok(NULL, " \t\n");
            int64_t id = a1 ? strtoll(a1, NULL, 10) : 0;
            double limit = now_ms() + (a3 ? atof(a3) : 10) * 1000, t0 = now_ms();
            char st[64] = "";
            rc = -1;
            snprintf(err, sizeof err, "no such target");
            while (now_ms() < limit) {
                if (state_of(r, id, st, sizeof st) == NULL)
                    break;
                if (a2 && strcmp(st, a2) == 0) {
                    rc = 0;
                    break;
                }
                snprintf(err, sizeof err, "target %" PRId64 " is %s, not %s", id, st,
                         a2 ? a2 : "?");
                struct timespec ts = { 0, 20 * 1000 * 1000 };
                nanosleep(&ts, NULL);
            }
            reply(rc, err, "%.0f", now_ms() - t0);
        } else if (strcmp(cmd, "resume") == 0 || strcmp(cmd, "pause") == 0 ||
                   strcmp(cmd, "delete") == 0) {
            a1 = strtok(NULL, " \t\n");
            int64_t id = a1 ? strtoll(a1, NULL, 10) : 0;
            rc = cmd[0] == 'r'   ? srv_target_resume(r, id, err, sizeof err)
                 : cmd[0] == 'p' ? srv_target_pause(r, id, err, sizeof err)
                                 : srv_target_delete(r, id, err, sizeof err);
            reply(rc, err, NULL);
        } else if (strcmp(cmd, "sample") == 0) {
            a1 = strtok(NULL, " \t\n");
            a2 = strtok(NULL, " \t\n");
            int64_t ids[1024], id = 0;
            size_t n = read_ids(ids, 1024);
            pthread_mutex_lock(&g_mu);
            g_last_sample[0] = '\0';
            pthread_mutex_unlock(&g_mu);
            rc = srv_sample_start(r, ids, n, a2 ? atof(a2) : 10, a1 ? atof(a1) : 1, &id, err,
                                  sizeof err);
            if (rc == 0) {
                /* Until the run's last event (a state other than running). */
                pthread_mutex_lock(&g_mu);
                while (g_last_sample[0] == '\0' || strstr(g_last_sample, "\"running\""))
                    pthread_cond_wait(&g_cv, &g_mu);
                pthread_mutex_unlock(&g_mu);
            }
            reply(rc, err, "%s", g_last_sample);
        } else if (strcmp(cmd, "stress") == 0) {
            a1 = strtok(NULL, " \t\n");
            a2 = strtok(NULL, " \t\n");
            int64_t ids[1024];
            size_t n = read_ids(ids, 1024), nt = a1 ? strtoul(a1, NULL, 10) : 4;
            struct stress st[64];
            pthread_t th[64];
            nt = nt > 64 ? 64 : nt ? nt : 1;
            double until = now_ms() + (a2 ? atof(a2) : 1) * 1000, worst = 0;
            long counts[8] = { 0 };
            for (size_t i = 0; i < nt && n > 0; i++) {
                st[i] = (struct stress){
                    .r = r, .ids = ids, .n = n, .until_ms = until, .seed = (unsigned)i + 1
                };
                pthread_create(&th[i], NULL, stress_main, &st[i]);
            }
            for (size_t i = 0; i < nt && n > 0; i++) {
                pthread_join(th[i], NULL);
                for (int k = 0; k < 8; k++)
                    counts[k] += st[i].counts[k];
                if (st[i].worst_ms > worst)
                    worst = st[i].worst_ms;
            }
            printf("ok");
            for (int k = 0; k < 8; k++)
                if (counts[k])
                    printf(" %d:%ld", -k, counts[k]);
            printf(" worst %.0f\n", worst);
            fflush(stdout);
        } else {
            printf("err -1 unknown command %s\n", cmd);
            fflush(stdout);
        }
    }
    double t0 = now_ms();
    srv_registry_free(r);
    srv_store_close(store);
    fprintf(stderr, "regdrive: registry freed in %.0f ms\n", now_ms() - t0);
    if (g_events != NULL)
        fclose(g_events);
    return 0;
}
