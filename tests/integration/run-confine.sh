#!/usr/bin/env bash
# tests/integration/run-confine.sh -- files a stub names, and the cache, against a lying stub.
#
# gdbserver runs the chain fixture; a small python3 proxy between it and rspwalk rewrites the
# library list (qXfer:libraries-svr4) so that libc is named as the case needs: a FIFO, a name
# climbing out of --sysroot, a copy of libc whose .gnu_debuglink climbs out of the cache, a
# copy of libc with other symbol names (poisoning the cache for a later honest session).  Each
# case must end within 30 s with the walk going on and the one-line warning said.  Kills only
# the gdbservers and proxies it started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
prog=build/fixtures/x86_64/chain-s0-O0-dyn
libc=/lib/x86_64-linux-gnu/libc.so.6
rspwalk=${RSPWALK:-build/release/rspwalk}
work=$(mktemp -d)
gs=
px=
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    [ -n "$px" ] && kill "$px" 2>/dev/null
    [ -n "$gs" ] && kill "$gs" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
for peer in gdbserver python3 readelf; do
    if ! command -v "$peer" >/dev/null; then
        echo "FAIL confine: missing peer: $peer (apt-get install gdbserver python3 binutils)"
        exit 1
    fi
done
if [ ! -x "$prog" ]; then
    echo "FAIL confine: missing fixture $prog (cp -a /work/main/build/fixtures build/, or make fixtures)"
    exit 1
fi
status=0

# The proxy: relays bytes both ways; in each packet from the stub holding a library list,
# replaces the bytes FROM by TO (reframed with a new checksum).  Prints its port first.
# shellcheck disable=SC2016  # python source, not shell
PROXY='
import selectors, socket, sys
up_port, old, new = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3].encode()
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
print(srv.getsockname()[1], flush=True)
srv.settimeout(30)
cli, _ = srv.accept()
up = socket.create_connection(("127.0.0.1", up_port))
sel = selectors.DefaultSelector()
sel.register(cli, selectors.EVENT_READ, up)
sel.register(up, selectors.EVENT_READ, cli)
pending = b""
def from_stub(data):
    global pending
    pending += data
    out = b""
    while pending:
        d = pending.find(b"$")
        if d < 0:
            out, pending = out + pending, b""
            break
        h = pending.find(b"#", d)
        if h < 0 or len(pending) < h + 3:
            out, pending = out + pending[:d], pending[d:]
            break
        payload = pending[d + 1:h]
        if b"<library-list-svr4" in payload:
            payload = payload.replace(old, new)
        out += pending[:d] + b"$" + payload + b"#%02x" % (sum(payload) & 0xFF)
        pending = pending[h + 3:]
    return out
while True:
    events = sel.select(30)
    if not events:
        break
    for key, _ in events:
        data = key.fileobj.recv(65536)
        if not data:
            sys.exit(0)
        key.data.sendall(from_stub(data) if key.fileobj is up else data)
'

# start_stub: gdbserver on the fixture; sets gs and port.
# Each stub has a log of its own: the shell truncates a reused one only once the child runs.
nstub=0
start_stub() {
    local log
    port=
    nstub=$((nstub + 1))
    log=$work/gs.$nstub.log
    gdbserver 127.0.0.1:0 "$prog" >"$log" 2>&1 &
    gs=$!
    for _ in $(seq 100); do
        port=$(grep -o 'Listening on port [0-9]*' "$log" 2>/dev/null | head -1 | awk '{print $4}')
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    echo "gdbserver did not listen"
    return 1
}

# start_proxy NEW_NAME: the proxy in front of gdbserver naming libc NEW_NAME; sets px, pport.
start_proxy() {
    pport=
    python3 -c "$PROXY" "$port" "$libc" "$1" >"$work/px.$nstub.port" 2>"$work/px.err" &
    px=$!
    for _ in $(seq 100); do
        pport=$(head -n 1 "$work/px.$nstub.port" 2>/dev/null)
        [ -n "$pport" ] && return 0
        sleep 0.05
    done
    echo "proxy did not start: $(tail -n 1 "$work/px.err")"
    return 1
}

stop_all() {
    [ -n "$px" ] && kill "$px" 2>/dev/null && wait "$px" 2>/dev/null
    [ -n "$gs" ] && kill "$gs" 2>/dev/null && wait "$gs" 2>/dev/null
    px=
    gs=
}

# walk NAME NEW_LIBC_NAME ARGS...: rspwalk -c through the proxy (NEW_LIBC_NAME "": straight to
# gdbserver) into $work/NAME.{out,err}; sets rc (124: hung).
walk() {
    local name=$1 newname=$2 target
    shift 2
    start_stub || return 1
    target=127.0.0.1:$port
    if [ -n "$newname" ]; then
        start_proxy "$newname" || return 1
        target=127.0.0.1:$pport
    fi
    timeout -k 5 30 "$rspwalk" -c --exe "$prog" "$@" "$target" >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    stop_all
}

