/* cli/main.c -- the rspwalk program: arguments, the session, the walks, exit codes.
 *
 * No walking logic here: the library walks, cli/output.c prints.  Every
 * failure is one line on stderr, "rspwalk: <what>: <why>", and a non-zero
 * exit; the target is left as found (the link is closed without detaching).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dap/dap.h"
#include "door/door.h"
#include "rspwalk/rspwalk.h"

enum {
    EXIT_OK = 0,
    EXIT_FAIL = 1,  /* connection, protocol, file or walk failure */
    EXIT_USAGE = 2, /* bad command line */
    EXIT_EXITED = 3 /* the target exited before it stopped */
};

enum {
    OPT_SYSROOT = 256,
    OPT_STATS,
    OPT_TIMEOUT,
    OPT_DEADLINE,
    OPT_PASS,
    OPT_NO_CACHE,
    OPT_NO_JIT,
    OPT_NO_MAPS,
    OPT_NON_STOP,
    OPT_LOCALS,
    OPT_LINES,
    OPT_DEBUG_DIR,
    OPT_ATTACH,
    OPT_PID,
    OPT_CACHE_DIR,
    OPT_CACHE_MAX,
    OPT_STEPPERS,
    OPT_LIB_PATH,
    OPT_SAMPLE,
    OPT_DAP,
    OPT_RSP_LISTEN,
    OPT_RTOS,
    OPT_MAX_THREADS,
    OPT_ALL_THREADS,
};

/* gdb's signal numbers (include/gdb/signals.def), which RSP uses. */
static const struct {
    const char *name;
    int num;
} gdb_signals[] = {
    { "HUP", 1 },   { "INT", 2 },    { "QUIT", 3 },  { "ILL", 4 },   { "TRAP", 5 },
    { "ABRT", 6 },  { "FPE", 8 },    { "KILL", 9 },  { "BUS", 10 },  { "SEGV", 11 },
    { "SYS", 12 },  { "PIPE", 13 },  { "ALRM", 14 }, { "TERM", 15 }, { "URG", 16 },
    { "STOP", 17 }, { "TSTP", 18 },  { "CONT", 19 }, { "CHLD", 20 }, { "TTIN", 21 },
    { "TTOU", 22 }, { "IO", 23 },    { "XCPU", 24 }, { "XFSZ", 25 }, { "VTALRM", 26 },
    { "PROF", 27 }, { "WINCH", 28 }, { "USR1", 30 }, { "USR2", 31 },
};

/* Signals a program handles in normal operation: passed by default, so
 * `--continue` stops where something went wrong (a trap, a crash), not where
 * a handler was about to run.  gdb's own default "nostop" set is ALRM, URG,
 * CHLD, IO, VTALRM, PROF, WINCH; USR1, USR2 and PIPE are added, as the gdb
 * oracle of the integration tests does (tests/integration/gdb_oracle.sh). */
static const char default_pass[] = "USR1,USR2,ALRM,CHLD,PIPE,URG,IO,VTALRM,PROF,WINCH";

/* The options' only description: `make man` turns this text into rspwalk(1) with help2man,
 * which reads "Usage:", "or:" and "Options:" as the page's SYNOPSIS and OPTIONS
 * (man/rspwalk.1.h2m adds the other sections).  `make check-man` fails when the page, this
 * text and the getopt table below disagree. */
