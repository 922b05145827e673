/* server/main.c -- rspwalkd, the stack server: options, start-up and shutdown.
 *
 * Builds the server from its parts, in the order each needs the other: the
 * store, the events hub, the registry (over both), the HTTP server (over
 * all); serves until SIGINT or SIGTERM; takes them down in reverse so that
 * every target is left as found.  What each part does is in its header.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rspwalk/walker.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/deadline.h"
#include "server/doors.h"
#include "server/events.h"
#include "server/http.h"
#include "server/policy.h"
#include "server/registry.h"
#include "server/store.h"
#include "server/util.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* At most this many --allow-root directories. */
#define ROOTS_MAX 16
/* Event streams at once, and the undelivered text each may hold before it
 * is dropped as too slow (a few hundred events). */
#define STREAMS_MAX        64
#define STREAM_QUEUE_BYTES (256u << 10)

/* The options' only description: `make man` turns this text into
 * rspwalkd(8) with help2man (man/rspwalkd.8.h2m adds the other sections);
 * `make check-man` fails when the page, this text and the getopt table
 * below disagree. */
static void
usage(FILE *f)
{
    fputs("Usage: rspwalkd [OPTIONS] [TARGET...]\n"
          "Serve the call stacks of programs behind GDB remote stubs over HTTP.\n\n"
          "  TARGET             HOST:PORT | [V6ADDR]:PORT | unix:PATH | /dev/ttyX[@BAUD] | "
          "'|COMMAND':\n"
          "                     registered whatever --allow-* say, and kept in the\n"
          "                     store (found again by a later run); a '|COMMAND' for\n"
          "                     this run only\n\n"
          "Options:\n"
          "      --listen HOST:PORT  where to serve HTTP (default 127.0.0.1:7411; port 0: a\n"
          "                     free port); off loopback only with --token-file\n"
          "      --db FILE      the SQLite store of targets, snapshots and samples (default\n"
          "                     $XDG_STATE_HOME/rspwalk/rspwalkd.db or\n"
          "                     ~/.local/state/rspwalk/rspwalkd.db); ':memory:' keeps\n"
          "                     nothing after the server ends\n"
          "      --token-file FILE  require 'Authorization: Bearer TOKEN' on /v1, TOKEN the\n"
          "                     file's one line; the file must not be readable by others\n"
          "      --allow-commands  let API clients register '|COMMAND' targets\n"
          "      --allow-devices  let API clients register device paths and unix:PATH\n"
          "      --allow-root DIR  let API clients name \"exe\" and \"sysroot\" files under\n"
          "                     DIR (repeatable; default: none may be named)\n"
          "      --sysroot DIR  where the command line's TARGETs' libraries are found\n"
          "      --max-targets N  targets registered at once (default 1024)\n"
          "      --max-body BYTES  request body size (default 65536)\n"
          "      --max-requests N  requests in flight (default 64; more get 503)\n"
          "      --request-timeout SEC  answer 504 to a request not done by then, and\n"
          "                     close connections idle that long (default 30)\n"
          "      --timeout SEC  per protocol read from a stub (default 10)\n"
          "      --deadline SEC  each request's whole conversation with its stub: a walk,\n"
          "                     a pause, a resume, a DAP request, an RSP client's packet\n"
          "                     (a sample run: its seconds more); past it the request fails\n"
          "                     naming it and the link is made again (default: 81% of\n"
          "                     --request-timeout)\n"
          "      --max-threads N  threads read from a stub's list (default 65536); a longer\n"
          "                     list is cut there and the first N are walked\n"
          "      --cache-dir DIR  where files read from targets are kept by build-id\n"
          "                     (default $XDG_CACHE_HOME/rspwalk or ~/.cache/rspwalk)\n"
          "      --dap-listen HOST:PORT  serve the Debug Adapter Protocol there, a session\n"
          "                     per connection (loopback only; repeatable)\n"
          "      --rsp-listen HOST:PORT=ID  serve gdb or lldb there (the RSP door) over\n"
          "                     registered target ID's link (loopback only; repeatable)\n"
          "  -h, --help         this text\n"
          "  -V, --version      the version\n",
          f);
}

enum {
    OPT_LISTEN = 256,
    OPT_DB,
    OPT_TOKEN_FILE,
    OPT_ALLOW_COMMANDS,
    OPT_ALLOW_DEVICES,
    OPT_ALLOW_ROOT,
    OPT_SYSROOT,
    OPT_MAX_TARGETS,
    OPT_MAX_BODY,
    OPT_MAX_REQUESTS,
    OPT_REQUEST_TIMEOUT,
    OPT_TIMEOUT,
    OPT_DEADLINE,
    OPT_MAX_THREADS,
    OPT_CACHE_DIR,
    OPT_DAP_LISTEN,
    OPT_RSP_LISTEN,
};

