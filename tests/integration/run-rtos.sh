#!/usr/bin/env bash
# tests/integration/run-rtos.sh -- rspwalk --rtos: FreeRTOS tasks as threads on Cortex-M boards.
#
# Boots the FreeRTOS firmware of fixtures/src/freertos/ (make fixtures: the kernel compiled in
# place) under qemu-system-arm, stopped (-S), its gdbstub on a free TCP port, whose one thread
# is the CPU.  For each stop gdb sets a breakpoint, continues to it and disconnects (the VM
# stays stopped); then rspwalk --rtos walks every task (-f json with --stats, and text) and
# gdb_oracle.sh takes gdb-multiarch's backtrace of the CPU.  Every task must be listed with its
# name, state and priority (and base priority where the DWARF gives it), and walked down to
# its entry function along the chain app.c gives it (the kernel's own frames above the app's
# may vary: what matters is the FreeRTOS call the task waits in and the app's chain below it).
# The running task must agree with gdb frame for frame (pc and sp) down to its entry function,
# where gdb walks on past the task's first frame into pxPortInitialiseStack; at the
# nested-interrupt stop down to the exception frame over the task, past which neither can go
# on QEMU 7.2 (its target.xml has no psp).
# Images: -O0 ARM_CM3 (mps2-an385), -O0 ARM_CM4F (mps2-an386: FP contexts, EXC_RETURN
# 0xFFFFFFED), -O2 ARM_CM3 with other names, priorities and the timer task (--rtos auto), and
# the configuration sweep of fixtures/freertos.mk (sw-*.elf: each with its DWARF and without).
# rspwalkd walks the -O0 board as a target registered with "rtos" (case_server).
# Builds nothing; kills only the qemu it started; every run is bounded.
# Env: RSPWALK (default build/release/rspwalk), IT_TIMEOUT (seconds per run, default 60),
#      IT_KEEP=1 (keep the work directory).
# shellcheck disable=SC2317  # the case_* functions are called through case_line
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
RSPWALK=${RSPWALK:-build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
FW=
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-rtos.XXXXXX")
qpid=
port=
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

# start_qemu BOARD FIRMWARE: the board stopped at reset, its gdbstub on a free port ($port);
# prints why on failure.
start_qemu() {
    local spec i board=$1
    FW=$2
    for spec in qemu-system-arm:qemu-system-arm gdb-multiarch:gdb-multiarch python3:python3 \
        timeout:coreutils; do
        if ! command -v "${spec%%:*}" >/dev/null 2>&1; then
            echo "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
            return 1
        fi
    done
    [ -f "$FW" ] || { echo "firmware not built: $FW (make fixtures; gcc-arm-none-eabi)"; return 1; }
    [ -x "$RSPWALK" ] || { echo "rspwalk not built: $RSPWALK (make all)"; return 1; }
    # A port free now; another process could take it before qemu binds it: the wait below
    # then fails with qemu's own message.
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    timeout -k 5 $((IT_TIMEOUT * 6)) qemu-system-arm -M "$board" -display none -nographic \
        -no-reboot -monitor none -serial "file:$work/serial.log" -S -gdb "tcp:127.0.0.1:$port" \
        -kernel "$FW" </dev/null >"$work/qemu.log" 2>&1 &
    qpid=$!
    for ((i = 0; i < 200; i++)); do
        python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
            "$port" 2>/dev/null && return 0
        kill -0 "$qpid" 2>/dev/null || break
        sleep 0.05
    done
    echo "qemu-system-arm did not open its gdbstub on port $port: $(head -c 300 "$work/qemu.log")"
    return 1
}

# case_run STOP RTOS TASKS RUNNING: run to the next breakpoint at STOP, walk with --rtos RTOS,
# then compare.  TASKS: "name:state:priority:chain,from,the,wait,to,entry;..." (the running
# task's chain is its whole walk at the stop); RUNNING: the running task's name.  Prints why
# on failure.
case_run() {
    local stop=$1 rtos=$2 tasks=$3 running=$4 dir rc
    dir=$(mktemp -d "$work/${stop//[^A-Za-z0-9_]/_}.XXXX")
    [ -n "$qpid" ] || { echo "no board: $(head -n 1 "$work/start.out")"; return 1; }
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set confirm off' -ex "file $FW" \
        -ex "target remote 127.0.0.1:$port" -ex "break $stop" -ex continue -ex 'disconnect' \
        </dev/null >"$dir/run.log" 2>&1
    if ! grep -Eq "^Breakpoint 1(\.[0-9]+)?, " "$dir/run.log"; then
        echo "gdb did not stop at $stop: $(grep -v '^warning' "$dir/run.log" | tail -n 1)"
        return 1
    fi

    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --stats --rtos "$rtos" --exe "$FW" \
        "127.0.0.1:$port" >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    [ "$rc" = 124 ] && { echo "rspwalk timed out after $IT_TIMEOUT s"; return 1; }
    [ "$rc" = 0 ] || { echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"; return 1; }
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" --rtos "$rtos" --exe "$FW" "127.0.0.1:$port" \
        >"$dir/rspwalk.txt" 2>&1

    ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log \
        tests/integration/gdb_oracle.sh "127.0.0.1:$port" "$FW" >"$dir/oracle.json" 2>"$dir/oracle.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "gdb exited $rc: $(head -n 1 "$dir/oracle.err")"; return 1; }

    python3 - "$dir/rspwalk.json" "$dir/oracle.json" "$dir/rspwalk.txt" "$tasks" "$running" <<'PY'
import json, re, sys
ours = json.load(open(sys.argv[1]))
gdbs = json.load(open(sys.argv[2]))
text = open(sys.argv[3]).read()
running = sys.argv[5]
def fail(why):
    print(why)
    sys.exit(1)
want = {}
for row in sys.argv[4].split(";"):
    # PRIO may be "NOW/BASE": a priority inherited above the task's own.
    name, state, prio, chain = row.split(":")
    now, _, base = prio.partition("/")
    want[name] = (state, int(now), chain.split(","), int(base or now))
def exc(f):
    return "-%02x" % (int(f["pc"], 16) & 0xff)
def names(frames, kind_key, sig):
    return [(exc(f) if f[kind_key] == sig else f["function"]) for f in frames]
# --stats sees through the task layer to the RSP session under it.
st = ours.get("stats")
if not isinstance(st, dict) or st.get("round_trips", 0) <= 0:
    fail("--stats: %s, want the link's counts" % st)
got = {t.get("name"): t for t in ours["threads"]}
if sorted(got) != sorted(want):
    fail("tasks: %s, want %s" % (" ".join(sorted(map(str, got))), " ".join(sorted(want))))
for name, (state, prio, chain, base) in want.items():
    t = got[name]
    if not re.fullmatch(r"tcb:0x[0-9a-f]+", t["id"]):
        fail("task %s: id %s is not tcb:0xADDR" % (name, t["id"]))
    if (t["state"], t["priority"]) != (state, prio):
        fail("task %s: state %s priority %s, want %s %d" % (name, t["state"], t["priority"],
                                                              state, prio))
    fn = names(t["frames"], "kind", "signal")
    whole = name == running
    if (fn != chain) if whole else (fn[-len(chain):] != chain):
        fail("task %s: %s, want %s%s" % (name, " ".join(map(str, fn)),
                                         "" if whole else "... ", " ".join(chain)))
    if t["end"] != ("bottom" if chain[-1][0] != "-" else "no-stepper"):
        fail("task %s: walk ended %s" % (name, t["end"]))
    if t["stopped"] != (name == running):
        fail("task %s: stopped %s" % (name, t["stopped"]))
    # uxBasePriority where the DWARF gives it (configUSE_MUTEXES): the task's own.
    if t.get("base_priority", base) != base:
        fail("task %s: base_priority %s, want %d" % (name, t.get("base_priority"), base))
    head = 'Thread %s "%s" (%s, priority %d%s)' % (t["id"], name, state, prio,
                                                 ", base priority %d" % base if base != prio else "")
    if head not in text:
        fail("text output lacks '%s'" % head)
# The running context against gdb: frame for frame, as far as the task's chain goes.
t = got[running]
g = gdbs["threads"][0]["frames"]
gn = names(g, "type", "sigtramp")
n = len(want[running][2])
if gn[:n] != want[running][2]:
    fail("gdb: %s, want %s first" % (" ".join(map(str, gn)), " ".join(want[running][2])))
for i in range(n):
    a, b = t["frames"][i], g[i]
    if int(a["pc"], 16) != int(b["pc"], 16) or int(a["sp"], 16) != int(b["sp"], 16):
        fail("running task frame #%d %s: rspwalk pc %s sp %s, gdb pc %s sp %s"
             % (i, want[running][2][i], a["pc"], a["sp"], b["pc"], b["sp"]))
PY
}

# case_line NAME ARGS...: one line, PASS or FAIL, as run-all counts them.
case_line() {
    local name=$1 start
    shift
    start=$(date +%s%N)
    if "$@" >"$work/case.out" 2>&1; then
        echo "PASS $name ($((($(date +%s%N) - start) / 1000000)) ms)"
    else
        echo "FAIL $name: $(head -n 1 "$work/case.out" | grep . || echo "no reason given (IT_KEEP=1 keeps $work)")"
        tail -n +2 "$work/case.out" | sed 's/^/    /'
        failed=1
    fi
}

# case_not_rtos: --rtos freertos with an image that is not FreeRTOS fails with a one-line
# reason naming the image; --rtos auto walks the CPU alone.
case_not_rtos() {
    local other=build/fixtures/cortexm/mps2-an385.elf out rc
    [ -n "$qpid" ] || { echo "no board: $(head -n 1 "$work/start.out")"; return 1; }
    [ -f "$other" ] || { echo "firmware not built: $other (make fixtures)"; return 1; }
    out=$(timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" --rtos freertos --exe "$other" \
        "127.0.0.1:$port" 2>&1)
    rc=$?
    [ "$rc" != 0 ] || { echo "--rtos freertos on a bare-metal image exited 0"; return 1; }
    grep -q "has no symbol pxCurrentTCB" <<<"$out" || { echo "message: $out"; return 1; }
    out=$(timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --rtos auto --exe "$other" \
        "127.0.0.1:$port" 2>&1)
    rc=$?
    [ "$rc" = 0 ] || { echo "--rtos auto on a bare-metal image exited $rc: $out"; return 1; }
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); t = d["threads"]
sys.exit(0 if len(t) == 1 and "name" not in t[0] else 1)' "$out" ||
        { echo "--rtos auto without an RTOS: not the CPU alone: $(head -c 200 <<<"$out")"; return 1; }
}

# case_before_scheduler: stopped in main at vTaskStartScheduler, the tasks are created but
# none ran: the CPU is a thread of its own (first, the stopped one, walked down to main), and
# each task is ready at its entry function, from the context pxPortInitialiseStack made.
case_before_scheduler() {
    local dir=$work/before rc
    mkdir -p "$dir"
    [ -n "$qpid" ] || { echo "no board: $(head -n 1 "$work/start.out")"; return 1; }
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set confirm off' -ex "file $FW" \
        -ex "target remote 127.0.0.1:$port" -ex "break vTaskStartScheduler" -ex continue \
        -ex 'disconnect' </dev/null >"$dir/run.log" 2>&1
    grep -Eq "^Breakpoint 1(\.[0-9]+)?, " "$dir/run.log" ||
        { echo "gdb did not stop at vTaskStartScheduler: $(tail -n 1 "$dir/run.log")"; return 1; }
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --rtos freertos --exe "$FW" "127.0.0.1:$port" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"; return 1; }
    python3 - "$dir/rspwalk.json" <<'PY'
import json, sys
th = json.load(open(sys.argv[1]))["threads"]
def fail(why):
    print(why)
    sys.exit(1)
cpu, tasks = th[0], th[1:]
fn = [f["function"] for f in cpu["frames"]]
if "name" in cpu or not cpu["stopped"] or fn[:2] != ["vTaskStartScheduler", "main"]:
    fail("CPU thread: %s %s, want the stopped one in vTaskStartScheduler, main"
         % (cpu["id"], " ".join(map(str, fn))))
want = {"rx": "rx_entry", "sem": "sem_entry", "sleep": "sleep_entry", "susp": "susp_entry",
        "spin": "spin_entry", "run": "run_entry"}
got = {t.get("name"): t for t in tasks}
if sorted(got) != sorted(want):
    fail("tasks: %s, want %s" % (" ".join(sorted(map(str, got))), " ".join(sorted(want))))
for name, entry in want.items():
    t = got[name]
    fn = [f["function"] for f in t["frames"]]
    if t["state"] != "ready" or fn != [entry] or t["end"] != "bottom" or t["stopped"]:
        fail("task %s: %s %s (end %s), want ready %s (end bottom)"
             % (name, t["state"], " ".join(map(str, fn)), t["end"], entry))
PY
}

# case_no_dwarf: the image without its DWARF (arm-none-eabi-objcopy --strip-debug) still has
# the symbols; the reader takes FreeRTOS's default layouts then, and must list the same tasks
# (id, name, state, priority) with the same registers (frame 0's pc and sp) as with the
# DWARF's.  The walks below frame 0 are the steppers' business without CFI, not checked here.
case_no_dwarf() {
    local plain=$work/nodwarf.elf rc
    [ -n "$qpid" ] || { echo "no board: $(head -n 1 "$work/start.out")"; return 1; }
    command -v arm-none-eabi-objcopy >/dev/null 2>&1 ||
        { echo "missing peer: arm-none-eabi-objcopy (apt-get install binutils-arm-none-eabi)"; return 1; }
    arm-none-eabi-objcopy --strip-debug "$FW" "$plain" || { echo "objcopy failed"; return 1; }
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --rtos freertos --exe "$FW" "127.0.0.1:$port" \
        >"$work/dwarf.json" 2>"$work/dwarf.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "rspwalk (DWARF) exited $rc: $(head -n 1 "$work/dwarf.err")"; return 1; }
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --rtos freertos --exe "$plain" "127.0.0.1:$port" \
        >"$work/plain.json" 2>"$work/plain.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "rspwalk (no DWARF) exited $rc: $(head -n 1 "$work/plain.err")"; return 1; }
    python3 - "$work/dwarf.json" "$work/plain.json" <<'PY'
import json, sys
def tasks(path):
    return sorted((t["id"], t["name"], t["state"], t["priority"], t["frames"][0]["pc"],
                   t["frames"][0]["sp"]) for t in json.load(open(path))["threads"])
a, b = tasks(sys.argv[1]), tasks(sys.argv[2])
if a != b:
    print("without DWARF: %s\nwith DWARF:    %s" % (b, a))
    sys.exit(1)
PY
}

# case_layout_unknown: an image whose kernel does not have FreeRTOS's default layout (list
# integrity bytes), without its DWARF: --rtos freertos fails saying the layout is unknown, and
# --rtos auto walks the CPU alone after a one-line warning; no task is shown either way.
case_layout_unknown() {
    local plain=$work/unknown.elf out rc
    [ -n "$qpid" ] || { echo "no board: $(head -n 1 "$work/start.out")"; return 1; }
    command -v arm-none-eabi-objcopy >/dev/null 2>&1 ||
        { echo "missing peer: arm-none-eabi-objcopy (apt-get install binutils-arm-none-eabi)"; return 1; }
    arm-none-eabi-objcopy --strip-debug "$FW" "$plain" || { echo "objcopy failed"; return 1; }
    out=$(timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" --rtos freertos --exe "$plain" "127.0.0.1:$port" 2>&1)
    rc=$?
    [ "$rc" != 0 ] || { echo "--rtos freertos with an unknown layout exited 0"; return 1; }
    if [ "$(wc -l <<<"$out")" != 1 ] || ! grep -q "the kernel's layout is unknown" <<<"$out"; then
        echo "--rtos freertos: $out"
        return 1
    fi
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --rtos auto --exe "$plain" "127.0.0.1:$port" \
        >"$work/unknown.json" 2>"$work/unknown.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "--rtos auto with an unknown layout exited $rc: $(head -n 1 "$work/unknown.err")"; return 1; }
    if [ "$(wc -l <"$work/unknown.err")" != 1 ] ||
        ! grep -q "walking the CPU alone.*layout is unknown" "$work/unknown.err"; then
        echo "--rtos auto: warning: $(cat "$work/unknown.err")"
        return 1
    fi
    python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["threads"]
sys.exit(0 if len(t) == 1 and "name" not in t[0] and t[0]["frames"] else 1)' "$work/unknown.json" ||
        { echo "--rtos auto with an unknown layout: not the CPU alone: $(head -c 200 "$work/unknown.json")"; return 1; }
}

# case_server: rspwalkd with a target registered with "rtos": "freertos" walks the board's
# tasks as threads in /v1/targets/ID/stacks (names, states, priorities, each parked one's walk
# down to its entry function), counts the link's round trips through the task layer, refuses an
# unknown RTOS and an RTOS without exe; a restart finds the target in its store with its rtos,
# and with the board let run, each walk stops it, lists the tasks again (one running) and
# lets it run on.
case_server() {
    [ -n "$qpid" ] || { echo "no board: $(head -n 1 "$work/start.out")"; return 1; }
    python3 - "$root" "$work/server" "$FW" "127.0.0.1:$port" "$V1_PARKED" <<'PY'
import os, sys
root, work, fw, target, table = sys.argv[1:6]
fw = os.path.join(root, fw)  # the API takes absolute paths
sys.path.insert(0, os.path.join(root, "tests/integration"))
import srvlib
os.makedirs(work, exist_ok=True)
want = {}
for row in table.split(";"):
    name, state, prio, chain = row.split(":")
    want[name] = (state, int(prio), chain.split(","))
def fail(why):
    print(why)
    sys.exit(1)
def check_stacks(srv, tid):
    doc = srv.stacks(tid)
    got = {t.get("name"): t for t in doc["threads"]}
    # The running task, stopped wherever the earlier cases left the board, and the parked ones.
    run = got.pop("run", {})
    if run.get("state") != "running" or not run.get("stopped"):
        fail("stacks: task run: %s, want the running one, stopped" % run.get("state"))
    if sorted(got) != sorted(want):
        fail("stacks: tasks %s, want %s" % (" ".join(sorted(map(str, got))), " ".join(sorted(want))))
    for name, (state, prio, chain) in want.items():
        t = got[name]
        fn = [f["function"] for f in t["frames"]]
        if (t["state"], t["priority"]) != (state, prio) or fn[-len(chain):] != chain or \
                t["end"] != "bottom":
            fail("stacks: task %s: %s %s %s (end %s), want %s %d ... %s" % (
                name, t["state"], t["priority"], " ".join(map(str, fn)), t["end"], state, prio,
                " ".join(chain)))
srv = srvlib.Server(work).start()
try:
    for body, why in (({"target": target, "exe": fw, "rtos": "zephyr"}, "is not one of"),
                      ({"target": target, "rtos": "auto"}, "needs exe")):
        status, doc = srv.json("POST", "/v1/targets", body)
        if status != 400 or why not in doc.get("error", ""):
            fail("POST %s: %d %s, want 400 saying '%s'" % (body, status, doc, why))
    status, doc = srv.json("POST", "/v1/targets", {"target": target, "exe": fw, "rtos": "freertos"},
                           expect=201)
    tid = doc["id"]
    info = srv.wait_state(tid, ["stopped"])
    if info.get("rtos") != "freertos":
        fail("target record: rtos %r, want freertos" % info.get("rtos"))
    check_stacks(srv, tid)
    if srv.target(tid)["stats"]["round_trips"] <= 0:
        fail("target stats: no round trips counted through the task layer")
    status, doc = srv.json("POST", "/v1/targets", {"target": target, "exe": fw, "rtos": "auto"})
    if status != 409:
        fail("the same board with another rtos: %d %s, want 409" % (status, doc))
finally:
    srv.stop()
srv = srvlib.Server(work, name="restarted").start()  # the same store, a log of its own
try:
    ts = srv.targets()
    if len(ts) != 1 or ts[0].get("rtos") != "freertos":
        fail("after a restart: targets %s, want the board with rtos freertos" % ts)
    tid = ts[0]["id"]
    srv.wait_state(tid, ["stopped"])
    check_stacks(srv, tid)
    # Running: each walk stops the board, reads the lists again, and lets it run on.
    srv.json("POST", "/v1/targets/%s/resume" % tid, {}, expect=200)
    for _ in range(2):
        th = srv.stacks(tid)["threads"]
        names = sorted(str(t.get("name")) for t in th)
        if names != sorted(list(want) + ["run"]) or \
                [t["state"] for t in th].count("running") != 1:
            fail("stacks of the running board: %s" % [(t.get("name"), t.get("state")) for t in th])
    srv.json("POST", "/v1/targets/%s/pause" % tid, {}, expect=200)
finally:
    srv.stop()
PY
}

# sweep_table OFFSET NAMELEN LONG EXTRA...: variant 1's table as a sweep image has it: every
# priority but the idle task's OFFSET higher, names cut to NAMELEN - 1 characters (LONG 1: the
# long names), EXTRA the tasks FW_INHERIT, FW_DELETE, FW_NOTIFY add (inherit delete notify)
# and FW_IDLE_SLEEP's (idle: every task asleep, the idle task running).
sweep_table() {
    python3 - "$@" <<'PY'
import sys
off, namelen, long_names = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
extra = sys.argv[4:]
names = {"rx": "rx-uart0-receive-frames", "sem": "sem-i2c-bus-transaction",
         "sleep": "sleep-led-blink-period-abc", "susp": "susp-until-resumed-by-host",
         "spin": "spin-number-crunching-loop", "run": "run-main-control-loop-31chars"}
rows = [("rx", "blocked", 3, "xQueueReceive,rx_take,rx_wait,rx_entry"),
        ("sem", "blocked", 3, "xQueueSemaphoreTake,sem_wait,sem_entry"),
        ("sleep", "blocked", 4, "vTaskDelay,sleep_b,sleep_a,sleep_entry"),
        ("susp", "suspended", 3, "vTaskSuspend,susp_a,susp_entry"),
        ("spin", "ready", 2, "spin_leaf,spin_a,spin_entry"),
        ("run", "running", 2, "run_leaf,run_b,run_a,run_entry")]
idle = ("IDLE", "ready", 0, "prvIdleTask")
if "idle" in extra:
    rows[4:6] = [("spin", "blocked", 2, "vTaskDelay,spin_leaf,spin_a,spin_entry"),
                 ("run", "blocked", 2, "vTaskDelay,run_entry")]
    idle = ("IDLE", "running", 0, "vPortSuppressTicksAndSleep,prvIdleTask")
if "inherit" in extra:
    rows += [("lo", "blocked", "%d/%d" % (4 + off, 2 + off), "vTaskDelay,lo_a,lo_entry"),
             ("hi", "blocked", 4, "xQueueSemaphoreTake,hi_a,hi_entry")]
if "delete" in extra:
    rows += [("gone", "deleted", 3, "vTaskDelete,gone_a,gone_entry")]
if "notify" in extra:
    rows += [("ntfy", "blocked", 3, "ulTaskGenericNotifyTake,ntfy_wait,ntfy_entry")]
out = []
for name, state, prio, chain in rows:
    if long_names:
        name = names.get(name, name)
    if isinstance(prio, int):
        prio += off
    out.append("%s:%s:%s:%s" % (name[:namelen - 1], state, prio, chain))
out.append("%s:%s:%d:%s" % (idle[0][:namelen - 1], idle[1], idle[2], idle[3]))
print(";".join(out))
PY
}

# The running task's name in a sweep image.
sweep_running() {
    local name=run
    [ "$2" = 1 ] && name=run-main-control-loop-31chars
    echo "${name:0:$(($1 - 1))}"
}

# sweep IMAGE OFFSET NAMELEN LONG EXTRA...: one configuration of the sweep, walked at run_leaf
# (EXTRA idle: at vPortSuppressTicksAndSleep, the idle task running) with its DWARF, then
# without (the default layout) to the same tasks.
sweep() {
    local img=$1 off=$2 len=$3 long=$4 stop=run_leaf running
    shift 4
    running=$(sweep_running "$len" "$long")
    if [[ " $* " == *" idle "* ]]; then
        stop=vPortSuppressTicksAndSleep
        running=IDLE
    fi
    start_qemu mps2-an385 "build/fixtures/freertos/$img.elf" >"$work/start.out" 2>&1 || stop_qemu
    case_line "rtos/sweep/$img" case_run "$stop" freertos "$(sweep_table "$off" "$len" "$long" "$@")" \
        "$running"
    if [ "$img" = sw-integrity ]; then
        case_line "rtos/sweep/$img/no-dwarf" case_layout_unknown
    else
        case_line "rtos/sweep/$img/no-dwarf" case_no_dwarf
    fi
    stop_qemu
}

# Variant 1 (app.c): the running task's chain is its whole walk; the others' end with these.
V1_PARKED="rx:blocked:3:xQueueReceive,rx_take,rx_wait,rx_entry;\
sem:blocked:3:xQueueSemaphoreTake,sem_wait,sem_entry;\
sleep:blocked:4:vTaskDelay,sleep_b,sleep_a,sleep_entry;\
susp:suspended:3:vTaskSuspend,susp_a,susp_entry;\
spin:ready:2:spin_leaf,spin_a,spin_entry;\
IDLE:ready:0:prvIdleTask"
V1_RUN="run:running:2:run_leaf,run_b,run_a,run_entry"
V1_IRQ="run:running:2:high_leaf,high_a,fw_irq_high,-f1,low_a,fw_irq_low,-fd"
V2="uart-rx:blocked:5:xQueueReceive,rx_take,rx_wait,rx_entry;\
i2c:blocked:4:xQueueSemaphoreTake,sem_wait,sem_entry;\
blink:blocked:7:vTaskDelay,sleep_b,sleep_a,sleep_entry;\
standby:suspended:6:vTaskSuspend,susp_a,susp_entry;\
crunch:ready:1:spin_leaf,spin_a,spin_entry;\
IDLE:ready:0:prvIdleTask;\
Tmr Svc:blocked:6:prvTimerTask;\
main-loop:running:1:run_leaf,run_b,run_a,run_entry"

# Not in a subshell: stop_qemu must see the pid start_qemu set.
start_qemu mps2-an385 build/fixtures/freertos/an385.elf >"$work/start.out" 2>&1 || stop_qemu
case_line rtos/CM3/O0/before-scheduler case_before_scheduler
case_line rtos/CM3/O0/thread case_run run_leaf freertos "$V1_PARKED;$V1_RUN" run
case_line rtos/CM3/O0/nested-irq case_run high_leaf freertos "$V1_PARKED;$V1_IRQ" run
case_line rtos/not-freertos case_not_rtos
case_line rtos/no-dwarf case_no_dwarf
case_line rtos/server case_server
stop_qemu
start_qemu mps2-an386 build/fixtures/freertos/an386.elf >"$work/start.out" 2>&1 || stop_qemu
case_line rtos/CM4F/O0/thread case_run run_leaf freertos "$V1_PARKED;$V1_RUN" run
stop_qemu
start_qemu mps2-an385 build/fixtures/freertos/an385-v2-O2.elf >"$work/start.out" 2>&1 || stop_qemu
case_line rtos/CM3/O2/variant2 case_run run_leaf auto "$V2" main-loop
stop_qemu
# The configuration sweep (fixtures/freertos.mk): IMAGE OFFSET NAMELEN LONG EXTRA...
sweep sw-optsel 25 16 0
sweep sw-prio200 190 16 0
sweep sw-name4 0 4 0
sweep sw-name32 0 32 1
sweep sw-static 0 16 0 delete
sweep sw-tls 0 16 0
sweep sw-notify 0 16 0 notify
sweep sw-inherit 0 16 0 inherit delete
sweep sw-tickless 0 16 0 idle
sweep sw-integrity 0 16 0
exit "$failed"
