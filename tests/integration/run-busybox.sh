#!/usr/bin/env bash
# tests/integration/run-busybox.sh -- Debian's stripped busybox-static for arm64 and ppc64el.
# Real optimized code of other architectures that no fixture covers: no symbols, CFI only for
# libc's part, functions without frame records (AArch64 `sub sp; str x30,[sp,#N]`, PowerPC
# -Os prologues through _savegpr0_N).  Each case runs `busybox sleep 1000`,
# `busybox sh -c 'while :; do :; done'`, `busybox md5sum /dev/zero` or an endless
# `busybox awk` loop under qemu-user, stops it after a delay (SIGINT to
# qemu: its gdbstub reads no interrupt byte while the guest runs), walks it with rspwalk and
# judges the walk with busybox_check.py: every return address follows a call in the binary,
# the walk ends at the bottom (AArch64: in _start; ppc64le: where gdb's back-chain walk ends;
# gdb is wrong on AArch64, and on PowerPC in a frame 0 without symbols, docs/gdb-differences.md),
# the arm64 sleep has the 12 frames of the binary scripts/deps fetches, the ppc64le sleep gdb's.  The binaries are build/busybox/
# (scripts/deps); a missing one is a failed case.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

BB_DIR=$IT_ROOT/build/busybox
# The arm64 sleep's stack in busybox-static 1:1.35.0-4+deb12u1+b1 (build-id 2d0361f9...): the
# issue's walk, checked frame by frame against the binary's code.
BB_ARM64_ID=2d0361f90c8817f80eb486e1ccf7f5177cdd2883
BB_ARM64_SLEEP=0x4889c8,0x4315ac,0x551c44,0x534eac,0x4b6a04,0x4b6a58,0x4b6da0,0x4b6a3c,0x4b6e18,0x404928,0x404cb4,0x4005b0

# bb_start ARCH PROG ARGS...: qemu-ARCH with its gdbstub on a unix socket and rsp_proxy.py in
# front; sets IT_STUB_PID (qemu), IT_PROXY_PID and IT_PORT.
bb_start() {
    local arch=$1 sock=$IT_TMP/qemu.sock i line
    shift
    IT_PORT=
    rm -f "$sock"
    : >"$IT_TMP/proxy.port"
    "qemu-$arch" -g "$sock" "$@" </dev/null >"$IT_TMP/qemu.log" 2>&1 &
    IT_STUB_PID=$!
    for ((i = 0; i < 100; i++)); do
        [ -S "$sock" ] && break
        sleep 0.05
    done
    python3 "$IT_ROOT/tests/tools/rsp_proxy.py" --idle "$IT_TIMEOUT" "unix:$sock" \
        </dev/null >"$IT_TMP/proxy.port" 2>"$IT_TMP/proxy.log" &
    IT_PROXY_PID=$!
    for ((i = 0; i < 200; i++)); do
        if IFS= read -r line <"$IT_TMP/proxy.port" && [[ $line =~ ^[0-9]+$ ]]; then
            IT_PORT=$line
            break
        fi
        sleep 0.05
    done
    [ -n "$IT_PORT" ] || {
        echo "qemu-$arch or the proxy did not start: $(tail -n 1 "$IT_TMP/proxy.log")"
        return 1
    }
}

