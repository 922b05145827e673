#!/usr/bin/env bash
# tests/integration/run-stripped.sh -- Debian's x86-64 programs without symbols and without CFI.
# gzip -9, sha256sum and xz (its work in liblzma.so.5) run from copies stripped of .symtab,
# .eh_frame and .eh_frame_hdr (objcopy), stopped by gdbserver --attach at random moments of
# busy work; rspwalk walks them with nothing but the code (the analysis stepper over the
# extents analysis_starts.c finds).  Judged by stripped_check.py against the same stop walked
# with Debian's files (their CFI) in a sysroot, by rspwalk and by gdb: every return address
# follows a call, the walk reaches __libc_start_call_main and ends at the bottom, the frames
# are those of both walks with CFI.  IT_SEED (default 1) seeds the delays (each case names
# its delay); IT_STOPS stops per program (default 3), IT_PROGS which (default all three).
# Then the fixtures built without CFI (IT_FIXTURES, default chain tail alloca sigleaf
# coldbig; dyn and static) stripped, against the walk with their symbols.  Kills only the pids it started.
# Env: RSPWALK, IT_TIMEOUT (seconds per run, default 60), IT_KEEP=1 (keep artifacts).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RSPWALK=${RSPWALK:-$root/build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
IT_KEEP=${IT_KEEP:-0}
IT_STOPS=${IT_STOPS:-3}
RANDOM=${IT_SEED:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-stripped.XXXXXX")
oracle=$work/oracle
prog_pid=
gs_pid=
failed=0

# stop_all: the program, then its gdbserver.  Both are disowned when started: their deaths
# print no job notice into a case's output, and a traced program is reaped by its tracer
# first (a `wait` for it would hang while gdbserver lives).
stop_all() {
    [ -n "$prog_pid" ] && kill -KILL "$prog_pid" 2>/dev/null
    if [ -n "$gs_pid" ]; then
        kill -TERM "$gs_pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$gs_pid" 2>/dev/null || break; sleep 0.05; done
        kill -KILL "$gs_pid" 2>/dev/null
    fi
    prog_pid=
    gs_pid=
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

LZMA=/lib/x86_64-linux-gnu/liblzma.so.5

# missing_peers: one line naming the first missing peer and its package, status 1.
missing_peers() {
    local spec
    for spec in gdbserver:gdbserver gdb-multiarch:gdb-multiarch objcopy:binutils \
        /usr/bin/gzip:gzip /usr/bin/sha256sum:coreutils /usr/bin/xz:xz-utils "$LZMA:liblzma5"; do
        if ! command -v "${spec%%:*}" >/dev/null 2>&1 && [ ! -e "${spec%%:*}" ]; then
            echo "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
            return 1
        fi
    done
    if [ ! -x "$RSPWALK" ]; then
        echo "rspwalk not built: $RSPWALK (make build/release/rspwalk)"
        return 1
    fi
}

# setup: the stripped copies under $work/{bin,lib}, Debian's files at the same paths under
# the oracle sysroot, the input.
setup() {
    missing_peers || return 1
    mkdir -p "$work/bin" "$work/lib" "$oracle$work/bin" "$oracle$work/lib" || return 1
    local d f
    # Real copies, no links out of the sysroot (rspwalk keeps to it).
    mkdir -p "$oracle/lib/x86_64-linux-gnu" "$oracle/lib64" || return 1
    cp -L /lib/x86_64-linux-gnu/libc.so.6 "$oracle/lib/x86_64-linux-gnu/" || return 1
    cp -L /lib64/ld-linux-x86-64.so.2 "$oracle/lib64/" || return 1
    for f in /usr/bin/gzip /usr/bin/sha256sum /usr/bin/xz "$LZMA"; do
        case $f in
        */lib/*) d=lib ;;
        *) d=bin ;;
        esac
        cp -L "$f" "$oracle$work/$d/" || return 1
        if ! objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr --strip-all \
            "$f" "$work/$d/$(basename "$f")" 2>"$work/objcopy.err"; then
            echo "objcopy $f: $(head -n 1 "$work/objcopy.err")"
            return 1
        fi
    done
    # Text that compresses some (base64 of random bytes): gzip -9 and xz work on it for
    # seconds; sha256sum reads it, then /dev/zero until it is killed (with SHA extensions it
    # reads the input alone in a fraction of a second).
    head -c 48000000 /dev/urandom | base64 >"$work/input" || return 1
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

# gdb_walk DIR PORT PROG: gdb's walk of the stop (oracle.py's JSON in DIR/oracle.json) with
# Debian's files.  gdb_oracle.sh's commands, but the program's symbols are loaded at the bias
# the maps show: gdb does not relocate an executable whose program headers differ from the
# running one's (objcopy dropped PT_GNU_EH_FRAME), and would read its CFI unrelocated.
gdb_walk() {
    local dir=$1 port=$2 prog=$3 bias
    bias=$(awk -v f="$work/bin/$prog" '$6 == f && $3 == "00000000" { split($1, a, "-");
        print "0x" a[1]; exit }' "$dir/maps")
    if [ -z "$bias" ]; then
        echo "no mapping of $work/bin/$prog in the maps" >"$dir/gdb.log"
        return 1
    fi
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch \
        -ex 'set debuginfod enabled off' -ex "set sysroot $oracle" \
        -ex 'set backtrace past-main on' -ex 'set pagination off' -ex 'set confirm off' \
        -ex "source $here/oracle.py" -ex "target remote 127.0.0.1:$port" \
        -ex "symbol-file -o $bias $oracle$work/bin/$prog" \
        -ex "rspwalk-oracle $dir/oracle.json" -ex disconnect </dev/null >"$dir/gdb.log" 2>&1
    [ -s "$dir/oracle.json" ]
}

# stop_case DIR DELAY PROG ARGS...: run the stripped PROG (from $work/bin), stop it after
# DELAY seconds, walk it three ways, judge.
stop_case() {
    local dir=$1 delay=$2 prog=$3 port rc
    shift 3
    LD_LIBRARY_PATH=$work/lib "$work/bin/$prog" "$@" </dev/null >/dev/null 2>"$dir/prog.err" &
    prog_pid=$!
    disown "$prog_pid"
    sleep "$delay"
    if ! kill -0 "$prog_pid" 2>/dev/null; then
        echo "$prog ended before the stop: $(head -n 1 "$dir/prog.err")"
        return 1
    fi
    : >"$dir/gdbserver.log"
    gdbserver --attach 127.0.0.1:0 "$prog_pid" </dev/null >"$dir/gdbserver.log" 2>&1 &
    gs_pid=$!
    disown "$gs_pid"
    port=$(gs_port "$dir/gdbserver.log") || return 1
    cp "/proc/$prog_pid/maps" "$dir/maps" || return 1
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --sysroot / "127.0.0.1:$port" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" --sysroot / "127.0.0.1:$port" >"$dir/rspwalk.txt" 2>&1
    if [ "$rc" != 0 ]; then
        echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --sysroot "$oracle" "127.0.0.1:$port" \
        >"$dir/cfi.json" 2>"$dir/cfi.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        echo "rspwalk with CFI exited $rc: $(head -n 1 "$dir/cfi.err")"
        return 1
    fi
    gdb_walk "$dir" "$port" "$prog"
    rc=$?
    stop_all
    if [ "$rc" != 0 ]; then
        echo "gdb oracle failed ($rc): $(grep -v '^Reading' "$dir/gdb.log" | tail -n 1)"
        return 1
    fi
    python3 "$here/stripped_check.py" --maps "$dir/maps" --walk "$dir/rspwalk.json" \
        --cfi "$dir/cfi.json" --gdb "$dir/oracle.json"
}

# fixture_case NAME DIR: the fixture NAME (x86_64, built without CFI) stripped of its
# symbols, run under gdbserver to its own stop; the walk of the stripped copy against the walk
# of the same stop with the fixture's symbols (-e: the analysis then knows every function's
# extent; run-opt.sh checks that walk against the fixture's expectation).
fixture_case() {
    local name=$1 dir=$2 port rc pid fix=$root/build/fixtures/x86_64/$1
    if [ ! -x "$fix" ]; then
        echo "missing fixture: $fix (make fixtures)"
        return 1
    fi
    strip --strip-all -o "$work/bin/$name" "$fix" || return 1
    : >"$dir/gdbserver.log"
    gdbserver 127.0.0.1:0 "$work/bin/$name" </dev/null >"$dir/gdbserver.log" 2>&1 &
    gs_pid=$!
    disown "$gs_pid"
    port=$(gs_port "$dir/gdbserver.log") || return 1
    pid=$(sed -n 's/^Process .* created; pid = \([0-9][0-9]*\)$/\1/p' "$dir/gdbserver.log")
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -c -f json --sysroot / "127.0.0.1:$port" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    cp "/proc/$pid/maps" "$dir/maps" || return 1
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" --sysroot / "127.0.0.1:$port" >"$dir/rspwalk.txt" 2>&1
    if [ "$rc" != 0 ]; then
        echo "rspwalk -c exited $rc: $(head -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json -e "$fix" --sysroot / "127.0.0.1:$port" \
        >"$dir/cfi.json" 2>"$dir/cfi.err"
    rc=$?
    stop_all
    if [ "$rc" != 0 ]; then
        echo "rspwalk with symbols exited $rc: $(head -n 1 "$dir/cfi.err")"
        return 1
    fi
    python3 "$here/stripped_check.py" --maps "$dir/maps" --walk "$dir/rspwalk.json" \
        --cfi "$dir/cfi.json"
}

# run_case NAME FUNCTION ARGS...: one line, PASS or FAIL with details; artifacts of a failed
# case in build/integration/stripped/NAME/.
run_case() {
    local name=$1 dir=$work/$1 start rc keep
    shift
    mkdir -p "$dir"
    start=$(date +%s%N)
    "$@" "$dir" >"$dir/why.txt" 2>&1
    rc=$?
    stop_all
    keep=$root/build/integration/stripped/$name
    rm -rf "$keep"
    if [ "$rc" != 0 ] || [ "$IT_KEEP" = 1 ]; then
        mkdir -p "$keep" && cp -r "$dir/." "$keep/"
    fi
    if [ "$rc" = 0 ]; then
        echo "PASS stripped/$name ($((($(date +%s%N) - start) / 1000000)) ms): $(tail -n 1 "$dir/why.txt")"
        return 0
    fi
    failed=$((failed + 1))
    echo "FAIL stripped/$name: $(head -n 1 "$dir/why.txt")"
    tail -n +2 "$dir/why.txt" | head -n 40 | sed 's/^/    /'
    echo "    (artifacts: build/integration/stripped/$name/)"
}

# A case function for run_case: the stop's arguments, then run_case's DIR.
stop_at() {
    local dir=${*: -1}
    stop_case "$dir" "${@:1:$#-1}"
}

mkdir -p "$work/setup"
if ! setup >"$work/setup/why.txt" 2>&1; then
    echo "FAIL stripped/setup: $(head -n 1 "$work/setup/why.txt")"
    exit 1
fi
for ((k = 0; k < IT_STOPS; k++)); do
    # 0.15 to 1.05 s: past the start, well before the end of the input.
    for p in ${IT_PROGS-gzip sha256sum xz}; do
        ms=$((150 + RANDOM % 900))
        delay=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
        case $p in
        gzip) run_case "gzip-$delay" stop_at "$delay" gzip -9 -c "$work/input" ;;
        sha256sum) run_case "sha256sum-$delay" stop_at "$delay" sha256sum \
            "$work/input" /dev/zero ;;
        xz) run_case "xz-$delay" stop_at "$delay" xz -T1 -6 -c "$work/input" ;;
        esac
    done
done
for v in ${IT_FIXTURES-chain tail alloca sigleaf coldbig}; do
    for link in dyn static; do
        run_case "$v-s0-O2nocfi-$link" fixture_case "$v-s0-O2nocfi-$link"
    done
done
[ "$failed" = 0 ]
