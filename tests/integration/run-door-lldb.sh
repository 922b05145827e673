#!/usr/bin/env bash
# tests/integration/run-door-lldb.sh -- lldb through the RSP door (rspwalk --rsp-listen) and direct.
# lldb-14's `bt all` at 2 ms each way (door_relay.py next to the stub), direct and through the
# door, against gdbserver (x86_64, a stop gdb left: lldb attaches to a started process) and
# qemu-aarch64 (lldb runs to the stop itself): the same output, and the upstream round trips and
# wall time of each; through gdbserver no more round trips than direct.  And the door's
# jThreadsInfo: each thread's frame-pointer chain must be in its memory chunks (lldb then walks
# without reading memory).  One PASS/FAIL line a case.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

RSPWALK=${RSPWALK:-$IT_ROOT/build/release/rspwalk}
DOOR_PID=
RELAY_PID=
door_cleanup() {
    [ -n "$DOOR_PID" ] && kill -TERM "$DOOR_PID" 2>/dev/null && wait "$DOOR_PID" 2>/dev/null
    [ -n "$RELAY_PID" ] && kill -TERM "$RELAY_PID" 2>/dev/null && wait "$RELAY_PID" 2>/dev/null
    DOOR_PID=''
    RELAY_PID=''
}
trap 'door_cleanup; it_cleanup' EXIT

if ! it_missing_peers lldb-14:lldb-14 gdb-multiarch:gdb-multiarch gdbserver:gdbserver \
    qemu-aarch64:qemu-user; then
    echo "FAIL door-lldb: a peer is missing (scripts/deps installs it)"
    exit 1
fi

