#!/usr/bin/env bash
# tests/integration/run-badinput.sh -- rspwalk against peers and inputs that are wrong.
#
# Each case expects a non-zero exit within 20 s and exactly one line on stderr,
# "rspwalk: ...", naming the thing (address, file, thread) and the cause.  The fake peers are
# small python3 servers on 127.0.0.1, port 0, that exit by themselves within 20 s; only the
# pids started here are killed.  Not a protocol conformance test (tests/unit has those).
# IT_WRAP (a command prefix such as valgrind) and BADINPUT_CASES (names) select runs.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# mode: garbage (answers every read with junk and broken packets), hangup (half a stop reply,
# then close), silent (accepts, reads, never answers).  Prints the port, then serves one
# client until it hangs up or 20 s pass.
# shellcheck disable=SC2016  # python source, not shell
FAKE_PEER='
import socket, sys, time
mode = sys.argv[1]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
print(srv.getsockname()[1], flush=True)
deadline = time.monotonic() + 20
srv.settimeout(20)
try:
    conn, _ = srv.accept()
except OSError:
    sys.exit(0)
conn.settimeout(0.5)
while time.monotonic() < deadline:
    try:
        data = conn.recv(4096)
    except socket.timeout:
        continue
    except OSError:
        break
    if not data:
        break
    if mode == "garbage":
        conn.sendall(b"\xff\xfe junk \x00$T0g;\x7f#zz$$#0-+$xyz#00" * 4)
    elif mode == "hangup":
        conn.sendall(b"+$T05thr")
        break
conn.close()
'

BI_PEER_PID=
# bi_fake_peer MODE: start a fake peer, set BI_PORT.
bi_fake_peer() {
    local out=$IT_TMP/peer.port i
    : >"$out"
    python3 -c "$FAKE_PEER" "$1" >"$out" 2>"$IT_TMP/peer.err" &
    BI_PEER_PID=$!
    for ((i = 0; i < 100; i++)); do
        BI_PORT=$(head -n 1 "$out")
        [ -n "$BI_PORT" ] && return 0
        sleep 0.05
    done
    echo "fake peer did not start: $(tail -n 1 "$IT_TMP/peer.err")"
    return 1
}

bi_fake_peer_stop() {
    if [ -n "$BI_PEER_PID" ]; then
        kill -TERM "$BI_PEER_PID" 2>/dev/null
        wait "$BI_PEER_PID" 2>/dev/null
        BI_PEER_PID=
    fi
}

# bi_refused_port: a loopback port nothing listens on (bound, then closed).
bi_refused_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1]); s.close()'
}

# bi_expect_error THING_RE CAUSE_RE RSPWALK_ARGS...: run rspwalk, check the failure.
bi_expect_error() {
    local thing=$1 cause=$2 err=$IT_TMP/err rc lines
    shift 2
    # shellcheck disable=SC2086  # IT_WRAP is a command prefix: word splitting intended
    timeout -k 5 20 $IT_WRAP "$RSPWALK" "$@" >"$IT_TMP/out" 2>"$err"
    rc=$?
    lines=$(grep -c . "$err")
    if [ "$rc" = 0 ]; then
        echo "rspwalk exited 0; expected an error"
        return 1
    fi
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "rspwalk hung: killed after 20 s"
        return 1
    fi
    if [ "$rc" -ge 128 ]; then
        echo "rspwalk died of signal $((rc - 128))"
        cat "$err"
        return 1
    fi
    if [ "$lines" != 1 ] || ! head -n 1 "$err" | grep -q '^rspwalk: '; then
        echo "stderr is not one 'rspwalk: ...' line ($lines lines):"
        head -n 20 "$err"
        return 1
    fi
    if ! grep -Eqi -- "$thing" "$err" || ! grep -Eqi -- "$cause" "$err"; then
        echo "message does not name /$thing/ and /$cause/: $(cat "$err")"
        return 1
    fi
    echo "rc $rc: $(cat "$err")"
    return 0
}

case_refused() {
    local port
    port=$(bi_refused_port)
    bi_expect_error "127\.0\.0\.1:$port" "refused" "127.0.0.1:$port"
}

case_garbage() {
    bi_fake_peer garbage || return 1
    bi_expect_error "127\.0\.0\.1:$BI_PORT" "checksum|garbage|malformed|invalid|unexpected|protocol" \
        --timeout 2 "127.0.0.1:$BI_PORT"
}

case_hangup() {
    bi_fake_peer hangup || return 1
    bi_expect_error "127\.0\.0\.1:$BI_PORT" "closed|hung up|end of file|EOF|reset" --timeout 5 "127.0.0.1:$BI_PORT"
}

case_silent() {
    bi_fake_peer silent || return 1
    bi_expect_error "127\.0\.0\.1:$BI_PORT" "no reply|timed? ?out|timeout" --timeout 1 "127.0.0.1:$BI_PORT"
}

case_not_elf() {
    local rc
    it_stub_start "$IT_ROOT/build/fixtures/$IT_ARCH/chain-s0-O0-dyn" || return 1
    bi_expect_error "/etc/passwd" "ELF" --sysroot / --exe /etc/passwd \
        "127.0.0.1:$IT_PORT"
    rc=$?
    it_stub_stop
    return $rc
}

case_no_thread() {
    local prog=$IT_ROOT/build/fixtures/$IT_ARCH/chain-s0-O0-dyn rc
    it_stub_start "$prog" || return 1
    bi_expect_error "999999|f423f" "no such thread|not found|unknown thread" -c --thread 999999 \
        --sysroot / --exe "$prog" "127.0.0.1:$IT_PORT"
    rc=$?
    it_stub_stop
    return $rc
}

# bi_case NAME: one line per case, like lib.sh's it_case, with rspwalk's message.
bi_case() {
    local name=$1 start rc
    start=$(it_now_ms)
    {
        if ! it_missing_peers gdbserver:gdbserver python3:python3; then
            false
        elif [ ! -x "$RSPWALK" ]; then
            echo "rspwalk not built: $RSPWALK (make build/release/rspwalk)"
            false
        elif [ ! -x "$IT_ROOT/build/fixtures/$IT_ARCH/chain-s0-O0-dyn" ]; then
            echo "fixture not built: build/fixtures/$IT_ARCH/chain-s0-O0-dyn (make fixtures)"
            false
        else
            "case_${name//-/_}"
        fi
    } >"$IT_TMP/why" 2>&1
    rc=$?
    bi_fake_peer_stop
    if [ "$rc" = 0 ]; then
        IT_PASSED=$((IT_PASSED + 1))
        echo "PASS badinput/$name ($(($(it_now_ms) - start)) ms) $(head -n 1 "$IT_TMP/why")"
    else
        IT_FAILED=$((IT_FAILED + 1))
        echo "FAIL badinput/$name: $(head -n 1 "$IT_TMP/why")"
        tail -n +2 "$IT_TMP/why" | head -n 20 | sed 's/^/    /'
    fi
}

trap 'bi_fake_peer_stop; it_cleanup' EXIT
for c in ${BADINPUT_CASES:-refused garbage hangup silent not-elf no-thread}; do
    bi_case "$c"
done
[ "$IT_FAILED" = 0 ]
