#!/usr/bin/env bash
# tests/integration/run-sample.sh -- rspwalk --sample: known CPU shares found again, every sample
# walked to the bottom, the formats valid, the target left as found, QEMU user mode without desync.
#
# Fixture shares (fixtures/src/shares.c): workers spending 70/20/10 of their CPU time in
# share_70/share_20/share_10; "trap" makes main raise SIGTRAP once they run, and rspwalk -c
# resumes from that stop, so the samples see the steady state.  Cases:
#   gdbserver/one      a one-thread program at the maximum rate (every walk to the bottom, the
#                      rate printed), then at 1000 Hz: shares within 3 points (at the maximum
#                      rate the program runs some tens of microseconds between two stops, and
#                      what a resume costs it tilts the shares by up to 4 points in some runs);
#                      the target stopped afterwards (every thread in ptrace stop), as found.
#   gdbserver/two      two workers at 200 Hz: shares within 3 points.
#   gdbserver/parked   main working beside 7 threads parked in nanosleep, at 400 Hz: shares
#                      within 3 points, every sample's 7 parked walks the same stack through
#                      parked(); at the maximum rate: every walk to the bottom, most taken again
#                      (registers and stack bytes unchanged since the last stop).
#   gdbserver/nonstop  main working beside 7 parked threads, the link in non-stop mode
#                      (--non-stop): shares within 3 points at 400 Hz, the parked walks as in
#                      gdbserver/parked, stats.stop "threads"; left as found: main stopped at its
#                      trap, the parked threads running.
#   gdbserver/churn    sampled from the program's first instruction (no -c) at the maximum rate,
#                      3 parked threads and 2 workers are created while it is sampled (the
#                      thread list a stop kept from the last one's length must find them) and
#                      the workers exit before main does: all 6 threads found and walked, none
#                      failed, every walk to the bottom; the run ends with the program's exit.
#   gdbserver/churn-nonstop  the same with --non-stop: threads created and ending while the
#                      others run and are paused, walked and resumed apart.
#   gdbserver/eight    eight workers (on a 2-core host each stop waits for the scheduler to
#                      run every worker, so few stops: their shares are printed, not judged);
#                      folded (the input of flamegraph.pl) well formed; speedscope valid against speedscope's
#                      published schema (tests/speedscope/, ajv from npm); STAT's dot drawn by
#                      graphviz's dot -Tsvg; the JSON's counters; again stopped afterwards.
#   gdbserver/signal   SIGTERM sent to the program 1 s into a 100 Hz run (not a signal passed
#                      without stopping): delivered at the resume after its stop, so the
#                      program dies of it as it would unsampled; the run ends saying so, with
#                      the samples so far and stats.signals_delivered 1.
#   qemu-aarch64/one   a one-thread program under qemu-aarch64 (stopped by a signal to one guest
#                      thread a sample, the others marked running) at 200 Hz: shares within
#                      3 points.  (At the maximum rate QEMU 7.2's translation-cache flush at
#                      every stop makes the guest spend time retranslating the code it enters
#                      after each stop, a bias of a few points towards the short functions.)
#   qemu-aarch64/runs  SAMPLE_QEMU_RUNS (default 20) runs with eight busy workers at the maximum
#                      rate: each ends with status 0, every stopped thread walked to the bottom,
#                      no stop missed, QEMU's stub never brought back in step (stats.resyncs 0:
#                      no desync).
#   qemu-aarch64/fast  one busy worker at the maximum rate and at 1000 Hz, 3 s each,
#                      SAMPLE_QEMU_FAST_RUNS (default 1) times: status 0 (the last stop, which
#                      leaves the target stopped as it was found, came), no reply taken for
#                      another's (no "cannot parse", no "stub replied"), every stopped thread
#                      walked to the bottom, no stop missed, no resync.
# Kills only what it started.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

