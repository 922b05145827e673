#!/usr/bin/env bash
# tests/integration/run-mpi.sh -- rspwalk-mpi: the merged tree of many processes over MPI ranks.
#
# mpi_park.c (built here) forks 64 children parked in 4 known call chains (child I in state
# I % 4), which 4 `gdbserver --multi` links attach 16 each (one line of the targets file a
# link, with --attach).  Under `mpirun --oversubscribe --allow-run-as-root` on this machine:
#   one-rank      one rank walks all four links: the tree's tasks are the children in file
#                 order, main has exactly the 4 state branches, each chain's task set is
#                 every 4th task from its state, 4 classes (mpi_check.py states);
#   four-ranks    4 ranks (fan-out 2: rank 1 merges rank 3's tree before sending) give the
#                 same tree (JSON, timings aside) and the same folded stacks;
#   dot           the 4 ranks' -f dot is STAT's (stat_4_1, bv) and graphviz's dot draws it;
#   emulate       --emulate 1000,8,5 over 1, 3 (fan-out 1: a chain) and 4 ranks: one tree;
#                 also scattered (task G in state G mod 5) in count+rep mode over 1 and 4;
#   rspwalkd      a line http://HOST:PORT/ (an rspwalkd serving two threads fixtures at their
#                 stop) gives the rspwalkd's own /v1/tree; with a link after it, its tasks first;
#   bad-input     a bad line of the targets file, a missing file, a stub that is not there:
#                 one line naming the thing, exit 2, 1 and 1, no hang.
# Kills only the pids it started; loopback only.  IT_KEEP=1 keeps the work directory.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
MPIWALK=${MPIWALK:-$root/build/release/rspwalk-mpi}
IT=$root/tests/integration
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-mpi.XXXXXX")
park=
gss=()
cleanup() {
    for g in "${gss[@]}"; do kill -TERM "$g" 2>/dev/null; done
    # The parent first: its children die with it (PR_SET_PDEATHSIG), and by pid after.
    [ -n "$park" ] && kill -KILL "$park" 2>/dev/null
    [ -s "$work/pids" ] && while read -r p; do kill -KILL "$p" 2>/dev/null; done <"$work/pids"
    wait 2>/dev/null
    [ -n "${IT_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
failed=
report() { # report NAME WHY START
    local ms=$((($(date +%s%N) - $3) / 1000000))
    if [ -z "$2" ]; then echo "PASS mpi/$1 ($ms ms)"; else echo "FAIL mpi/$1: $2"; failed=1; fi
}
MPIRUN=(mpirun --oversubscribe --allow-run-as-root)

for peer in mpirun:openmpi-bin gdbserver:gdbserver python3:python3 dot:graphviz cc:gcc; do
    if ! command -v "${peer%%:*}" >/dev/null; then
        echo "FAIL mpi/one-rank: missing peer: ${peer%%:*} (apt-get install ${peer#*:})"
        exit 1
    fi
done
if [ ! -x "$MPIWALK" ]; then
    echo "FAIL mpi/one-rank: $MPIWALK not built (make build/release/rspwalk-mpi)"
    exit 1
fi
if ! cc -O0 -g -fno-omit-frame-pointer -o "$work/park" "$IT/mpi_park.c" 2>"$work/cc.err"; then
    echo "FAIL mpi/one-rank: cannot build mpi_park.c: $(head -c 300 "$work/cc.err")"
    exit 1
fi

# mpi NAME ARGS...: rspwalk-mpi under mpirun, its output in $work/NAME.out and .err.
mpi() {
    local name=$1
    shift
    timeout -k 5 120 "${MPIRUN[@]}" "$@" >"$work/$name.out" 2>"$work/$name.err"
}

# 64 children, all asleep in pause() before any link attaches.
start=$(date +%s%N)
"$work/park" 64 >"$work/pids" 2>"$work/park.err" &
park=$!
why=
for _ in $(seq 200); do
    n=$(wc -l <"$work/pids")
    if [ "$n" = 64 ]; then
        asleep=0
        while read -r p; do
            [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = S ] && asleep=$((asleep + 1))
        done <"$work/pids"
        [ "$asleep" = 64 ] && break
    fi
    sleep 0.05
done
[ "${asleep:-0}" = 64 ] || why="mpi_park's 64 children are not all asleep: $(head -c 300 "$work/park.err")"
mapfile -t pids <"$work/pids"

# Four gdbserver --multi links, 16 children each, in child order.
: >"$work/targets"
for ((l = 0; l < 4; l++)); do
    [ -n "$why" ] && break
    gdbserver --multi 127.0.0.1:0 </dev/null >"$work/gs$l.log" 2>&1 &
    gss+=($!)
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$work/gs$l.log")
        [ -n "$port" ] && break
        sleep 0.05
    done
    if [ -z "$port" ]; then
        why="gdbserver --multi did not listen: $(head -c 300 "$work/gs$l.log")"
        break
    fi
    list=$(IFS=,; echo "${pids[*]:$((16 * l)):16}")
    echo "127.0.0.1:$port --attach $list --exe $work/park --sysroot /" >>"$work/targets"
done

if [ -z "$why" ]; then
    if ! mpi one -np 1 "$MPIWALK" --targets "$work/targets" -f json; then
        why="rspwalk-mpi -np 1 failed: $(head -c 300 "$work/one.err")"
    elif ! out=$(python3 "$IT/mpi_check.py" states "$work/one.out" "$work/pids" 2>&1); then
        why=$out
    fi
fi
report one-rank "$why" "$start"

start=$(date +%s%N)
if [ -n "$why" ]; then
    why="no one-rank tree to compare with"
elif ! mpi four -np 4 "$MPIWALK" --targets "$work/targets" -f json --fanout 2; then
    why="rspwalk-mpi -np 4 failed: $(head -c 300 "$work/four.err")"
elif ! out=$(python3 "$IT/mpi_check.py" same "$work/one.out" "$work/four.out" 2>&1); then
    why=$out
elif ! grep -q '"timings": {"ranks": 4, "fanout": 2, "walk_ms": ' "$work/four.out"; then
    why="no timings object for 4 ranks in the JSON"
elif ! grep -q '^rspwalk-mpi: 4 ranks (fan-out 2), 64 tasks: walk ' "$work/four.err"; then
    why="no timings line on stderr: $(head -c 300 "$work/four.err")"
elif ! mpi fold1 -np 1 "$MPIWALK" --targets "$work/targets" -f folded ||
    ! mpi fold4 -np 4 "$MPIWALK" --targets "$work/targets" -f folded; then
    why="rspwalk-mpi -f folded failed: $(head -c 300 "$work/fold1.err" "$work/fold4.err")"
elif ! cmp -s "$work/fold1.out" "$work/fold4.out"; then
    why="-f folded differs between 1 and 4 ranks"
elif [ "$(awk '{s += $NF} END {print s}' "$work/fold4.out")" != 64 ]; then
    why="-f folded's counts do not add up to 64"
fi
report four-ranks "$why" "$start"

start=$(date +%s%N)
why=
if ! mpi dot -np 4 "$MPIWALK" --targets "$work/targets" -f dot; then
    why="rspwalk-mpi -f dot failed: $(head -c 300 "$work/dot.err")"
elif ! grep -q 'graph \[type="stat_4_1"\];' "$work/dot.out" ||
    ! grep -q 'bv="\[0-63\]"' "$work/dot.out" ||
    ! grep -q 'bv="\[1,5,9,13,17,21,25,29,33,37,41,45,49,53,57,61\]"' "$work/dot.out"; then
    why="the dot has not STAT's graph type and the expected bv task sets"
elif ! dot -Tsvg "$work/dot.out" >"$work/tree.svg" 2>"$work/dotsvg.err"; then
    why="dot -Tsvg failed: $(head -c 300 "$work/dotsvg.err")"
elif ! grep -q '<svg' "$work/tree.svg"; then
    why="dot -Tsvg wrote no SVG"
fi
report dot "$why" "$start"

start=$(date +%s%N)
why=
for run in "1 8" "3 1" "4 2"; do
    set -- $run
    if ! mpi "emu$1" -np "$1" "$MPIWALK" --emulate 1000,8,5 --fanout "$2" -f json; then
        why="rspwalk-mpi --emulate over $1 ranks failed: $(head -c 300 "$work/emu$1.err")"
        break
    fi
    if [ "$1" != 1 ] && ! out=$(python3 "$IT/mpi_check.py" same "$work/emu1.out" "$work/emu$1.out" 2>&1); then
        why="$1 ranks: $out"
        break
    fi
done
if [ -z "$why" ] && ! python3 - "$work/emu1.out" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
# 5 classes of 200 tasks each, in blocks; paths of 8 frames.
classes = sorted((c["tasks"], len(c["path"])) for c in doc["classes"])
want = [("[0-199]", 8), ("[200-399]", 8), ("[400-599]", 8), ("[600-799]", 8), ("[800-999]", 8)]
sys.exit(0 if doc["tasks"] == 1000 and classes == want else f"classes {classes}")
PY
    why="the emulated tree's classes are not 5 blocks of 200 tasks"
fi
# Scattered states in count+rep mode: one tree too, and each class's representative is its
# state's first task.
if [ -z "$why" ]; then
    for n in 1 4; do
        if ! mpi "sc$n" -np "$n" "$MPIWALK" --emulate 1000,8,5,scatter --countrep -f json; then
            why="--emulate ...,scatter --countrep over $n ranks failed: $(head -c 300 "$work/sc$n.err")"
            break
        fi
    done
fi
if [ -z "$why" ] && ! out=$(python3 "$IT/mpi_check.py" same "$work/sc1.out" "$work/sc4.out" 2>&1); then
    why="scattered, count+rep: $out"
elif [ -z "$why" ] &&
    [ "$(grep -c '{"tasks": "\[[0-4]\]", "count": 200, "path"' "$work/sc4.out")" != 5 ]; then
    why="scattered, count+rep: not 5 classes of 200 tasks with representatives 0-4"
fi
report emulate "$why" "$start"

# An rspwalkd's targets as a line: two threads fixtures under gdbserver, each run to its
# stop by `rspwalk -c` (gdbserver keeps the stop for the next client), served by rspwalkd.
start=$(date +%s%N)
why=
fixture=$root/build/fixtures/x86_64/threads-s0-O0-dyn
rspwalkd=$root/build/release/rspwalkd
sports=()
if [ ! -x "$fixture" ] || [ ! -x "$rspwalkd" ] || [ ! -x "$root/build/release/rspwalk" ]; then
    why="needs build/fixtures/x86_64/threads-s0-O0-dyn, rspwalk and rspwalkd (make all fixtures)"
fi
for s in 0 1; do
    [ -n "$why" ] && break
    gdbserver 127.0.0.1:0 "$fixture" </dev/null >"$work/fx$s.log" 2>&1 &
    gss+=($!)
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$work/fx$s.log")
        [ -n "$port" ] && break
        sleep 0.05
    done
    if [ -z "$port" ] || ! timeout 60 "$root/build/release/rspwalk" -c -f folded --sysroot / \
        "127.0.0.1:$port" >/dev/null 2>"$work/fx$s.err"; then
        why="the threads fixture did not reach its stop: $(head -c 300 "$work/fx$s.err")"
    fi
    sports+=("127.0.0.1:$port")
done
if [ -z "$why" ]; then
    "$rspwalkd" --listen 127.0.0.1:0 --db "$work/rspwalkd.db" "${sports[@]}" </dev/null \
        >"$work/rspwalkd.log" 2>&1 &
    gss+=($!)
    url=
    for _ in $(seq 100); do
        url=$(sed -n 's|^rspwalkd: listening on \(http://.*/\)$|\1|p' "$work/rspwalkd.log")
        [ -n "$url" ] && break
        sleep 0.05
    done
    [ -n "$url" ] || why="rspwalkd did not listen: $(head -c 300 "$work/rspwalkd.log")"
fi
if [ -z "$why" ]; then
    { echo "$url"; head -n 1 "$work/targets"; } >"$work/mixed"
    if ! python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1] + "v1/tree").read().decode())' \
        "$url" >"$work/server.json" 2>"$work/server.err"; then
        why="GET /v1/tree failed: $(head -c 300 "$work/server.err")"
    elif ! echo "$url" >"$work/http" || ! mpi http -np 1 "$MPIWALK" --targets "$work/http" -f json; then
        why="rspwalk-mpi on the rspwalkd line failed: $(head -c 300 "$work/http.err")"
    elif ! out=$(python3 "$IT/mpi_check.py" same "$work/server.json" "$work/http.out" 2>&1); then
        why="rspwalk-mpi's tree of the rspwalkd is not the rspwalkd's: $out"
    elif ! mpi mixed -np 2 "$MPIWALK" --targets "$work/mixed" -f json; then
        why="rspwalk-mpi on an rspwalkd and a link failed: $(head -c 300 "$work/mixed.err")"
    elif ! out=$(python3 "$IT/mpi_check.py" mixed "$work/mixed.out" 8 "${pids[@]:0:16}" 2>&1); then
        why="an rspwalkd and a link in one file: $out"
    fi