# door_start TARGET [ARGS...]: the door in front of TARGET; sets DOOR_ADDR.
door_start() {
    local i target=$1
    shift
    : >"$IT_TMP/door.log"
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" "$@" --rsp-listen 127.0.0.1:0 "$target" \
        2>"$IT_TMP/door.log" &
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

# lldb's requests and round trips (runs of requests with no reply between them) in a relay
# LOG, from lldb's qSupported on (the door's own connect, before lldb's, is left out).
lldb_rts() {
    awk '/^> qSupported:xmlRegisters/ { on = 1 }
         !on { next }
         /^> / { n++; if (!up) rt++; up = 1; next }
         { up = 0 }
         END { print n + 0, rt + 0 }' "$1"
}

# What differs between two runs of the same stop: process ids, the address lldb connects to,
# lldb's complaint about its missing Python module.
norm() {
    sed -E -e 's/Process [0-9]+/Process N/g' -e '/gdb-remote /d' -e '/embedded_interpreter/d' \
        -e '/^Traceback|^  File "<string>"/d' "$1"
}

# stub_prepare ARCH PROG: the stub at the stop lldb is to see; sets IT_PORT.  gdbserver: gdb
# runs to the fixture's trap and disconnects (gdbserver keeps the process stopped for the
# next client).  lldb's own run from the first instruction is not used there: lldb expects
# the stub to move the PC back over a breakpoint, which gdbserver does only for clients that
# ask for swbreak, and lldb-14 does not, so its entry breakpoint lands mid-instruction.
stub_prepare() {
    local arch=$1 prog=$2
    if [ "$arch" = x86_64 ]; then
        IT_STUB=gdbserver
        it_stub_start "$prog" || return 1
        timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set debuginfod enabled off' \
            -ex 'set sysroot /' -ex "target remote 127.0.0.1:$IT_PORT" -ex continue \
            -ex disconnect "$prog" >"$IT_TMP/gdb-prep.out" 2>&1
    else
        IT_STUB=qemu
        IT_ARCH=$arch
        IT_SYSROOT=$(it_qemu_sysroot "$arch")
        it_qemu_start "$prog"
    fi
}

# lldb_case ARCH FIXTURE: lldb's `bt all` direct and through the door; same output or FAIL.
declare -A RT REQ MS
lldb_case() {
    local arch=$1 fixture=$2 prog mode addr name="$1-door-lldb-$2" t0 t1 door_args=()
    prog=$IT_ROOT/build/fixtures/$arch/$fixture
    if [ ! -x "$prog" ]; then
        echo "FAIL $name: no fixture $prog (make fixtures)"
        return 1
    fi
    local cmds=(-o "gdb-remote ADDR" -o 'bt all' -o detach)
    if [ "$arch" != x86_64 ]; then
        # lldb runs to the fixture's trap; its batch mode takes a signal stop for a crash and
        # then runs the -k commands instead of the -o ones after it (one set runs).
        cmds=(-o "gdb-remote ADDR" -o continue -k 'bt all' -k detach -o 'bt all' -o detach)
        door_args=(--sysroot "$(it_qemu_sysroot "$arch")")
    fi
    for mode in direct door; do
        if ! stub_prepare "$arch" "$prog"; then
            echo "FAIL $name: the stub did not start"
            it_stub_stop
            return 1
        fi
        relay_start 2 "$IT_TMP/relay-$mode.log" "127.0.0.1:$IT_PORT" || return 1
        addr=$RELAY_ADDR
        if [ $mode = door ] && ! door_start "$RELAY_ADDR" "${door_args[@]}"; then
            echo "FAIL $name: the door did not start"
            door_cleanup
            it_stub_stop
            return 1
        fi
        [ $mode = door ] && addr=$DOOR_ADDR
        t0=$(it_now_ms)
        timeout -k 5 "$IT_TIMEOUT" lldb-14 --no-use-colors --batch "${cmds[@]//ADDR/$addr}" \
            "$prog" >"$IT_TMP/lldb-$mode.out" 2>&1 </dev/null
        t1=$(it_now_ms)
        MS[$mode]=$((t1 - t0))
        [ $mode = door ] && wait "$DOOR_PID" 2>/dev/null
        DOOR_PID=
        wait "$RELAY_PID" 2>/dev/null
        RELAY_PID=
        it_stub_stop
        read -r "REQ[$mode]" "RT[$mode]" < <(lldb_rts "$IT_TMP/relay-$mode.log")
    done
    if [ "$IT_KEEP" = 1 ]; then
        mkdir -p "$IT_ROOT/build/integration/door-lldb/$name"
        cp "$IT_TMP"/relay-*.log "$IT_TMP"/lldb-*.out "$IT_TMP/door.log" \
            "$IT_ROOT/build/integration/door-lldb/$name/"
    fi
    local msg="bt all: direct ${RT[direct]} round trips (${REQ[direct]} requests, ${MS[direct]} ms),"
    msg+=" door ${RT[door]} round trips (${REQ[door]} requests, ${MS[door]} ms)"
    if ! grep -q 'frame #0' "$IT_TMP/lldb-direct.out"; then
        echo "FAIL $name: lldb printed no frame direct"
        sed 's/^/    /' "$IT_TMP/lldb-direct.out" | tail -n 8
        return 1
    fi
    if ! diff <(norm "$IT_TMP/lldb-direct.out") <(norm "$IT_TMP/lldb-door.out") >"$IT_TMP/diff"; then
        echo "FAIL $name: lldb's output differs through the door ($msg)"
        sed 's/^/    /' "$IT_TMP/diff" | head -n 30
        sed 's/^/    door: /' "$IT_TMP/door.log" | tail -n 5
        return 1
    fi
    if [ "$arch" = x86_64 ] && [ "${RT[door]}" -gt "${RT[direct]}" ]; then
        echo "FAIL $name: more upstream round trips through the door ($msg)"
        return 1
    fi
    local frames
    frames=$(awk '/^\(lldb\) bt all/ { on = 1; next } /^\(lldb\)/ { on = 0 } on && /frame #/ { n++ }
                  END { print n + 0 }' "$IT_TMP/lldb-door.out")
    # What lldb sent the door, and how much of it the door answered itself.
    local fe
    fe=$(sed -n 's/^rspwalk: door: front end left: \([0-9]*\) packets, \([0-9]*\) answered.*/\1 \2/p' \
        "$IT_TMP/door.log")
    echo "PASS $name ($frames frames, the same as direct): $msg; lldb sent the door ${fe% *}" \
        "packets, ${fe#* } answered there"
    echo "$arch $fixture ${RT[direct]} ${REQ[direct]} ${MS[direct]} ${RT[door]} ${REQ[door]} ${MS[door]}" \
        "${fe:-0 0}" >>"$IT_TMP/figures"
}

lldb_case x86_64 threads-s0-O0-dyn
lldb_case x86_64 deep-s0-O0-dyn
lldb_case aarch64 threads-s0-O0-dyn
lldb_case aarch64 deep-s0-O0-dyn

# jThreadsInfo at the door: every thread's registers, and the frame-pointer chain from its
# rbp inside its memory chunks (deep-s0-O0-dyn: 40 frames and more in main's thread).
t0=$(it_now_ms)
PROG=$IT_ROOT/build/fixtures/x86_64/deep-s0-O0-dyn
if stub_prepare x86_64 "$PROG" && door_start "127.0.0.1:$IT_PORT"; then
    if python3 - "$DOOR_ADDR" >"$IT_TMP/jti.out" 2>&1 <<'PYEOF'; then
import json, socket, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
buf = b""
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
    s.sendall(b"$%s#%02x" % (p, sum(p) & 0xff))
    r = recv()
    s.sendall(b"+")
    return r
def unescape(r):
    out, k = bytearray(), 0
    while k < len(r):
        if r[k] == 0x7d:
            out.append(r[k + 1] ^ 0x20)
            k += 2
        else:
            out.append(r[k])
            k += 1
    return bytes(out)
req(b"qSupported:xmlRegisters=i386")
stop = req(b"?")
assert stop[:1] == b"T", stop
threads = json.loads(unescape(req(b"jThreadsInfo")))
assert threads, "no thread"
best = 0
for t in threads:
    regs = t["registers"]
    for n in ("6", "7", "16"):  # rbp, rsp, rip in gdbserver's x86_64 description
        assert n in regs, (t["tid"], sorted(regs))
    chunks = [(c["address"], bytes.fromhex(c["bytes"])) for c in t.get("memory", [])]
    def word(a):
        for lo, b in chunks:
            if lo <= a and a + 8 <= lo + len(b):
                return struct.unpack("<Q", b[a - lo:a - lo + 8])[0]
        return None
    fp, frames = struct.unpack("<Q", bytes.fromhex(regs["6"]))[0], 1
    while fp:
        nxt, ra = word(fp), word(fp + 8)
        if nxt is None or ra is None or nxt <= fp:
            break
        fp, frames = nxt, frames + 1
    best = max(best, frames)
    print("thread %d: %d registers, %d memory bytes, %d frames by its frame pointers" %
          (t["tid"], len(regs), sum(len(b) for _, b in chunks), frames))
assert best >= 40, "the chunks hold %d frames, want 40" % best
pid = stop.split(b"thread:p", 1)[1].split(b".", 1)[0]
assert req(b"D;" + pid) == b"OK"
PYEOF
        echo "PASS x86_64-door-lldb-jthreadsinfo ($(($(it_now_ms) - t0)) ms): $(head -n 1 "$IT_TMP/jti.out")"
    else
        echo "FAIL x86_64-door-lldb-jthreadsinfo: jThreadsInfo"
        sed 's/^/    /' "$IT_TMP/jti.out" | tail -n 8
    fi
else
    echo "FAIL x86_64-door-lldb-jthreadsinfo: gdbserver or the door did not start"
fi
wait "$DOOR_PID" 2>/dev/null
DOOR_PID=
it_stub_stop

# DOOR_LLDB_FIGURES=FILE: the figures, one line a case (scripts/bench's door section).
if [ -n "${DOOR_LLDB_FIGURES:-}" ] && [ -f "$IT_TMP/figures" ]; then
    cp "$IT_TMP/figures" "$DOOR_LLDB_FIGURES"
fi
