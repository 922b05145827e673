#!/usr/bin/env bash
# tests/integration/run-cortexm.sh -- rspwalk on a Cortex-M3 board: Thumb-2 code and exception frames.
#
# Boots the firmware of fixtures/src/cortexm/ (make fixtures; -O0, then -O2) under
# qemu-system-arm -M mps2-an385, stopped (-S), with its gdbstub on a free TCP port.  For each
# stop, in order, gdb
# sets a breakpoint, continues to it and disconnects (the VM stays stopped), then rspwalk walks
# and gdb_oracle.sh takes gdb-multiarch's backtrace of the same stop: both must list the
# expected functions, rspwalk's exception frames ("<signal handler called>", kind signal,
# pc the EXC_RETURN value) where gdb has its sigtramp frames, and the same pc and sp in every
# frame.  Stops: c3 (Thread mode, no exception), h_leaf (SysTick handler over spin_odd, whose
# frame has the alignment word), p_leaf (PendSV nested in SysTick: EXC_RETURN 0xFFFFFFF1 then
# 0xFFFFFFF9), the first instruction of SysTick_Handler, and on a Cortex-M4F (-M mps2-an386)
# the nested stop again over extended (FP) frames, a HardFault taken at a udf, and on a
# Cortex-M0 (ARMv6-M, -M microbit), and on a Cortex-M33 (ARMv8-M with the Security Extension,
# -M mps2-an505, Secure state; also with the FPU on, at a HardFault, and at a Secure HardFault
# over the additional state context, whose oracle case_dcrs builds by hand).  The */analysis cases walk with the analysis stepper in place of the CFI
# (--steppers stackbottom,sighandler,analysis: Thumb prologues read by disasm/thumb.c) and
# must still agree with gdb, which reads the CFI; a */wanderer case scans the stack alone
# (the pcs must agree; a scanned frame's SP may not).  The */ehabi cases boot firmware built
# with -funwind-tables and without .debug_frame (fixtures/cortexm.mk's *-exidx.elf): rspwalk
# unwinds the callers by the ARM index tables (.ARM.exidx, the ehabi stepper; every caller of
# a call-site frame must come from it) while gdb-multiarch reads the *-exidx-full.elf twin,
# the same bytes with their .debug_frame: gdb 13.1's own EHABI path cannot serve, its Thumb
# prologue unwinder ends every walk at frame 0 on QEMU 7.2's M-profile registers (no msp/psp;
# docs/gdb-differences.md).
# Builds nothing; kills only the qemu it started; every run is bounded.
# Env: RSPWALK (default build/release/rspwalk), IT_TIMEOUT (seconds per run, default 60),
#      IT_KEEP=1 (keep the work directory).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
RSPWALK=${RSPWALK:-build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
FW=
# The file rspwalk reads when it is not gdb's $FW (the */ehabi cases), and the stepper that
# must have produced each caller of a call-site frame there.
RW_FW=
WANT_STEPPER=
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-cortexm.XXXXXX")
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

# case_run STOP STEPPERS WANT...: run to the next breakpoint at STOP, walk with STEPPERS ("-":
# the default ones), then compare; prints why on failure.
case_run() {
    local stop=$1 steppers=$2 dir rc
    shift 2
    dir=$(mktemp -d "$work/${stop//[^A-Za-z0-9_]/_}.XXXX")
    [ -n "$qpid" ] || { echo "no board: $(head -n 1 "$work/start.out")"; return 1; }
    local opts=(--exe "${RW_FW:-$FW}")
    [ "$steppers" = - ] || opts+=(--steppers "$steppers")
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set confirm off' -ex "file $FW" \
        -ex "target remote 127.0.0.1:$port" -ex "break $stop" -ex continue -ex 'disconnect' \
        </dev/null >"$dir/run.log" 2>&1
    if ! grep -Eq "^Breakpoint 1(\.[0-9]+)?, " "$dir/run.log"; then
        echo "gdb did not stop at $stop: $(grep -v '^warning' "$dir/run.log" | tail -n 1)"
        return 1
    fi

    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json "${opts[@]}" "127.0.0.1:$port" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    [ "$rc" = 124 ] && { echo "rspwalk timed out after $IT_TIMEOUT s"; return 1; }
    [ "$rc" = 0 ] || { echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"; return 1; }
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" "${opts[@]}" "127.0.0.1:$port" >"$dir/rspwalk.txt" 2>&1

    ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log \
        tests/integration/gdb_oracle.sh "127.0.0.1:$port" "$FW" >"$dir/oracle.json" 2>"$dir/oracle.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "gdb exited $rc: $(head -n 1 "$dir/oracle.err")"; return 1; }

    # Stack scanning (the wanderer) finds the callers, not always their exact SP.
    local sp_check=exact
    [[ "$steppers" == *wanderer* ]] && sp_check=none
    python3 - "$dir/rspwalk.json" "$dir/oracle.json" "$dir/rspwalk.txt" "$sp_check" \
        "${WANT_STEPPER:--}" "$@" <<'PY'
import json, sys
ours = json.load(open(sys.argv[1]))
gdbs = json.load(open(sys.argv[2]))
text = open(sys.argv[3]).read()
sp_exact = sys.argv[4] == "exact"
want_stepper = sys.argv[5]
want = sys.argv[6:]  # "-f9" stands for an exception frame whose pc is 0xfffffff9
def fail(why):
    print(why)
    sys.exit(1)
if len(ours["threads"]) != 1 or len(gdbs["threads"]) != 1:
    fail("threads: rspwalk %d, gdb %d; want one CPU" % (len(ours["threads"]), len(gdbs["threads"])))
t, g = ours["threads"][0], gdbs["threads"][0]
def exc(f):
    return "-%02x" % (int(f["pc"], 16) & 0xff)
names = [(exc(f) if f["kind"] == "signal" else f["function"]) for f in t["frames"]]
gnames = [(exc(f) if f["type"] == "sigtramp" else f["function"]) for f in g["frames"]]
if names != want or t["end"] != "bottom":
    fail("rspwalk: %s (end %s), want %s (end bottom)"
         % (" ".join(map(str, names)), t["end"], " ".join(want)))
if gnames != want:
    fail("gdb: %s, want %s" % (" ".join(map(str, gnames)), " ".join(want)))
for i, (a, b) in enumerate(zip(t["frames"], g["frames"])):
    if int(a["pc"], 16) != int(b["pc"], 16) or (sp_exact and int(a["sp"], 16) != int(b["sp"], 16)):
        fail("frame #%d %s: rspwalk pc %s sp %s, gdb pc %s sp %s"
             % (i, names[i], a["pc"], a["sp"], b["pc"], b["sp"]))
    if names[i].startswith("-") and (int(a["pc"], 16) & 0xffffffe3) != 0xffffffe1:
        fail("frame #%d: pc %s is not an EXC_RETURN value" % (i, a["pc"]))
# The callers of call-site frames (not frame 0, not a frame an exception interrupted) must
# come from WANT_STEPPER; the bottom frame's too.
if want_stepper != "-":
    frames = t["frames"]
    for i in range(1, len(frames)):
        inner = frames[i - 1]
        if (i - 1 == 0 or inner["kind"] not in ("normal", "signal") or inner["kind"] == "signal"
                or frames[i]["kind"] not in ("normal", "signal")
                or (i >= 2 and frames[i - 2]["kind"] == "signal")):
            continue
        if frames[i].get("stepper") != want_stepper:
            fail("frame #%d %s: from stepper %s, want %s"
                 % (i, names[i], frames[i].get("stepper"), want_stepper))
signals = text.count("<signal handler called>")
if signals != sum(w.startswith("-") for w in want):
    fail("text output: %d '<signal handler called>', want %d"
         % (signals, sum(w.startswith("-") for w in want)))
PY
}

# case_dcrs EXC: the Secure HardFault over the additional state context (mps2-an505-dcrs.elf,
# EXC_RETURN 0xFFFFFFD9; -fp-dcrs.elf, 0xFFFFFFC9 over an extended frame; EXC is its low byte).
# gdb 13.1 does not take these for EXC_RETURN values without the Security Extension's registers
# (it ends at "0xffffffd8 in ??"), so the oracle is built by hand: gdb reads the words at
# Fault_Handler's CFA (the integrity signature, r4-r11, the basic frame), loads the stacked
# registers into the CPU and walks from there; rspwalk's frames below the exception frame must
# be that walk, pc and sp, the first one's SP past the 72 or 144 bytes stacked.
case_dcrs() {
    local exc=$1 dir rc
    dir=$(mktemp -d "$work/dcrs.XXXX")
    [ -n "$qpid" ] || { echo "no board: $(head -n 1 "$work/start.out")"; return 1; }
    # shellcheck disable=SC2016  # $lr is gdb's
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set confirm off' -ex "file $FW" \
        -ex "target remote 127.0.0.1:$port" -ex 'break Fault_Handler' -ex continue \
        -ex 'info frame' -ex 'p/x $lr' -ex 'disconnect' </dev/null >"$dir/run.log" 2>&1
    local cfa
    cfa=$(sed -n 's/^Stack level 0, frame at \(0x[0-9a-f]*\):.*/\1/p' "$dir/run.log")
    [ -n "$cfa" ] || { echo "gdb did not stop at Fault_Handler: $(tail -n 1 "$dir/run.log")"; return 1; }
    grep -q "^\$1 = 0xffffff$exc\$" "$dir/run.log" ||
        { echo "Fault_Handler's LR is not 0xffffff$exc: $(tail -n 1 "$dir/run.log")"; return 1; }
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --exe "$FW" "127.0.0.1:$port" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"; return 1; }
    cat >"$dir/walk.py" <<'PY'
import gdb
words = [int(gdb.parse_and_eval("*(unsigned int *)(%s + %d)" % (CFA, 4 * i))) & 0xffffffff
         for i in range(18)]
print("W " + " ".join("%x" % w for w in words))
for i, r in enumerate(["r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11"]):
    gdb.execute("set $%s = %d" % (r, words[2 + i]))
for i, r in enumerate(["r0", "r1", "r2", "r3", "r12", "lr", "pc"]):
    gdb.execute("set $%s = %d" % (r, words[10 + i]))
gdb.execute("set $sp = %d" % (int(CFA, 16) + SIZE + (4 if words[17] & 0x200 else 0)))
gdb.execute("flushregs")
f = gdb.newest_frame()
while f is not None:
    print("F %s %x %x" % (f.name(), f.pc(), int(f.read_register("sp")) & 0xffffffff))
    f = f.older()
PY
    local size=72
    [ $((0x$exc & 0x10)) = 0 ] && size=144
    sed -i "1a CFA = \"$cfa\"\nSIZE = $size" "$dir/walk.py"
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set confirm off' \
        -ex 'set backtrace past-main on' -ex "file $FW" -ex "target remote 127.0.0.1:$port" \
        -x "$dir/walk.py" -ex kill </dev/null >"$dir/gdb.log" 2>&1
    python3 - "$dir/rspwalk.json" "$dir/gdb.log" "$cfa" "$exc" "$size" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["threads"][0]
log = open(sys.argv[2]).read().splitlines()
cfa = int(sys.argv[3], 16)
exc = int(sys.argv[4], 16)
size = int(sys.argv[5])
sig = 0xfefa125a | (1 if exc & 0x10 else 0)
def fail(why):
    print(why)
    sys.exit(1)
w = [l for l in log if l.startswith("W ")]
g = [l.split()[1:] for l in log if l.startswith("F ")]
if not w or not g:
    fail("gdb read no frame: %s" % (log[-1] if log else "no output"))
words = [int(x, 16) for x in w[0].split()[1:]]
if words[0] != sig:
    fail("no integrity signature 0x%08x at Fault_Handler's CFA 0x%x: 0x%08x" % (sig, cfa, words[0]))
want = ["Fault_Handler", "-%02x" % exc] + [f[0] for f in g]
fr = t["frames"]
names = [("-%02x" % (int(f["pc"], 16) & 0xff)) if f["kind"] == "signal" else f["function"]
         for f in fr]
if names != want or t["end"] != "bottom":
    fail("rspwalk: %s (end %s), want %s" % (" ".join(map(str, names)), t["end"], " ".join(want)))
for i, (a, b) in enumerate(zip(fr[2:], g)):
    if int(a["pc"], 16) != int(b[1], 16) or int(a["sp"], 16) != int(b[2], 16):
        fail("frame #%d %s: rspwalk pc %s sp %s, gdb pc 0x%s sp 0x%s"
             % (i + 2, names[i + 2], a["pc"], a["sp"], b[1], b[2]))
if int(fr[2]["sp"], 16) != cfa + size + (4 if words[17] & 0x200 else 0):
    fail("frame #2: sp %s, want past the %d bytes at 0x%x" % (fr[2]["sp"], size, cfa))
PY
}

# case_line NAME ARGS...: one line, PASS or FAIL, as run-all counts them.
case_line() {
    local name=$1 start
    shift
    start=$(date +%s%N)
    if { if [ "$1" = dcrs ]; then case_dcrs "$2"; else case_run "$@"; fi; } >"$work/case.out" 2>&1; then
        echo "PASS $name ($((($(date +%s%N) - start) / 1000000)) ms)"
    else
        echo "FAIL $name: $(head -n 1 "$work/case.out" | grep . || echo "no reason given (IT_KEEP=1 keeps $work)")"
        tail -n +2 "$work/case.out" | sed 's/^/    /'
        failed=1
    fi
}

AN=stackbottom,sighandler,analysis
FW0=build/fixtures/cortexm/mps2-an385.elf
FW2=build/fixtures/cortexm/mps2-an385-O2.elf
FW4=build/fixtures/cortexm/mps2-an386.elf
FWM0=build/fixtures/cortexm/microbit.elf
FWF=build/fixtures/cortexm/mps2-an385-fault.elf
FW33=build/fixtures/cortexm/mps2-an505.elf
FW33F=build/fixtures/cortexm/mps2-an505-fp.elf
FW33X=build/fixtures/cortexm/mps2-an505-fault.elf
FW33D=build/fixtures/cortexm/mps2-an505-dcrs.elf
FW33FD=build/fixtures/cortexm/mps2-an505-fp-dcrs.elf
# Not in a subshell: stop_qemu must see the pid start_qemu set.
start_qemu mps2-an385 "$FW0" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/O0/thread c3 - c3 c2 c1 main Reset_Handler
case_line cortexm/O0/systick h_leaf - h_leaf h1 SysTick_Handler -f9 spin_odd c3 c2 c1 main \
    Reset_Handler
case_line cortexm/O0/nested p_leaf - p_leaf p1 PendSV_Handler -f1 h_pend h1 SysTick_Handler \
    -f9 spin_odd c3 c2 c1 main Reset_Handler
case_line cortexm/O0/nested/analysis p_leaf "$AN" p_leaf p1 PendSV_Handler -f1 h_pend h1 \
    SysTick_Handler -f9 spin_odd c3 c2 c1 main Reset_Handler
case_line cortexm/O0/nested/wanderer p_leaf stackbottom,sighandler,wanderer p_leaf p1 \
    PendSV_Handler -f1 h_pend h1 SysTick_Handler -f9 spin_odd c3 c2 c1 main Reset_Handler
# At the handler's first instruction: LR still holds EXC_RETURN.
case_line cortexm/O0/entry '*SysTick_Handler' - SysTick_Handler -f9 spin_odd c3 c2 c1 main \
    Reset_Handler
stop_qemu
start_qemu mps2-an385 "$FW2" >"$work/start.out" 2>&1 || stop_qemu
# -O2: c3 and h1 end in tail calls (b.w spin_odd, b.w h_leaf): both debuggers rebuild h1 as
# a tail-call frame from the DWARF call sites and neither lists c3 (spin_odd is assembly);
# h_pend and p_leaf are frameless leaves (h_pend's caller comes from the stacked LR).
case_line cortexm/O2/systick h_leaf - h_leaf h1 SysTick_Handler -f9 spin_odd c2 c1 main \
    Reset_Handler
case_line cortexm/O2/nested p_leaf - p_leaf p1 PendSV_Handler -f1 h_pend h1 SysTick_Handler \
    -f9 spin_odd c2 c1 main Reset_Handler
case_line cortexm/O2/nested/analysis p_leaf "$AN" p_leaf p1 PendSV_Handler -f1 h_pend h1 \
    SysTick_Handler -f9 spin_odd c2 c1 main Reset_Handler
case_line cortexm/O2/nested/wanderer p_leaf stackbottom,sighandler,wanderer p_leaf p1 \
    PendSV_Handler -f1 h_pend h1 SysTick_Handler -f9 spin_odd c2 c1 main Reset_Handler
stop_qemu
# Cortex-M4F with the FPU on: extended frames (EXC_RETURN 0xFFFFFFE9, then 0xFFFFFFE1 for
# PendSV over h_pend, which computed in FP registers), 104 bytes each, lazily stacked.
start_qemu mps2-an386 "$FW4" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/M4F/nested p_leaf - p_leaf p1 PendSV_Handler -e1 h_pend h1 SysTick_Handler \
    -e9 spin_odd c3 c2 c1 main Reset_Handler
case_line cortexm/M4F/nested/analysis p_leaf "$AN" p_leaf p1 PendSV_Handler -e1 h_pend h1 \
    SysTick_Handler -e9 spin_odd c3 c2 c1 main Reset_Handler
stop_qemu
# A HardFault in Thread mode: the frame stacked at the faulting udf, its PC exact.
start_qemu mps2-an385 "$FWF" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/fault Fault_Handler - Fault_Handler -f9 c_fault c3 c2 c1 main Reset_Handler
case_line cortexm/fault/analysis Fault_Handler "$AN" Fault_Handler -f9 c_fault c3 c2 c1 main \
    Reset_Handler
stop_qemu
# Release builds: no .debug_frame, the ARM index tables (-funwind-tables) in its place; gdb
# reads the same firmware with its .debug_frame (*-full.elf).
for opt in O0 O2; do
    if [ "$opt" = O0 ]; then
        FWE=build/fixtures/cortexm/mps2-an385-exidx.elf
        outer=(spin_odd c3 c2 c1 main Reset_Handler)
    else
        FWE=build/fixtures/cortexm/mps2-an385-O2-exidx.elf
        outer=(spin_odd c2 c1 main Reset_Handler)
    fi
    RW_FW=$FWE
    WANT_STEPPER=ehabi
    start_qemu mps2-an385 "${FWE%.elf}-full.elf" >"$work/start.out" 2>&1 || stop_qemu
    if [ -n "$qpid" ] && ! python3 - "$FWE" "${FWE%.elf}-full.elf" >"$work/start.out" 2>&1 <<'PY'; then
import sys
# Both files must load the same bytes (PT_LOAD contents) for gdb's walk to be rspwalk's.
def loads(path):
    d = open(path, "rb").read()
    assert d[:4] == b"\x7fELF" and d[4] == 1, path + ": not a 32-bit ELF"
    phoff = int.from_bytes(d[28:32], "little"); phentsize = int.from_bytes(d[42:44], "little")
    phnum = int.from_bytes(d[44:46], "little")
    out = []
    for i in range(phnum):
        ph = d[phoff + i * phentsize: phoff + (i + 1) * phentsize]
        if int.from_bytes(ph[0:4], "little") == 1:
            off, vaddr, filesz = (int.from_bytes(ph[k:k + 4], "little") for k in (4, 8, 16))
            out.append((vaddr, d[off:off + filesz]))
    return out
if loads(sys.argv[1]) != loads(sys.argv[2]):
    print("%s and %s do not load the same bytes (make fixtures)" % (sys.argv[1], sys.argv[2]))
    sys.exit(1)
PY
        stop_qemu
    fi
    case_line "cortexm/$opt/ehabi/thread" c3 - c3 c2 c1 main Reset_Handler
    case_line "cortexm/$opt/ehabi/systick" h_leaf - h_leaf h1 SysTick_Handler -f9 "${outer[@]}"
    case_line "cortexm/$opt/ehabi/nested" p_leaf - p_leaf p1 PendSV_Handler -f1 h_pend h1 \
        SysTick_Handler -f9 "${outer[@]}"
    stop_qemu
done
RW_FW=
WANT_STEPPER=
# ARMv8-M mainline: a Cortex-M33 with the Security Extension (-M mps2-an505), in the Secure
# state it resets into.  Its exceptions are Secure and stack on the Secure main stack: the
# same EXC_RETURN values (S, DCRS and ES set), decoded by the ARMv8-M rules; then with the FPU
# on (-mfloat-abi=hard), extended frames.
start_qemu mps2-an505 "$FW33" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/M33/thread c3 - c3 c2 c1 main Reset_Handler
case_line cortexm/M33/systick h_leaf - h_leaf h1 SysTick_Handler -f9 spin_odd c3 c2 c1 main \
    Reset_Handler
case_line cortexm/M33/nested p_leaf - p_leaf p1 PendSV_Handler -f1 h_pend h1 SysTick_Handler \
    -f9 spin_odd c3 c2 c1 main Reset_Handler
case_line cortexm/M33/nested/analysis p_leaf "$AN" p_leaf p1 PendSV_Handler -f1 h_pend h1 \
    SysTick_Handler -f9 spin_odd c3 c2 c1 main Reset_Handler
stop_qemu
start_qemu mps2-an505 "$FW33X" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/M33/fault Fault_Handler - Fault_Handler -f9 c_fault c3 c2 c1 main Reset_Handler
stop_qemu
# The additional state context, live: a Non-secure PendSV pended from Secure code, whose
# vector fetch fails (all memory is Secure), tail-chains into a Secure HardFault over it.
start_qemu mps2-an505 "$FW33D" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/M33/dcrs dcrs d9
stop_qemu
start_qemu mps2-an505 "$FW33FD" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/M33F/dcrs dcrs c9
stop_qemu
start_qemu mps2-an505 "$FW33F" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/M33F/nested p_leaf - p_leaf p1 PendSV_Handler -e1 h_pend h1 SysTick_Handler \
    -e9 spin_odd c3 c2 c1 main Reset_Handler
stop_qemu
# ARMv6-M (Cortex-M0, -M microbit): the same tables and frames.
start_qemu microbit "$FWM0" >"$work/start.out" 2>&1 || stop_qemu
case_line cortexm/M0/nested p_leaf - p_leaf p1 PendSV_Handler -f1 h_pend h1 SysTick_Handler \
    -f9 spin_odd c3 c2 c1 main Reset_Handler
case_line cortexm/M0/nested/analysis p_leaf "$AN" p_leaf p1 PendSV_Handler -f1 h_pend h1 \
    SysTick_Handler -f9 spin_odd c3 c2 c1 main Reset_Handler
stop_qemu
exit "$failed"
