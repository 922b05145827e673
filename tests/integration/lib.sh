# shellcheck shell=bash
# tests/integration/lib.sh -- shared steps of the integration tests (sourced, not run).
#
# One case: start the fixture under gdbserver on a loopback port the kernel picks, let
# rspwalk resume it to its stop and walk it (JSON), let gdb-multiarch look at the same stop
# (gdb_oracle.sh), and compare the two (compare.py), which also checks the stack the fixture
# says it expects.  Each case prints one line, "PASS name (N ms)" or "FAIL name: why", and on
# failure indented details; run-all counts those lines.  Artifacts of a failed case are kept
# in build/integration/<arch>/<name>/.
# Not a stub launcher for users: it kills only the pids it started, and only on loopback.
#
# Env: IT_ORACLE_ONLY=1  no rspwalk: gdb resumes to the stop itself, only the oracle is checked
#                        against the fixture's expectation (tests the fixtures and the oracle)
#      RSPWALK           the CLI (default build/release/rspwalk)
#      IT_WRAP           command prefix for rspwalk (run-valgrind sets valgrind here)
#      IT_TIMEOUT        seconds for one rspwalk or gdb run (default 60)
#      IT_KEEP=1         keep the artifacts of passed cases too
#      IT_ARCH, IT_STUB  x86_64 and gdbserver (the only pair so far; qemu-user resumes the
#                        guest on disconnect, so it will need two runs, peers.md 6a)
#      IT_SYSROOT        where the target's libraries are (default / for native x86_64)

set -u

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IT_ROOT=$(cd "$IT_DIR/../.." && pwd)
RSPWALK=${RSPWALK:-$IT_ROOT/build/release/rspwalk}
IT_ARCH=${IT_ARCH:-x86_64}
IT_STUB=${IT_STUB:-gdbserver}
IT_SYSROOT=${IT_SYSROOT:-/}
IT_TIMEOUT=${IT_TIMEOUT:-60}
IT_WRAP=${IT_WRAP:-}
IT_ORACLE_ONLY=${IT_ORACLE_ONLY:-0}
IT_KEEP=${IT_KEEP:-0}
IT_FAILED=0
IT_PASSED=0
IT_STUB_PID=
IT_INFERIOR_PID=
IT_PORT=
IT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-it.XXXXXX")

it_cleanup() {
    it_stub_stop
    rm -rf "$IT_TMP"
}
trap it_cleanup EXIT
trap 'exit 130' INT TERM

# it_now_ms: wall clock in milliseconds.
it_now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

# it_missing_peers CMD:PACKAGE...: prints "missing peer: CMD (apt-get install PACKAGE)" for
# the first command not found and returns 1.  A missing peer is a failure, never a skip.
it_missing_peers() {
    local spec
    for spec in "$@"; do
        if ! command -v "${spec%%:*}" >/dev/null 2>&1; then
            echo "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
            return 1
        fi
    done
    return 0
}

# it_stub_start PROG [ARGS...]: gdbserver on 127.0.0.1, port chosen by the kernel.  Not
# --once: the target stays stopped across connections (shared/notes/peers.md 6a), so rspwalk
# and then gdb see the same stop.  Sets IT_PORT, IT_STUB_PID, IT_INFERIOR_PID.
it_stub_start() {
    local log=$IT_TMP/gdbserver.log i
    IT_PORT=
    IT_INFERIOR_PID=
    gdbserver 127.0.0.1:0 "$@" </dev/null >"$log" 2>&1 &
    IT_STUB_PID=$!
    for ((i = 0; i < 100; i++)); do
        IT_PORT=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$log" | head -n 1)
        [ -n "$IT_PORT" ] && break
        kill -0 "$IT_STUB_PID" 2>/dev/null || break
        sleep 0.05
    done
    IT_INFERIOR_PID=$(sed -n 's/^Process .* created; pid = \([0-9][0-9]*\)$/\1/p' "$log")
    if [ -z "$IT_PORT" ]; then
        echo "gdbserver did not start: $(tail -n 1 "$log")"
        it_stub_stop
        return 1
    fi
    return 0
}

# it_stub_stop: kill the inferior gdbserver reported, then gdbserver; only those pids.
it_stub_stop() {
    local i
    if [ -n "$IT_INFERIOR_PID" ]; then
        kill -KILL "$IT_INFERIOR_PID" 2>/dev/null
        IT_INFERIOR_PID=
    fi
    if [ -n "$IT_STUB_PID" ]; then
        kill -TERM "$IT_STUB_PID" 2>/dev/null
        for ((i = 0; i < 50; i++)); do
            kill -0 "$IT_STUB_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL "$IT_STUB_PID" 2>/dev/null
        wait "$IT_STUB_PID" 2>/dev/null
        IT_STUB_PID=
    fi
}

