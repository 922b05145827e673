#!/usr/bin/env bash
# tests/integration/run-nonstop.sh -- ProcDebug in non-stop mode against gdbserver: one thread
# paused and walked while the others run, then resumed; exit detection.
#
# The threads fixture with stop method 1 (three threads parked in read, nanosleep and
# pthread_cond_wait; main stops in raise(SIGTRAP) and, resumed without the signal, exits 0)
# runs under gdbserver; docs/examples/nonstop.c (built here against build/release) opens the
# link with rsp_session_config.non_stop, resumes every thread, takes in main's stop, then
# pauses each other thread in turn (--hold: it waits for our line before resuming it).  While
# a thread is paused this script checks the kernel's view, /proc/PID/task/TID/stat: the paused
# thread and main are in state 't' (traced, stopped), the others are not (they still run,
# blocked in their calls), and the example's own view of each thread agrees.  Each walk must
# show the fixture's expected chain for that thread; after "resumed" the thread leaves 't';
# at the end the example sees the exit (status 0).  Kills only the gdbserver it started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
prog=$root/build/fixtures/x86_64/threads-s1-O0-dyn
lib=$root/build/release/librspwalk.a
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-nonstop.XXXXXX")
gs=
cleanup() {
    # The example may wait for our line: end its stdin, and the link.
    [ -n "${ns_in:-}" ] && eval "exec $ns_in>&-"
    [ -n "$gs" ] && kill "$gs" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
    echo "FAIL nonstop/$1: $2"
    [ -s "$work/out" ] && sed 's/^/    /' "$work/out" | head -40
    exit 1
}
command -v gdbserver >/dev/null || fail pause-one "missing peer: gdbserver (apt-get install gdbserver)"
[ -x "$prog" ] || fail pause-one "fixture not built: $prog (make fixtures)"
[ -f "$lib" ] || fail pause-one "library not built: $lib (make all)"
if ! cc -std=c11 -Wall -Wextra -Werror -Iinclude -o "$work/nonstop" docs/examples/nonstop.c \
    "$lib" -lelf -ldwarf -lcapstone -lexpat -lz 2>"$work/cc.err"; then
    fail pause-one "docs/examples/nonstop.c does not build: $(head -c 300 "$work/cc.err")"
fi

start=$(date +%s%N)
gdbserver 127.0.0.1:0 "$prog" </dev/null >"$work/gs.log" 2>&1 &
gs=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$work/gs.log")
    [ -n "$port" ] && break
    sleep 0.05
done
pid=$(sed -n 's/^Process .* created; pid = \([0-9][0-9]*\)$/\1/p' "$work/gs.log")
{ [ -n "$port" ] && [ -n "$pid" ]; } || fail pause-one "gdbserver did not start: $(tail -n 2 "$work/gs.log")"

state() { awk '{print $3}' "/proc/$pid/task/$1/stat" 2>/dev/null; }

coproc NS { timeout 60 "$work/nonstop" "127.0.0.1:$port" "$prog" --hold 2>&1; }
# shellcheck disable=SC2153  # NS_PID: set by coproc
ns_pid=$NS_PID
# Our own copies: bash drops NS once the example has exited.
exec {ns_out}<&"${NS[0]}" {ns_in}>&"${NS[1]}"
: >"$work/out"
paused=0 resumed=0 main_tid='' main_walk='' exited='' why=''
declare -A walk_of
current=
while IFS= read -r -t 30 line <&"$ns_out"; do
    echo "$line" >>"$work/out"
    case $line in
    "stopped: thread "*) main_tid=${line#stopped: thread } ;;
    "walk "*)
        tid=${line#walk }
        tid=${tid%% *}
        walk_of[$tid]=$line
        [ "$tid" = "$main_tid" ] && main_walk=$line
        if [ -n "$current" ] && [ "$tid" = "$current" ]; then
            # The kernel's view while CURRENT is paused: it and main stopped, the others not.
            others_running=0
            for t in /proc/"$pid"/task/*; do
                t=${t##*/}
                st=$(state "$t")
                if [ "$t" = "$current" ] || [ "$t" = "$main_tid" ]; then
                    [ "$st" = t ] || why="thread $t should be stopped while $current is paused, state '$st'"
                else
                    [ "$st" = t ] && why="thread $t is stopped ('t') while only $current was paused"
                    others_running=$((others_running + 1))
                fi
                # The example's own view must agree with the kernel's.
                case " $states " in
                *" $t=stopped "*) [ "$st" = t ] || why="the library says $t is stopped, the kernel '$st'" ;;
                *" $t=running "*) [ "$st" = t ] && why="the library says $t runs, the kernel 't'" ;;
                *) why="thread $t missing from the example's states: $states" ;;
                esac
            done
            [ "$others_running" -ge 2 ] || why="only $others_running other threads running while $current was paused"
            [ -n "$why" ] && break
            echo go >&"$ns_in"
        fi
        ;;
    "paused "*)
        current=${line#paused }
        paused=$((paused + 1))
        ;;
    "states: "*) states="${line#states:} " ;;
    "resumed all") current= ;;
    "resumed "*)
        t=${line#resumed }
        for _ in $(seq 50); do [ "$(state "$t")" != t ] && break; sleep 0.02; done
        [ "$(state "$t")" = t ] && { why="thread $t still stopped after its resume"; break; }
        resumed=$((resumed + 1))
        current=
        ;;
    "exited: "*) exited=$line ;;
    esac
done
exec {ns_in}>&-
wait "$ns_pid" 2>/dev/null
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))

[ -z "$why" ] || fail pause-one "$why"
[ "$rc" -eq 0 ] || fail pause-one "the example exited $rc"
{ [ -n "$main_tid" ] && [[ $main_walk == *" raise c b a main "* ]]; } ||
    fail pause-one "main's own stop not taken in and walked: ${main_walk:-none}"
{ [ "$paused" -eq 3 ] && [ "$resumed" -eq 3 ]; } || fail pause-one "paused $paused, resumed $resumed threads (want 3 each)"
for chain in "t1_inner t1_outer t1_main" "t2_inner t2_mid t2_outer t2_main" "t3_inner t3_outer t3_main"; do
    found=
    for tid in "${!walk_of[@]}"; do
        [[ ${walk_of[$tid]} == *" $chain start_thread "* ]] && [[ ${walk_of[$tid]} == *"(bottom)"* ]] && found=$tid
    done
    [ -n "$found" ] || fail pause-one "no paused thread walked through '$chain'"
done
echo "PASS nonstop/pause-one (3 threads paused, walked and resumed one at a time; $ms ms)"
[[ $exited == "exited: the target exited with status 0"* ]] || fail exit "no exit seen: ${exited:-none}"
echo "PASS nonstop/exit"