fi
report rspwalkd "$why" "$start"

start=$(date +%s%N)
why=
printf '# a comment\n127.0.0.1:1 --attach 12,x\n' >"$work/bad"
mpi bad1 -np 2 "$MPIWALK" --targets "$work/bad"
rc=$?
if [ "$rc" = 0 ] || ! grep -q "^rspwalk-mpi: $work/bad:2: --attach: '12,x' is not a list of process ids$" "$work/bad1.err"; then
    why="a bad --attach list: exit $rc, $(head -c 300 "$work/bad1.err")"
fi
mpi bad2 -np 2 "$MPIWALK" --targets "$work/nothere"
rc=$?
if [ -z "$why" ] && { [ "$rc" = 0 ] || ! grep -q "^rspwalk-mpi: $work/nothere: No such file or directory$" "$work/bad2.err"; }; then
    why="a missing targets file: exit $rc, $(head -c 300 "$work/bad2.err")"
fi
# A port nothing listens on (the first link's, its gdbserver stopped meanwhile is not
# needed: port 1 on loopback refuses), beside a good link: the good one is still merged.
head -n 1 "$work/targets" >"$work/half"
echo "127.0.0.1:1" >>"$work/half"
mpi bad3 -np 2 "$MPIWALK" --targets "$work/half" -f folded
rc=$?
if [ -z "$why" ] && { [ "$rc" != 1 ] || ! grep -q "^rspwalk-mpi: $work/half:2: 127.0.0.1:1: connection refused$" "$work/bad3.err" ||
    [ "$(awk '{s += $NF} END {print s}' "$work/bad3.out")" != 16 ]; }; then
    why="an unreachable stub: exit $rc, $(head -c 300 "$work/bad3.err")"
fi
report bad-input "$why" "$start"

[ -z "$failed" ]