static void
usage(FILE *f)
{
    fputs(
        "Usage: rspwalk [OPTIONS] TARGET\n"
        "  or:  rspwalk [OPTIONS] --pid N\n"
        "  or:  rspwalk [OPTIONS] --dap\n"
        "  or:  rspwalk [OPTIONS] --rsp-listen HOST:PORT TARGET\n"
        "Walk the call stacks of a program behind a GDB remote stub.\n\n"
        "  TARGET             HOST:PORT | [V6ADDR]:PORT | unix:PATH | /dev/ttyX[@BAUD] | "
        "'|COMMAND'\n\n"
        "Options:\n"
        "  -e, --exe FILE     local copy of the main executable (default: ask the stub)\n"
        "      --sysroot DIR  where target libraries are found locally\n"
        "      --lib-path DIR[:DIR...]  where else to look for a library missing under the\n"
        "                     sysroot, by its file name (gdb's solib-search-path)\n"
        "  -t, --thread ID    walk one thread: pPID.TID (hex, as printed), or the LWP in decimal\n"
        "      --max-threads N  read at most N threads from the stub's list (default 65536);\n"
        "                     more: the first N are walked, with a warning\n"
        "      --all-threads  with more than --max-threads threads, fail instead\n"
        "  -c, --continue     resume the target and walk at its next stop (signal, trap, crash)\n"
        "      --pass LIST    with -c, signals handed to the program without stopping\n"
        "                     (default USR1,USR2,ALRM,CHLD,PIPE,URG,IO,VTALRM,PROF,WINCH; 'none')\n"
        "  -f, --format FMT   text (gdb-like, default), json (the stack document), or the\n"
        "                     merged tree of the walked threads: folded (flamegraph.pl's\n"
        "                     input), dot (STAT's prefix tree, for graphviz), tree (JSON)\n"
        "                     or speedscope; with --sample, json is the tree with counts\n"
        "      --sample SECONDS[@HZ|@max]  stop, walk every thread and resume HZ times a\n"
        "                     second (default 100; max: as fast as the link allows) for\n"
        "                     SECONDS, then print the profile; the target is left as found\n"
        "      --non-stop     with --sample, the link in non-stop mode (gdbserver): the\n"
        "                     threads that ran stopped, walked and resumed apart from the\n"
        "                     parked ones, so that a busy thread is not stopped for them\n"
        "  -n, --max-frames N  stop each walk after N frames (default 4096)\n"
        "      --stats        protocol statistics: packets, bytes each way, round trips, time\n"
        "      --timeout SEC  per request, from its write to the end of its reply, and\n"
        "                     for the stop with -c (default 10)\n"
        "      --deadline SEC  for the whole run, connect to exit (default 300, plus the\n"
        "                     --timeout with -c and the SECONDS of --sample); with --dap\n"
        "                     and --rsp-listen, for each request of the front end\n"
        "      --debug-dir DIR  separate debug files (default /usr/lib/debug)\n"
        "      --cache-dir DIR  where files read from the target, and uncompressed copies\n"
        "                     of compressed debug files, are kept by build-id\n"
        "                     (default $XDG_CACHE_HOME/rspwalk or ~/.cache/rspwalk);\n"
        "                     trusted state: keep it private to you\n"
        "      --cache-max MIB  the cache directory's size limit; the entries least\n"
        "                     recently used go first (default 1024)\n"
        "      --locals       print each frame's parameters and local variables\n"
        "      --lines        with -f json, each frame's source file and line\n"
        "      --no-cache     read every register and memory range from the stub\n"
        "      --no-jit       do not read code the program registers through the GDB\n"
        "                     JIT interface (__jit_debug_descriptor)\n"
        "      --no-maps      do not read the process's memory map (/proc/PID/maps):\n"
        "                     code in no module (V8's) then ends a walk 'corrupt'\n"
        "      --steppers LIST  only these steppers, comma-separated, tried in priority order:\n"
        "                     stackbottom, sighandler, debug, ehabi, frame-func, analysis,\n"
        "                     wanderer (default: all of them)\n"
        "      --attach PID[,PID...]  attach to these processes through an extended-remote\n"
        "                     stub (gdbserver --multi at TARGET), walk every thread of\n"
        "                     each, detach leaving them running\n"
        "      --pid N        walk local process N through '|gdbserver --attach - N' (no\n"
        "                     TARGET), detach leaving it running\n"
        "      --dap          serve the Debug Adapter Protocol on stdin/stdout (no TARGET:\n"
        "                     the client's attach request names it), for editors\n"
        "      --rtos freertos|auto  a bare-metal board's RTOS tasks as threads, read from\n"
        "                     target memory with the symbols of --exe FILE (auto: FreeRTOS\n"
        "                     if the image has its symbols, else the CPU alone)\n"
        "      --rsp-listen HOST:PORT  serve gdb or lldb as a GDB stub on HOST:PORT (loopback\n"
        "                     only), passing its packets through to TARGET and answering\n"
        "                     the stop's register and memory reads from one walk\n"
        "  -h, --help         this text\n"
        "  -V, --version      the version\n",
        f);
}

