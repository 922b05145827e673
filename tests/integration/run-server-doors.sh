#!/usr/bin/env bash
# tests/integration/run-server-doors.sh -- rspwalkd's doors: --rsp-listen (gdb) and --dap-listen.
# gdb through `--rsp-listen HOST:PORT=1` prints what it prints direct (bt, break, stepi, detach);
# GET stacks answers 409 naming the session meanwhile and its stop after; targets are left as
# found; a second client is turned away; a breakpoint left is removed; DELETE and SIGTERM end a
# session; then tests/dap/server.test.js (DebugClient over TCP).  One PASS/FAIL line a case; a
# missing peer (gdb-multiarch, node, curl) is a failure.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

RSPWALKD=${RSPWALKD:-$IT_ROOT/build/release/rspwalkd}
DEEP=$IT_ROOT/build/fixtures/x86_64/deep-s0-O0-dyn
THREADS=$IT_ROOT/build/fixtures/x86_64/threads-s0-O0-dyn
SRV_PID=
srv_stop() {
    if [ -n "$SRV_PID" ]; then
        kill -TERM "$SRV_PID" 2>/dev/null
        wait "$SRV_PID" 2>/dev/null
        SRV_RC=$?
    fi
    SRV_PID=
}
trap 'srv_stop; it_cleanup' EXIT

for peer in gdb-multiarch:gdb-multiarch curl:curl node:nodejs npm:npm python3:python3; do
    command -v "${peer%%:*}" >/dev/null 2>&1 || {
        echo "FAIL server-doors/setup: missing peer: ${peer%%:*} (apt-get install ${peer#*:})"
        exit 1
    }
done
for f in "$RSPWALKD" "$DEEP" "$THREADS"; do
    [ -x "$f" ] || {
        echo "FAIL server-doors/setup: not built: $f (make all fixtures)"
        exit 1
    }
done

# srv_start: rspwalkd with target 1 the stub at IT_PORT and its RSP door; sets HTTP, DOOR.
srv_start() {
    local i log=$IT_TMP/rspwalkd.log
    : >"$log"
    timeout -k 5 300 "$RSPWALKD" --db :memory: --listen 127.0.0.1:0 --rsp-listen 127.0.0.1:0=1 \
        "127.0.0.1:$IT_PORT" 2>"$log" &
    SRV_PID=$!
    HTTP='' DOOR=''
    for ((i = 0; i < 100; i++)); do
        HTTP=$(sed -n 's|^rspwalkd: listening on \(http://.*\)/$|\1|p' "$log")
        DOOR=$(sed -n 's/^rspwalkd: RSP door for target 1 on //p' "$log")
        [ -n "$HTTP" ] && [ -n "$DOOR" ] && state_is stopped && return 0
        kill -0 "$SRV_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "rspwalkd did not start: $(tail -n 1 "$log")"
    return 1
}

state_is() {
    curl -s "$HTTP/v1/targets/1" | grep -q "\"state\": \"$1\""
}

wait_state() {
    local i
    for ((i = 0; i < 200; i++)); do
        state_is "$1" && return 0
        sleep 0.05
    done
    return 1
}

# gdb_run PROG ADDR OUT CMD...: gdb-multiarch on PROG at ADDR, each CMD an -ex.
gdb_run() {
    local prog=$1 addr=$2 out=$3 c args=()
    shift 3
    for c in "$@"; do args+=(-ex "$c"); done
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set debuginfod enabled off' \
        -ex 'set sysroot /' -ex 'set pagination off' -ex 'set confirm off' \
        -ex "target remote $addr" "${args[@]}" "$prog" >"$out" 2>&1
}

norm() {
    sed -e 's/process [0-9][0-9]*/process N/g' -e 's/LWP [0-9][0-9]*/LWP N/g' \
        -e 's/Thread [0-9][0-9.]*/Thread N/g' -e '/^Remote debugging using/d' "$1"
}

fail() {
    echo "FAIL server-doors/$1: $2"
    [ -f "$IT_TMP/rspwalkd.log" ] && sed 's/^/    rspwalkd: /' "$IT_TMP/rspwalkd.log" | tail -n 8
    return 1
}

