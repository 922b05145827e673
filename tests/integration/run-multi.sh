#!/usr/bin/env bash
# tests/integration/run-multi.sh -- many processes on one link, and --pid.
#
# The judged case of walker sets: four processes, four threads each, under one
# `gdbserver --multi 127.0.0.1:0`; one `rspwalk --attach P1,P2,P3,P4` walks every thread of
# every process (JSON "processes") and detaches leaving them running.  The program (built here)
# parks each thread in its own chain inside a blocking call -- main in nanosleep, the others in
# read, nanosleep and pthread_cond_wait -- so the stacks stay still after the detach, and it
# carries the stack it expects (.rspwalk_expect, as fixtures/src/fixture.c does).  Checks:
#   attach-four   rspwalk's exit status, four processes with four threads each;
#   process-N     each process: compare.py against the expectation and against gdb-multiarch's
#                 own walk of the same process (gdb -p PID after rspwalk detached), thread by
#                 thread (matched by LWP) and frame by frame;
#   running       after the detach every thread of every process is neither stopped nor
#                 traced (/proc/PID/task/TID/stat, TracerPid 0), and the main thread, which
#                 sleeps 20 ms at a time, goes on waking (its voluntary context switches grow);
#   warnings      with a wrong libc.so.6 in --sysroot, --attach prints the build-id warning
#                 once, as a single walk does;
#   pid           `rspwalk --pid P1` walks one through '|gdbserver --attach - P1', left running;
#   vrun          pd_drive.c starts two processes with vRun over one `gdbserver --multi` link,
#                 walks each at its entry (_start), detaches both (D;PID): they run on, untraced,
#                 and end (pd_guest.c, one second of naps).
# Kills only the pids it started; loopback only.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
RSPWALK=${RSPWALK:-$root/build/release/rspwalk}
IT=$root/tests/integration
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-multi.XXXXXX")
pids=()
gs=
cleanup() {
    [ -n "$gs" ] && kill -TERM "$gs" 2>/dev/null
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
failed=
report() { # report NAME WHY START
    local ms=$((($(date +%s%N) - $3) / 1000000))
    if [ -z "$2" ]; then echo "PASS multi/$1 ($ms ms)"; else echo "FAIL multi/$1: $2"; failed=1; fi
}

for peer in gdbserver:gdbserver gdb-multiarch:gdb-multiarch python3:python3 readelf:binutils; do
    if ! command -v "${peer%%:*}" >/dev/null; then
        echo "FAIL multi/attach-four: missing peer: ${peer%%:*} (apt-get install ${peer#*:})"
        exit 1
    fi
done
cat >"$work/sleeper.c" <<'C'
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#define FN __attribute__((noinline, noipa))
__attribute__((used, section(".rspwalk_expect"))) const char expect[] =
    "stop: 1\nmain: m_inner m_outer main\nthread: t1_inner t1_outer t1_main\n"
    "thread: t2_inner t2_mid t2_outer t2_main\nthread: t3_inner t3_outer t3_main\n";
volatile int g_sink;
volatile unsigned long g_ticks; /* main counts its short sleeps: the process runs */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ready_cv = PTHREAD_COND_INITIALIZER, g_never = PTHREAD_COND_INITIALIZER;
static int g_ready, g_pipe[2];
static void ready(void)
{
    pthread_mutex_lock(&g_lock);
    g_ready++;
    pthread_cond_broadcast(&g_ready_cv);
    pthread_mutex_unlock(&g_lock);
}
FN int t1_inner(int x) { char b; ready(); g_sink = (int)read(g_pipe[0], &b, 1); return x + g_sink; }
FN int t1_outer(int x) { g_sink = t1_inner(x + 1); return g_sink + 1; }
FN void *t1_main(void *a) { g_sink = t1_outer(a != 0); return 0; }
FN int t2_inner(int x)
{
    struct timespec ts = { 3600, 0 };
    ready();
    g_sink = nanosleep(&ts, 0);
    return x + g_sink;
}
FN int t2_mid(int x) { g_sink = t2_inner(x + 1); return g_sink + 1; }
FN int t2_outer(int x) { g_sink = t2_mid(x + 1); return g_sink + 1; }
FN void *t2_main(void *a) { g_sink = t2_outer(a != 0); return 0; }
FN int t3_inner(int x)
{
    pthread_mutex_lock(&g_lock);
    g_ready++;
    pthread_cond_broadcast(&g_ready_cv);
    g_sink = pthread_cond_wait(&g_never, &g_lock);
    pthread_mutex_unlock(&g_lock);
    return x + g_sink;
}
FN int t3_outer(int x) { g_sink = t3_inner(x + 1); return g_sink + 1; }
FN void *t3_main(void *a) { g_sink = t3_outer(a != 0); return 0; }
/* Short sleeps: the main thread is almost always inside nanosleep, and its context switches
 * show that it runs. */
FN int m_inner(int x)
{
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    for (;;) {
        g_sink = nanosleep(&ts, 0);
        g_ticks++;
    }
    return x;
}
FN int m_outer(int x) { g_sink = m_inner(x + 1); return g_sink + 1; }
int main(void)
{
    pthread_t t[3];
    if (pipe(g_pipe) != 0 || pthread_create(&t[0], 0, t1_main, 0) ||
        pthread_create(&t[1], 0, t2_main, 0) || pthread_create(&t[2], 0, t3_main, 0))
        return 2;
    pthread_mutex_lock(&g_lock);
    while (g_ready < 3)
        pthread_cond_wait(&g_ready_cv, &g_lock);
    pthread_mutex_unlock(&g_lock);
    g_sink = m_outer(1);
    return 0;
}
C
prog=$work/sleeper
if ! cc -g -O0 -fno-omit-frame-pointer -pthread -o "$prog" "$work/sleeper.c" 2>"$work/cc.err"; then
    echo "FAIL multi/attach-four: cannot build the sleeper: $(head -c 300 "$work/cc.err")"
    exit 1
fi
for _ in 1 2 3 4; do
    "$prog" </dev/null >/dev/null 2>&1 &
    pids+=($!)
done
sleep 0.5

# running PID...: every thread of every pid alive, not stopped and not traced.
running() {
    local p t st tracer
    for p in "$@"; do
        for t in /proc/"$p"/task/*; do
            st=$(awk '{print $3}' "$t/stat" 2>/dev/null)
            tracer=$(awk '/^TracerPid:/ {print $2}' "$t/status" 2>/dev/null)
            case $st in "" | t | T | Z) echo "$p/${t##*/}:${st:-gone}"; return 1 ;; esac
            [ "$tracer" = 0 ] || { echo "$p/${t##*/}: traced by $tracer"; return 1; }
        done
    done
}
# switches PID: the main thread's voluntary context switches (it wakes every 20 ms).
switches() { awk '/^voluntary_ctxt_switches:/ {print $2}' "/proc/$1/task/$1/status"; }