work=$IT_TMP
rspwalk=$IT_ROOT/build/release/rspwalk
check=$IT_DIR/sample_check.py
pids=()
sample_cleanup() {
    local p
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
    it_cleanup
}
trap sample_cleanup EXIT

report() { # report NAME WHY DETAILS...
    local name=$1 why=$2
    shift 2
    if [ -z "$why" ]; then
        echo "PASS sample/$name: $*"
    else
        echo "FAIL sample/$name: $why"
        [ $# -gt 0 ] && printf '    %s\n' "$@" | head -20
    fi
}

if ! why=$(it_missing_peers gdbserver:gdbserver qemu-aarch64:qemu-user dot:graphviz node:nodejs \
    npm:npm); then
    echo "FAIL sample/build: $why"
    exit 1
fi
[ -x "$rspwalk" ] || { echo "FAIL sample/build: not built: $rspwalk (make all)"; exit 1; }
for a in x86_64 aarch64; do
    f=$IT_ROOT/build/fixtures/$a/shares-O0-dyn
    [ -x "$f" ] || { echo "FAIL sample/build: fixture not built: $f (make fixtures)"; exit 1; }
done

# ajv for the speedscope schema: kept under build/npm once installed.
ajv_dir=$IT_ROOT/build/npm/node_modules
if [ ! -d "$ajv_dir/ajv" ]; then
    mkdir -p "$IT_ROOT/build/npm"
    if ! (cd "$IT_ROOT/build/npm" && npm install --no-audit --no-fund --silent ajv@8 \
        >"$work/npm.log" 2>&1); then
        echo "FAIL sample/build: npm install ajv: $(tail -n 2 "$work/npm.log")"
        exit 1
    fi
fi

# gs_launch LOG FIXTURE-ARG...: gdbserver on the x86_64 fixture, its output in LOG; sets $gs
# and $port (empty when it did not start listening).
gs_launch() {
    local log=$1
    shift
    gdbserver 127.0.0.1:0 "$IT_ROOT/build/fixtures/x86_64/shares-O0-dyn" "$@" </dev/null \
        >"$log" 2>&1 &
    gs=$!
    pids+=("$gs")
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$log")
        [ -n "$port" ] && break
        sleep 0.05
    done
}

# gs_start THREADS [PARKED]: gdbserver on the x86_64 fixture; sets $port, $gs and $inf.
gs_start() {
    local log=$work/gs-$1${2:+-$2}.log
    gs_launch "$log" "$1" 600 trap "${2:-0}"
    inf=$(sed -n 's/^Process .* created; pid = \([0-9][0-9]*\)$/\1/p' "$log")
    [ -n "$inf" ] && pids+=("$inf")
    [ -n "$port" ] && [ -n "$inf" ]
}

# all_stopped PID: every thread of PID in ptrace stop ("t").
all_stopped() {
    local st bad=0
    for st in /proc/"$1"/task/*/stat; do
        [ "$(awk '{print $3}' "$st" 2>/dev/null)" = t ] || bad=1
    done
    return $bad
}

sample() { # sample OUT ARGS...: rspwalk with a timeout, stderr in OUT.err
    local out=$1
    shift
    timeout 120 "$rspwalk" "$@" >"$out" 2>"$out.err"
}

# ---- gdbserver ------------------------------------------------------------------------------
if gs_start 0; then
    t=127.0.0.1:$port
    why= details=()
    # -c: from the fixture's trap, once it works.
    if ! sample "$work/one.json" -c --sample 3@max -f json "$t"; then
        why="rspwalk exited $?: $(head -c 300 "$work/one.json.err")"
    elif ! sample "$work/one.folded" --sample 3@1000 -f folded "$t"; then
        why="rspwalk exited $?: $(head -c 300 "$work/one.folded.err")"
    else
        j=$("$check" json "$work/one.json") || why="profile: $j"
        s=$("$check" shares "$work/one.folded") || why="${why:+$why; }shares: $s"
        all_stopped "$inf" || why="${why:+$why; }the target was not left stopped"
        details=("$j" "$s")
    fi
    report gdbserver/one "$why" "${details[@]}"
else
    report gdbserver/one "gdbserver did not start: $(tail -n 2 "$work"/gs-0.log)"
fi
kill "$gs" "$inf" 2>/dev/null

if gs_start 2; then
    why= details=()
    if ! sample "$work/two.folded" -c --sample 5@200 -f folded "127.0.0.1:$port"; then
        why="rspwalk exited $?: $(head -c 300 "$work/two.folded.err")"
    else
        s=$("$check" shares "$work/two.folded") || why="shares: $s"
        all_stopped "$inf" || why="${why:+$why; }the target was not left stopped"
        details=("$s")
    fi
    report gdbserver/two "$why" "${details[@]}"
else
    report gdbserver/two "gdbserver did not start: $(tail -n 2 "$work"/gs-2.log)"
fi
kill "$gs" "$inf" 2>/dev/null

if gs_start 0 7; then
    t=127.0.0.1:$port
    why= details=()
    if ! sample "$work/parked.folded" -c --sample 5@400 -f folded "$t"; then
        why="rspwalk exited $?: $(head -c 300 "$work/parked.folded.err")"
    elif ! sample "$work/parked.json" --sample 2@max -f json "$t"; then
        why="rspwalk exited $?: $(head -c 300 "$work/parked.json.err")"
    else
        s=$("$check" shares "$work/parked.folded") || why="shares: $s"
        k=$("$check" parked "$work/parked.folded" 7) || why="${why:+$why; }parked: $k"
        j=$("$check" json "$work/parked.json" 0 0.5) || why="${why:+$why; }profile: $j"
        all_stopped "$inf" || why="${why:+$why; }the target was not left stopped"
        details=("$s" "$k" "$j")
    fi
    report gdbserver/parked "$why" "${details[@]}"
else
    report gdbserver/parked "gdbserver did not start: $(tail -n 2 "$work"/gs-0-7.log)"
fi
kill "$gs" "$inf" 2>/dev/null

# Non-stop (--non-stop): each thread stopped, walked and resumed on its own, the busy one first.
if gs_start 0 7; then
    t=127.0.0.1:$port
    why= details=()
    if ! sample "$work/ns.folded" -c --non-stop --sample 4@400 -f folded "$t"; then
        why="rspwalk exited $?: $(head -c 300 "$work/ns.folded.err")"
    elif ! sample "$work/ns.json" --non-stop --sample 2@200 -f json "$t"; then
        why="rspwalk exited $?: $(head -c 300 "$work/ns.json.err")"
    else
        s=$("$check" shares "$work/ns.folded") || why="shares: $s"
        k=$("$check" parked "$work/ns.folded" 7) || why="${why:+$why; }parked: $k"
        j=$("$check" json "$work/ns.json" 0 0.5) || why="${why:+$why; }profile: $j"
        grep -q '"stop": "threads"' "$work/ns.json" || why="${why:+$why; }not stopped by thread"
        # As found: main stopped at its trap, the parked threads running (asleep).
        states=$(for st in /proc/"$inf"/task/*/stat; do awk '{print $3}' "$st"; done | sort | uniq -c |
            tr -s ' ' | tr '\n' ',')
        [ "$(awk '{print $3}' /proc/"$inf"/task/"$inf"/stat)" = t ] ||
            why="${why:+$why; }main was not left stopped"
        [ "$(for st in /proc/"$inf"/task/*/stat; do awk '{print $3}' "$st"; done | grep -c t)" = 1 ] ||
            why="${why:+$why; }not only main left stopped (states:$states)"
        details=("$s" "$k" "$j")
    fi
    report gdbserver/nonstop "$why" "${details[@]}"
else
    report gdbserver/nonstop "gdbserver did not start: $(tail -n 2 "$work"/gs-0-7.log)"
fi
kill "$gs" "$inf" 2>/dev/null

# The program runs 1 s from its start, without the trap; the run ends when it exits.
# churn NAME [RSPWALK-OPTION...]
churn() {
    local name=$1 log=$work/gs-$1.log j rc
    shift
    gs_launch "$log" 2 1 run 3
    why= details=()
    if [ -z "$port" ]; then
        why="gdbserver did not start: $(tail -n 2 "$log")"
    else
        sample "$work/$name.json" "$@" --sample 30@max -f json "127.0.0.1:$port"
        rc=$?
        if [ $rc != 1 ] || ! grep -q 'exited with status 0' "$work/$name.json.err"; then
            why="rspwalk exited $rc, not 1 at the program's exit: $(head -c 300 "$work/$name.json.err")"
        else
            j=$("$check" threads "$work/$name.json" 3 2) || why="$j"
            details=("$j")
        fi
    fi
    report "gdbserver/$name" "$why" "${details[@]}"
    kill "$gs" 2>/dev/null
}
churn churn
churn churn-nonstop --non-stop

if gs_start 8; then
    t=127.0.0.1:$port
    why= details=()
    if ! sample "$work/eight.folded" -c --sample 4@200 -f folded "$t"; then
        why="rspwalk exited $?: $(head -c 300 "$work/eight.folded.err")"
    else
        s=$("$check" shares "$work/eight.folded")
        f=$("$check" folded "$work/eight.folded") || why="folded: $f"
        details+=("200 Hz (not judged): $s" "folded: $f")
        sample "$work/eight.speedscope" --sample 1@max -f speedscope "$t" ||
            why="${why:+$why; }speedscope: rspwalk exited $?: $(head -c 200 "$work/eight.speedscope.err")"
        if v=$(AJV_DIR=$ajv_dir node "$IT_ROOT/tests/speedscope/validate.mjs" \
            "$IT_ROOT/tests/speedscope/file-format-schema.json" "$work/eight.speedscope" 2>&1); then
            details+=("speedscope: valid against the published schema")
        else
            why="${why:+$why; }speedscope: $v"
        fi
        sample "$work/eight.dot" --sample 1@100 -f dot "$t" ||
            why="${why:+$why; }dot: rspwalk exited $?"
        if dot -Tsvg "$work/eight.dot" >"$work/eight.svg" 2>"$work/dot.err" &&
            grep -q share_70 "$work/eight.svg"; then
            details+=("dot: $(grep -c -- '->' "$work/eight.dot") edges drawn by dot -Tsvg")
        else
            why="${why:+$why; }dot -Tsvg: $(head -c 200 "$work/dot.err")"
        fi
        if sample "$work/eight.json" --sample 2@max -f json "$t"; then
            j=$("$check" json "$work/eight.json") || why="${why:+$why; }profile: $j"
            details+=("max: $j")
        else
            why="${why:+$why; }json: rspwalk exited $?: $(head -c 200 "$work/eight.json.err")"
        fi
        all_stopped "$inf" || why="${why:+$why; }the target was not left stopped"
    fi
    report gdbserver/eight "$why" "${details[@]}"
else
    report gdbserver/eight "gdbserver did not start: $(tail -n 2 "$work"/gs-8.log)"
fi
kill "$gs" "$inf" 2>/dev/null

if gs_start 0; then
    why= details=()
    (sleep 1 && kill -TERM "$inf") &
    killer=$!
    sample "$work/signal.json" -c --sample 8@100 -f json "127.0.0.1:$port"
    rc=$?
    wait "$killer"
    for _ in $(seq 100); do kill -0 "$inf" 2>/dev/null || break; sleep 0.05; done
    if [ "$rc" -eq 0 ]; then
        why="rspwalk exited 0 where the program was killed"
    elif ! grep -q "killed by signal 15" "$work/signal.json.err"; then
        why="rspwalk exited $rc without naming the signal: $(head -c 300 "$work/signal.json.err")"
    elif kill -0 "$inf" 2>/dev/null; then
        why="the program outlived its SIGTERM"
    else
        got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["samples"], d["stats"]["signals_delivered"])' "$work/signal.json" 2>&1)
        case $got in
        *" 1") [ "${got%% *}" -ge 50 ] || why="only ${got%% *} samples before the signal" ;;
        *) why="samples and signals delivered: $got" ;;
        esac
        details=("rspwalk exited $rc: $(head -c 120 "$work/signal.json.err"); samples, signals: $got")
        grep -q "signal = 0xf (SIGTERM)" "$work"/gs-0.log ||
            why="${why:+$why; }gdbserver did not see the program die of SIGTERM"
    fi
    report gdbserver/signal "$why" "${details[@]}"