# same NAME CMD...: the commands direct and through rspwalkd's door: same output.
same() {
    local name=$1 t0
    shift
    t0=$(it_now_ms)
    it_stub_start "$DEEP" || { fail "$name" "gdbserver" && return 1; }
    gdb_run "$DEEP" "127.0.0.1:$IT_PORT" "$IT_TMP/direct.out" "$@"
    it_stub_stop
    it_stub_start "$DEEP" || { fail "$name" "gdbserver" && return 1; }
    srv_start || { fail "$name" "rspwalkd did not start" && it_stub_stop && return 1; }
    gdb_run "$DEEP" "$DOOR" "$IT_TMP/door.out" "$@"
    if ! diff <(norm "$IT_TMP/direct.out") <(norm "$IT_TMP/door.out") >"$IT_TMP/diff"; then
        fail "$name" "gdb's output differs through rspwalkd's door"
        sed 's/^/    /' "$IT_TMP/diff" | head -n 30
    elif ! grep -q "door session of RSP client .* ended (detached); the target runs" \
        "$IT_TMP/rspwalkd.log"; then
        fail "$name" "no detached session in rspwalkd's log"
    else
        echo "PASS server-doors/gdb-$name ($(($(it_now_ms) - t0)) ms)"
    fi
    srv_stop
    it_stub_stop
}

# shellcheck disable=SC2016  # gdb's $sp and $pc, not the shell's
same bt 'continue' 'bt' 'thread apply all bt' 'info registers rip rsp rbp' 'x/8gx $sp' \
    'frame 20' 'info frame' 'detach'
grep -q '^#40 .* in main ()' "$IT_TMP/door.out" ||
    fail gdb-bt-depth "no frame #40 in main through the door"
# shellcheck disable=SC2016
same session 'break d20' 'continue' 'bt' 'stepi' 'x/i $pc' 'info registers rip' 'stepi' \
    'bt 3' 'delete' 'continue' 'bt 2' 'detach'
for want in 'Breakpoint 1, d20' 'detached'; do
    grep -q "$want" "$IT_TMP/door.out" ||
        fail "gdb-session-$want" "'$want' not in gdb's output through the door"
done

# HTTP during and after a session without detach: 409 naming it, then the session's stop.
t0=$(it_now_ms)
if it_stub_start "$THREADS" && srv_start; then
    gdb_run "$THREADS" "$DOOR" "$IT_TMP/gdb.out" 'continue' 'info threads' \
        "shell curl -s -o $IT_TMP/during.json -w '%{http_code}\n' $HTTP/v1/targets/1/stacks >$IT_TMP/during.code" \
        'bt' 'disconnect'
    # The link comes back when the door has seen the connection close, just after gdb ends.
    for ((i = 0; i < 100; i++)); do
        curl -s -o "$IT_TMP/after.json" -w '%{http_code}\n' "$HTTP/v1/targets/1/stacks" \
            >"$IT_TMP/after.code"
        grep -q '^409$' "$IT_TMP/after.code" || break
        sleep 0.05
    done
    if ! grep -q '^409$' "$IT_TMP/during.code" ||
        ! grep -q 'held by a door session (RSP client 127.0.0.1:[0-9]* on' "$IT_TMP/during.json"; then
        fail http-during "GET stacks during the session: $(cat "$IT_TMP/during.code" "$IT_TMP/during.json")"
    elif ! grep -q '^200$' "$IT_TMP/after.code"; then
        fail http-after "GET stacks after the session: $(cat "$IT_TMP/after.code" "$IT_TMP/after.json")"
    elif ! python3 - "$IT_TMP/after.json" "$IT_TMP/gdb.out" <<'PYEOF'; then
