#!/usr/bin/env bash
# tests/integration/run-multi.sh -- many processes on one link, and --pid.
#
# Four sleeping two-thread processes (a tiny C program built here) under one
# `gdbserver --multi 127.0.0.1:0`: one `rspwalk --attach P1,P2,P3,P4` walks every thread of
# every process (JSON "processes"), names the sleepers' functions, and detaches leaving them
# running (/proc/PID/stat state not 't'/'T').  Then `rspwalk --pid P1` walks one of them
# through '|gdbserver --attach - P1' and leaves it running too.  Kills only the pids it
# started; loopback only.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
RSPWALK=${RSPWALK:-$root/build/release/rspwalk}
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

if ! command -v gdbserver >/dev/null; then
    echo "FAIL multi/attach-four: missing peer: gdbserver (apt-get install gdbserver)"
    echo "FAIL multi/pid: missing peer: gdbserver"
    exit 1
fi
cat >"$work/sleeper.c" <<'C'
#include <pthread.h>
#include <time.h>
__attribute__((noinline)) void sleeper_inner(void)
{
    struct timespec ts = { 3600, 0 };
    nanosleep(&ts, 0);
}
__attribute__((noinline)) void sleeper_outer(void)
{
    sleeper_inner();
    __asm__ volatile("");
}
static void *sleeper_thread(void *a)
{
    (void)a;
    sleeper_outer();
    return 0;
}
int main(void)
{
    pthread_t t;
    pthread_create(&t, 0, sleeper_thread, 0);
    sleeper_outer();
    return 0;
}
C
if ! cc -g -O0 -pthread -o "$work/sleeper" "$work/sleeper.c" 2>"$work/cc.err"; then
    echo "FAIL multi/attach-four: cannot build the sleeper: $(head -c 300 "$work/cc.err")"
    exit 1
fi
for _ in 1 2 3 4; do
    "$work/sleeper" &
    pids+=($!)
done
sleep 0.3

running() { # every pid alive and not stopped or traced
    local p st
    for p in "$@"; do
        st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
        case $st in "" | t | T | Z) echo "$p:${st:-gone}"; return 1 ;; esac
    done
}

# check JSON NPROC: every process has 2 threads walked to the bottom through the sleeper.
check_json() {
    python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
procs = d["processes"] if "processes" in d else [{"pid": 0, "threads": d["threads"]}]
assert len(procs) == n, [p["pid"] for p in procs]
for p in procs:
    assert len(p["threads"]) == 2, (p["pid"], len(p["threads"]))
    for t in p["threads"]:
        names = [f["function"] for f in t["frames"]]
        assert "sleeper_inner" in names and "sleeper_outer" in names, names
        assert t["end"] == "bottom", (p["pid"], t["end"], names)
    mains = [t for t in p["threads"] if "main" in [f["function"] for f in t["frames"]]]
    assert len(mains) == 1, p["pid"]
PY
}

start=$(date +%s%N)
gdbserver --multi 127.0.0.1:0 >"$work/gs.log" 2>&1 &
gs=$!
port=
for _ in $(seq 50); do
    port=$(grep -o 'Listening on port [0-9]*' "$work/gs.log" | head -1 | awk '{print $4}')
    [ -n "$port" ] && break
    sleep 0.1
done
list=$(IFS=,; echo "${pids[*]}")
why=
if [ -z "$port" ]; then
    why="gdbserver --multi did not listen: $(head -c 300 "$work/gs.log")"
elif timeout 60 "$RSPWALK" --attach "$list" -f json --sysroot / "127.0.0.1:$port" \
    >"$work/multi.json" 2>"$work/multi.err"; rc=$?; [ "$rc" -ne 0 ]; then
    why="rspwalk --attach exited $rc: $(head -c 300 "$work/multi.err")"
elif ! check_json "$work/multi.json" 4 >"$work/check.err" 2>&1; then
    why="unexpected walk: $(tail -1 "$work/check.err")"
elif ! bad=$(running "${pids[@]}"); then
    why="not running after the detach: $bad"
fi
ms=$((($(date +%s%N) - start) / 1000000))
if [ -z "$why" ]; then echo "PASS multi/attach-four ($ms ms)"; else echo "FAIL multi/attach-four: $why"; fi
failed=${why:+1}
kill -TERM "$gs" 2>/dev/null
wait "$gs" 2>/dev/null
gs=

start=$(date +%s%N)
why=
if timeout 60 "$RSPWALK" --pid "${pids[0]}" -f json --sysroot / \
    >"$work/pid.json" 2>"$work/pid.err"; rc=$?; [ "$rc" -ne 0 ]; then
    why="rspwalk --pid exited $rc: $(head -c 300 "$work/pid.err")"
elif ! check_json "$work/pid.json" 1 >"$work/check.err" 2>&1; then
    why="unexpected walk: $(tail -1 "$work/check.err")"
else
    sleep 0.2
    bad=$(running "${pids[0]}") || why="not running after the detach: $bad"
fi
ms=$((($(date +%s%N) - start) / 1000000))
if [ -z "$why" ]; then echo "PASS multi/pid ($ms ms)"; else echo "FAIL multi/pid: $why"; failed=1; fi
[ -z "$failed" ]
