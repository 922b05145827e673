#!/usr/bin/env bash
# tests/integration/run-bounds.sh -- what a stub can grow stays bounded, and names cannot forge.
#
# Against tests/integration/bounds_stub.py (a scripted stub, one scenario a run): 100000 libraries
# and 60000 threads listed finish in seconds in bounded memory (GNU time's maximum RSS); a vFile
# whose reads never reach the end of the file stops at the stub's own fstat size; a compressed
# .debug_info bomb is not inflated (a warning); module names with ESC, newline, ';' and 0xff
# bytes cannot forge lines in text, folded or dot output, and JSON stays valid.  Kills only the
# stubs it started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
rspwalk=build/release/rspwalk
stub=tests/integration/bounds_stub.py
prog=build/fixtures/x86_64/chain-s0-O0-dyn
work=$(mktemp -d)
sp=
trap '[ -n "$sp" ] && kill "$sp" 2>/dev/null; [ -n "${BOUNDS_KEEP:-}" ] || rm -rf "$work"' EXIT
status=0
for tool in python3 objcopy dot /usr/bin/time; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL bounds: missing peer: $tool (scripts/deps)"; exit 1
  fi
done

# run_stub NAME MODE ARG RSPWALK_ARGS...: rspwalk against a fresh stub into $work/NAME.{out,err},
# GNU time's figures in $work/NAME.time ("SECONDS KB USER SYS").
run_stub() {
  local name=$1 mode=$2 arg=$3 port=
  shift 3
  python3 "$stub" "$mode" "$arg" >"$work/$name.port" 2>"$work/$name.stub" &
  sp=$!
  for _ in $(seq 100); do
    port=$(head -n 1 "$work/$name.port")
    [ -n "$port" ] && break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    echo "stub did not start: $(tail -n 1 "$work/$name.stub")" >"$work/$name.err"
    kill "$sp" 2>/dev/null; sp=; return 1
  fi
  /usr/bin/time -o "$work/$name.time" -f "%e %M %U %S" timeout 60 "$rspwalk" --cache-dir "$work/cache" \
    "$@" "127.0.0.1:$port" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null; sp=
  return $rc
}

# verdict CASE WHY: PASS or FAIL with the seconds and RSS of the run.
verdict() {
  local figures
  figures=$(awk '/^[0-9.]+ [0-9]+ [0-9.]+ [0-9.]+$/ {printf "%s s, %.2f s CPU, %d MB", $1, $3 + $4, $2 / 1024}' \
    "$work/$1.time" 2>/dev/null)
  if [ -z "$2" ]; then echo "PASS bounds/$1 ($figures)"; else echo "FAIL bounds/$1: $2 ($figures)"; status=1; fi
}

# within CASE SECONDS MB [CPU_SECONDS]: the run's figures are under each (CPU: rspwalk's own user
# and system time, which the stub's speed does not change).
within() {
  awk -v s="$2" -v m="$3" -v c="${4:-1e9}" '/^[0-9.]+ [0-9]+ [0-9.]+ [0-9.]+$/ {
    ok = $1 <= s && $2 <= m * 1024 && $3 + $4 <= c } END {exit !ok}' "$work/$1.time"
}

# 1. 100000 libraries: the list is cut at the module limit, with a warning; seconds, not minutes
# (the wall-clock bounds are loose: a loaded machine slows the Python stub; the CPU bound is tight).
why=
if ! run_stub libs-100000 libs 100000; then why="rspwalk failed: $(head -c 300 "$work/libs-100000.err")"
elif ! grep -q 'lists 100000 modules, more than the limit' "$work/libs-100000.err"; then
  why="no module-limit warning: $(head -c 300 "$work/libs-100000.err")"
elif ! within libs-100000 20 300 5; then why="over 20 s, 300 MB or 5 s of CPU"
fi
verdict libs-100000 "$why"

# 2. 60000 threads: every one listed and walked.
why=
if ! run_stub threads-60000 threads 60000; then why="rspwalk failed: $(head -c 300 "$work/threads-60000.err")"
elif [ "$(grep -c '^Thread ' "$work/threads-60000.out")" -ne 60000 ]; then
  why="$(grep -c '^Thread ' "$work/threads-60000.out") threads printed, not 60000"
elif ! within threads-60000 40 300 5; then why="over 40 s, 300 MB or 5 s of CPU"
fi
verdict threads-60000 "$why"