# gs_multi: a gdbserver --multi of ours on a free port; sets gs and port.
gs_multi() {
    : >"$work/gs.log"
    gdbserver --multi 127.0.0.1:0 </dev/null >"$work/gs.log" 2>&1 &
    gs=$!
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$work/gs.log")
        [ -n "$port" ] && break
        sleep 0.05
    done
}
gs_end() { [ -n "$gs" ] && kill -TERM "$gs" 2>/dev/null && wait "$gs" 2>/dev/null; gs=; }

# 1. The judged case.
start=$(date +%s%N)
gs_multi
list=$(IFS=,; echo "${pids[*]}")
why=
if [ -z "$port" ]; then
    why="gdbserver --multi did not listen: $(head -c 300 "$work/gs.log")"
elif timeout 60 "$RSPWALK" --attach "$list" -f json --sysroot / "127.0.0.1:$port" \
    >"$work/multi.json" 2>"$work/multi.err"; rc=$?; [ "$rc" -ne 0 ]; then
    why="rspwalk --attach exited $rc: $(head -c 300 "$work/multi.err")"
elif ! python3 - "$work/multi.json" "$work" "${pids[@]}" >"$work/split.err" 2>&1 <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
want = [int(p) for p in sys.argv[3:]]
procs = d.get("processes")
assert procs is not None, "no \"processes\" in the JSON"
assert sorted(p["pid"] for p in procs) == sorted(want), [p["pid"] for p in procs]
for p in procs:
    assert len(p["threads"]) == 4, "process %d: %d threads, want 4" % (p["pid"], len(p["threads"]))
    one = {"version": d["version"], "arch": d["arch"], "pid": p["pid"], "threads": p["threads"]}
    json.dump(one, open("%s/rsp-%d.json" % (sys.argv[2], p["pid"]), "w"))
PY
    why="unexpected JSON: $(tail -1 "$work/split.err")"
fi
gs_end
report attach-four "$why" "$start"

# 2. Each process against the expectation and against gdb, after rspwalk let them go.
if [ -z "$why" ]; then
    for p in "${pids[@]}"; do
        start=$(date +%s%N)
        why=
        timeout -k 5 60 gdb-multiarch -nx -batch -ex 'set debuginfod enabled off' \
            -ex 'set sysroot /' -ex 'set backtrace past-main on' -ex 'set pagination off' \
            -ex 'set confirm off' -ex "source $IT/oracle.py" -ex "attach $p" \
            -ex "rspwalk-oracle $work/gdb-$p.json" -ex detach </dev/null >"$work/gdb-$p.log" 2>&1
        if [ ! -s "$work/gdb-$p.json" ]; then
            why="gdb produced no frames: $(grep -v '^warning' "$work/gdb-$p.log" | tail -1)"
        elif ! python3 "$IT/compare.py" --exe "$prog" --main-lwp "$p" "$work/rsp-$p.json" \
            "$work/gdb-$p.json" >"$work/cmp-$p.out" 2>&1; then
            why="$(head -1 "$work/cmp-$p.out")"
            sed -n '2,40p' "$work/cmp-$p.out" | sed 's/^/    /' >&2
        fi
        report "process-$p" "$why" "$start"
    done
