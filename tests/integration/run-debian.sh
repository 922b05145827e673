#!/usr/bin/env bash
# tests/integration/run-debian.sh -- Debian's own programs, stopped from outside, against gdb.
#
# Programs no one here wrote, as Debian ships them (x86_64 host, gdbserver), walked through
# their libraries with `rspwalk -f json --sysroot /`, every thread compared with
# gdb-multiarch's backtrace of the same stop (gdb_oracle.sh, debian_compare.py):
#   debian/python3-sleep       /usr/bin/python3 -c 'import time; time.sleep(600)'
#   debian/sleep               /usr/bin/sleep 600 (stripped, no debug file in Debian's archive)
#   debian/python3-threads     /usr/bin/python3 with six threads blocked in libc: time.sleep,
#                              Event.wait, Lock.acquire, Queue.get, select.select, socket.recv
# each stopped by `gdbserver --attach` (ptrace's SIGSTOP to every thread), and
#   debian/sleep-sigint        /usr/bin/sleep run by gdbserver; `rspwalk -c` resumes it and walks
#   debian/python3-threads-sigint  at the stop a SIGINT sent from outside causes; gdb then
#                              looks at that same stop.
# libc6-dbg and python3.11-dbg (scripts/deps) give gdb and rspwalk the debug files of libc
# and of the interpreter (inline and tail-call frames, LTO-private names); /usr/bin/sleep
# has only its .eh_frame.  Every frame of gdb's is compared, its tail-call frames across
# files included (python3.11 -> sem_wait -> __new_sem_wait_slow64: debian_compare.py).  Kills
# only the pids it started; loopback only.  Env: RSPWALK, IT_TIMEOUT (seconds per run,
# default 60), IT_KEEP=1 (keep artifacts of passed cases).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RSPWALK=${RSPWALK:-$root/build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
IT_KEEP=${IT_KEEP:-0}
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-debian.XXXXXX")
prog_pid=
gs_pid=
failed=0