else
    report gdbserver/signal "gdbserver did not start: $(tail -n 2 "$work"/gs-0.log)"
fi
kill "$gs" "$inf" 2>/dev/null

# ---- qemu-aarch64 ---------------------------------------------------------------------------
# qemu_sample NAME THREADS SPEC FORMAT: one qemu-aarch64 run sampled from its trap.
qemu_sample() {
    local sock=$work/$1.sock q
    rm -f "$sock"
    qemu-aarch64 -cpu max,sve=off -L "$(it_qemu_sysroot aarch64)" -g "$sock" \
        "$IT_ROOT/build/fixtures/aarch64/shares-O0-dyn" "$2" 600 trap </dev/null \
        >"$work/$1.qemu.log" 2>&1 &
    q=$!
    pids+=("$q")
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.02; done
    # QEMU binds the socket, then listens: a moment between the two refuses.
    sleep 0.05
    sample "$work/$1.out" -c --sample "$3" -f "$4" -e "$IT_ROOT/build/fixtures/aarch64/shares-O0-dyn" \
        --sysroot "$(it_qemu_sysroot aarch64)" "unix:$sock"
    local rc=$?
    kill -KILL "$q" 2>/dev/null
    wait "$q" 2>/dev/null
    return $rc
}

why= details=()
if ! qemu_sample qone 0 10@200 folded; then
    why="rspwalk exited: $(head -c 300 "$work/qone.out.err")"
