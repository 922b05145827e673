/* mpi/main.c -- rspwalk-mpi: the STAT-style merged tree of many targets, walked by MPI ranks.
 *
 * `mpirun -np N rspwalk-mpi --targets FILE [-f dot|json|folded]`: rank 0
 * reads FILE and sends it to every rank, each rank walks its share
 * (mpi/walk.c) or makes synthetic stacks (--emulate, mpi/emulate.c), the
 * trees merge up a k-ary tree of ranks (mpi/merge.c), and rank 0 writes
 * the tree and each phase's time.  docs/usage.md, "rspwalk-mpi".
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/rmpi.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* The largest targets file read: one line a target, far more than a job's. */
#define RMPI_MAX_FILE (64u << 20)
/* Walks at once in one rank by default: each is mostly waiting on its link. */
#define RMPI_DEFAULT_THREADS 16
/* The default fan-out of the tree of ranks: rank 0 merges 8 subtrees. */
#define RMPI_DEFAULT_FANOUT 8

struct rmpi_opts {
    const char *targets;
    enum sw_tree_format format;
    int fanout;
    size_t threads;
    bool emulate, countrep, emu_scatter;
    uint64_t emu_tasks;
    size_t emu_depth, emu_classes;
};

static void
usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np N rspwalk-mpi --targets FILE [OPTIONS]\n"
            "       mpirun -np N rspwalk-mpi --emulate TASKS,DEPTH,CLASSES [OPTIONS]\n"
            "The merged call-path tree (STAT's prefix tree) of many targets' threads, walked\n"
            "by MPI ranks and merged up a tree of ranks; rank 0 writes it on stdout and the\n"
            "time of each phase on stderr.  Exit status: 0 when every target was walked, 1\n"
            "when one was not (the tree of the others is written all the same) or the merge\n"
            "failed, 2 for a usage error.\n"
            "\n"
            "Options:\n"
            "  -t, --targets FILE   one target a line, written as rspwalk's arguments:\n"
            "                       HOST:PORT [--attach PID,PID...] [--exe FILE] [--sysroot DIR]\n"
            "                       [--lib-path DIRS] [--debug-dir DIR] [--max-frames N]\n"
            "                       [--timeout SEC]; or an rspwalkd's targets,\n"
            "                       http://HOST:PORT/[?targets=ID,...] [--token-file FILE];\n"
            "                       '#' starts a comment line\n"
            "  -f, --format FMT     dot (STAT's, the default), json (with \"timings\"), folded\n"
            "  -k, --fanout K       children of each rank in the merge tree (default %d)\n"
            "      --threads N      targets walked at once in each rank (default %d)\n"
            "      --emulate TASKS,DEPTH,CLASSES[,scatter]\n"
            "                       synthetic stacks (STATBench's method): TASKS tasks shared\n"
            "                       out over the ranks, paths of DEPTH frames in CLASSES states\n"
            "                       (neighbouring tasks in one state; scatter: task G in state\n"
            "                       G mod CLASSES)\n"
            "      --countrep       count and representative task per node, not task sets\n"
            "  -h, --help           this text\n"
            "  -V, --version        the version\n",
            RMPI_DEFAULT_FANOUT, RMPI_DEFAULT_THREADS);
}

/* A positive decimal no larger than MAX.  Returns 0 or -1. */
static int
parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || e == s || *e != '\0' || s[0] == '-' || v == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

static int
parse_emulate(const char *arg, struct rmpi_opts *o)
{
    char buf[96];
    uint64_t v[3];
    if (strlen(arg) >= sizeof buf)
        return -1;
    strcpy(buf, arg);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    /* At most 2^32 tasks, 4096 frames (the walker's default limit) and
     * 2^20 classes: a path table of 4096 x 2^20 names would not fit anyway,
     * which the emulation reports as out of memory. */
    static const uint64_t max[3] = { UINT64_C(1) << 32, 4096, UINT64_C(1) << 20 };
    for (int i = 0; i < 3; i++) {
        if (tok == NULL || parse_uint(tok, max[i], &v[i]) < 0)
            return -1;
        tok = strtok_r(NULL, ",", &save);
    }
    /* ",scatter": task G in class G mod CLASSES, the worst case of range
     * sets (docs/usage.md). */
    if (tok != NULL && strcmp(tok, "scatter") == 0) {
        o->emu_scatter = true;
        tok = strtok_r(NULL, ",", &save);
    }
    if (tok != NULL)
        return -1;
    o->emulate = true;
    o->emu_tasks = v[0];
    o->emu_depth = (size_t)v[1];
    o->emu_classes = (size_t)v[2];
    return 0;
}

