#!/usr/bin/env bash
# tests/integration/run-door.sh -- gdb through the RSP door (rspwalk --rsp-listen) and direct.
# The door stands between gdb-multiarch and gdbserver running deep-s0-O0-dyn (a 40-frame
# stack): backtraces, registers and a session of break, continue, stepi and detach must print
# as they do direct; qXfer:rspwalk-stacks must serve the stack document; and at 2 ms each way
# (door_relay.py next to the stub) `thread apply all bt` after the stop must cost at least 5x
# fewer upstream requests through the door than direct.  One PASS/FAIL line a case.
# DOOR_RT_ONLY=1: the round-trip case alone; DOOR_FIGURES=FILE: its figures on one line
# (scripts/bench's door section).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

RSPWALK=${RSPWALK:-$IT_ROOT/build/release/rspwalk}
# DOOR_FIXTURE: another x86_64 fixture for the round-trip figures (its depth is not checked).
FIXTURE=${DOOR_FIXTURE:-deep-s0-O0-dyn}
PROG=$IT_ROOT/build/fixtures/x86_64/$FIXTURE
DOOR_PID=
RELAY_PID=
door_cleanup() {
    [ -n "$DOOR_PID" ] && kill -TERM "$DOOR_PID" 2>/dev/null && wait "$DOOR_PID" 2>/dev/null
    [ -n "$RELAY_PID" ] && kill -TERM "$RELAY_PID" 2>/dev/null && wait "$RELAY_PID" 2>/dev/null
    DOOR_PID= RELAY_PID=
}
trap 'door_cleanup; [ -n "${DOOR_KEEP:-}" ] && cp -r "$IT_TMP" /tmp/door-keep; it_cleanup' EXIT

# door_start TARGET: the door in front of TARGET; sets DOOR_ADDR.
door_start() {
    local i
    : >"$IT_TMP/door.log"
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" --rsp-listen 127.0.0.1:0 "$1" 2>"$IT_TMP/door.log" &
    DOOR_PID=$!
    DOOR_ADDR=
    for ((i = 0; i < 100; i++)); do
        DOOR_ADDR=$(sed -n 's/^rspwalk: door: listening on //p' "$IT_TMP/door.log")
        [ -n "$DOOR_ADDR" ] && return 0
        kill -0 "$DOOR_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "the door did not start: $(tail -n 1 "$IT_TMP/door.log")"
    return 1
}

# relay_start DELAY_MS LOG TARGET: door_relay.py in front of TARGET; sets RELAY_ADDR.
relay_start() {
    exec 9< <(python3 "$IT_DIR/door_relay.py" --delay-ms "$1" --log "$2" "$3")
    RELAY_PID=$!
    local port
    read -r -t 10 port <&9 || { echo "door_relay.py did not start" && return 1; }
    RELAY_ADDR=127.0.0.1:$port
}

# gdb_run ADDR OUT CMD...: gdb-multiarch on the fixture at ADDR, each CMD an -ex.
gdb_run() {
    local addr=$1 out=$2 c args=()
    shift 2
    for c in "$@"; do args+=(-ex "$c"); done
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set debuginfod enabled off' \
        -ex 'set sysroot /' -ex 'set pagination off' -ex 'set confirm off' \
        -ex "target remote $addr" "${args[@]}" "$PROG" >"$out" 2>&1
}

# The process and thread ids differ between runs; the rest must not.
norm() {
    sed -e 's/process [0-9][0-9]*/process N/g' -e 's/LWP [0-9][0-9]*/LWP N/g' \
        -e 's/Thread [0-9][0-9.]*/Thread N/g' -e '/^Remote debugging using/d' "$1"
}