import json, re, sys
doc = json.load(open(sys.argv[1]))
gdb = open(sys.argv[2]).read()
# gdb's frame 0 of the stopped thread is the document's frame 0 of one of its threads.
m = re.search(r"^#0\s+(?:0x[0-9a-f]+ in )?(\w+)", gdb, re.M)
names = [t["frames"][0].get("function") for t in doc["threads"] if t["frames"]]
nthreads = len(re.findall(r"^\*?\s+\d+\s+Thread ", gdb, re.M))
ok = m is not None and m.group(1) in names and len(doc["threads"]) == nthreads
sys.exit(0 if ok else f"gdb's #0 {m and m.group(1)} not a frame 0 of {names}, or the threads differ")
PYEOF
        fail http-after "the server's walk after the session is not of the session's stop"
    elif ! grep -q 'ended; the target stays stopped' "$IT_TMP/rspwalkd.log"; then
        fail http-after "a target found stopped was not left stopped"
    else
        echo "PASS server-doors/http-during-and-after ($(($(it_now_ms) - t0)) ms)"
    fi
else
    fail http-during-and-after "rspwalkd or gdbserver did not start"
fi
srv_stop
it_stub_stop

# A target found running: stopped for the session, running again after it; a second client
# meanwhile is turned away; a bad checksum gets a NAK; the server ends cleanly.
t0=$(it_now_ms)
if it_stub_start /bin/sleep 600 && srv_start; then
    curl -s -X POST "$HTTP/v1/targets/1/resume" >/dev/null
    if ! wait_state running; then
        fail found-running "the target did not run"
    elif ! python3 - "$DOOR" >"$IT_TMP/raw.out" 2>&1 <<'PYEOF'; then
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
def conn():
    s = socket.create_connection((host, int(port)))
    s.settimeout(10)
    return s
def frame(p):
    return b"$" + p + b"#%02x" % (sum(p) & 0xff)
def reply(s):
    buf = b""
    while b"#" not in buf or len(buf) < buf.index(b"#") + 3:
        buf += s.recv(4096)
    return buf
a = conn()
a.sendall(b"$qSupported#00")            # bad checksum
if a.recv(1) != b"-":
    sys.exit("no NAK for a bad checksum")
a.sendall(frame(b"?"))
r = reply(a)
if b"$T" not in r and b"$S" not in r:
    sys.exit(f"'?' answered {r!r}: the target was not stopped for the session")
b = conn()                              # a second client while the first holds the link
b.sendall(frame(b"?"))
try:
    extra = b.recv(100)
except ConnectionResetError:            # closed with our '?' unread
    extra = b""
except socket.timeout:
    extra = b"timeout"
if extra not in (b"",):
    sys.exit(f"the second client was not turned away: {extra!r}")
a.sendall(frame(b"qFrobnicate"))        # unknown: the stub's empty reply, passed through
if b"$#00" not in reply(a):
    sys.exit("an unknown packet was not answered empty")
a.sendall(frame(b"g"))                  # rip: the 17th register, 8 bytes
g = reply(a).split(b"$", 1)[1].split(b"#", 1)[0]
rip = int.from_bytes(bytes.fromhex(g[16 * 16:17 * 16].decode()), "little")
a.sendall(frame(b"Z0,%x,1" % rip))
if b"$OK#" not in reply(a):
    sys.exit("the breakpoint was not inserted")
a.close()                               # no detach, a breakpoint left: as found, removed
PYEOF
        fail found-running "$(tail -n 1 "$IT_TMP/raw.out")"
    elif ! wait_state running; then
        fail found-running "the target did not run again after the session: $(curl -s "$HTTP/v1/targets/1")"
    elif ! grep -q 'held by a door session' "$IT_TMP/rspwalkd.log"; then
        fail found-running "no message for the client turned away"
    elif ! grep -q 'removed 1 breakpoint the front end left inserted' "$IT_TMP/rspwalkd.log"; then
        fail found-running "the breakpoint left inserted was not removed"
    else
        curl -s -o /dev/null -w '%{http_code}\n' "$HTTP/v1/targets/1/stacks" >"$IT_TMP/code"
        srv_stop
        if ! grep -q '^200$' "$IT_TMP/code"; then
            fail found-running "GET stacks after the session: $(cat "$IT_TMP/code")"
        elif [ "${SRV_RC:-1}" != 0 ]; then
            fail found-running "rspwalkd exited $SRV_RC at SIGTERM"
        else
            echo "PASS server-doors/found-running-and-bad-input ($(($(it_now_ms) - t0)) ms)"
        fi
    fi
else
    fail found-running "rspwalkd or gdbserver did not start"
fi
srv_stop
it_stub_stop