stop_all() {
    [ -n "$prog_pid" ] && kill -KILL "$prog_pid" 2>/dev/null
    if [ -n "$gs_pid" ]; then
        kill -TERM "$gs_pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$gs_pid" 2>/dev/null || break; sleep 0.05; done
        kill -KILL "$gs_pid" 2>/dev/null
    fi
    wait 2>/dev/null
    prog_pid=
    gs_pid=
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

PYTHON=/usr/bin/python3
SLEEP=/usr/bin/sleep
THREADS_PY='
import queue, select, socket, threading, time
ev = threading.Event()
lock = threading.Lock()
lock.acquire()
q = queue.Queue()
a, b = socket.socketpair()
for target, args in ((time.sleep, (600,)), (ev.wait, ()), (lock.acquire, ()), (q.get, ()),
                     (select.select, ([a], [], [], 600)), (a.recv, (10,))):
    threading.Thread(target=target, args=args, daemon=True).start()
time.sleep(600)
'

# missing_peers: one line naming the first missing peer and its package, status 1.
missing_peers() {
    local spec
    for spec in gdbserver:gdbserver gdb-multiarch:gdb-multiarch "$PYTHON:python3" \
        "$SLEEP:coreutils" readelf:binutils; do
        if ! command -v "${spec%%:*}" >/dev/null 2>&1; then
            echo "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
            return 1
        fi
    done
    # The debug files the --need names and gdb's inline frames come from.
    local file pkg id
    for spec in "$(readlink -f "$PYTHON"):python3.11-dbg" \
        /lib/x86_64-linux-gnu/libc.so.6:libc6-dbg; do
        file=${spec%%:*} pkg=${spec#*:}
        id=$(readelf -n "$file" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\)/\1/p')
        if [ ! -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
            echo "missing peer: the debug file of $file (apt-get install $pkg)"
            return 1
        fi
    done
    if [ ! -x "$RSPWALK" ]; then
        echo "rspwalk not built: $RSPWALK (make build/release/rspwalk)"
        return 1
    fi
}

# settled PID NTHREADS: wait until PID has NTHREADS threads, all asleep in the kernel.
settled() {
    local i n=0 st tasks
    for ((i = 0; i < 200; i++)); do
        tasks=("/proc/$1/task"/*)
        [ -e "${tasks[0]}" ] && n=${#tasks[@]}
        if [ "$n" -eq "$2" ]; then
            st=$(cat /proc/"$1"/task/*/stat 2>/dev/null | awk '{print $3}' | sort -u | tr -d '\n')
            [ "$st" = S ] && return 0
        fi
        sleep 0.05
    done
    echo "$1 did not settle: $n threads (want $2), states '${st:-?}'"
    return 1
}

# gs_port LOG: the port gdbserver printed, waiting for it.
gs_port() {
    local i port
    for ((i = 0; i < 100; i++)); do
        port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$1")
        [ -n "$port" ] && echo "$port" && return 0
        kill -0 "$gs_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "gdbserver did not listen: $(tail -n 1 "$1")" >&2
    return 1
}

# oracle_and_compare DIR PORT EXE COMPARE_ARGS...: gdb on the same stop, then the comparison.
oracle_and_compare() {
    local dir=$1 port=$2 exe=$3 rc
    shift 3
    ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log ORACLE_SYSROOT=/ \
        "$here/gdb_oracle.sh" "127.0.0.1:$port" "$exe" >"$dir/oracle.json" 2>"$dir/oracle.err"
    rc=$?
    stop_all
    if [ "$rc" != 0 ]; then
        echo "gdb oracle failed ($rc): $(head -n 1 "$dir/oracle.err")"
        return 1
    fi
    python3 "$here/debian_compare.py" --exe "$exe" "$@" "$dir/rspwalk.json" "$dir/oracle.json"
}

# attach_case DIR NTHREADS COMPARE_ARGS... -- PROG ARGS...: start PROG, let it settle, stop
# it with gdbserver --attach, walk, compare.
attach_case() {
    local dir=$1 nthreads=$2 port rc cmp=()
    shift 2
    while [ "$1" != -- ]; do cmp+=("$1") && shift; done
    shift
    missing_peers || return 1
    "$@" </dev/null >"$dir/prog.out" 2>&1 &
    prog_pid=$!
    settled "$prog_pid" "$nthreads" || return 1
    gdbserver --attach 127.0.0.1:0 "$prog_pid" </dev/null >"$dir/gdbserver.log" 2>&1 &
    gs_pid=$!
    port=$(gs_port "$dir/gdbserver.log") || return 1
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --sysroot / "127.0.0.1:$port" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    oracle_and_compare "$dir" "$port" "$1" --threads "$nthreads" "${cmp[@]}"
}

# sigint_case DIR NTHREADS COMPARE_ARGS... -- PROG ARGS...: PROG under gdbserver; rspwalk -c
# resumes it and waits; once every thread sleeps, SIGINT from outside stops it.
sigint_case() {
    local dir=$1 nthreads=$2 port rc walk cmp=() inferior i
    shift 2
    while [ "$1" != -- ]; do cmp+=("$1") && shift; done
    shift
    missing_peers || return 1
    gdbserver 127.0.0.1:0 "$@" </dev/null >"$dir/gdbserver.log" 2>&1 &
    gs_pid=$!
    port=$(gs_port "$dir/gdbserver.log") || return 1
    inferior=$(sed -n 's/^Process .* created; pid = \([0-9][0-9]*\)$/\1/p' "$dir/gdbserver.log")
    prog_pid=$inferior
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -c -f json --sysroot / "127.0.0.1:$port" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err" &
    walk=$!
    # Resumed by rspwalk (no longer 't', traced-stopped) and settled: then the signal.
    for ((i = 0; i < 200; i++)); do
        [ "$(awk '{print $3}' "/proc/$inferior/stat" 2>/dev/null)" = t ] || break
        sleep 0.05
    done
    settled "$inferior" "$nthreads" || return 1
    kill -INT "$inferior"
    wait "$walk"
    rc=$?
    if [ "$rc" != 0 ]; then
        echo "rspwalk -c exited $rc: $(head -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    oracle_and_compare "$dir" "$port" "$1" --threads "$nthreads" "${cmp[@]}"
}

# run_case NAME FUNCTION ARGS...: one line, PASS or FAIL with details; artifacts of a failed
# case in build/integration/debian/NAME/.
run_case() {
    local name=$1 dir=$work/$1 start rc keep
    shift
    mkdir -p "$dir"
    start=$(date +%s%N)
    "$@" "$dir" >"$dir/why.txt" 2>&1
    rc=$?
    stop_all
    keep=$root/build/integration/debian/$name
    rm -rf "$keep"
    if [ "$rc" != 0 ] || [ "$IT_KEEP" = 1 ]; then
        mkdir -p "$keep" && cp -r "$dir/." "$keep/"
    fi
    if [ "$rc" = 0 ]; then
        echo "PASS debian/$name ($((($(date +%s%N) - start) / 1000000)) ms): $(tail -n 1 "$dir/why.txt")"
        return 0
    fi
    failed=$((failed + 1))
    echo "FAIL debian/$name: $(head -n 1 "$dir/why.txt")"
    tail -n +2 "$dir/why.txt" | head -n 80 | sed 's/^/    /'
    echo "    (artifacts: build/integration/debian/$name/)"
}

py_sleep() {
    attach_case "$1" 1 --need time_sleep --need clock_nanosleep --need Py_BytesMain -- \
        "$PYTHON" -c 'import time; time.sleep(600)'
}
sleep_attach() {
    attach_case "$1" 1 --need clock_nanosleep --need __libc_start_main -- "$SLEEP" 600
}
py_threads() {
    attach_case "$1" 7 --need time_sleep --need select_select_impl --need sock_recv \
        --need PyThread_acquire_lock_timed --need __new_sem_wait --need start_thread -- \
        "$PYTHON" -c "$THREADS_PY"
}
sleep_sigint() {
    sigint_case "$1" 1 --need clock_nanosleep -- "$SLEEP" 600
}
py_threads_sigint() {
    sigint_case "$1" 7 --need time_sleep --need start_thread -- "$PYTHON" -c "$THREADS_PY"
}

run_case python3-sleep py_sleep
run_case sleep sleep_attach
run_case python3-threads py_threads
run_case sleep-sigint sleep_sigint
run_case python3-threads-sigint py_threads_sigint
[ "$failed" = 0 ]