# run_both NAME CMD...: the commands direct and through the door; same output or FAIL.
run_both() {
    local name=$1 t0
    shift
    t0=$(it_now_ms)
    it_stub_start "$PROG" || { echo "FAIL x86_64-door-$name: gdbserver" && return 1; }
    gdb_run "127.0.0.1:$IT_PORT" "$IT_TMP/direct.out" "$@"
    it_stub_stop
    it_stub_start "$PROG" || { echo "FAIL x86_64-door-$name: gdbserver" && return 1; }
    if ! door_start "127.0.0.1:$IT_PORT"; then
        echo "FAIL x86_64-door-$name: the door did not start"
        it_stub_stop
        return 1
    fi
    gdb_run "$DOOR_ADDR" "$IT_TMP/door.out" "$@"
    wait "$DOOR_PID" 2>/dev/null
    DOOR_PID=
    it_stub_stop
    if ! diff <(norm "$IT_TMP/direct.out") <(norm "$IT_TMP/door.out") >"$IT_TMP/diff"; then
        echo "FAIL x86_64-door-$name: gdb's output differs through the door"
        sed 's/^/    /' "$IT_TMP/diff" | head -n 30
        sed 's/^/    door: /' "$IT_TMP/door.log" | tail -n 5
        return 1
    fi
    DOOR_CHECK_OUT=$IT_TMP/door.out
    echo "PASS x86_64-door-$name ($(($(it_now_ms) - t0)) ms)"
}

if [ ! -x "$PROG" ]; then
    echo "FAIL x86_64-door: no fixture $PROG (make fixtures)"
    exit 1
fi

if [ "${DOOR_RT_ONLY:-0}" != 1 ]; then
run_both bt 'continue' 'bt' 'thread apply all bt' 'info registers rip rsp rbp' 'x/8gx $sp' \
    'frame 20' 'info frame' 'detach'
if [ "$FIXTURE" = deep-s0-O0-dyn ] && ! grep -q '^#40 .* in main ()' "$IT_TMP/door.out"; then
    echo "FAIL x86_64-door-bt-depth: no frame #40 in main through the door"
fi

[ "$FIXTURE" = deep-s0-O0-dyn ] && run_both session 'break d20' 'continue' 'bt' 'stepi' 'x/i $pc' 'info registers rip' 'stepi' \
    'bt 3' 'delete' 'continue' 'bt 2' 'detach'
for want in 'Breakpoint 1, d20' 'detached'; do
    [ "$FIXTURE" = deep-s0-O0-dyn ] && ! grep -q "$want" "$IT_TMP/door.out" 2>/dev/null &&
        echo "FAIL x86_64-door-session-$want: '$want' not in gdb's output through the door"
done

# qXfer:rspwalk-stacks: advertised, served in chunks, the stack document of the stop.
t0=$(it_now_ms)
if it_stub_start "$PROG" && door_start "127.0.0.1:$IT_PORT"; then
    if python3 - "$DOOR_ADDR" >"$IT_TMP/stacks.out" 2>&1 <<'PYEOF'; then
import json, socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
buf = b""
def send(p):
    s.sendall(b"$%s#%02x" % (p, sum(p) & 0xff))
def recv():
    global buf
    while True:
        i = buf.find(b"$")
        j = buf.find(b"#", i + 1) if i >= 0 else -1
        if i >= 0 and j >= 0 and len(buf) >= j + 3:
            p, buf = buf[i + 1:j], buf[j + 3:]
            return p
        d = s.recv(65536)
        assert d, "door closed"
        buf += d
def req(p):
    send(p)
    r = recv()
    s.sendall(b"+")
    return r
sup = req(b"qSupported:multiprocess+;swbreak+;hwbreak+;xmlRegisters=i386")
assert b"qXfer:rspwalk-stacks:read+" in sup, sup
req(b"?")
send(b"vCont;c")
stop = recv()
s.sendall(b"+")
assert stop[:1] == b"T", stop
doc, off = b"", 0
while True:
    r = req(b"qXfer:rspwalk-stacks:read::%x,1000" % off)
    assert r[:1] in (b"m", b"l"), r
    data = bytearray()
    k = 1
    while k < len(r):
        if r[k] == 0x7d:
            data.append(r[k + 1] ^ 0x20)
            k += 2
        else:
            data.append(r[k])
            k += 1
    doc += data
    off += len(data)
    if r[:1] == b"l":
        break
d = json.loads(doc)
frames = d["threads"][0]["frames"]
names = [f.get("function") for f in frames]
assert len(frames) >= 40, names
print("%d bytes, %d frames" % (len(doc), len(frames)))
pid = stop.split(b"thread:p", 1)[1].split(b".", 1)[0]
assert req(b"D;" + pid) == b"OK"
PYEOF
        echo "PASS x86_64-door-stacks ($(($(it_now_ms) - t0)) ms): $(cat "$IT_TMP/stacks.out")"
    else
        echo "FAIL x86_64-door-stacks: qXfer:rspwalk-stacks"
        sed 's/^/    /' "$IT_TMP/stacks.out" | tail -n 8
    fi