# report CASE WHY START_NS
report() {
    local ms=$((($(date +%s%N) - $3) / 1000000))
    if [ -z "$2" ]; then echo "PASS confine/$1 ($ms ms)"; else
        echo "FAIL confine/$1: $2"
        status=1
    fi
}

walked() { grep -q 'in main+' "$1"; }
libc_named() { grep -Eq "in __libc_start_(call_)?main" "$1"; }
build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ {print $3; exit}'; }
id=$(build_id "$libc")
mkdir -p "$work/nodebug"

# 1. libc under the sysroot is a FIFO: not opened (no hang), said once, the walk goes on and
#    libc comes from the target instead.
start=$(date +%s%N)
why=
mkdir -p "$work/fifo/lib/x86_64-linux-gnu"
mkfifo "$work/fifo$libc"
walk fifo "" --sysroot "$work/fifo" --cache-dir "$work/fifo.cache"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    why="rspwalk hung on the FIFO"
elif [ "$rc" != 0 ] || ! walked "$work/fifo.out"; then
    why="the walk did not go on (rc $rc): $(head -c 300 "$work/fifo.err")"
elif [ "$(grep -c "$work/fifo$libc: not a regular file; not used" "$work/fifo.err")" != 1 ]; then
    why="want one 'not a regular file' warning: $(head -c 400 "$work/fifo.err")"
elif ! libc_named "$work/fifo.out"; then
    why="libc's frames not named from the target's copy: $(head -c 600 "$work/fifo.out")"
fi
report fifo-library "$why" "$start"

# 2. A library name whose '..' climbs out of --sysroot to a real libc beside it: refused with a
#    warning, not read (libc's frames then have no names: nothing is fetched for it either).
start=$(date +%s%N)
why=
mkdir -p "$work/dotdot/sys" "$work/dotdot/outside"
cp "$libc" "$work/dotdot/outside/libc.so.6"
walk dotdot "/lib/../../outside/libc.so.6" --sysroot "$work/dotdot/sys" --cache-dir ""
if [ "$rc" != 0 ] || ! walked "$work/dotdot.out"; then
    why="the walk did not go on (rc $rc): $(head -c 300 "$work/dotdot.err")"
elif ! grep -q "'/lib/../../outside/libc.so.6': names a path above the sysroot; not used" \
    "$work/dotdot.err"; then
    why="no 'above the sysroot' warning: $(head -c 400 "$work/dotdot.err")"
elif libc_named "$work/dotdot.out"; then
    why="libc's frames were named: the file outside the sysroot was read"
fi
report dotdot-outside-sysroot "$why" "$start"

# 3. A link in the sysroot to a host path: resolved inside the sysroot (a chroot's meaning),
#    so the host's file is not read.
start=$(date +%s%N)
why=
mkdir -p "$work/link/lib/x86_64-linux-gnu"
ln -s "$work/dotdot/outside/libc.so.6" "$work/link$libc"
walk link "" --sysroot "$work/link" --cache-dir "" --debug-dir "$work/nodebug"
if [ "$rc" != 0 ] || ! walked "$work/link.out"; then
    why="the walk did not go on (rc $rc): $(head -c 300 "$work/link.err")"
elif libc_named "$work/link.out"; then
    why="libc's frames were named: the link was followed out of the sysroot"
fi
report sysroot-link-stays-inside "$why" "$start"

# 4. A fetched libc whose .gnu_debuglink is '../../outside/libc.debug', where a FIFO waits
#    (read, it would hang; CRC'd, any host file would be read): not followed.
start=$(date +%s%N)
why=
mkdir -p "$work/dl/sys" "$work/dl/served" "$work/dl/cache"
python3 - "$libc" "$work/dl/served/libc.so.6" <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
def sh(i):
    return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
stroff = sh(shstrndx)[4]
for i in range(shnum):
    s = sh(i)
    name = data[stroff + s[0]:data.index(0, stroff + s[0])]
    if name == b".gnu_debuglink":
        link = b"../../outside/libc.debug\0"
        link += b"\0" * (-len(link) % 4)
        assert len(link) + 4 <= s[5]
        body = link + struct.pack("<I", 0)
        data[s[4]:s[4] + s[5]] = body + b"\0" * (s[5] - len(body))
        break
else:
    sys.exit("no .gnu_debuglink in " + sys.argv[1])
open(sys.argv[2], "wb").write(data)
EOF
mkdir -p "$work/dl/outside"
mkfifo "$work/dl/outside/libc.debug"
RSPWALK_DEBUG=cache walk debuglink "$work/dl/served/libc.so.6" --sysroot "$work/dl/sys" \
    --cache-dir "$work/dl/cache" --debug-dir "$work/nodebug"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    why="rspwalk hung: the debug link was followed to the FIFO"
