#!/usr/bin/env bash
# tests/integration/run-v8.sh -- node (V8) stopped at random moments in a hot loop of small functions.
#
# `gdbserver :0 node --no-turbo-inlining hot.js` runs JavaScript whose small functions stay
# apart (TurboFan and Sparkplug code on the stack, each function's entry tests its code's
# deoptimization mark before `push %rbp; mov %rsp,%rbp`).  After 2 s of warm-up, V8_STOPS
# times (default 40) rsp_interrupt.py resumes it for 10-90 ms and stops it, and
#   v8/stop-N   `RSPWALK_DEBUG=step rspwalk -f json -t LWP` walks the main thread; v8_check.py
#               checks it against the code's bytes read from the stub and decoded by objdump:
#               the walk reaches _start through V8's code (executable memory of node's
#               /proc/PID/maps, which the walker reads through the stub's Host I/O; with
#               V8_STRICT=0 a walk may end "corrupt" at a caller there: counted), every
#               return address in a module or in V8's code follows a call, and where frame 0 is at a JIT
#               function's entry, right after its `push %rbp`, or after its `pop %rbp` with a
#               `ret` ahead, the frame-pointer stepper's caller is the word at SP (SP + 8);
#   v8/prologue at least one stop was at such a place (the stops go on, to 3 x V8_STOPS,
#               until one is).
# Kills only the pids it started; loopback only.  Env: RSPWALK, IT_TIMEOUT (seconds per run,
# default 60), IT_KEEP=1 (keep artifacts of passed cases), V8_STOPS, V8_STRICT (default 1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RSPWALK=${RSPWALK:-$root/build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
IT_KEEP=${IT_KEEP:-0}
V8_STOPS=${V8_STOPS:-40}
V8_STRICT=${V8_STRICT:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-v8.XXXXXX")
keep=$root/build/integration/v8
gs_pid=
failed=0

stop_all() {
    if [ -n "$gs_pid" ]; then
        kill -TERM "$gs_pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$gs_pid" 2>/dev/null || break; sleep 0.05; done
        kill -KILL "$gs_pid" 2>/dev/null
    fi
    [ -n "${node_pid:-}" ] && kill -KILL "$node_pid" 2>/dev/null
    wait 2>/dev/null
    gs_pid=
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

fail_all() {
    echo "FAIL v8/setup: $1"
    exit 1
}

for spec in node:nodejs gdbserver:gdbserver objdump:binutils python3:python3; do
    command -v "${spec%%:*}" >/dev/null 2>&1 ||
        fail_all "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
done
[ -x "$RSPWALK" ] || fail_all "rspwalk not built: $RSPWALK (make build/release/rspwalk)"

cat >"$work/hot.js" <<'JS'
// Small functions in a hot loop: each gets its own optimized code (--no-turbo-inlining).
function a(x) { return (x * 3 + 1) | 0; }
function b(x) { return a(x) ^ (x >>> 1); }
function c(x, y) { return b(x) + a(y) - (x & y); }
function d(o) { return c(o.p, o.q) + o.p; }
function e(arr) { let s = 0; for (let i = 0; i < arr.length; i++) s = (s + d(arr[i])) | 0; return s; }
function f(n) { const arr = []; for (let i = 0; i < 8; i++) arr.push({ p: n + i, q: n - i }); return e(arr); }
let acc = 0;
for (let n = 0; ; n++) { acc = (acc + f(n)) | 0; if (n % 1000000 === 0) acc ^= n; }
JS

: >"$work/gdbserver.log" # there before the loop below reads it
gdbserver 127.0.0.1:0 node --no-turbo-inlining "$work/hot.js" </dev/null >"$work/gdbserver.log" 2>&1 &
gs_pid=$!
port=
for ((i = 0; i < 100; i++)); do
    port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$work/gdbserver.log")
    [ -n "$port" ] && break
    kill -0 "$gs_pid" 2>/dev/null || break
    sleep 0.05
done
[ -n "$port" ] || fail_all "gdbserver did not listen: $(tail -n 1 "$work/gdbserver.log")"
node_pid=$(sed -n 's/^Process .* created; pid = \([0-9][0-9]*\)$/\1/p' "$work/gdbserver.log")
[ -n "$node_pid" ] || fail_all "gdbserver did not say node's pid: $(head -n 1 "$work/gdbserver.log")"
python3 "$here/rsp_interrupt.py" "127.0.0.1:$port" 2 >"$work/warmup.txt" 2>&1 ||
    fail_all "node did not stop after its warm-up: $(tail -n 1 "$work/warmup.txt")"

strict=()
[ "$V8_STRICT" = 1 ] && strict=(--strict)
declare -A seen=()
rm -rf "$keep"
n=0
while [ "$n" -lt "$V8_STOPS" ] || { [ "${#seen[@]}" = 0 ] && [ "$n" -lt $((3 * V8_STOPS)) ]; }; do
    n=$((n + 1))
    dir=$work/stop-$n
    mkdir -p "$dir"
    start=$(date +%s%N)
    rc=0
    if ! python3 "$here/rsp_interrupt.py" "127.0.0.1:$port" "0.0$((RANDOM % 9 + 1))" \
        >"$dir/why.txt" 2>&1; then
        rc=1
    elif ! RSPWALK_DEBUG=step timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json -t "$node_pid" \
        "127.0.0.1:$port" >"$dir/rspwalk.json" 2>"$dir/trace.txt"; then
        echo "rspwalk failed: $(grep -v '^step:\|^analysis:\|^wanderer:' "$dir/trace.txt" | head -n 1)" \
            >"$dir/why.txt"
        rc=1
    else
        python3 "$here/v8_check.py" "127.0.0.1:$port" "$dir/rspwalk.json" "$node_pid" \
            "$dir/trace.txt" "${strict[@]}" >"$dir/why.txt" 2>&1
        rc=$?
    fi
    ms=$((($(date +%s%N) - start) / 1000000))
    last=$(tail -n 1 "$dir/why.txt")
    grep -q '^frame 0 at .* (\(entry\|pushed\|ret\)):' "$dir/why.txt" && seen[$n]=1
    if [ "$rc" = 0 ]; then
        echo "PASS v8/stop-$n ($ms ms): $last"
        grep '^frame 0 at' "$dir/why.txt" | sed 's/^/    /'
        [ "$IT_KEEP" = 1 ] && mkdir -p "$keep/stop-$n" && cp -r "$dir/." "$keep/stop-$n/"
    else
        failed=$((failed + 1))
        echo "FAIL v8/stop-$n: $(grep -m1 '^FAIL\|rspwalk failed\|rsp_interrupt' "$dir/why.txt" || head -n 1 "$dir/why.txt")"
        head -n 40 "$dir/why.txt" | sed 's/^/    /'
        mkdir -p "$keep/stop-$n" && cp -r "$dir/." "$keep/stop-$n/"
        echo "    (artifacts: build/integration/v8/stop-$n/)"
        kill -0 "$gs_pid" 2>/dev/null || break
    fi
done
if [ "${#seen[@]}" -gt 0 ]; then
    echo "PASS v8/prologue: ${#seen[@]} of $n stops at a JIT function's entry or exit"
else
    failed=$((failed + 1))
    echo "FAIL v8/prologue: no stop at a JIT function's entry or exit in $n stops"
fi
[ "$failed" = 0 ]