# bb_case_run DIR ARCH DEBARCH DELAY ARGS...: one stop of busybox ARGS; prints why on failure.
bb_case_run() {
    local dir=$1 arch=$2 deb=$3 delay=$4 checks=() id
    shift 4
    local prog=$BB_DIR/$deb/bin/busybox
    if [ ! -x "$prog" ]; then
        echo "missing: $prog (scripts/deps fetches Debian's busybox-static:$deb)"
        return 1
    fi
    it_missing_peers "qemu-$arch:qemu-user" gdb-multiarch:gdb-multiarch || return 1
    IT_STUB=qemu
    bb_start "$arch" "$prog" "$@" || return 1
    if ! python3 "$IT_DIR/rsp_interrupt.py" "127.0.0.1:$IT_PORT" "$delay" "$IT_STUB_PID" \
        >"$dir/stop.txt" 2>&1; then
        echo "no stop: $(tail -n 1 "$dir/stop.txt")"
        return 1
    fi
    if ! timeout "$IT_TIMEOUT" $IT_WRAP "$RSPWALK" -f json -e "$prog" "127.0.0.1:$IT_PORT" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"; then
        echo "rspwalk failed: $(tail -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    timeout "$IT_TIMEOUT" "$RSPWALK" -e "$prog" "127.0.0.1:$IT_PORT" >"$dir/rspwalk.txt" 2>&1
    case $arch in
    aarch64)
        checks=(--start-entry)
        id=$(readelf -n "$prog" 2>/dev/null | sed -n 's/^ *Build ID: *//p')
        if [ "$1" = sleep ] && [ "$id" = "$BB_ARM64_ID" ]; then
            checks+=(--expect "$BB_ARM64_SLEEP")
        fi
        ;;
    ppc64le)
        timeout "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex "file $prog" \
            -ex "target remote 127.0.0.1:$IT_PORT" -ex bt >"$dir/gdb.txt" 2>&1
        checks=(--gdb-bottom "$dir/gdb.txt")
        [ "$1" = sleep ] && checks=(--gdb "$dir/gdb.txt")
        ;;
    esac
    python3 "$IT_DIR/busybox_check.py" "$dir/rspwalk.json" "$prog" "${checks[@]}" \
        >"$dir/check.txt" 2>&1
    local rc=$?
    cat "$dir/check.txt"
    return $rc
}

# bb_restgpr_run DIR: ppc64le, busybox md5sum stopped by a breakpoint in _restgpr0_28 just
# before its `ld r0,16(r1); mtlr r0`: the function returning through it has popped its frame
# and LR still holds the return address of its own last call; the caller is the word at
# r1+16.  gdb takes the stale LR (docs/gdb-differences.md); rspwalk's frame 1 must be the
# word.  The address is found in the binary by the routine's instructions.
bb_restgpr_run() {
    local dir=$1 prog=$BB_DIR/ppc64el/bin/busybox addr lr slot
    if [ ! -x "$prog" ]; then
        echo "missing: $prog (scripts/deps fetches Debian's busybox-static:ppc64el)"
        return 1
    fi
    it_missing_peers qemu-ppc64le:qemu-user gdb-multiarch:gdb-multiarch || return 1
    # ld r28,-32(r1); ld r0,16(r1); ld r29,-24(r1); mtlr r0 (little-endian words)
    addr=$(python3 - "$prog" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
pat = struct.pack("<4I", 0xEB81FFE0, 0xE8010010, 0xEBA1FFE8, 0x7C0803A6)
at = d.find(pat)
phoff, = struct.unpack_from("<Q", d, 32)
phentsize, phnum = struct.unpack_from("<HH", d, 54)
for i in range(phnum):
    t, _f, off, vaddr, _p, filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
    if t == 1 and at >= 0 and off <= at < off + filesz:
        print("%#x" % (vaddr + at - off))
PY
)
    if [ -z "$addr" ]; then
        echo "no _restgpr0_28 (ld r28,-32(r1); ld r0,16(r1); ...) in $prog"
        return 1
    fi
    IT_STUB=qemu
    bb_start ppc64le "$prog" md5sum /dev/zero || return 1
    # shellcheck disable=SC2016  # $lr and $r1 are gdb's
    timeout "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set architecture powerpc:common64' \
        -ex "file $prog" -ex "target remote 127.0.0.1:$IT_PORT" -ex "break *$addr" \
        -ex continue -ex delete -ex 'printf "LR %#lx\n", $lr' \
        -ex 'printf "SLOT %#lx\n", *(unsigned long *)($r1 + 16)' -ex bt -ex disconnect \
        </dev/null >"$dir/gdb.txt" 2>&1
    lr=$(sed -n 's/^LR //p' "$dir/gdb.txt")
    slot=$(sed -n 's/^SLOT //p' "$dir/gdb.txt")
    if [ -z "$slot" ]; then
        echo "gdb did not stop at $addr: $(grep -v '^warning' "$dir/gdb.txt" | tail -n 1)"
        return 1
    fi
    if ! timeout "$IT_TIMEOUT" $IT_WRAP "$RSPWALK" -f json -e "$prog" "127.0.0.1:$IT_PORT" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"; then
        echo "rspwalk failed: $(tail -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    python3 "$IT_DIR/busybox_check.py" "$dir/rspwalk.json" "$prog" >"$dir/check.txt" 2>&1
    local rc=$?
    python3 - "$dir/rspwalk.json" "$slot" "$lr" <<'PY' >>"$dir/check.txt" || rc=1
import json, sys
frames = json.load(open(sys.argv[1]))["threads"][0]["frames"]
slot, lr = int(sys.argv[2], 16), int(sys.argv[3], 16)
pc = int(frames[1]["pc"], 16) if len(frames) > 1 else None
if pc != slot:
    print("frame 1 is %s, not the word at r1+16 (%#x; LR %#x)" % (pc and hex(pc), slot, lr))
    sys.exit(1)
print("frame 1 %#x is the word at r1+16, not the stale LR %#x" % (slot, lr))
PY
    cat "$dir/check.txt"
    return $rc
}