else
    echo "FAIL x86_64-door-stacks: gdbserver or the door did not start"
fi
wait "$DOOR_PID" 2>/dev/null
DOOR_PID=
it_stub_stop
fi

# Upstream requests after the stop, `thread apply all bt` at 2 ms each way, direct and
# through the door (whose walk at the stop is counted: it comes after the stop too).
# after_stop LOG: requests and round trips (runs of requests with no reply between them)
# after the last stop reply, the detach left out.
after_stop() {
    awk '/^STOP$/ { n = 0; rt = 0; up = 0; next }
         /^> D/ { next }
         /^> / { n++; if (!up) rt++; up = 1; next }
         { up = 0 }
         END { print n + 0, rt + 0 }' "$1"
}
# in_bt LOG: requests and round trips between the two marks around `thread apply all bt`.
in_bt() {
    awk '/^> qRspwalkTestMark/ { m++; up = 0; next }
         m != 1 { next }
         /^> / { n++; if (!up) rt++; up = 1; next }
         { up = 0 }
         END { print n + 0, rt + 0 }' "$1"
}
declare -A REQS RTS BTREQS BTRTS MS
for mode in direct door; do
    it_stub_start "$PROG" || break
    relay_start 2 "$IT_TMP/relay-$mode.log" "127.0.0.1:$IT_PORT" || break
    addr=$RELAY_ADDR
    if [ $mode = door ]; then
        door_start "$RELAY_ADDR" || break
        addr=$DOOR_ADDR
    fi
    # The stop first, then the timed backtrace in a second connection would lose the
    # stop: one session, timed from the stop on with gdb's own clock.
    gdb_run "$addr" "$IT_TMP/rt-$mode.out" 'continue' 'maint packet qRspwalkTestMark' \
        'python import time; t0 = time.time()' 'thread apply all bt' \
        'python print("bt_ms %d" % ((time.time() - t0) * 1000))' \
        'maint packet qRspwalkTestMark' 'detach'
    [ $mode = door ] && wait "$DOOR_PID" 2>/dev/null && DOOR_PID=
    wait "$RELAY_PID" 2>/dev/null
    RELAY_PID=
    it_stub_stop
    read -r "REQS[$mode]" "RTS[$mode]" < <(after_stop "$IT_TMP/relay-$mode.log")
    read -r "BTREQS[$mode]" "BTRTS[$mode]" < <(in_bt "$IT_TMP/relay-$mode.log")
    MS[$mode]=$(sed -n 's/^bt_ms //p' "$IT_TMP/rt-$mode.out")
done
d=${BTRTS[direct]:-0} r=${BTRTS[door]:-0}
msg="thread apply all bt: direct $d round trips (${BTREQS[direct]:-?} requests, ${MS[direct]:-?} ms),"
msg+=" door $r round trips (${BTREQS[door]:-?} requests, ${MS[door]:-?} ms);"
msg+=" from the stop to the detach, the door's walk included: direct ${RTS[direct]:-?} round"
msg+=" trips (${REQS[direct]:-?} requests), door ${RTS[door]:-?} (${REQS[door]:-?})"
if [ "$d" -ge 5 ] && [ "$d" -ge $((5 * r)) ]; then
    echo "PASS x86_64-door-roundtrips: $msg"
else
    echo "FAIL x86_64-door-roundtrips: $msg (want at least 5x fewer through the door)"
fi
if [ -n "${DOOR_FIGURES:-}" ]; then
    echo "$FIXTURE ${BTRTS[direct]:-?} ${BTREQS[direct]:-?} ${MS[direct]:-?}" \
        "${BTRTS[door]:-?} ${BTREQS[door]:-?} ${MS[door]:-?} ${RTS[direct]:-?} ${REQS[direct]:-?}" \
        "${RTS[door]:-?} ${REQS[door]:-?}" >"$DOOR_FIGURES"
fi
# IT_KEEP=1: the relay logs, to count what went upstream.
if [ "$IT_KEEP" = 1 ]; then
    mkdir -p "$IT_ROOT/build/integration/door" && cp "$IT_TMP"/relay-*.log "$IT_ROOT/build/integration/door/"
fi