# teardown HOW: a session on a target found running ends when the target is deleted (HOW
# delete) or the server is stopped (HOW term): the client's socket closed, the target
# running again and no longer stopped by the server.
teardown() {
    local how=$1 t0 i code=
    t0=$(it_now_ms)
    if ! it_stub_start /bin/sleep 600 || ! srv_start; then
        fail "teardown-$how" "rspwalkd or gdbserver did not start"
        srv_stop
        it_stub_stop
        return 1
    fi
    curl -s -X POST "$HTTP/v1/targets/1/resume" >/dev/null
    wait_state running
    python3 - "$DOOR" >"$IT_TMP/hold.out" 2>&1 <<'PYEOF' &
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.settimeout(30)
s.sendall(b"$?#3f")
got = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    got += d
print("closed" if b"$T" in got else f"no stop reply: {got!r}")
PYEOF
    local hold=$!
    for ((i = 0; i < 100; i++)); do
        grep -q 'door session of RSP client .* begins' "$IT_TMP/rspwalkd.log" && break
        sleep 0.05
    done
    if [ "$how" = delete ]; then
        code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$HTTP/v1/targets/1")
    else
        srv_stop
    fi
    wait "$hold"
    sleep 0.2
    local st
    st=$(sed -n 's/^State:\s*\(.\).*/\1/p' "/proc/$IT_INFERIOR_PID/status" 2>/dev/null)
    if [ "$how" = delete ] && [ "$code" != 204 ]; then
        fail "teardown-$how" "DELETE answered $code"
    elif [ "$how" = term ] && [ "${SRV_RC:-1}" != 0 ]; then
        fail "teardown-$how" "rspwalkd exited $SRV_RC at SIGTERM during a session"
    elif ! grep -q '^closed$' "$IT_TMP/hold.out"; then
        fail "teardown-$how" "the client: $(tail -n 1 "$IT_TMP/hold.out")"
    elif [ "$st" != S ] && [ "$st" != R ]; then
        fail "teardown-$how" "the target is not running after the session (state '$st')"
    else
        echo "PASS server-doors/teardown-$how ($(($(it_now_ms) - t0)) ms)"
    fi
    srv_stop
    it_stub_stop
}
teardown delete
teardown term

# A target found stopped that the client resumed and left running: stopped again, and the
# server's walk answers (the door interrupted it; as found).
t0=$(it_now_ms)
if it_stub_start /bin/sleep 600 && srv_start; then
    python3 - "$DOOR" >"$IT_TMP/left.out" 2>&1 <<'PYEOF'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b"$vCont;c#a8")
time.sleep(0.5)
s.close()
PYEOF
    code=
    for ((i = 0; i < 100; i++)); do
        code=$(curl -s -o "$IT_TMP/left.json" -w '%{http_code}' "$HTTP/v1/targets/1/stacks")
        [ "$code" != 409 ] && break
        sleep 0.05
    done
    if [ "$code" != 200 ]; then
        fail left-running "GET stacks after the session: $code $(cat "$IT_TMP/left.json")"
    elif ! state_is stopped; then
        fail left-running "a target found stopped is not stopped after the session"
    elif ! grep -q 'ended; the target stays stopped' "$IT_TMP/rspwalkd.log"; then
        fail left-running "no 'stays stopped' in rspwalkd's log"
    else
        echo "PASS server-doors/left-running-found-stopped ($(($(it_now_ms) - t0)) ms)"
    fi
else
    fail left-running "rspwalkd or gdbserver did not start"
fi
srv_stop
it_stub_stop

# The DAP door: tests/dap/server.test.js, its lines as ours.
dap=$IT_ROOT/tests/dap
if [ ! -d "$dap/node_modules/@vscode/debugadapter-testsupport" ] &&
    ! out=$(cd "$dap" && npm ci --no-audit --no-fund 2>&1); then
    fail dap-setup "npm ci in tests/dap failed: $(tail -n 1 <<<"$out")"
else
    (cd "$dap" && RSPWALKD=$RSPWALKD node --test --test-concurrency=1 --test-reporter=./reporter.mjs \
        server.test.js) | sed -E 's#^(PASS|FAIL) dap/server/#\1 server-doors/dap-#'
fi