/* The default of --deadline. */
#define CLI_DEFAULT_DEADLINE_MS 300000

/* OPT's value ARG, seconds (0 < SEC <= 86400), as milliseconds (at least 1)
 * in *MS; -1 with the message on stderr. */
static int
parse_seconds(const char *opt, const char *arg, int *ms)
{
    char *e;
    errno = 0;
    double sec = strtod(arg, &e);
    if (errno || e == arg || *e != '\0' || !(sec > 0) || sec > 86400) {
        fprintf(stderr, "rspwalk: %s: '%s' is not a number of seconds (0 < SEC <= 86400)\n", opt,
                arg);
        return -1;
    }
    *ms = (int)(sec * 1000 + 0.5);
    if (*ms == 0)
        *ms = 1;
    return 0;
}

/* The line the watchdog writes, made before it is armed. */
static char deadline_msg[256];
static size_t deadline_len;

static void
deadline_fire(int sig)
{
    (void)sig;
    ssize_t n = write(STDERR_FILENO, deadline_msg, deadline_len);
    (void)n;
    _exit(EXIT_FAIL);
}

/* The backstop of the run's deadline.  The library fails every request past
 * it (rsp_session_config.deadline_ms) with a message naming the request;
 * this timer, half a second later, ends a run that is past it while working
 * without the link (a stub's answers can make local work long too). */
static void
deadline_arm(const struct cli_opts *o)
{
    int n = snprintf(deadline_msg, sizeof deadline_msg,
                     "rspwalk: %.120s: the run's deadline of %g s has passed\n",
                     o->target != NULL ? o->target : "target", o->deadline_ms / 1000.0);
    deadline_len = n < 0                             ? 0
                   : (size_t)n < sizeof deadline_msg ? (size_t)n
                                                     : sizeof deadline_msg - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = deadline_fire;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        return;
    long ms = (long)o->deadline_ms + 500;
    struct itimerval it = { .it_value = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 } };
    (void)setitimer(ITIMER_REAL, &it, NULL);
}

static int
parse_format(const char *name, enum cli_format *out)
{
    static const struct {
        const char *name;
        enum cli_format format;
    } formats[] = {
        { "text", CLI_TEXT }, { "json", CLI_JSON }, { "folded", CLI_FOLDED },
        { "dot", CLI_DOT },   { "tree", CLI_TREE }, { "speedscope", CLI_SPEEDSCOPE },
    };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(name, formats[i].name) == 0) {
            *out = formats[i].format;
            return 0;
        }
    return -1;
}

static int
parse_signal_list(const char *list, int *sigs, size_t max, size_t *n)
{
    *n = 0;
    if (strcasecmp(list, "none") == 0 || *list == '\0')
        return 0;
    char *copy = strdup(list), *save = NULL;
    if (copy == NULL)
        return -1;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const char *name = strncasecmp(tok, "SIG", 3) == 0 ? tok + 3 : tok;
        int num = -1;
        for (size_t i = 0; i < sizeof gdb_signals / sizeof gdb_signals[0]; i++)
            if (strcasecmp(name, gdb_signals[i].name) == 0)
                num = gdb_signals[i].num;
        if (num < 0 || *n == max) {
            fprintf(stderr, "rspwalk: --pass: unknown signal '%s'\n", tok);
            free(copy);
            return -1;
        }
        sigs[(*n)++] = num;
    }
    free(copy);
    return 0;
}

