#!/usr/bin/env bash
# tests/integration/gdb_oracle.sh -- gdb-multiarch's view of a stopped target, as JSON.
#
# usage: gdb_oracle.sh [--continue] HOST:PORT PROG
#   Connects gdb to a stub that holds PROG stopped, prints every thread's frames as one JSON
#   document on stdout (format: oracle.py), then disconnects WITHOUT killing, so the caller
#   can look at the same stop again and kill the stub itself (gdbserver without --once
#   keeps the target stopped across connections).
#   --continue first resumes to the next stop, passing SIGUSR1 (used to test the oracle on
#   its own, without rspwalk).
# Exit: 0 ok, 2 usage, 3 gdb could not connect or produced no frames, 124 timeout.
# Env: ORACLE_TIMEOUT (seconds, default 60), ORACLE_GDB_LOG (keep gdb's output there),
#      ORACLE_SYSROOT (default /), GDB (default gdb-multiarch),
#      ORACLE_TDESC (a target description file gdb uses instead of the stub's: qemu's x86
#      XML lacks the GNU/Linux feature), ORACLE_ARCH (`set architecture`).
set -u

here=$(cd "$(dirname "$0")" && pwd)
cont=0
if [ "${1-}" = "--continue" ]; then
    cont=1
    shift
fi
if [ $# -ne 2 ]; then
    echo "usage: gdb_oracle.sh [--continue] HOST:PORT PROG" >&2
    exit 2
fi
target=$1
prog=$2
gdb=${GDB:-gdb-multiarch}
if [ ! -f "$prog" ]; then
    echo "gdb_oracle: no such program: $prog" >&2
    exit 2
fi
if ! command -v "$gdb" >/dev/null 2>&1; then
    echo "gdb_oracle: missing peer: $gdb (apt-get install gdb-multiarch)" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pre_cmds=()
if [ -n "${ORACLE_ARCH:-}" ]; then
    pre_cmds+=(-ex "set architecture $ORACLE_ARCH")
fi
if [ -n "${ORACLE_TDESC:-}" ]; then
    pre_cmds+=(-ex "set tdesc filename $ORACLE_TDESC")
fi
cont_cmds=()
if [ "$cont" = 1 ]; then
    cont_cmds=(-ex 'handle SIGUSR1 nostop noprint pass' -ex 'continue')
fi

timeout -k 5 "${ORACLE_TIMEOUT:-60}" "$gdb" -nx -batch \
    -ex 'set debuginfod enabled off' \
    -ex "set sysroot ${ORACLE_SYSROOT:-/}" \
    -ex 'set backtrace past-main on' \
    -ex 'set pagination off' \
    -ex 'set confirm off' \
    -ex "source $here/oracle.py" \
    -ex "file $prog" \
    "${pre_cmds[@]}" \
    -ex "target remote $target" \
    "${cont_cmds[@]}" \
    -ex "rspwalk-oracle $tmp/oracle.json" \
    -ex 'disconnect' \
    </dev/null >"$tmp/gdb.log" 2>&1
rc=$?
if [ -n "${ORACLE_GDB_LOG:-}" ]; then
    cp "$tmp/gdb.log" "$ORACLE_GDB_LOG"
fi
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "gdb_oracle: $target: gdb timed out after ${ORACLE_TIMEOUT:-60} s" >&2
    exit 124
fi
if [ ! -s "$tmp/oracle.json" ]; then
    last=$(grep -v '^warning' "$tmp/gdb.log" | tail -n 1)
    echo "gdb_oracle: $target: gdb produced no frames (rc $rc): $last" >&2
    exit 3
fi
cat "$tmp/oracle.json"
