#!/usr/bin/env bash
# tests/integration/run-qemu-system.sh -- rspwalk on QEMU system mode: a vCPU is a thread.
#
# Boots the tiny kernel of fixtures/src/kernel/ (make fixtures builds it) under
# qemu-system-<arch> with its gdbstub on a Unix socket in a private directory, waits until the
# kernel prints "kmain" on its serial port (the vCPU then spins in spin), and lets rspwalk
# connect (which stops the VM) and walk.  The frames must be spin k3 k2 k1 kmain _start, and
# gdb-multiarch's backtrace of the same stop must have the same names and pcs (rspwalk closes
# without detaching and gdb_oracle.sh ends with `disconnect`: the VM stays stopped; `D` would
# resume it, `k` would end QEMU).  One vCPU: x86 APs stay in the BIOS unless the kernel starts
# them, and aarch64 secondaries stay off under PSCI.
# Builds nothing; kills only the qemu it started; each case is bounded by timeouts.
# Env: RSPWALK (default build/release/rspwalk), IT_TIMEOUT (seconds per rspwalk or gdb run,
#      default 60), IT_KEEP=1 (keep the work directory: qemu, serial, rspwalk and gdb output).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
RSPWALK=${RSPWALK:-build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-qsys.XXXXXX")
qpid=
failed=0

stop_qemu() {
    local i
    [ -n "$qpid" ] || return 0
    kill -TERM "$qpid" 2>/dev/null
    for ((i = 0; i < 40; i++)); do
        kill -0 "$qpid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$qpid" 2>/dev/null
    wait "$qpid" 2>/dev/null
    qpid=
}
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    stop_qemu
    if [ "${IT_KEEP:-0}" = 1 ]; then
        echo "artifacts kept in $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# case_run ARCH QEMU PACKAGE QEMU-ARGS...: prints why on failure (one line first).
case_run() {
    local arch=$1 qemu=$2 pkg=$3 i spec
    shift 3
    local kernel=build/fixtures/kernel/$arch.elf dir=$work/$arch
    mkdir -p "$dir"
    for spec in "$qemu:$pkg" gdb-multiarch:gdb-multiarch python3:python3 timeout:coreutils; do
        if ! command -v "${spec%%:*}" >/dev/null 2>&1; then
            echo "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
            return 1
        fi
    done
    [ -f "$kernel" ] || { echo "kernel not built: $kernel (make fixtures)"; return 1; }
    [ -x "$RSPWALK" ] || { echo "rspwalk not built: $RSPWALK (make all)"; return 1; }

    # timeout: a qemu this script could not kill (the script itself killed) still ends.
    timeout -k 5 $((IT_TIMEOUT * 2)) "$qemu" "$@" -display none -no-reboot -m 64 \
        -monitor none -serial "file:$dir/serial.log" -kernel "$kernel" \
        -gdb "unix:$dir/gdb.sock,server,nowait" </dev/null >"$dir/qemu.log" 2>&1 &
    qpid=$!
    for ((i = 0; i < 200; i++)); do
        grep -q kmain "$dir/serial.log" 2>/dev/null && [ -S "$dir/gdb.sock" ] && break
        kill -0 "$qpid" 2>/dev/null || break
        sleep 0.05
    done
    if ! grep -q kmain "$dir/serial.log" 2>/dev/null || [ ! -S "$dir/gdb.sock" ]; then
        echo "the kernel did not reach kmain in 10 s: $(head -c 300 "$dir/qemu.log")"
        return 1
    fi
    sleep 0.1 # kmain -> spin is a few instructions

    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --exe "$kernel" "unix:$dir/gdb.sock" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    local rc=$?
    [ "$rc" = 124 ] && { echo "rspwalk timed out after $IT_TIMEOUT s"; return 1; }
    [ "$rc" = 0 ] || { echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"; return 1; }

    ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log \
        tests/integration/gdb_oracle.sh "$dir/gdb.sock" "$kernel" \
        >"$dir/oracle.json" 2>"$dir/oracle.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "gdb exited $rc: $(head -n 1 "$dir/oracle.err")"; return 1; }
    stop_qemu

    python3 - "$dir/rspwalk.json" "$dir/oracle.json" <<'PY'
import json, sys
want = ["spin", "k3", "k2", "k1", "kmain", "_start"]
ours = json.load(open(sys.argv[1]))
gdbs = json.load(open(sys.argv[2]))
def fail(why):
    print(why)
    sys.exit(1)
if len(ours["threads"]) != 1:
    fail("rspwalk: %d threads, want one vCPU" % len(ours["threads"]))
t = ours["threads"][0]
names = [f["function"] for f in t["frames"]]
if names != want or t["end"] != "bottom" or not t["stopped"] or t["lwp"] != 1:
    fail("rspwalk: %s (end %s, stopped %s, lwp %s), want %s (end bottom, the stopped vCPU 1)"
         % (" ".join(map(str, names)), t["end"], t["stopped"], t["lwp"], " ".join(want)))
if len(gdbs["threads"]) != 1:
    fail("gdb: %d threads, want one vCPU" % len(gdbs["threads"]))
g = gdbs["threads"][0]
gnames = [f["function"] for f in g["frames"]]
if gnames != want:
    fail("gdb: %s, want %s" % (" ".join(map(str, gnames)), " ".join(want)))
for i, (a, b) in enumerate(zip(t["frames"], g["frames"])):
    if int(a["pc"], 16) != int(b["pc"], 16) or int(a["sp"], 16) != int(b["sp"], 16):
        fail("frame #%d %s: rspwalk pc %s sp %s, gdb pc %s sp %s"
             % (i, a["function"], a["pc"], a["sp"], b["pc"], b["sp"]))
PY
}

# case NAME ARGS...: one line, PASS or FAIL, as run-all counts them.
case_line() {
    local name=$1 start
    shift
    start=$(date +%s%N)
    # Not in a subshell: stop_qemu must see the qemu pid case_run started.
    if case_run "$@" >"$work/case.out" 2>&1; then
        echo "PASS $name ($((($(date +%s%N) - start) / 1000000)) ms)"
    else
        echo "FAIL $name: $(head -n 1 "$work/case.out" | grep . || echo "no reason given (IT_KEEP=1 keeps $work)")"
        tail -n +2 "$work/case.out" | sed 's/^/    /'
        failed=1
    fi
    stop_qemu
}

case_line qemu-system/x86_64 x86_64 qemu-system-x86_64 qemu-system-x86
case_line qemu-system/aarch64 aarch64 qemu-system-aarch64 qemu-system-arm -M virt -cpu cortex-a57
exit "$failed"
