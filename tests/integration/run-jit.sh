#!/usr/bin/env bash
# tests/integration/run-jit.sh -- code generated at run time, registered through the GDB JIT interface.
#
# qemu-aarch64 (Debian's, x86_64 host) runs guest code, and spends its time in QEMU's
# code_gen_buffer, which QEMU registers through __jit_debug_descriptor as one in-memory ELF object
# with a .debug_frame:
#   busy   the aarch64 fixture busy-s0-O0-dyn: four guest threads spinning in integer loops,
#          each a host thread (frame 0 in the JIT code);
#   awk    Debian's busybox-static:arm64 (build/busybox, scripts/deps), `awk` in a floating-point
#          loop: QEMU's softfloat helpers called from the JIT code (the JIT frame in the middle).
# At JIT_STOPS moments chosen at random for each, `gdbserver --attach` stops it and
#   jit/P-stop-N       `rspwalk -f json --sysroot /` walks every thread; gdb-multiarch's backtrace
#                      of the same stop (gdb reads the JIT interface itself) is compared frame
#                      for frame (debian_compare.py): the main thread reaches _start, the others
#                      clone3, through the JIT frames; at least one thread must have a frame in
#                      the JIT object, else the stop is taken again (at most 3 times);
#   jit/P-stop-N-nojit `rspwalk --no-jit` on that same stop: every thread with a JIT frame ends
#                      "corrupt" (never "bottom") with the frames before the JIT frame the same,
#                      and the threads without one (QEMU's RCU thread) end at the bottom as before.
# Kills only the pids it started; loopback only.  Env: RSPWALK, IT_TIMEOUT (seconds per run,
# default 60), IT_KEEP=1 (keep artifacts of passed cases), JIT_STOPS (default 3).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RSPWALK=${RSPWALK:-$root/build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
IT_KEEP=${IT_KEEP:-0}
JIT_STOPS=${JIT_STOPS:-3}
QEMU=/usr/bin/qemu-aarch64
GUEST_ROOT=/usr/aarch64-linux-gnu
FIXTURE=$root/build/fixtures/aarch64/busy-s0-O0-dyn
BUSYBOX=$root/build/busybox/arm64/bin/busybox
AWK_LOOP='BEGIN { for (i = 0; i < 1e12; i++) x += i * 1.5 / (i + 0.25) }'
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-jit.XXXXXX")
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