/* Returns -1 to go on, else the exit status. */
static int
parse_args(int argc, char **argv, struct rmpi_opts *o, bool speak)
{
    static const struct option longopts[] = {
        { "targets", required_argument, NULL, 't' },
        { "format", required_argument, NULL, 'f' },
        { "fanout", required_argument, NULL, 'k' },
        { "threads", required_argument, NULL, 'T' },
        { "emulate", required_argument, NULL, 'E' },
        { "countrep", no_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    uint64_t v;
    int c;

    *o = (struct rmpi_opts){ .format = SW_TREE_DOT,
                             .fanout = RMPI_DEFAULT_FANOUT,
                             .threads = RMPI_DEFAULT_THREADS };
    opterr = speak;
    while ((c = getopt_long(argc, argv, "t:f:k:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            o->targets = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "dot") == 0)
                o->format = SW_TREE_DOT;
            else if (strcmp(optarg, "json") == 0)
                o->format = SW_TREE_JSON;
            else if (strcmp(optarg, "folded") == 0)
                o->format = SW_TREE_FOLDED;
            else {
                if (speak)
                    fprintf(stderr, "rspwalk-mpi: -f: '%s' is not dot, json or folded\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'k':
            if (parse_uint(optarg, 1 << 16, &v) < 0) {
                if (speak)
                    fprintf(stderr,
                            "rspwalk-mpi: --fanout: '%s' is not a number from 1 to "
                            "65536\n",
                            optarg);
                return EXIT_USAGE;
            }
            o->fanout = (int)v;
            break;
        case 'T':
            if (parse_uint(optarg, 256, &v) < 0) {
                if (speak)
                    fprintf(stderr,
                            "rspwalk-mpi: --threads: '%s' is not a number from 1 to "
                            "256\n",
                            optarg);
                return EXIT_USAGE;
            }
            o->threads = (size_t)v;
            break;
        case 'E':
            if (parse_emulate(optarg, o) < 0) {
                if (speak)
                    fprintf(stderr,
                            "rspwalk-mpi: --emulate: '%s' is not TASKS,DEPTH,CLASSES[,scatter] "
                            "(positive; at most 2^32 tasks, 4096 frames, 2^20 classes)\n",
                            optarg);
                return EXIT_USAGE;
            }
            break;
        case 'C':
            o->countrep = true;
            break;
        case 'h':
            if (speak)
                usage(stdout);
            return EXIT_OK;
        case 'V':
            if (speak)
                printf("rspwalk-mpi %s\n", SW_VERSION);
            return EXIT_OK;
        default:
            if (speak)
                fprintf(stderr, "Try 'rspwalk-mpi --help'.\n");
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        if (speak)
            fprintf(stderr, "rspwalk-mpi: '%s': targets come from --targets FILE\n", argv[optind]);
        return EXIT_USAGE;
    }
    if ((o->targets == NULL) == !o->emulate) {
        if (speak)
            fprintf(stderr, "rspwalk-mpi: give either --targets FILE or --emulate "
                            "TASKS,DEPTH,CLASSES\n");
        return EXIT_USAGE;
    }
    return -1;
}

/* Rank 0 reads the file and every rank gets its bytes.  Returns 0 with
 * *TEXT (free) and *LEN on every rank, or -1 on every rank (rank 0 said
 * why). */
static int
share_file(const char *path, int rank, char **text, size_t *len)
{
    uint64_t n = UINT64_MAX;
    char *buf = NULL;

    if (rank == 0) {
        FILE *f = fopen(path, "rb");
        if (f == NULL) {
            fprintf(stderr, "rspwalk-mpi: %s: %s\n", path, strerror(errno));
        } else {
            buf = malloc(RMPI_MAX_FILE + 1);
            size_t got = buf ? fread(buf, 1, RMPI_MAX_FILE + 1, f) : 0;
            if (buf == NULL)
                fprintf(stderr, "rspwalk-mpi: %s: out of memory\n", path);
            else if (ferror(f))
                fprintf(stderr, "rspwalk-mpi: %s: %s\n", path, strerror(errno));
            else if (got > RMPI_MAX_FILE)
                fprintf(stderr, "rspwalk-mpi: %s: larger than %u MiB: not a targets file\n", path,
                        RMPI_MAX_FILE >> 20);
            else
                n = got;
            fclose(f);
        }
    }
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (n == UINT64_MAX) {
        free(buf);
        return -1;
    }
    if (rank != 0 && (buf = malloc(n + 1)) == NULL) {
        fprintf(stderr, "rspwalk-mpi: %s: out of memory\n", path);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAIL);
    }
    MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    *text = buf;
    *len = n;
    return 0;
}

/* The ms between two rmpi_now_us readings. */
static double
ms(uint64_t us)
{
    return (double)us / 1000.0;
}

int
main(int argc, char **argv)
{
    struct rmpi_opts o;
    int rank, size;

    /* --help and --version without MPI: help2man and a shell run them alone. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return EXIT_OK;
        }
        if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
            printf("rspwalk-mpi %s\n", SW_VERSION);
            return EXIT_OK;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    signal(SIGPIPE, SIG_IGN); /* a stub that hangs up is an error of its walk, not the end */

    int rc = parse_args(argc, argv, &o, rank == 0);
    if (rc >= 0) {
        MPI_Finalize();
        return rc;
    }
    int pos = 0;
    if (rmpi_preorder_position(rank, size, o.fanout, &pos) < 0) {
        fprintf(stderr, "rspwalk-mpi: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAIL);
    }

    struct rmpi_target *targets = NULL;
    size_t ntargets = 0;
    if (!o.emulate) {
        char *text, err[512];
        size_t len;
        if (share_file(o.targets, rank, &text, &len) < 0) {
            MPI_Finalize();
            return EXIT_FAIL;
        }
        /* Every rank parses the same bytes the same way: all go on or all stop. */
        rc = rmpi_targets_parse(o.targets, text, len, &targets, &ntargets, err, sizeof err);
        free(text);
        if (rc < 0) {
            if (rank == 0)
                fprintf(stderr, "rspwalk-mpi: %s\n", err);
            MPI_Finalize();
            return EXIT_USAGE;
        }
    }

    struct sw_tree *t = NULL;
    int local = 0; /* 0, 1 (a target not walked), 2 (this rank cannot go on) */
    if (sw_tree_new(&t) < 0 || (o.countrep && sw_tree_set_countrep(t) < 0)) {
        fprintf(stderr, "rspwalk-mpi: rank %d: out of memory\n", rank);
        local = 2;
    }

    /* Phase 1: walk (or emulate) this rank's share, its place in preorder. */
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t0 = rmpi_now_us();
    if (local == 0 && o.emulate) {
        uint64_t first = o.emu_tasks * (uint64_t)pos / (uint64_t)size;
        uint64_t end = o.emu_tasks * (uint64_t)(pos + 1) / (uint64_t)size;
        if (rmpi_emulate(t, o.emu_tasks, o.emu_depth, o.emu_classes, o.emu_scatter, first,
                         end - first) < 0) {
            fprintf(stderr, "rspwalk-mpi: rank %d: emulating %" PRIu64 " tasks: out of memory\n",
                    rank, end - first);
            local = 2;
        }
    } else if (local == 0) {
        size_t first = ntargets * (size_t)pos / (size_t)size;
        size_t end = ntargets * (size_t)(pos + 1) / (size_t)size;
        rc = rmpi_walk_targets(t, o.targets, targets + first, end - first, o.threads);
        if (rc == SW_ENOMEM) {
            fprintf(stderr, "rspwalk-mpi: rank %d: merging the stacks: out of memory\n", rank);
            local = 2;
        } else if (rc < 0) {
            local = 1;
        }
    }
    uint64_t walk_us = rmpi_now_us() - t0;

    /* Phase 2: the merge up the tree of ranks, timed on rank 0 from the
     * moment every rank has its tree. */
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t1 = rmpi_now_us();
    struct rmpi_merge_stats st;
    if (rmpi_merge_up(t, rank, size, o.fanout, local == 2, &st) < 0 && local < 2)
        local = 2;
    uint64_t merge_us = rmpi_now_us() - t1;

    uint64_t mine[2] = { walk_us, st.unpack_us + st.pack_us }, most[2];
    uint64_t bytes = st.bytes_in, all_bytes;
    int worst;
    MPI_Reduce(mine, most, 2, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bytes, &all_bytes, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local, &worst, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);

    int status = EXIT_OK;
    if (rank == 0) {
        const char *phase = o.emulate ? "emulate" : "walk";
        status = worst == 0 ? EXIT_OK : EXIT_FAIL;
        if (worst < 2) {
            uint64_t t2 = rmpi_now_us();
            if (o.format == SW_TREE_JSON) {
                fputc('{', stdout);
                rc = sw_tree_write_json_members(t, stdout);
                printf(",\n \"timings\": {\"ranks\": %d, \"fanout\": %d, \"%s_ms\": %.3f, "
                       "\"merge_ms\": %.3f, \"merge_bytes\": %" PRIu64 "}}\n",
                       size, o.fanout, phase, ms(most[0]), ms(merge_us), all_bytes);
                if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
                    rc = SW_EIO;
            } else {
                rc = sw_tree_write(t, o.format, stdout);
            }
            if (rc < 0) {
                fprintf(stderr, "rspwalk-mpi: writing the merged tree: %s\n", sw_strerror(rc));
                status = EXIT_FAIL;
            }
            fprintf(stderr,
                    "rspwalk-mpi: %d ranks (fan-out %d), %zu tasks: %s %.3f ms (slowest rank), "
                    "merge %.3f ms (%" PRIu64 " bytes sent; slowest rank packing and merging "
                    "%.3f ms), write %.3f ms\n",
                    size, o.fanout, sw_tree_tasks(t), phase, ms(most[0]), ms(merge_us), all_bytes,
                    ms(most[1]), ms(rmpi_now_us() - t2));
        }
    }
    sw_tree_free(t);
    rmpi_targets_free(targets, ntargets);
    MPI_Finalize();
    return status;
}