fi

# 3. Left running: no thread stopped or traced, and main's sleep loop goes on.
start=$(date +%s%N)
why=
before=$(switches "${pids[0]}")
sleep 0.3
if ! bad=$(running "${pids[@]}"); then
    why="not running after the detach: $bad"
elif [ "$(switches "${pids[0]}")" -le "$before" ]; then
    why="process ${pids[0]}: main thread made no progress in 300 ms"
fi
report running "$why" "$start"

# 4. Library warnings: a wrong libc in the sysroot is said once for the four processes.
start=$(date +%s%N)
why=
mkdir -p "$work/wrong/lib/x86_64-linux-gnu"
cp /lib/x86_64-linux-gnu/libm.so.6 "$work/wrong/lib/x86_64-linux-gnu/libc.so.6"
warning="rspwalk: warning: /lib/x86_64-linux-gnu/libc.so.6: local file's build-id differs from the target's; not used"
gs_multi
if timeout 60 "$RSPWALK" --attach "$list" -f json --sysroot "$work/wrong" \
    --cache-dir "$work/cache" "127.0.0.1:$port" >"$work/wrong.json" 2>"$work/wrong.err"; rc=$?; [ "$rc" -ne 0 ]; then
    why="rspwalk --attach exited $rc: $(head -c 300 "$work/wrong.err")"
elif [ "$(grep -cxF "$warning" "$work/wrong.err")" -ne 1 ]; then
    why="want the build-id warning once, got: $(head -c 400 "$work/wrong.err")"
fi
gs_end
report warnings "$why" "$start"

# 5. --pid: one process through '|gdbserver --attach - PID', left running.
start=$(date +%s%N)
why=
if timeout 60 "$RSPWALK" --pid "${pids[0]}" -f json --sysroot / \
    >"$work/pid.json" 2>"$work/pid.err"; rc=$?; [ "$rc" -ne 0 ]; then
    why="rspwalk --pid exited $rc: $(head -c 300 "$work/pid.err")"
elif ! python3 "$IT/compare.py" --exe "$prog" --main-lwp "${pids[0]}" --expect-only \
    "$work/pid.json" >"$work/cmp-pid.out" 2>&1; then
    why="$(head -1 "$work/cmp-pid.out")"
else
    sleep 0.2
    bad=$(running "${pids[0]}") || why="not running after the detach: $bad"
fi
report pid "$why" "$start"

# 6. vRun: two processes started over one extended-remote link, walked at their entry.
start=$(date +%s%N)
why=
if ! cc -std=c11 -Wall -Wextra -Werror -I"$root/include" -o "$work/pd_drive" "$IT/pd_drive.c" \
    "$root/build/release/librspwalk.a" -lelf -ldwarf -lcapstone -lexpat -lz 2>"$work/cc.err" ||
    ! cc -O0 -g -fno-omit-frame-pointer -o "$work/guest" "$IT/pd_guest.c" 2>>"$work/cc.err"; then
    why="cannot build pd_drive.c or pd_guest.c: $(head -c 300 "$work/cc.err")"
else
    gs_multi
    timeout 60 "$work/pd_drive" run "127.0.0.1:$port" "$work/guest" 20 >"$work/vrun.out" 2>&1
    rc=$?
    mapfile -t run_pids < <(sed -n 's/^started \([0-9][0-9]*\)$/\1/p' "$work/vrun.out")
    if [ "$rc" -ne 0 ] || [ "${#run_pids[@]}" -ne 2 ]; then
        why="pd_drive run exited $rc: $(tr '\n' ' ' <"$work/vrun.out" | head -c 300)"
    else
        for p in "${run_pids[@]}"; do
            grep -qx "walk run-$p $p: _start (bottom)" "$work/vrun.out" ||
                why="process $p not walked at its entry: $(grep "^walk run-$p" "$work/vrun.out")"
            grep -qx "detached $p" "$work/vrun.out" || why="process $p not detached"
        done
        [ -z "$why" ] && ! bad=$(running "${run_pids[@]}") && why="not running after the detach: $bad"
        # Each naps 20 x 50 ms, then exits: a zombie of gdbserver's, or gone.
        for p in "${run_pids[@]}"; do
            for _ in $(seq 100); do
                st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
                [ -z "$st" ] || [ "$st" = Z ] && break
                sleep 0.05
            done
            [ -z "$why" ] && [ -n "$st" ] && [ "$st" != Z ] && why="process $p did not end (state $st)"
        done
    fi
    gs_end
fi
report vrun "$why" "$start"
[ -z "$failed" ]