# it_case_run NAME DIR: the steps of one case; prints why on failure (one line first).
it_case_run() {
    local name=$1 dir=$2 rc
    local prog=$IT_ROOT/build/fixtures/$IT_ARCH/$name
    local peers=(gdbserver:gdbserver gdb-multiarch:gdb-multiarch python3:python3 readelf:binutils)
    it_missing_peers "${peers[@]}" || return 1
    if [ ! -x "$prog" ]; then
        echo "fixture not built: build/fixtures/$IT_ARCH/$name (make fixtures)"
        return 1
    fi
    if [ "$IT_ORACLE_ONLY" != 1 ] && [ ! -x "$RSPWALK" ]; then
        echo "rspwalk not built: $RSPWALK (make build/release/rspwalk)"
        return 1
    fi
    if [ "$IT_STUB" != gdbserver ]; then
        echo "stub not supported yet: $IT_STUB (only gdbserver keeps a stop for a second look)"
        return 1
    fi
    it_stub_start "$prog" || return 1

    if [ "$IT_ORACLE_ONLY" = 1 ]; then
        ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log ORACLE_SYSROOT=$IT_SYSROOT \
            "$IT_DIR/gdb_oracle.sh" --continue "127.0.0.1:$IT_PORT" "$prog" \
            >"$dir/oracle.json" 2>"$dir/oracle.err"
        rc=$?
    else
        # The default --max-frames (4096) covers recurse's 200 frames: no per-fixture options.
        # shellcheck disable=SC2086  # IT_WRAP is a command prefix: word splitting intended
        timeout -k 5 "$IT_TIMEOUT" $IT_WRAP "$RSPWALK" -c -f json --sysroot "$IT_SYSROOT" \
            --exe "$prog" "127.0.0.1:$IT_PORT" >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
        rc=$?
        if [ "$rc" != 0 ]; then
            it_stub_stop
            [ "$rc" = 124 ] && echo "rspwalk timed out after $IT_TIMEOUT s" && return 1
            echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"
            return 1
        fi
        ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log ORACLE_SYSROOT=$IT_SYSROOT \
            "$IT_DIR/gdb_oracle.sh" "127.0.0.1:$IT_PORT" "$prog" \
            >"$dir/oracle.json" 2>"$dir/oracle.err"
        rc=$?
    fi
    cp "$IT_TMP/gdbserver.log" "$dir/gdbserver.log" 2>/dev/null
    it_stub_stop
    if [ "$rc" != 0 ]; then
        echo "gdb oracle failed ($rc): $(head -n 1 "$dir/oracle.err")"
        return 1
    fi
    if [ "$IT_ORACLE_ONLY" = 1 ]; then
        python3 "$IT_DIR/compare.py" --exe "$prog" --oracle-only "$dir/oracle.json"
    else
        python3 "$IT_DIR/compare.py" --exe "$prog" "$dir/rspwalk.json" "$dir/oracle.json"
    fi
}

# it_case NAME: run one case, print its line, count it.
it_case() {
    local name=$1 dir=$IT_TMP/$1 start rc keep
    mkdir -p "$dir"
    start=$(it_now_ms)
    it_case_run "$name" "$dir" >"$dir/why.txt" 2>&1
    rc=$?
    keep=$IT_ROOT/build/integration/$IT_ARCH/$name
    rm -rf "$keep"
    if [ "$rc" != 0 ] || [ "$IT_KEEP" = 1 ]; then
        mkdir -p "$keep" && cp -r "$dir/." "$keep/"
    fi
    if [ "$rc" = 0 ]; then
        IT_PASSED=$((IT_PASSED + 1))
        echo "PASS $IT_ARCH/$name ($(($(it_now_ms) - start)) ms)"
        return 0
    fi
    IT_FAILED=$((IT_FAILED + 1))
    echo "FAIL $IT_ARCH/$name: $(head -n 1 "$dir/why.txt")"
    tail -n +2 "$dir/why.txt" | head -n 80 | sed 's/^/    /'
    echo "    (artifacts: build/integration/$IT_ARCH/$name/)"
    return 1
}

# it_run_matrix VARIANT: every stop method and link of one variant; exit status = failures.
it_run_matrix() {
    local variant=$1 stop link
    for stop in s0 s1; do
        for link in dyn static; do
            it_case "$variant-$stop-O0-$link"
        done
    done
    [ "$IT_FAILED" = 0 ]
}