# 3. A vFile whose preads never reach EOF: the fetch stops at the stub's fstat size.
why=
libm=/lib/x86_64-linux-gnu/libm.so.6
if ! run_stub vfile-no-eof vfile-eof "$libm"; then why="rspwalk failed: $(head -c 300 "$work/vfile-no-eof.err")"
else
  got=$(find "$work/cache" -name libbig.so -printf '%s\n' | head -n 1)
  if [ "$got" != "$(stat -c %s "$libm")" ]; then why="fetched ${got:-nothing}, not $(stat -c %s "$libm") bytes"
  elif ! within vfile-no-eof 10 100; then why="over 10 s or 100 MB"
  fi
fi
verdict vfile-no-eof "$why"

# 4. A compression bomb: 64 MiB of zeros as .debug_info, about 64 KB compressed.
why=
objcopy --strip-debug "$prog" "$work/nodebug" && head -c $((64 * 1024 * 1024)) /dev/zero >"$work/zeros" &&
  objcopy --add-section .debug_info="$work/zeros" --set-section-flags .debug_info=readonly,debug \
    "$work/nodebug" "$work/big" && objcopy --compress-debug-sections=zlib "$work/big" "$work/bomb"
rm -f "$work/zeros" "$work/big"
if [ ! -s "$work/bomb" ]; then why="objcopy could not build the bomb"
elif ! run_stub compression-bomb lib "$work/bomb" -f json --lines --locals; then
  why="rspwalk failed: $(head -c 300 "$work/compression-bomb.err")"
elif ! grep -q 'debug_info inflates .* more than 100 times' "$work/compression-bomb.err"; then
  why="no warning about the bomb: $(head -c 300 "$work/compression-bomb.err")"
elif ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/compression-bomb.out"; then
  why="the JSON is not valid"
elif ! within compression-bomb 10 40; then why="over 10 s or 40 MB (the section was inflated?)"
fi
verdict compression-bomb "$why"

# 4b. The bomb served under a name with ESC and newline: the warning naming the fetched file is
# one escaped line on stderr.
why=
if [ ! -s "$work/bomb" ]; then why="objcopy could not build the bomb"
elif ! run_stub names-warning names "$work/bomb"; then
  why="rspwalk failed: $(head -c 300 "$work/names-warning.err")"
elif grep -q $'\x1b' "$work/names-warning.err"; then why="a raw ESC on stderr"
elif [ "$(wc -l <"$work/names-warning.err")" -ne 1 ] ||
  ! grep -q '^rspwalk: warning: .*\\x1b\[1m\\x0az: .debug_info inflates' "$work/names-warning.err"; then
  why="not one escaped warning line: $(head -c 400 "$work/names-warning.err")"
fi
verdict names-warning "$why"

# 5. Names with ESC, newline, ';', '"' and 0xff: the module path (the library's name) and the
# function name (a symbol renamed in the served file) in every format.
evil=$'ev;il\x1b[2J\n#1  0x0000000000401000 in forged () from /x\xff'
objcopy --redefine-sym "_start=$evil" "$prog" "$work/evil" 2>/dev/null || cp "$prog" "$work/evil"
for fmt in text json folded dot; do
  why=
  if ! run_stub "names-$fmt" names "$work/evil" -f "$fmt"; then
    why="rspwalk failed: $(head -c 300 "$work/names-$fmt.err")"
  elif grep -q $'\x1b' "$work/names-$fmt.out"; then why="a raw ESC in the output"
  elif ! LC_ALL=C.UTF-8 iconv -f UTF-8 -t UTF-8 "$work/names-$fmt.out" >/dev/null 2>&1; then
    why="the output is not valid UTF-8"
  fi
  if [ -z "$why" ]; then
    case $fmt in
      text) [ "$(grep -c '^#' "$work/names-$fmt.out")" -eq 1 ] || why="not one frame line: $(head -c 400 "$work/names-$fmt.out")" ;;
      json) python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/names-$fmt.out" || why="the JSON is not valid" ;;
      folded) [ "$(wc -l <"$work/names-$fmt.out")" -eq 1 ] && grep -q '\\x3b' "$work/names-$fmt.out" ||
        why="not one line with ';' escaped: $(head -c 400 "$work/names-$fmt.out")" ;;
      dot) dot -Tsvg "$work/names-$fmt.out" >/dev/null 2>"$work/names-dot.dot-err" ||
        why="graphviz refuses it: $(head -c 300 "$work/names-dot.dot-err")" ;;
    esac
  fi
  verdict "names-$fmt" "$why"
done
exit $status