# missing_peers: one line naming the first missing peer and its package, status 1.
missing_peers() {
    local spec
    for spec in gdbserver:gdbserver gdb-multiarch:gdb-multiarch "$QEMU:qemu-user" \
        "$GUEST_ROOT/lib/ld-linux-aarch64.so.1:libc6-arm64-cross"; do
        if ! command -v "${spec%%:*}" >/dev/null 2>&1 && [ ! -e "${spec%%:*}" ]; then
            echo "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
            return 1
        fi
    done
    if [ ! -x "$FIXTURE" ]; then
        echo "fixture not built: $FIXTURE (make fixtures)"
        return 1
    fi
    if [ ! -x "$BUSYBOX" ]; then
        echo "missing: $BUSYBOX (scripts/deps fetches Debian's busybox-static:arm64)"
        return 1
    fi
    if [ ! -x "$RSPWALK" ]; then
        echo "rspwalk not built: $RSPWALK (make build/release/rspwalk)"
        return 1
    fi
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

# threads_of PID: how many threads PID has once it has settled to a count it keeps.
threads_of() {
    local i n last=0 same=0
    for ((i = 0; i < 100; i++)); do
        n=$(ls "/proc/$1/task" 2>/dev/null | wc -l)
        if [ "$n" -gt 1 ] && [ "$n" = "$last" ]; then
            same=$((same + 1))
            [ "$same" -ge 4 ] && echo "$n" && return 0
        else
            same=0
        fi
        last=$n
        sleep 0.05
    done
    echo "$1 did not settle: $n threads" >&2
    return 1
}

# one_stop DIR PROG: start QEMU on PROG (busy or awk), let it run a random while, stop it with
# gdbserver --attach, walk with and without the JIT objects, then gdb; compare.  Status 3: no
# thread was in JIT code.
one_stop() {
    local dir=$1 port rc n need=()
    if [ "$2" = busy ]; then
        "$QEMU" -L "$GUEST_ROOT" "$FIXTURE" </dev/null >"$dir/prog.out" 2>&1 &
        need=(--need cpu_exec)
    else
        "$QEMU" "$BUSYBOX" awk "$AWK_LOOP" </dev/null >"$dir/prog.out" 2>&1 &
    fi
    prog_pid=$!
    n=$(threads_of "$prog_pid") || return 1
    sleep "0.$((RANDOM % 9 + 1))"
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
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" --no-jit -f json --sysroot / "127.0.0.1:$port" \
        >"$dir/nojit.json" 2>"$dir/nojit.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        echo "rspwalk --no-jit exited $rc: $(head -n 1 "$dir/nojit.err")"
        return 1
    fi
    ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log ORACLE_SYSROOT=/ \
        "$here/gdb_oracle.sh" "127.0.0.1:$port" "$QEMU" >"$dir/oracle.json" 2>"$dir/oracle.err"
    rc=$?
    stop_all
    if [ "$rc" != 0 ]; then
        echo "gdb oracle failed ($rc): $(head -n 1 "$dir/oracle.err")"
        return 1
    fi
    python3 "$here/jit_check.py" "$dir/rspwalk.json" "$dir/nojit.json" >"$dir/jit.txt"
    rc=$?
    [ "$rc" = 3 ] && return 3
    if [ "$rc" != 0 ]; then
        cat "$dir/jit.txt"
        return 1
    fi
    python3 "$here/debian_compare.py" --exe "$QEMU" --threads "$n" --need code_gen_buffer \
        "${need[@]}" "$dir/rspwalk.json" "$dir/oracle.json" >"$dir/compare.txt"
    rc=$?
    cat "$dir/compare.txt"
    [ "$rc" = 0 ]
}

# run_stop PROG N: one stop (taken again, at most 3 times, while no thread is in JIT code);
# lines PASS or FAIL for jit/PROG-stop-N and jit/PROG-stop-N-nojit; artifacts of a failure in
# build/integration/jit/PROG-stop-N/.
run_stop() {
    local prog=$1 name=$1-stop-$2 dir=$work/$1-stop-$2 start rc try keep
    start=$(date +%s%N)
    for try in 1 2 3; do
        rm -rf "$dir" && mkdir -p "$dir"
        if ! missing_peers >"$dir/why.txt"; then
            rc=1
            break
        fi
        one_stop "$dir" "$prog" >"$dir/why.txt" 2>&1
        rc=$?
        stop_all
        [ "$rc" = 3 ] || break
        echo "no thread in JIT code at try $try" >>"$work/retries"
    done
    [ "$rc" = 3 ] && echo "no thread in JIT code in 3 stops" >"$dir/why.txt"
    keep=$root/build/integration/jit/$name
    rm -rf "$keep"
    if [ "$rc" != 0 ] || [ "$IT_KEEP" = 1 ]; then
        mkdir -p "$keep" && cp -r "$dir/." "$keep/"
    fi
    local ms=$((($(date +%s%N) - start) / 1000000))
    if [ "$rc" = 0 ]; then
        echo "PASS jit/$name ($ms ms): $(tail -n 1 "$dir/why.txt")"
        echo "PASS jit/$name-nojit: $(tail -n 1 "$dir/jit.txt")"
        return 0
    fi
    failed=$((failed + 1))
    # bash's notes on the processes stop_all killed are no reason
    sed -i '/ Killed /d' "$dir/why.txt"
    echo "FAIL jit/$name: $(head -n 1 "$dir/why.txt")"
    tail -n +2 "$dir/why.txt" | head -n 80 | sed 's/^/    /'
    echo "    (artifacts: build/integration/jit/$name/)"
}

for prog in busy awk; do
    for ((i = 1; i <= JIT_STOPS; i++)); do
        run_stop "$prog" "$i"
    done
done
[ "$failed" = 0 ]
