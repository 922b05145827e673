#!/usr/bin/env bash
# tests/integration/run-openocd.sh -- rspwalk against OpenOCD's GDB server, as a scripted stub.
#
# Debian's openocd cannot run without a probe, so tests/integration/oocd_stub.py answers as
# OpenOCD's gdb_server.c and rtos.c do, serving a Cortex-M3 state recorded here: the firmware
# build/fixtures/cortexm/mps2-an385-rtos.elf (the -O0 firmware with FreeRTOS's global names)
# under qemu-system-arm -M mps2-an385, stopped by gdb-multiarch at p_leaf (PendSV nested in
# SysTick over spin_odd); gdb dumps the registers, the registers of the interrupted spin_odd
# frame, RAM and code, and gdb_oracle.sh records gdb's backtrace of that stop.  Then, against
# the stub:
#   openocd/symbols   rspwalk answers the stub's qSymbol look-ups from the ELF's symbol table
#                     (every FreeRTOS name with its address), which turns the RTOS threads on;
#   openocd/running   the running task (the CPU's registers) walks as gdb walked the board,
#                     frame for frame (pc and sp), through both exception frames;
#   openocd/task      the interrupted task, its registers from the stub, walks spin_odd ... Reset_Handler
#                     as gdb's frames of the same stop below the SysTick frame;
#   openocd/zeros     a task whose saved SP is in RAM nobody wrote (the stub answers zeros) and one
#                     whose SP lies where the board has no memory: neither walk makes up a frame
#                     from zeros: both end after their first frame, not at "bottom";
#   openocd/map       with a memory map of the board's memory only (--map regions) no read leaves
#                     it, and the task whose SP is outside it ends "memory" without a read there;
#   openocd/keepalive %oocd_keepalive notifications before long reads and empty O packets while
#                     the target runs (-c) are skipped: the walks are the same;
#   openocd/qfthreads without qXfer:threads the tasks come from qfThreadInfo (one reply, 16-digit
#                     ids), each walked from its own registers (Hg, g);
#   openocd/no-rtos   the stub asks for Zephyr's names, which the ELF lacks: one thread (the CPU).
# Kills only the qemu and stubs it started; every run is bounded.
# Env: RSPWALK (default build/release/rspwalk), IT_TIMEOUT (seconds per run, default 60),
#      IT_KEEP=1 (keep the work directory).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
RSPWALK=${RSPWALK:-build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
FW=build/fixtures/cortexm/mps2-an385-rtos.elf
STUB=tests/integration/oocd_stub.py
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-openocd.XXXXXX")
qpid=
spid=
failed=0

stop_pid() {
    local i pid=$1
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 40; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    stop_pid "$qpid"
    stop_pid "$spid"
    if [ "${IT_KEEP:-0}" = 1 ]; then
        echo "artifacts kept in $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail_all() {
    local c
    for c in symbols running task zeros map keepalive qfthreads no-rtos; do
        echo "FAIL openocd/$c: $1"
    done
    exit 1
}

for spec in qemu-system-arm:qemu-system-arm gdb-multiarch:gdb-multiarch python3:python3 \
    timeout:coreutils; do
    command -v "${spec%%:*}" >/dev/null 2>&1 ||
        fail_all "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
done
[ -f "$FW" ] || fail_all "firmware not built: $FW (make fixtures; gcc-arm-none-eabi)"
[ -x "$RSPWALK" ] || fail_all "rspwalk not built: $RSPWALK (make all)"

# ---- record the state: the board stopped at p_leaf --------------------------------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout -k 5 $((IT_TIMEOUT * 3)) qemu-system-arm -M mps2-an385 -display none -nographic \
    -no-reboot -monitor none -serial "file:$work/serial.log" -S -gdb "tcp:127.0.0.1:$port" \
    -kernel "$FW" </dev/null >"$work/qemu.log" 2>&1 &
qpid=$!
for ((i = 0; i < 200; i++)); do
    python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
        "$port" 2>/dev/null && break
    sleep 0.05
done
mkdir -p "$work/state"
timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set confirm off' -ex "file $FW" \
    -ex "target remote 127.0.0.1:$port" -ex 'break p_leaf' -ex continue \
    -ex 'echo ==cpu\n' -ex 'info registers' \
    -ex "dump binary memory $work/state/ram.bin 0x20000000 0x20002000" \
    -ex "dump binary memory $work/state/code.bin 0 0x1000" \
    -ex 'frame function spin_odd' -ex 'echo ==int\n' -ex 'info registers' -ex disconnect \
    </dev/null >"$work/record.log" 2>&1
grep -q '^==int' "$work/record.log" ||
    fail_all "recording the board's state failed: $(grep -v '^warning' "$work/record.log" | tail -n 1)"
ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$work/gdb.log \
    tests/integration/gdb_oracle.sh "127.0.0.1:$port" "$FW" >"$work/oracle.json" 2>"$work/oracle.err" ||
    fail_all "gdb's backtrace of the board failed: $(head -n 1 "$work/oracle.err")"
stop_pid "$qpid"
qpid=
python3 - "$work/record.log" "$work/state/regs.json" <<'PY' || fail_all "cannot read the recorded registers"
import json, re, sys
regs, prefix = {}, None
for line in open(sys.argv[1]):
    if line.startswith("==cpu"):
        prefix = ""
    elif line.startswith("==int"):
        prefix = "int_"
    elif prefix is not None:
        m = re.match(r"^(r\d+|sp|lr|pc|xpsr)\s+(0x[0-9a-f]+)", line)
        if m:
            regs[prefix + m.group(1)] = int(m.group(2), 16)
regs["msp"], regs["psp"] = regs["sp"], 0
regs["int_xpsr"] |= 1 << 24  # the Thumb bit, as the stacked xPSR holds it
regs["p1_ret"] = regs["lr"] & ~1  # p_leaf's return address: after p1's call
need = ["r%d" % i for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
missing = [k for p in ("", "int_") for k in (p + n for n in need) if k not in regs]
if missing:
    sys.exit("registers missing from gdb's output: %s" % " ".join(missing))
json.dump(regs, open(sys.argv[2], "w"))
PY

# ---- the stub ------------------------------------------------------------------------------
# start_stub NAME ARGS...: a fresh stub on $sport, its log in $work/NAME.stub.log.
start_stub() {
    local name=$1 i
    shift
    stop_pid "$spid"
    python3 "$STUB" "$work/state" "$work/$name.stub.log" "$@" >"$work/$name.port" \
        2>"$work/$name.stub.err" &
    spid=$!
    sport=
    for ((i = 0; i < 100; i++)); do
        sport=$(head -n 1 "$work/$name.port" 2>/dev/null)
        [ -n "$sport" ] && return 0
        sleep 0.05
    done
    echo "the stub did not start: $(tail -n 1 "$work/$name.stub.err")"
    return 1
}

# walk NAME [RSPWALK ARGS...]: rspwalk -f json against the stub into $work/NAME.json.
walk() {
    local name=$1 rc
    shift
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --exe "$FW" "$@" "127.0.0.1:$sport" \
        >"$work/$name.json" 2>"$work/$name.err"
    rc=$?
    [ "$rc" = 124 ] && { echo "rspwalk timed out after $IT_TIMEOUT s"; return 1; }
    [ "$rc" = 0 ] || { echo "rspwalk exited $rc: $(head -n 1 "$work/$name.err")"; return 1; }
}

# check NAME CASE: judge $work/NAME.json (and the stub's log) for CASE; prints why on failure.
check() {
    python3 - "$work" "$1" "$2" "$FW" <<'PY'
import json, subprocess, sys
work, name, case, fw = sys.argv[1:5]
doc = json.load(open("%s/%s.json" % (work, name)))
gdb = json.load(open("%s/oracle.json" % work))["threads"][0]["frames"]
log = open("%s/%s.stub.log" % (work, name)).read().split("\n")
def fail(why):
    print(why)
    sys.exit(1)
def fname(f):
    return "-%02x" % (int(f["pc"], 16) & 0xff) if f["kind"] == "signal" else f.get("function")
def gname(f):
    return "-%02x" % (int(f["pc"], 16) & 0xff) if f["type"] == "sigtramp" else f.get("function")
def same(ours, theirs, what):
    a = [(fname(f), int(f["pc"], 16), int(f["sp"], 16)) for f in ours]
    b = [(gname(f), int(f["pc"], 16), int(f["sp"], 16)) for f in theirs]
    if a != b:
        fail("%s: rspwalk %s, gdb %s" % (what, " ".join("%s@%x/%x" % x for x in a),
                                          " ".join("%s@%x/%x" % x for x in b)))
threads = {t["id"]: t for t in doc["threads"]}
tcb = {"running": "20003000", "task": "20003100", "lost": "20003200", "blank": "20003300"}
def thread(key):
    for tid, t in threads.items():
        if tid.lstrip("0p.").endswith(tcb[key]):
            return t
    fail("no thread %s among %s" % (tcb[key], " ".join(threads)))
if case == "symbols":
    syms = {}
    nm = subprocess.run(["arm-none-eabi-nm", fw], capture_output=True, text=True).stdout
    for line in nm.split("\n"):
        p = line.split()
        if len(p) == 3:
            syms[p[2]] = int(p[0], 16)
    asked = [l.split() for l in log if l.startswith("sym ")]
    if len(asked) != 12:
        fail("the stub asked %d symbols, want FreeRTOS's 12: %s" % (len(asked), asked))
    for _, n, v in asked:
        if v == "-" or int(v, 16) != syms.get(n, -1):
            fail("qSymbol %s answered %s, the ELF says %s" % (n, v, hex(syms.get(n, -1))))
    if "rtos on" not in log or len(threads) != 4:
        fail("RTOS threads: %d listed, want the stub's 4" % len(threads))
elif case == "running":
    same(thread("running")["frames"], gdb, "the running task")
    if thread("running")["end"] != "bottom":
        fail("the running task ends %s, want bottom" % thread("running")["end"])
elif case == "task":
    # gdb's frames from spin_odd down: the interrupted task's whole stack.
    k = [gname(f) for f in gdb].index("spin_odd")
    t = thread("task")
    same(t["frames"], gdb[k:], "the interrupted task")
    if t["end"] != "bottom":
        fail("the interrupted task ends %s, want bottom" % t["end"])
elif case in ("zeros", "map"):
    for key in ("lost", "blank"):
        t = thread(key)
        names = [fname(f) for f in t["frames"]]
        if names != ["p1"] or t["end"] == "bottom":
            fail("task %s: %s (end %s); want p1 alone, not ending at bottom"
                 % (key, " ".join(map(str, names)), t["end"]))
    if case == "map":
        regions = [(0x0, 0x400000), (0x20000000, 0x400000)]
        for l in log:
            if l.startswith("m "):
                a, n = (int(x, 16) for x in l.split()[1:])
                if not any(s <= a and a + n <= s + size for s, size in regions):
                    fail("read outside the memory map: 0x%x, %d bytes" % (a, n))
        if thread("lost")["end"] != "memory":
            fail("task lost ends %s, want memory" % thread("lost")["end"])
elif case == "keepalive":
    if not any(l.startswith("m ") and int(l.split()[2], 16) >= 256 for l in log):
        fail("no read long enough for a keep-alive notification")
    if "run" not in log or log.count("O") < 2:
        fail("the target was not resumed, or no keep-alive O packet came (%d)" % log.count("O"))
    same(thread("running")["frames"], gdb, "the running task")
elif case == "qfthreads":
    if "qfThreadInfo" not in log or len(threads) != 4:
        fail("threads by qfThreadInfo: %d listed%s" % (len(threads), "" if "qfThreadInfo" in log
                                                        else ", qfThreadInfo never asked"))
    same(thread("running")["frames"], gdb, "the running task")
    k = [gname(f) for f in gdb].index("spin_odd")
    same(thread("task")["frames"], gdb[k:], "the interrupted task")
elif case == "no-rtos":
    if len(threads) != 1:
        fail("%d threads, want the CPU alone" % len(threads))
    same(doc["threads"][0]["frames"], gdb, "the CPU")
PY
}

# case_line CASE STUB_ARGS -- RSPWALK_ARGS: one line, PASS or FAIL, as run-all counts them.
case_line() {
    local c=$1 start out=
    shift
    local sargs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        sargs+=("$1")
        shift
    done
    shift
    start=$(date +%s%N)
    # Not in a subshell: stop_pid must see the pid start_stub set.
    if ! start_stub "$c" "${sargs[@]}" >"$work/$c.start" 2>&1; then
        out=$(cat "$work/$c.start")
    elif out=$({ walk "$c" "$@" && check "$c" "$c"; } 2>&1); then
        out=
    fi
    stop_pid "$spid"
    spid=
    if [ -z "$out" ]; then
        echo "PASS openocd/$c ($((($(date +%s%N) - start) / 1000000)) ms)"
    else
        echo "FAIL openocd/$c: $(echo "$out" | head -n 1)"
        failed=1
    fi
}

case_line symbols --
case_line running --
case_line task --
case_line zeros --
case_line map --map regions --
case_line keepalive -- -c
case_line qfthreads --xfer-threads no --
case_line no-rtos --rtos zephyr --
stop_pid "$spid"
exit "$failed"