# bb_case NAME ARCH DEBARCH DELAY ARGS...: run one case, print its line, count it.
bb_case() {
    local name=$1 arch=$2 label=qemu-$2 dir=$IT_TMP/$1 start rc keep
    shift 2
    mkdir -p "$dir"
    start=$(it_now_ms)
    if [ "$1" = restgpr ]; then
        bb_restgpr_run "$dir" >"$dir/why.txt" 2>&1
    else
        bb_case_run "$dir" "$arch" "$@" >"$dir/why.txt" 2>&1
    fi
    rc=$?
    IT_STUB=qemu it_stub_stop
    keep=$IT_ROOT/build/integration/$label/$name
    rm -rf "$keep"
    if [ "$rc" != 0 ] || [ "$IT_KEEP" = 1 ]; then
        mkdir -p "$keep" && cp -r "$dir/." "$keep/" && it_keep_logs "$keep"
    fi
    if [ "$rc" = 0 ]; then
        IT_PASSED=$((IT_PASSED + 1))
        echo "PASS $label/$name: $(tail -n 1 "$dir/why.txt") ($(($(it_now_ms) - start)) ms)"
        return 0
    fi
    IT_FAILED=$((IT_FAILED + 1))
    echo "FAIL $label/$name: $(head -n 1 "$dir/why.txt")"
    tail -n +2 "$dir/why.txt" | head -n 40 | sed 's/^/    /'
    echo "    (artifacts: build/integration/$label/$name/)"
    return 1
}

loop='while :; do :; done'
for a in aarch64:arm64 ppc64le:ppc64el; do
    arch=${a%%:*} deb=${a#*:}
    bb_case busybox-sleep "$arch" "$deb" 1 sleep 1000
    for delay in 0.3 0.8 1.5; do
        bb_case "busybox-sh-loop-$delay" "$arch" "$deb" "$delay" sh -c "$loop"
    done
    bb_case busybox-md5sum "$arch" "$deb" 0.9 md5sum /dev/zero
    bb_case busybox-awk "$arch" "$deb" 0.9 awk 'BEGIN { while (1) x++ }'
    [ "$arch" = ppc64le ] && bb_case busybox-restgpr0 "$arch" restgpr

done
[ "$IT_FAILED" = 0 ]
