#!/usr/bin/env bash
# tests/integration/run-server-registry.sh -- rspwalkd's registry against real gdbservers.
#
# Drives the registry (server/registry.c) through tests/server/regdrive: fixtures and a
# running /bin/sleep under gdbserver on loopback; their stacks against `rspwalk -f json` of
# the same stop; a warm walk of a stopped target answered with no round trip; a running
# target stopped, walked and resumed; a gdbserver killed (the others still answer, it goes
# link-lost, a new one on the same port is found again) and one hung with SIGSTOP (the
# others answer within the walk deadline); a sample run that leaves its targets as found;
# delete and exit leaving each target as found.  One "PASS name (N ms)" or "FAIL name: why"
# line per case.  Kills only the pids it started.
# Env: REGDRIVE   the driver (default build/release/tests/server/regdrive)
#      RSPWALK    the CLI (default build/release/rspwalk)
#      IT_WRAP    command prefix for the driver (valgrind); IT_SLOW multiplies deadlines
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
drive=${REGDRIVE:-$root/build/release/tests/server/regdrive}
rspwalk=${RSPWALK:-$root/build/release/rspwalk}
fx=$root/build/fixtures/x86_64
wrap=${IT_WRAP:-}
slow=${IT_SLOW:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-reg.XXXXXX")
export XDG_CACHE_HOME=$tmp/cache
declare -A stub_pid=() stub_port=() inferior=()
failed=0
drv_pid=

stop_all() {
    exec 2>/dev/null # no notes from bash on the jobs killed here
    local k
    for k in "${!inferior[@]}"; do kill -KILL "${inferior[$k]}" 2>/dev/null; done
    for k in "${!stub_pid[@]}"; do
        kill -CONT "${stub_pid[$k]}" 2>/dev/null
        kill -KILL "${stub_pid[$k]}" 2>/dev/null
    done
    [ -n "$drv_pid" ] && kill -KILL "$drv_pid" 2>/dev/null
    wait 2>/dev/null
    [ -n "${IT_KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap stop_all EXIT

# pass NAME MS [NOTE]: NOTE (figures measured) on an indented line of its own.
pass() {
    echo "PASS server-registry-$1 ($2 ms)"
    [ -n "${3:-}" ] && echo "    $3"
    return 0
}
fail() {
    echo "FAIL server-registry-$1: $2"
    failed=$((failed + 1))
}
ms() { date +%s%3N; }

for f in "$drive" "$rspwalk" "$fx/threads-s0-O0-dyn" "$fx/chain-s0-O0-dyn"; do
    if [ ! -x "$f" ]; then
        fail setup "$f not built (make build/release/tests/server/regdrive fixtures)"
        exit 1
    fi
done

# start_stub KEY PORT PROG [ARG...]: gdbserver on loopback (PORT 0: the kernel's choice).
start_stub() {
    local key=$1 port=$2 log=$tmp/gs.$1.log i line
    shift 2
    : >"$log"
    gdbserver "127.0.0.1:$port" "$@" </dev/null >"$log" 2>&1 &
    stub_pid[$key]=$!
    for ((i = 0; i < 200; i++)); do
        line=$(sed -n 's/^Listening on port \([0-9]*\)$/\1/p' "$log")
        [ -n "$line" ] && break
        sleep 0.02
    done
    stub_port[$key]=$line
    inferior[$key]=$(sed -n 's/.*created; pid = \([0-9]*\).*/\1/p' "$log")
    [ -n "$line" ]
}

# kill_stub KEY: the stub and its inferior, at once.
kill_stub() {
    kill -KILL "${stub_pid[$1]}" "${inferior[$1]}" 2>/dev/null
    wait "${stub_pid[$1]}" 2>/dev/null
}

# Process state letter of PID (R, S, t...).
proc_state() { sed -n 's/^State:\s*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null; }

# start_driver N: the driver over the store $tmp/store.db, events to $tmp/events.N.
start_driver() {
    coproc DRV { exec $wrap "$drive" --events "$tmp/events.$1" --db "$tmp/store.db" \
        --timeout-ms $((2000 * slow)) --deadline-ms $((1000 * slow)) 2>>"$tmp/drive.err"; }
    drv_pid=$DRV_PID
}
start_driver 1

# cmd LINE: send one command, the answer in $R ("ok ..." / "err ...").
cmd() {
    echo "$*" >&"${DRV[1]}"
    R=
    IFS= read -r -t $((120 * slow)) R <&"${DRV[0]}" || R="err (no answer to: $*)"
}
ok() {
    cmd "$@"
    [ "${R%% *}" = ok ]
}
# jq-like checks with python3: py EXPR FILE... (EXPR sees d = the first file's JSON, ds all).
py() {
    local e=$1
    shift
    python3 -c "import json,sys
ds=[json.load(open(f)) for f in sys.argv[1:]]
d=ds[0] if ds else None
sys.exit(0 if ($e) else 1)" "$@"
}
info_field() { # info_field ID FIELD...: a value of the target's JSON
    cmd info "$1"
    local id=$1
    shift
    python3 -c "import json,sys
o=json.loads(sys.argv[1][3:])
for k in sys.argv[2:]: o=o[k]
print(o)" "$R" "$@"
}

# ---- targets ----------------------------------------------------------------
t0=$(ms)
start_stub a 0 "$fx/threads-s0-O0-dyn" && start_stub b 0 "$fx/chain-s0-O0-dyn" &&
    start_stub c 0 "$fx/threads-s0-O0-dyn" && start_stub run 0 /bin/sleep 3600 &&
    start_stub idle 0 /bin/sleep 3600 || {
    fail setup "gdbserver did not start"
    exit 1
}
declare -A id=()
for k in a b c run idle; do
    ok add "127.0.0.1:${stub_port[$k]}" || fail add "$k: $R"
    id[$k]=${R#ok }
done
for k in a b c run idle; do
    ok wait "${id[$k]}" stopped $((10 * slow)) || fail connect "$k: $R"
done
ok add "127.0.0.1:${stub_port[a]}" && [ "${R#ok }" = "${id[a]}" ] ||
    fail add-twice "the same target again is not the same id: $R"
ok add "127.0.0.1:${stub_port[a]}" /bin/true && fail add-twice "another exe for the same target: $R"
# To each fixture's stop (its breakpoint), and the sleeper running.
for k in a b c; do
    ok resume "${id[$k]}" || fail resume "$k: $R"
done
for k in a b c; do
    ok wait "${id[$k]}" stopped $((10 * slow)) || fail stop "$k: $R"
done
ok resume "${id[run]}" && ok wait "${id[run]}" running 5 || fail resume "run: $R"
pass connect $(($(ms) - t0))

# ---- every target at once ---------------------------------------------------
t0=$(ms)
if ok all "$tmp/all.json"; then
    py "len(d['targets'])==5 and all('threads' in t for t in d['targets'])" "$tmp/all.json" &&
        pass all $(($(ms) - t0)) || fail all "not every target has threads: $(head -c 400 "$tmp/all.json")"
else
    fail all "$R"
fi

# ---- a warm walk of a stopped target: from the cache, no round trip -------
t0=$(ms)
ok stacks "${id[a]}" "$tmp/a1.json" || fail warm "$R"
rt1=$(info_field "${id[a]}" stats round_trips)
c1=$(info_field "${id[a]}" stats cached_walks)
ok stacks "${id[a]}" "$tmp/a2.json" || fail warm "$R"
warm_ms=${R#ok }
rt2=$(info_field "${id[a]}" stats round_trips)
c2=$(info_field "${id[a]}" stats cached_walks)
if [ "$rt1" = "$rt2" ] && [ "$c2" -gt "$c1" ] && cmp -s "$tmp/a1.json" "$tmp/a2.json"; then
    pass warm-stopped $(($(ms) - t0)) "$((rt2 - rt1)) round trips, $warm_ms ms"
else
    fail warm "round trips $rt1 -> $rt2, cached walks $c1 -> $c2"
fi

# ---- a running target: stopped, walked, resumed ----------------------------
t0=$(ms)
ok stacks "${id[run]}" "$tmp/run1.json" || fail running "$R"
ok stacks "${id[run]}" "$tmp/run2.json" || fail running "$R"
run_ms=${R#ok }
rts=$(info_field "${id[run]}" stats last_walk_round_trips)
st=$(info_field "${id[run]}" state)
if [ "$st" = running ] && [ "$(proc_state "${inferior[run]}")" != t ] &&
    py "d['threads'][0]['frames']" "$tmp/run2.json"; then
    pass running-walk $(($(ms) - t0)) "$rts round trips (the interrupt counted), $run_ms ms"
else
    fail running "state $st, process $(proc_state "${inferior[run]}"), $(head -c 300 "$tmp/run2.json")"
fi

# ---- the same stop as `rspwalk -f json` sees it --------------------------
# Deleting the target closes the link and leaves it stopped; rspwalk then connects.
t0=$(ms)
ok stacks "${id[c]}" "$tmp/c.json" || fail cli "$R"
ok delete "${id[c]}" || fail cli "delete: $R"
"$rspwalk" -f json --sysroot / "127.0.0.1:${stub_port[c]}" >"$tmp/c.cli.json" 2>"$tmp/c.cli.err"
norm="[[(f['pc'],f['function'],f['module'],f['sp']) for f in t['frames']] for t in X['threads']]"
if py "${norm//X/ds[0]} == ${norm//X/ds[1]} and len(ds[0]['threads'])==4" \
    "$tmp/c.json" "$tmp/c.cli.json"; then
    pass same-as-cli $(($(ms) - t0))
else
    fail same-as-cli "the documents differ: $(diff <(head -c 2000 "$tmp/c.json") <(head -c 2000 "$tmp/c.cli.json") | head -5)"
fi

# ---- a stub killed: the others answer, it goes link-lost and comes back ---
t0=$(ms)
kill_stub b
ok wait "${id[b]}" link-lost $((5 * slow)) || fail killed "not link-lost: $R"
ok all "$tmp/all2.json" || fail killed "$R"
if py "[('threads' in t) for t in d['targets']] == [True, False, True, True] and 'link lost' in d['targets'][1]['error']" "$tmp/all2.json"; then
    :
else
    fail killed "$(head -c 600 "$tmp/all2.json")"
fi
start_stub b "${stub_port[b]}" "$fx/chain-s0-O0-dyn" || fail killed "no new stub on port ${stub_port[b]}"
if ok wait "${id[b]}" stopped $((12 * slow)); then
    pass killed-and-back $(($(ms) - t0))
else
    fail killed-and-back "$R; $(info_field "${id[b]}" error)"
fi

# ---- a stub hung: the others answer within the deadline -------------------
t0=$(ms)
kill -STOP "${stub_pid[run]}"
ok all "$tmp/all3.json" || fail hung "$R"
all_ms=${R#ok }
if py "[('threads' in t) for t in d['targets']] == [True, True, False, True]" "$tmp/all3.json" &&
    python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < $((1500 * slow)) else 1)" "$all_ms"; then
    :
else
    fail hung "in $all_ms ms: $(head -c 600 "$tmp/all3.json")"
fi
ok stacks "${id[a]}" "$tmp/a3.json" || fail hung "a did not answer: $R"
kill -CONT "${stub_pid[run]}"
# The stub comes back with its target running: found so, it runs on.
if ok wait "${id[run]}" running $((15 * slow)) && sleep 0.3 &&
    [ "$(info_field "${id[run]}" state)" = running ]; then
    pass hung $(($(ms) - t0)) "every target answered in $all_ms ms"
else
    fail hung "after SIGCONT: $R $(info_field "${id[run]}" state) $(info_field "${id[run]}" error)"
fi

# ---- a target that exits: exited, and a walk says so at once -----------------
t0=$(ms)
start_stub ex 0 /bin/true || fail exited "gdbserver did not start"
ok add "127.0.0.1:${stub_port[ex]}" && id[ex]=${R#ok }
ok wait "${id[ex]}" stopped $((10 * slow)) && ok resume "${id[ex]}" || fail exited "$R"
if ok wait "${id[ex]}" exited $((10 * slow)) && ! ok stacks "${id[ex]}" "$tmp/ex.json" &&
    [ "${R#err -3 }" != "$R" ] && ok delete "${id[ex]}"; then
    pass exited $(($(ms) - t0))
else
    fail exited "$R"
fi

# ---- sampling leaves the targets as found ---------------------------------
t0=$(ms)
if ok sample 1 50 "${id[run]}" "${id[idle]}"; then
    last=${R#ok }
    if py "d['state']=='done' and d['ticks']>=10" <(echo "$last") &&
        [ "$(info_field "${id[run]}" state)" = running ] &&
        [ "$(info_field "${id[idle]}" state)" = stopped ]; then
        pass sample $(($(ms) - t0))
    else
        fail sample "$last; run $(info_field "${id[run]}" state), idle $(info_field "${id[idle]}" state)"
    fi
else
    fail sample "$R"
fi

# ---- delete and exit leave the targets as found ---------------------------
t0=$(ms)
ok delete "${id[run]}" || fail delete "$R"
sleep 0.2
s_run=$(proc_state "${inferior[run]}")
cmd quit
wait "$drv_pid" 2>/dev/null
drv_pid=
sleep 0.2
s_idle=$(proc_state "${inferior[idle]}")
s_a=$(proc_state "${inferior[a]}")
if [ "$s_run" = S ] && [ "$s_idle" = t ] && [ "$s_a" = t ]; then
    pass as-found $(($(ms) - t0))
else
    fail as-found "the deleted running target is '$s_run' (S), the stopped ones '$s_idle' '$s_a' (t)"
fi
# ---- the store: snapshots and samples kept; a new registry has its targets back --
t0=$(ms)
nsnap=$(sqlite3 "$tmp/store.db" "SELECT count(*) FROM snapshots")
nsamp=$(sqlite3 "$tmp/store.db" "SELECT coalesce(sum(samples), 0) FROM sample_counts")
ntgt=$(sqlite3 "$tmp/store.db" "SELECT count(*) FROM targets")
# c and run were deleted, and their history with them.
[ "$nsnap" -ge 3 ] && [ "$nsamp" -ge 10 ] && [ "$ntgt" = 3 ] ||
    fail store "$ntgt targets (3), $nsnap snapshots (3 or more), $nsamp samples stored (10 or more)"
start_driver 2
cmd info
if py "sorted(t['target'] for t in d) == sorted(['127.0.0.1:${stub_port[a]}', '127.0.0.1:${stub_port[b]}', '127.0.0.1:${stub_port[idle]}'])" <(echo "${R#ok }") &&
    ok wait "${id[a]}" stopped $((10 * slow)) && ok stacks "${id[a]}" "$tmp/a4.json" &&
    py "${norm//X/ds[0]} == ${norm//X/ds[1]}" "$tmp/a1.json" "$tmp/a4.json"; then
    pass store-and-restart $(($(ms) - t0))
else
    fail store-and-restart "$R"
fi

# ---- stress: walks, pauses and resumes from 8 threads; a stub killed and restarted --
t0=$(ms)
sids=()
for k in s1 s2 s3; do
    start_stub $k 0 /bin/sleep 3600 && ok add "127.0.0.1:${stub_port[$k]}" && sids+=("${R#ok }")
done
for i in "${sids[@]}"; do ok wait "$i" stopped $((10 * slow)) && ok resume "$i"; done
echo "stress 8 $((3 * slow)) ${sids[*]} ${id[a]}" >&"${DRV[1]}"
sleep $((1 * slow))
kill_stub s2
sleep 0.5
start_stub s2 "${stub_port[s2]}" /bin/sleep 3600
IFS= read -r -t $((60 * slow)) R <&"${DRV[0]}" || R="err (no answer to stress)"
stress=$R
# Every answer a document or one of the registry's codes, never an internal failure (-7).
# The restarted stub is found again (stopped or running: the threads paused and resumed it).
for ((i = 0; i < 60 * slow; i++)); do
    st=$(info_field "${sids[1]}" state)
    [ "$st" = stopped ] || [ "$st" = running ] && break
    sleep 0.2
done
R=$stress
if [ "${R%% *}" = ok ] && [ "${R#* -7:}" = "$R" ] && { [ "$st" = stopped ] || [ "$st" = running ]; }; then
    pass stress $(($(ms) - t0)) "answers by code (0: a document): ${stress#ok }"
else
    fail stress "$stress; the restarted stub's target is $st"
fi
t0=$(ms)
cmd quit
wait "$drv_pid" 2>/dev/null
drv_pid=
freed=$(sed -n 's/.*registry freed in \([0-9]*\) ms/\1/p' "$tmp/drive.err" | tail -1)
pass free $(($(ms) - t0)) "the registry freed in $freed ms"

if [ -s "$tmp/drive.err" ] && grep -qv "registry freed" "$tmp/drive.err"; then
    fail driver-stderr "$(grep -v "registry freed" "$tmp/drive.err" | head -20)"
fi
exit $((failed > 0))