const char *
cli_signal_name(int gdb_sig)
{
    for (size_t i = 0; i < sizeof gdb_signals / sizeof gdb_signals[0]; i++)
        if (gdb_signals[i].num == gdb_sig)
            return gdb_signals[i].name;
    return NULL;
}

void
cli_print_warnings(struct sw_walker *w)
{
    const char *const *msgs;
    size_t n = sw_libstate_warnings(sw_walker_libstate(w), &msgs);
    for (size_t i = 0; i < n; i++)
        cli_warn_line("warning: ", msgs[i]);
}

static bool
parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    char *e;
    errno = 0;
    if (*s == '-' || *s == '\0')
        return false;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || *e != '\0' || v > max)
        return false;
    *out = v;
    return true;
}

/* Find the thread named by ARG: "pPID.TID" in hex (as rspwalk prints it) or
 * the LWP in decimal. */
static int
find_thread(struct sw_walker *w, const char *arg, const sw_tid *tids, size_t n, sw_tid *out)
{
    struct sw_proc *p = sw_walker_proc(w);
    char label[64];

    for (size_t i = 0; i < n; i++) {
        sw_proc_thread_label(p, tids[i], label, sizeof label);
        if (strcasecmp(label, arg) == 0) {
            *out = tids[i];
            return 0;
        }
    }
    unsigned long long v;
    if (parse_uint(arg, UINT64_MAX, &v)) {
        for (size_t i = 0; i < n; i++)
            if (tids[i] == v) {
                *out = tids[i];
                return 0;
            }
    }
    return -1;
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "exe", required_argument, NULL, 'e' },
        { "sysroot", required_argument, NULL, OPT_SYSROOT },
        { "lib-path", required_argument, NULL, OPT_LIB_PATH },
        { "thread", required_argument, NULL, 't' },
        { "continue", no_argument, NULL, 'c' },
        { "format", required_argument, NULL, 'f' },
        { "max-frames", required_argument, NULL, 'n' },
        { "stats", no_argument, NULL, OPT_STATS },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { "deadline", required_argument, NULL, OPT_DEADLINE },
        { "pass", required_argument, NULL, OPT_PASS },
        { "no-cache", no_argument, NULL, OPT_NO_CACHE },
        { "no-jit", no_argument, NULL, OPT_NO_JIT },
        { "no-maps", no_argument, NULL, OPT_NO_MAPS },
        { "non-stop", no_argument, NULL, OPT_NON_STOP },
        { "locals", no_argument, NULL, OPT_LOCALS },
        { "lines", no_argument, NULL, OPT_LINES },
        { "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
        { "attach", required_argument, NULL, OPT_ATTACH },
        { "pid", required_argument, NULL, OPT_PID },
        { "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
        { "cache-max", required_argument, NULL, OPT_CACHE_MAX },
        { "steppers", required_argument, NULL, OPT_STEPPERS },
        { "sample", required_argument, NULL, OPT_SAMPLE },
        { "dap", no_argument, NULL, OPT_DAP },
        { "rsp-listen", required_argument, NULL, OPT_RSP_LISTEN },
        { "rtos", required_argument, NULL, OPT_RTOS },
        { "max-threads", required_argument, NULL, OPT_MAX_THREADS },
        { "all-threads", no_argument, NULL, OPT_ALL_THREADS },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct cli_opts o = { .format = CLI_TEXT, .timeout_ms = 10000, .start_us = cli_now_us() };
    int deadline_ms = 0; /* 0: the default */
    const char *pass_list = default_pass;
    bool dap = false;
    const char *rsp_listen = NULL;
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":e:t:cf:n:hV", longopts, NULL)) != -1) {
        unsigned long long v;
        switch (c) {
        case 'e':
            o.exe = optarg;
            break;
        case OPT_SYSROOT:
            o.sysroot = optarg;
            break;
        case OPT_LIB_PATH:
            o.lib_path = optarg;
            break;
        case 't':
            o.thread = optarg;
            break;
        case 'c':
            o.cont = true;
            break;
        case 'f':
            if (parse_format(optarg, &o.format) < 0) {
                fprintf(stderr,
                        "rspwalk: --format: '%s' is not one of text, json, folded, dot, tree, "
                        "speedscope\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'n':
            if (!parse_uint(optarg, 1000000, &v) || v == 0) {
                fprintf(stderr, "rspwalk: --max-frames: '%s' is not a number from 1 to 1000000\n",
                        optarg);
                return EXIT_USAGE;
            }
            o.max_frames = (size_t)v;
            break;
        case OPT_STATS:
            o.stats = true;
            break;
        case OPT_LOCALS:
            o.locals = true;
            break;
        case OPT_LINES:
            o.lines = true;
            break;
        case OPT_TIMEOUT:
            if (parse_seconds("--timeout", optarg, &o.timeout_ms) < 0)
                return EXIT_USAGE;
            break;
        case OPT_DEADLINE:
            if (parse_seconds("--deadline", optarg, &deadline_ms) < 0)
                return EXIT_USAGE;
            break;
        case OPT_PASS:
            pass_list = optarg;
            break;
        case OPT_NO_JIT:
            o.no_jit = true;
            break;
        case OPT_NON_STOP:
            o.non_stop = true;
            break;
        case OPT_NO_MAPS:
            o.no_maps = true;
            break;
        case OPT_NO_CACHE:
            o.no_cache = true;
            break;
        case OPT_DEBUG_DIR:
            o.debug_dir = optarg;
            break;
        case OPT_CACHE_DIR:
            o.cache_dir = optarg;
            break;
        case OPT_CACHE_MAX:
            if (!parse_uint(optarg, 1ull << 30, &v) || v == 0) {
                fprintf(stderr, "rspwalk: --cache-max: want a size in MiB, 1 or more, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            o.cache_max_bytes = (uint64_t)v * 1024 * 1024;
            break;
        case OPT_ATTACH:
            o.attach = optarg;
            break;
        case OPT_STEPPERS:
            if (cli_check_steppers(optarg) < 0)
                return EXIT_USAGE;
            o.steppers = optarg;
            break;
        case OPT_SAMPLE:
            if (cli_parse_sample(optarg, &o) < 0)
                return EXIT_USAGE;
            break;
        case OPT_PID:
            if (!parse_uint(optarg, INT_MAX, &v) || v == 0) {
                fprintf(stderr, "rspwalk: --pid: '%s' is not a process id\n", optarg);
                return EXIT_USAGE;
            }
            o.pid = (long long)v;
            break;
        case OPT_DAP:
            dap = true;
            break;
        case OPT_RSP_LISTEN:
            rsp_listen = optarg;
            break;
        case OPT_RTOS:
            if (strcmp(optarg, "freertos") == 0)
                o.rtos = CLI_RTOS_FREERTOS;
            else if (strcmp(optarg, "auto") == 0)
                o.rtos = CLI_RTOS_AUTO;
            else {
                fprintf(stderr, "rspwalk: --rtos: '%s' is not one of freertos, auto\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_MAX_THREADS:
            if (!parse_uint(optarg, 1u << 24, &v) || v == 0) {
                fprintf(stderr, "rspwalk: --max-threads: '%s' is not a number from 1 to %u\n",
                        optarg, 1u << 24);
                return EXIT_USAGE;
            }
            o.max_threads = (size_t)v;
            break;
        case OPT_ALL_THREADS:
            o.all_threads = true;
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case 'V': {
            int ma, mi, pa;
            sw_version(&ma, &mi, &pa);
            printf("rspwalk %d.%d.%d\n", ma, mi, pa);
            return EXIT_OK;
        }
        case ':':
            fprintf(stderr, "rspwalk: option '%s' needs a value\n", argv[optind - 1]);
            return EXIT_USAGE;
        default:
            fprintf(stderr, "rspwalk: unknown option '%s' (see rspwalk --help)\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (parse_signal_list(pass_list, o.pass, sizeof o.pass / sizeof o.pass[0], &o.npass) < 0)
        return EXIT_USAGE;
    if (dap) {
        if (optind != argc || o.pid != 0 || o.attach != NULL || o.cont || o.thread ||
            o.sample_seconds > 0) {
            fprintf(stderr, "rspwalk: --dap takes no TARGET, --pid, --attach, --continue, --thread "
                            "or --sample: the client's attach request names the target\n");
            return EXIT_USAGE;
        }
        /* The client is this user's own editor: it may name commands and
         * devices, as this command line may. */
        struct dap_config dcfg;
        dap_config_init(&dcfg);
        dcfg.allow_local = true;
        dcfg.timeout_ms = o.timeout_ms;
        if (deadline_ms > 0) /* else the adapter's default, per request */
            dcfg.deadline_ms = deadline_ms;
        dcfg.pass = o.pass;
        dcfg.npass = o.npass;
        dcfg.max_frames = o.max_frames;
        dcfg.debug_dir = o.debug_dir;
        dcfg.cache_dir = o.cache_dir;
        dcfg.log = stderr;
        return dap_serve_fd(0, 1, &dcfg) < 0 ? EXIT_FAIL : EXIT_OK;
    }
    if (rsp_listen != NULL) {
        if (dap || optind != argc - 1 || o.pid != 0 || o.attach != NULL || o.cont || o.thread ||
            o.sample_seconds > 0) {
            fprintf(stderr, "rspwalk: --rsp-listen takes one TARGET and no --dap, --pid, --attach, "
                            "--continue, --thread or --sample: the front end drives the target\n");
            return EXIT_USAGE;
        }
        struct door_config rcfg = {
            .listen = rsp_listen,
            .target = argv[optind],
            .exe = o.exe,
            .sysroot = o.sysroot,
            .lib_path = o.lib_path,
            .debug_dir = o.debug_dir,
            .cache_dir = o.cache_dir,
            .timeout_ms = o.timeout_ms,
            /* per front-end packet: the door serves for as long as it is used */
            .deadline_ms = deadline_ms > 0 ? deadline_ms : CLI_DEFAULT_DEADLINE_MS,
            .max_frames = o.max_frames,
            .log = stderr,
        };
        return door_serve(&rcfg) < 0 ? EXIT_FAIL : EXIT_OK;
    }
    char pid_target[64];
    if (o.pid != 0) {
        if (optind != argc || o.attach != NULL || o.cont) {
            fprintf(stderr, "rspwalk: --pid takes no TARGET, --attach or --continue\n");
            return EXIT_USAGE;
        }
        /* gdbserver attaches, speaks RSP on its stdin/stdout, and detaches
         * when we do: no ptrace code of ours. */
        snprintf(pid_target, sizeof pid_target, "|gdbserver --attach - %lld", o.pid);
        o.target = pid_target;
    } else if (optind != argc - 1) {
        fprintf(stderr, "rspwalk: %s (see rspwalk --help)\n",
                optind == argc ? "no TARGET given" : "more than one TARGET given");
        return EXIT_USAGE;
    } else {
        o.target = argv[optind];
    }
    if (o.rtos != CLI_RTOS_NONE && (dap || rsp_listen || o.attach || o.sample_seconds > 0)) {
        fprintf(stderr, "rspwalk: --rtos walks one board's tasks: no --dap, --rsp-listen, "
                        "--attach or --sample\n");
        return EXIT_USAGE;
    }
    if (o.attach != NULL && (o.cont || o.thread)) {
        fprintf(stderr, "rspwalk: --attach walks every thread: no --continue or --thread\n");
        return EXIT_USAGE;
    }
    if (o.non_stop && o.sample_seconds <= 0) {
        fprintf(stderr, "rspwalk: --non-stop samples a thread at a time: it needs --sample\n");
        return EXIT_USAGE;
    }
    if (o.sample_seconds > 0 && (o.attach != NULL || o.thread)) {
        fprintf(stderr, "rspwalk: --sample walks every thread of one process: no --attach or "
                        "--thread\n");
        return EXIT_USAGE;
    }
    /* The run's deadline: the default leaves room for the waits the
     * command line asks for (the stop of -c, the sampling time). */
    double dl = deadline_ms > 0 ? deadline_ms : CLI_DEFAULT_DEADLINE_MS;
    if (deadline_ms == 0 && o.cont)
        dl += o.timeout_ms;
    dl += o.sample_seconds * 1000;
    o.deadline_ms = dl > INT_MAX / 2 ? INT_MAX / 2 : (int)dl;
    deadline_arm(&o);

    return o.attach ? cli_run_attach(&o) : cli_run(&o);
}

/* --rtos: put the RTOS process state over *P, which it takes over.  Returns 1 when it did, 0
 * when --rtos auto found no RTOS or could not read its tasks (*P unchanged), -1 after
 * printing why (*P freed). */
static int
cli_rtos_wrap(const struct cli_opts *o, struct sw_proc **p)
{
    struct sw_errbuf err = { 0 };
    struct sw_proc *rp;
    const char *elf = o->exe ? o->exe : (*p)->exe_path;

    if (elf == NULL) {
        fprintf(stderr, "rspwalk: --rtos: needs --exe FILE, the image the board runs with its "
                        "symbols\n");
        sw_proc_free(*p);
        return -1;
    }
    int rc = sw_proc_rtos_new(*p, o->rtos == CLI_RTOS_AUTO ? SW_RTOS_AUTO : SW_RTOS_FREERTOS, elf,
                              &rp, &err);
    if (rc == SW_ENOENT && o->rtos == CLI_RTOS_AUTO)
        return 0;
    /* auto asks for tasks where there are some: lists that cannot be read (a stop before the
     * kernel set them up) leave the CPU to walk, said on stderr.  A link error ends the run. */
    if (rc < 0 && o->rtos == CLI_RTOS_AUTO && rc != SW_ECONN && rc != SW_ETIMEDOUT &&
        rc != SW_EEXITED && rc != SW_ENOMEM) {
        cli_warn_line("--rtos auto: walking the CPU alone: ", err.msg);
        return 0;
    }
    if (rc < 0) {
        cli_warn_line("--rtos: ", err.msg);
        sw_proc_free(*p);
        return -1;
    }
    *p = rp;
    return 1;
}

/* Connect, optionally resume to the next stop, walk, print. */
int
cli_run(const struct cli_opts *o)
{
    struct rsp_session_config scfg;
    struct rsp_session *s = NULL;
    struct sw_proc *p = NULL;
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    sw_tid *tids = NULL;
    size_t ntids = 0;
    int rc, status = EXIT_FAIL;

    rsp_session_config_init(&scfg);
    scfg.timeout_ms = o->timeout_ms;
    scfg.deadline_ms = o->deadline_ms;
    scfg.no_cache = scfg.no_cache || o->no_cache;
    scfg.max_threads = o->max_threads;
    scfg.non_stop = o->non_stop;
    rc = rsp_session_open(o->target, &scfg, &s, &err);
    if (rc < 0) {
        cli_error("%s", err.msg);
        return EXIT_FAIL;
    }
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = o->exe;
    pcfg.no_cache = pcfg.no_cache || o->no_cache;
    rc = sw_proc_rsp_new(s, &pcfg, &p, &err);
    if (rc < 0) {
        cli_error("%s", err.msg);
        return rc == SW_EEXITED ? EXIT_EXITED : EXIT_FAIL;
    }
    if (p->debug && p->debug->is_terminated(p)) {
        cli_error("%s: the target has already exited", o->target);
        sw_proc_free(p);
        return EXIT_EXITED;
    }
    if (o->cont) {
        rc = sw_proc_rsp_set_pass(p, o->pass, o->npass);
        if (rc == 0)
            rc = p->debug->resume(p, SW_TID_DEFAULT, 0);
        if (rc == 0)
            rc = p->debug->handle_debug_event(p, true);
        if (rc < 0) {
            cli_error("%s: %s", o->target, sw_proc_errmsg(p));
            sw_proc_free(p);
            return rc == SW_EEXITED ? EXIT_EXITED : EXIT_FAIL;
        }
    }

    bool rtos = false;
    if (o->rtos != CLI_RTOS_NONE) {
        rc = cli_rtos_wrap(o, &p);
        if (rc < 0)
            return EXIT_FAIL;
        rtos = rc == 1;
    }

    struct sw_walker_config wcfg = { .sysroot = o->sysroot,
                                     .lib_path = o->lib_path,
                                     .exe = o->exe,
                                     .debug_dir = o->debug_dir,
                                     .max_frames = o->max_frames,
                                     .cache_dir = o->cache_dir,
                                     .cache_max_bytes = o->cache_max_bytes,
                                     .no_jit = o->no_jit,
                                     .no_maps = o->no_maps,
                                     .no_default_steppers = o->steppers != NULL };
    rc = sw_walker_new(p, &wcfg, &w, &err);
    if (rc < 0) {
        cli_error("%s", err.msg);
        return EXIT_FAIL;
    }
    if (cli_add_steppers(o, w) < 0)
        goto out;
    if (rtos && sw_add_stepper(w, sw_rtos_stepper_new(sw_walker_proc(w))) < 0) {
        cli_error("--rtos: %s", sw_walker_errmsg(w));
        goto out;
    }

    if (o->sample_seconds > 0) {
        status = cli_run_sample(o, w) < 0 ? EXIT_FAIL : EXIT_OK;
        cli_print_warnings(w);
        goto out;
    }
    size_t cap = 64;
    for (;;) {
        sw_tid *t = realloc(tids, cap * sizeof *t);
        if (t == NULL) {
            fprintf(stderr, "rspwalk: listing threads: out of memory\n");
            goto out;
        }
        tids = t;
        rc = sw_threads(w, tids, cap, &ntids);
        if (rc < 0) {
            cli_error("listing threads: %s", sw_walker_errmsg(w));
            goto out;
        }
        if (ntids <= cap)
            break;
        cap = ntids;
    }
    if (cli_threads_cut(o, w) < 0)
        goto out;
    if (o->thread) {
        sw_tid one;
        if (find_thread(w, o->thread, tids, ntids, &one) < 0) {
            cli_error("thread %s: no such thread in the target (%zu thread%s)", o->thread, ntids,
                      ntids == 1 ? "" : "s");
            goto out;
        }
        tids[0] = one;
        ntids = 1;
    }
    status = cli_print_walks(o, w, tids, ntids) < 0 ? EXIT_FAIL : EXIT_OK;
    cli_print_warnings(w);
    if (o->pid != 0) {
        /* --pid: leave the process running, as it was found. */
        struct sw_proc *wp = sw_walker_proc(w);
        if (wp->debug->detach(wp, false) < 0) {
            cli_error("detaching from process %lld: %s", o->pid, sw_proc_errmsg(wp));
            status = EXIT_FAIL;
        }
    }

out:
    free(tids);
    sw_walker_free(w); /* closes the link without detaching: the target stays as it is */
    return status;
}
