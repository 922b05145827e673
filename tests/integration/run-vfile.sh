#!/usr/bin/env bash
# tests/integration/run-vfile.sh -- libraries read from the target (vFile) when the sysroot lacks
# them or holds another build: with an empty --sysroot libc's frames are still named and the cache
# holds libc under its build-id; with a wrong libc.so.6 in the sysroot the build-id warning is
# printed and libc's frames are named from the fetched copy.  Kills only the gdbservers it started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
prog=build/fixtures/x86_64/chain-s0-O0-dyn
libc=/lib/x86_64-linux-gnu/libc.so.6
work=$(mktemp -d)
gs=
trap '[ -n "$gs" ] && kill "$gs" 2>/dev/null; rm -rf "$work"' EXIT
if ! command -v gdbserver >/dev/null; then
  echo "FAIL vfile: missing peer: gdbserver (apt-get install gdbserver)"; exit 1
fi
status=0

# run_case NAME SYSROOT: walk PROG under a fresh gdbserver into $work/NAME.{out,err}.
run_case() {
  local name=$1 sysroot=$2 port=
  gdbserver 127.0.0.1:0 "$prog" >"$work/$name.gs" 2>&1 &
  gs=$!
  for _ in $(seq 100); do
    port=$(grep -o 'Listening on port [0-9]*' "$work/$name.gs" | head -1 | awk '{print $4}')
    [ -n "$port" ] && break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "gdbserver did not listen" >"$work/$name.err"; kill "$gs" 2>/dev/null; gs=; return 1
  fi
  timeout 60 build/release/rspwalk -c --sysroot "$sysroot" --cache-dir "$work/$name.cache" \
    "127.0.0.1:$port" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  kill "$gs" 2>/dev/null; wait "$gs" 2>/dev/null; gs=
  return $rc
}

libc_named() { grep -E 'in __libc_start(_call)?_main.*\(/lib/x86_64-linux-gnu/libc\.so\.6\)' "$1" >/dev/null; }
build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ {print $3; exit}'; }
want_id=$(build_id "$libc")

# 1. An empty sysroot: everything comes from the target.
start=$(date +%s%N)
mkdir -p "$work/empty"
why=
if ! run_case empty "$work/empty"; then
  why="rspwalk failed: $(head -c 300 "$work/empty.err")"
elif ! libc_named "$work/empty.out"; then
  why="libc's frames not named: $(head -c 600 "$work/empty.out")"
elif [ -z "$want_id" ] || [ ! -f "$work/empty.cache/$want_id/libc.so.6" ]; then
  why="libc not cached as $want_id/libc.so.6: $(cd "$work/empty.cache" 2>/dev/null && find . | head)"
elif [ "$(build_id "$work/empty.cache/$want_id/libc.so.6")" != "$want_id" ]; then
  why="the cached libc has another build-id"
fi
ms=$((($(date +%s%N) - start) / 1000000))
if [ -z "$why" ]; then echo "PASS vfile/empty-sysroot ($ms ms)"; else echo "FAIL vfile/empty-sysroot: $why"; status=1; fi

# 2. A wrong libc.so.6 in the sysroot (libm): warned about, not used.
start=$(date +%s%N)
mkdir -p "$work/wrong/lib/x86_64-linux-gnu"
cp /lib/x86_64-linux-gnu/libm.so.6 "$work/wrong/lib/x86_64-linux-gnu/libc.so.6"
why=
warning="rspwalk: warning: $libc: local file's build-id differs from the target's; not used"
if ! run_case wrong "$work/wrong"; then
  why="rspwalk failed: $(head -c 300 "$work/wrong.err")"
elif [ "$(grep -cxF "$warning" "$work/wrong.err")" -ne 1 ]; then
  why="no build-id warning: $(head -c 300 "$work/wrong.err")"
elif ! libc_named "$work/wrong.out"; then
  why="libc's frames not named: $(head -c 600 "$work/wrong.out")"
elif [ ! -f "$work/wrong.cache/$want_id/libc.so.6" ]; then
  why="libc not fetched into the cache"
fi
ms=$((($(date +%s%N) - start) / 1000000))
if [ -z "$why" ]; then echo "PASS vfile/wrong-local-libc ($ms ms)"; else echo "FAIL vfile/wrong-local-libc: $why"; status=1; fi
exit $status