elif [ "$rc" != 0 ] || ! walked "$work/debuglink.out"; then
    why="the walk did not go on (rc $rc): $(grep -v '^rspwalk: \[' "$work/debuglink.err" | head -c 300)"
elif ! grep -q "is not a file name; not followed" "$work/debuglink.err"; then
    why="no 'not followed' message: $(grep -i debuglink "$work/debuglink.err" | head -c 400)"
elif ! libc_named "$work/debuglink.out"; then
    why="libc's frames not named from the fetched copy: $(head -c 600 "$work/debuglink.out")"
fi
report debuglink-outside-cache "$why" "$start"

# 5. Cache poisoning: a lying stub serves a libc with libc's build-id and another symbol name
#    (__libc_start_main spelt __libc_start_EVIL); a later honest session over the same cache
#    finds the copy is not the target's file, says so, fetches the real one and prints the right
#    names.  A third session reuses the good copy without a word.
start=$(date +%s%N)
why=
mkdir -p "$work/poison/sys" "$work/poison/served"
python3 -c 'import sys; d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(d.replace(b"__libc_start_main", b"__libc_start_EVIL"))' \
    "$libc" "$work/poison/served/libc.so.6"
pc=$work/poison/cache
walk poison1 "$work/poison/served/libc.so.6" --sysroot "$work/poison/sys" --cache-dir "$pc" \
    --debug-dir "$work/nodebug"
if [ "$rc" != 0 ] || ! grep -q "__libc_start_EVIL" "$work/poison1.out"; then
    why="the lying session did not store its copy (rc $rc): $(head -c 400 "$work/poison1.out")"
elif ! cmp -s "$pc/$id/libc.so.6" "$work/poison/served/libc.so.6"; then
    why="the lying copy is not in the cache as $id/libc.so.6"
else
    walk poison2 "" --sysroot "$work/poison/sys" --cache-dir "$pc" --debug-dir "$work/nodebug"
    if [ "$rc" != 0 ] || ! libc_named "$work/poison2.out"; then
        why="the honest session did not name __libc_start_main (rc $rc): $(head -c 600 "$work/poison2.out")"
    elif grep -q EVIL "$work/poison2.out"; then
        why="the honest session printed the poisoned name"
    elif [ "$(grep -c "not the target's '$libc'.*fetched again" "$work/poison2.err")" != 1 ]; then
        why="want one 'not the target's ... fetched again' warning: $(head -c 400 "$work/poison2.err")"
    elif ! cmp -s "$pc/$id/libc.so.6" "$libc"; then
        why="the cache does not hold the target's libc after the honest session"
    else
        walk poison3 "" --sysroot "$work/poison/sys" --cache-dir "$pc" --debug-dir "$work/nodebug"
        if [ "$rc" != 0 ] || ! libc_named "$work/poison3.out" || [ -s "$work/poison3.err" ]; then
            why="the good copy was not reused quietly (rc $rc): $(head -c 300 "$work/poison3.err")"
        fi
    fi
fi
report poisoned-cache-entry "$why" "$start"

# 6. The cache's modes, and its size limit: an old entry of 3 MiB in a cache limited to 2 MiB
#    is evicted when libc (2 MiB) is stored; the new entry stays.
start=$(date +%s%N)
why=
lc=$work/limit/cache
old=$lc/00112233445566778899aabbccddeeff00112233
mkdir -p "$work/limit/sys" "$old"
head -c $((3 * 1024 * 1024)) /dev/zero >"$old/libold.so"
touch -d '2 hours ago' "$old"
walk limit "" --sysroot "$work/limit/sys" --cache-dir "$lc" --cache-max 2 --debug-dir "$work/nodebug"
if [ "$rc" != 0 ] || ! libc_named "$work/limit.out"; then
    why="the walk failed (rc $rc): $(head -c 300 "$work/limit.err")"
elif [ -e "$old" ]; then
    why="the old entry was not evicted: $(ls -la "$lc")"
elif [ ! -f "$lc/$id/libc.so.6" ]; then
    why="the new entry was evicted"
elif [ "$(stat -c %a "$lc")" != 700 ] || [ "$(stat -c %a "$lc/$id")" != 700 ]; then
    why="cache directories are not mode 700: $(stat -c '%a %n' "$lc" "$lc/$id")"
elif [ "$(stat -c %a "$lc/$id/libc.so.6")" != 600 ]; then
    why="the cached file is not mode 600: $(stat -c '%a %n' "$lc/$id/libc.so.6")"
fi
report cache-limit-and-modes "$why" "$start"

exit $status
