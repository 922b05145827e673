#!/usr/bin/env bash
# tests/integration/run-pipe.sh -- rspwalk over a spawned command ('|gdbserver - PROG'):
# the walk is right, and when rspwalk exits nothing it started is left behind (the shell may
# fork gdbserver rather than exec it; an orphaned gdbserver loops on EOF).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
prog=build/fixtures/x86_64/threads-s0-O0-dyn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s%N)
if ! command -v gdbserver >/dev/null; then
  echo "FAIL pipe/threads-s0-O0-dyn: missing peer: gdbserver (apt-get install gdbserver)"; exit 1
fi
# A private path in the command line finds exactly the processes this case started.
marker="$work/threads-pipe-$$"
ln -s "$root/$prog" "$marker"
timeout 60 build/release/rspwalk -c -f json --sysroot / --exe "$prog" \
  "|gdbserver - $marker" >"$work/out.json" 2>"$work/err"
rc=$?
# gdbserver is gone when rspwalk returns; the program it ran, detached by the kernel when its
# tracer died, runs on to its exit: give it a few seconds.
for _ in $(seq 50); do
  left=
  for pid in $(pgrep -f -- "$marker"); do
    case $(ps -o stat= -p "$pid" 2>/dev/null) in Z* | "") ;; *) left="$left $pid" ;; esac
  done
  [ -z "$left" ] && break
  sleep 0.1
done
ms=$((($(date +%s%N) - start) / 1000000))
why=
if [ "$rc" -ne 0 ]; then
  why="rspwalk exited $rc: $(head -c 300 "$work/err")"
elif [ -n "$left" ]; then
  why="processes left behind: $(ps -o pid=,stat=,args= -p $(echo $left | tr " " ","))"; kill -KILL $left 2>/dev/null
elif ! python3 - "$work/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [[f["function"] for f in t["frames"]] for t in d["threads"]]
assert len(names) == 4, names
assert any(n[:4] == ["c", "b", "a", "main"] for n in names), names
assert all(t["end"] == "bottom" for t in d["threads"]), d
PY
then
  why="unexpected walk: $(head -c 300 "$work/out.json")"
elif [ "$(grep -c 'reopen the connection' "$work/err")" -gt 2 ]; then
  why="gdbserver looped on EOF: $(grep -c 'reopen the connection' "$work/err") lines"
fi
if [ -z "$why" ]; then
  echo "PASS pipe/threads-s0-O0-dyn ($ms ms)"
else
  echo "FAIL pipe/threads-s0-O0-dyn: $why"; exit 1
fi