else
    s=$("$check" shares "$work/qone.out") || why="shares: $s"
    details=("$s")
fi
report qemu-aarch64/one "$why" "${details[@]}"

why= details=() worst=
runs=${SAMPLE_QEMU_RUNS:-20}
for i in $(seq "$runs"); do
    if ! qemu_sample "qrun$i" 8 1@max json; then
        why="run $i: rspwalk exited: $(head -c 300 "$work/qrun$i.out.err")"
        break
    fi
    if ! j=$("$check" json "$work/qrun$i.out"); then
        why="run $i: $j"
        break
    fi
    [ -z "$worst" ] && worst=$j
done
report qemu-aarch64/runs "$why" "$runs runs of 8 busy workers, e.g. $worst"

why= details=()
fast=${SAMPLE_QEMU_FAST_RUNS:-1}
for i in $(seq "$fast"); do
    for spec in 3@max 3@1000; do
        name=qfast$i-${spec#3@}
        if ! qemu_sample "$name" 1 "$spec" json; then
            why="run $i, $spec: rspwalk exited: $(head -c 300 "$work/$name.out.err")"
            break 2
        fi
        if grep -E -q 'cannot parse|stub replied|protocol' "$work/$name.out.err"; then
            why="run $i, $spec: $(head -c 300 "$work/$name.out.err")"
            break 2
        fi
        if ! j=$("$check" json "$work/$name.out"); then
            why="run $i, $spec: $j"
            break 2
        fi
        [ "$i" = 1 ] && details+=("$spec: $j")
    done
done
report qemu-aarch64/fast "$why" "$fast runs at max and 1000 Hz of one busy worker" "${details[@]}"
