#!/usr/bin/env bash
# tests/integration/run-warm.sh -- one walker kept across many stops of a running program,
# as the stack server keeps it: each warm walk equal to a cold walk of the same stop, and
# cheap in round trips.
#
# tests/warm/warm_drive.c (make build/release/warm_drive) runs CYCLES times: resume, let the
# program run 3 ms, pause (the interrupt), walk every thread as the CLI does, then forget the
# stop and walk it again cold with a new walker; frames (pc, sp), ends and library lists
# must be the same.  Cases, under gdbserver (x86_64):
#   busy   four threads spinning (fixture busy): from the third stop on, at most 2 round trips
#          a stop, the interrupt's included (the stop reply, then one write for the thread
#          list, every thread's registers, their stacks and the link-map check).
#   churn  the same plus a thread started and joined and libm dlopened and dlclosed over and
#          over (fixture churn): threads that come and go and a library list that changes
#          between stops, every walk still equal to the cold one.
# WARM_CYCLES (default 100 busy, 40 churn).  Kills only what it started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
drive=$root/build/release/warm_drive
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-warm.XXXXXX")
gs=
inf=
cleanup() {
    [ -n "$inf" ] && kill "$inf" 2>/dev/null
    [ -n "$gs" ] && kill "$gs" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v gdbserver >/dev/null || { echo "FAIL warm/busy: missing peer: gdbserver"; exit 1; }
if ! make -s build/release/warm_drive >"$work/make.log" 2>&1; then
    echo "FAIL warm/busy: cannot build $drive: $(head -c 300 "$work/make.log")"
    exit 1
fi

# run_case NAME FIXTURE CYCLES MAX_RT: one gdbserver, one driver run.
run_case() {
    local name=$1 prog=$root/build/fixtures/x86_64/$2 cycles=$3 max_rt=$4 port= rc
    if [ ! -x "$prog" ]; then
        echo "FAIL warm/$name: fixture not built: $prog (make fixtures)"
        return
    fi
    gdbserver 127.0.0.1:0 "$prog" </dev/null >"$work/gs.log" 2>&1 &
    gs=$!
    for _ in $(seq 100); do
        port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$work/gs.log")
        [ -n "$port" ] && break
        sleep 0.05
    done
    inf=$(sed -n 's/^Process .* created; pid = \([0-9][0-9]*\)$/\1/p' "$work/gs.log")
    if [ -z "$port" ]; then
        echo "FAIL warm/$name: gdbserver did not start: $(tail -n 2 "$work/gs.log")"
        return
    fi
    timeout 300 "$drive" "127.0.0.1:$port" "$prog" / "$cycles" $max_rt >"$work/$name.out" 2>&1
    rc=$?
    kill "$inf" "$gs" 2>/dev/null
    wait "$gs" 2>/dev/null
    inf= gs=
    local summary
    summary=$(tail -n 1 "$work/$name.out")
    if [ $rc = 0 ]; then
        echo "PASS warm/$name: $summary"
    else
        echo "FAIL warm/$name: driver exited $rc: $summary"
        grep -v '^cycle [0-9]*: [0-9]* threads' "$work/$name.out" | head -40 | sed 's/^/    /'
    fi
}

run_case busy busy-s0-O0-dyn "${WARM_CYCLES:-100}" 2
run_case churn churn-s0-O0-dyn "${WARM_CYCLES:-40}" ""