/* At most this many --dap-listen and --rsp-listen addresses. */
#define DOORS_MAX 16

struct options {
    const char *listen, *db, *token_file, *sysroot, *cache_dir;
    bool allow_commands, allow_devices;
    char *roots[ROOTS_MAX];
    size_t nroots;
    const char *doors[DOORS_MAX]; /* the addresses, in the order given */
    bool doors_dap[DOORS_MAX];
    size_t ndoors;
    unsigned long max_targets, max_body, max_requests, request_timeout_s, timeout_s;
    unsigned long deadline_s, max_threads; /* 0: the defaults */
};

static bool
parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long x = strtoul(s, &end, 10);
    if (errno || *end || x < min || x > max)
        return false;
    *v = x;
    return true;
}

/* 0, EXIT_OK after --help or --version (*DONE), or EXIT_USAGE. */
static int
parse_options(int argc, char **argv, struct options *o, bool *done)
{
    static const struct option longopts[] = {
        { "listen", required_argument, NULL, OPT_LISTEN },
        { "db", required_argument, NULL, OPT_DB },
        { "token-file", required_argument, NULL, OPT_TOKEN_FILE },
        { "allow-commands", no_argument, NULL, OPT_ALLOW_COMMANDS },
        { "allow-devices", no_argument, NULL, OPT_ALLOW_DEVICES },
        { "allow-root", required_argument, NULL, OPT_ALLOW_ROOT },
        { "sysroot", required_argument, NULL, OPT_SYSROOT },
        { "max-targets", required_argument, NULL, OPT_MAX_TARGETS },
        { "max-body", required_argument, NULL, OPT_MAX_BODY },
        { "max-requests", required_argument, NULL, OPT_MAX_REQUESTS },
        { "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { "deadline", required_argument, NULL, OPT_DEADLINE },
        { "max-threads", required_argument, NULL, OPT_MAX_THREADS },
        { "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
        { "dap-listen", required_argument, NULL, OPT_DAP_LISTEN },
        { "rsp-listen", required_argument, NULL, OPT_RSP_LISTEN },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    /* Each number's range: enough for the largest farm this server is meant
     * for, small enough that a typo does not exhaust the machine. */
    static const struct {
        int opt;
        const char *name;
        unsigned long min, max;
    } ranges[] = {
        { OPT_MAX_TARGETS, "--max-targets", 1, 65536 },
        { OPT_MAX_BODY, "--max-body", 1024, 64ul << 20 },
        { OPT_MAX_REQUESTS, "--max-requests", 1, 4096 },
        { OPT_REQUEST_TIMEOUT, "--request-timeout", 1, 3600 },
        { OPT_TIMEOUT, "--timeout", 1, 3600 },
        { OPT_DEADLINE, "--deadline", 1, 3600 },
        { OPT_MAX_THREADS, "--max-threads", 1, 1ul << 24 },
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
        unsigned long v = 0;
        for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
            if (ranges[i].opt == c && !parse_ulong(optarg, ranges[i].min, ranges[i].max, &v)) {
                fprintf(stderr, "rspwalkd: %s: '%s' is not a number from %lu to %lu\n",
                        ranges[i].name, optarg, ranges[i].min, ranges[i].max);
                return EXIT_USAGE;
            }
        }
        switch (c) {
        case OPT_LISTEN:
            o->listen = optarg;
            break;
        case OPT_DB:
            o->db = optarg;
            break;
        case OPT_TOKEN_FILE:
            o->token_file = optarg;
            break;
        case OPT_ALLOW_COMMANDS:
            o->allow_commands = true;
            break;
        case OPT_ALLOW_DEVICES:
            o->allow_devices = true;
            break;
        case OPT_ALLOW_ROOT: {
            if (o->nroots == ROOTS_MAX) {
                fprintf(stderr, "rspwalkd: --allow-root: at most %d directories\n", ROOTS_MAX);
                return EXIT_USAGE;
            }
            char *real = realpath(optarg, NULL);
            struct stat st;
            if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
                fprintf(stderr, "rspwalkd: --allow-root %s: %s\n", optarg,
                        real ? "not a directory" : strerror(errno));
                free(real);
                return EXIT_USAGE;
            }
            o->roots[o->nroots++] = real;
            break;
        }
        case OPT_SYSROOT:
            o->sysroot = optarg;
            break;
        case OPT_MAX_TARGETS:
            o->max_targets = v;
            break;
        case OPT_MAX_BODY:
            o->max_body = v;
            break;
        case OPT_MAX_REQUESTS:
            o->max_requests = v;
            break;
        case OPT_REQUEST_TIMEOUT:
            o->request_timeout_s = v;
            break;
        case OPT_TIMEOUT:
            o->timeout_s = v;
            break;
        case OPT_DEADLINE:
            o->deadline_s = v;
            break;
        case OPT_MAX_THREADS:
            o->max_threads = v;
            break;
        case OPT_CACHE_DIR:
            o->cache_dir = optarg;
            break;
        case OPT_DAP_LISTEN:
        case OPT_RSP_LISTEN:
            if (o->ndoors == DOORS_MAX) {
                fprintf(stderr, "rspwalkd: --dap-listen, --rsp-listen: at most %d\n", DOORS_MAX);
                return EXIT_USAGE;
            }
            o->doors_dap[o->ndoors] = c == OPT_DAP_LISTEN;
            o->doors[o->ndoors++] = optarg;
            break;
        case 'h':
            usage(stdout);
            *done = true;
            return EXIT_OK;
        case 'V': {
            int ma, mi, pa;
            sw_version(&ma, &mi, &pa);
            printf("rspwalkd %d.%d.%d\n", ma, mi, pa);
            *done = true;
            return EXIT_OK;
        }
        case ':':
            fprintf(stderr, "rspwalkd: option '%s' needs a value\n", argv[optind - 1]);
            return EXIT_USAGE;
        default:
            fprintf(stderr, "rspwalkd: unknown option '%s' (see rspwalkd --help)\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* --db :memory:: a store in a private directory removed at exit, so that
 * nothing outlives the run. */
struct memdb {
    char dir[PATH_MAX];
    char path[PATH_MAX + 16];
};

static int
memdb_make(struct memdb *m)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(m->dir, sizeof m->dir, "%s/rspwalkd.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (!mkdtemp(m->dir)) {
        fprintf(stderr, "rspwalkd: --db :memory:: %s: %s\n", m->dir, strerror(errno));
        m->dir[0] = '\0';
        return -1;
    }
    snprintf(m->path, sizeof m->path, "%s/rspwalkd.db", m->dir);
    return 0;
}

static void
memdb_remove(struct memdb *m)
{
    if (!m->dir[0])
        return;
    static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
    char p[PATH_MAX + 32];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s%s", m->path, suffixes[i]);
        unlink(p);
    }
    rmdir(m->dir);
}

int
main(int argc, char **argv)
{
    struct options o = {
        .listen = "127.0.0.1:7411",
        .max_targets = 1024,
        .max_body = 65536,
        .max_requests = 64,
        .request_timeout_s = 30,
        .timeout_s = 10,
    };
    bool done = false;
    int rc = parse_options(argc, argv, &o, &done);
    if (rc != 0 || done) {
        for (size_t i = 0; i < o.nroots; i++)
            free(o.roots[i]);
        return rc;
    }

    char err[1024] = "";
    char *token = NULL;
    char url[128] = "";
    char dbpath[PATH_MAX];
    struct memdb memdb = { .dir = "" };
    struct srv_store *store = NULL;
    struct srv_events *events = NULL;
    struct srv_registry *registry = NULL;
    struct srv_deadline_pool *pool = NULL;
    struct srv_http *http = NULL;
    struct srv_doors *doors = NULL;
    int fd = -1;
    bool loopback = false;
    rc = EXIT_FAIL;

    /* Signals are taken by sigwait below, on this thread only: every thread
     * started from here inherits the mask.  A peer that closes its socket
     * is an error return, not SIGPIPE. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (o.token_file && srv_token_load(o.token_file, &token, err, sizeof err) < 0) {
        srv_log("%s", err);
        rc = EXIT_USAGE;
        goto out;
    }
    if (srv_http_listen(o.listen, &fd, url, sizeof url, &loopback, err, sizeof err) < 0) {
        srv_log("%s", err);
        goto out;
    }
    if (!loopback && !token) {
        fprintf(stderr,
                "rspwalkd: --listen %s is not a loopback address: refusing to serve it without "
                "--token-file\n",
                o.listen);
        rc = EXIT_USAGE;
        goto out;
    }

    const char *db = o.db;
    if (db && strcmp(db, ":memory:") == 0) {
        if (memdb_make(&memdb) < 0)
            goto out;
        db = memdb.path;
    } else if (!db) {
        if (srv_store_default_path(dbpath, sizeof dbpath) < 0) {
            fprintf(stderr, "rspwalkd: no default store: no home directory (give --db FILE)\n");
            goto out;
        }
        db = dbpath;
    }
    if (srv_store_open(db, &store, err, sizeof err) < 0) {
        srv_log("%s", err);
        goto out;
    }
    if (srv_events_new(STREAMS_MAX, STREAM_QUEUE_BYTES, &events) < 0 ||
        srv_deadline_pool_new(&pool) < 0) {
        fprintf(stderr, "rspwalkd: out of memory\n");
        goto out;
    }
    int request_timeout_ms = (int)o.request_timeout_s * 1000;
    struct srv_registry_config rcfg = {
        .store = store,
        .max_targets = o.max_targets,
        .timeout_ms = (int)o.timeout_s * 1000,
        /* A walk ends a little before the request's deadline, so that
         * /v1/stacks can still answer with the targets that made it. */
        .walk_deadline_ms = request_timeout_ms - request_timeout_ms / 10,
        .link_deadline_ms = (int)o.deadline_s * 1000,
        .max_threads = o.max_threads,
        .cache_dir = o.cache_dir,
        .event = srv_events_publish,
        .event_arg = events,
    };
    int src = srv_registry_new(&rcfg, &registry, err, sizeof err);
    if (src != 0) {
        srv_log("%s", err);
        goto out;
    }
    for (int i = optind; i < argc; i++) {
        struct srv_target_spec spec = { .target = argv[i], .sysroot = o.sysroot };
        int64_t id;
        /* Kept in the store with their history, and found there again by the
         * next run with the same arguments; a '|COMMAND' is this run's only,
         * so that a restart never runs a command the store remembers. */
        src = srv_target_add(registry, &spec, argv[i][0] != '|', &id, err, sizeof err);
        if (src != 0) {
            srv_log("%s: %s", argv[i], err);
            rc = src == SRV_EINVAL ? EXIT_USAGE : EXIT_FAIL;
            goto out;
        }
    }

    struct srv_policy policy = {
        .allow_commands = o.allow_commands,
        .allow_devices = o.allow_devices,
        .roots = (const char *const *)o.roots,
        .nroots = o.nroots,
    };
    struct srv_api_config api = {
        .registry = registry,
        .store = store,
        .pool = pool,
        .policy = &policy,
        .request_timeout_ms = request_timeout_ms,
    };
    struct srv_http_config hcfg = {
        .listen_fd = fd,
        .token = token,
        .check_host = loopback && !token,
        .max_body = o.max_body,
        .max_requests = (unsigned)o.max_requests,
        .max_streams = STREAMS_MAX,
        .idle_timeout_s = (unsigned)o.request_timeout_s,
        .api = &api,
        .events = events,
    };
    fd = -1; /* srv_http_start takes it */
    if (srv_http_start(&hcfg, &http, err, sizeof err) < 0) {
        srv_log("%s", err);
        goto out;
    }
    fprintf(stderr, "rspwalkd: listening on %s\n", url);
    if (o.ndoors > 0) {
        struct srv_doors_config dcfg = {
            .registry = registry,
            .timeout_ms = (int)o.timeout_s * 1000,
            .deadline_ms = o.deadline_s > 0 ? (int)o.deadline_s * 1000
                                            : request_timeout_ms - request_timeout_ms * 19 / 100,
            .cache_dir = o.cache_dir,
        };
        if (srv_doors_new(&dcfg, &doors, err, sizeof err) < 0) {
            srv_log("%s", err);
            goto out;
        }
    }
    for (size_t i = 0; i < o.ndoors; i++) {
        char bound[160];
        int drc =
            o.doors_dap[i]
                ? srv_doors_dap_listen(doors, o.doors[i], bound, sizeof bound, err, sizeof err)
                : srv_doors_rsp_listen(doors, o.doors[i], bound, sizeof bound, err, sizeof err);
        if (drc < 0) {
            srv_log("%s", err);
            rc = EXIT_USAGE;
            goto out;
        }
        if (o.doors_dap[i])
            fprintf(stderr, "rspwalkd: DAP on %s\n", bound);
        else
            fprintf(stderr, "rspwalkd: RSP door for target %s on %s\n",
                    strrchr(o.doors[i], '=') + 1, bound);
    }

    int sig = 0;
    while (sigwait(&sigs, &sig) != 0)
        ;
    rc = EXIT_OK;

out:
    /* Door sessions end first (each gives its target's link back, the
     * target left as on a client's disconnect), then streams (their readers
     * hold HTTP threads), then HTTP, then calls given up on by their
     * requests, then the registry, which leaves every target as found. */
    srv_doors_free(doors);
    srv_events_close(events);
    srv_http_stop(http);
    srv_deadline_pool_free(pool);
    srv_registry_free(registry);
    srv_events_free(events);
    srv_store_close(store);
    memdb_remove(&memdb);
    if (fd >= 0)
        close(fd);
    srv_token_free(token);
    for (size_t i = 0; i < o.nroots; i++)
        free(o.roots[i]);
    return rc;
}
