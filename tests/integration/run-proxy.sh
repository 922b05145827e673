#!/usr/bin/env bash
# tests/integration/run-proxy.sh -- tests/tools/rsp_proxy.py, which the QEMU user-mode tests put
# in front of QEMU's one gdb connection so that rspwalk, then gdb, look at one stop: clients one
# after another never dropped, one that comes early waits its turn, and the stopped thread is
# the general thread again for the next client (proxy_check.py says how).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
prog=$root/build/fixtures/x86_64/threads-s0-O0-dyn
for peer in gdbserver python3; do
    if ! command -v "$peer" >/dev/null; then
        echo "FAIL proxy/setup: missing peer: $peer (apt-get install $peer)"
        exit 1
    fi
done
[ -x "$prog" ] || { echo "FAIL proxy/setup: fixture not built: $prog (make fixtures)"; exit 1; }
timeout 120 python3 "$root/tests/integration/proxy_check.py" "$prog"
rc=$?
[ "$rc" = 124 ] && echo "FAIL proxy/run: proxy_check.py did not finish in 120 s"
exit "$rc"
