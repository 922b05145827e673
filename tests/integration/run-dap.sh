#!/usr/bin/env bash
# tests/integration/run-dap.sh -- `rspwalk --dap` under VS Code's DebugClient (tests/dap/).
# The node test (tests/dap/dap.test.js, node's test runner) attaches through the adapter to
# fixtures under gdbserver and qemu-aarch64, and checks threads, stacks, paging, source lines
# and locals against `rspwalk --locals -f json` and gdb-multiarch's backtrace on the same stop,
# pause/continue and their events, the exit events, and error responses to malformed
# messages.  Installs the test's npm dependencies (package-lock.json) with `npm ci` when
# tests/dap/node_modules is missing.  Prints a "PASS dap/..." or "FAIL dap/...: why" line a
# case, as the other run-*.sh do; a missing peer (node, npm, ...) is a failure, never a skip.
# lldb-vscode-14 (apt-get install lldb-14), where installed, is printed beside rspwalk's
# frames as a reference only.
set -u

dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$dir/../.." && pwd)
dap=$root/tests/dap
export RSPWALK=${RSPWALK:-$root/build/release/rspwalk}

fail() {
    echo "FAIL dap/setup: $*"
    exit 1
}
for spec in node:nodejs npm:npm gdbserver:gdbserver gdb-multiarch:gdb-multiarch python3:python3 \
    qemu-aarch64:qemu-user; do
    command -v "${spec%%:*}" >/dev/null 2>&1 ||
        fail "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
done
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
[ "${major:-0}" -ge 20 ] || fail "node $major: the test needs node 20 or later (node:test reporters)"
[ -x "$RSPWALK" ] || fail "rspwalk not built: $RSPWALK (make build/release/rspwalk)"
for f in x86_64/threads-s0-O0-dyn x86_64/chain-s0-O0-dyn x86_64/chain-s1-O0-dyn \
    aarch64/threads-s0-O0-dyn aarch64/chain-s0-O0-dyn aarch64/shares-O0-dyn; do
    [ -x "$root/build/fixtures/$f" ] || fail "fixture not built: build/fixtures/$f (make fixtures)"
done
if [ ! -d "$dap/node_modules/@vscode/debugadapter-testsupport" ]; then
    if ! out=$(cd "$dap" && npm ci --no-audit --no-fund 2>&1); then
        fail "npm ci in tests/dap failed: $(tail -n 1 <<<"$out")"
    fi
fi

cd "$dap" || fail "no tests/dap"
# One test at a time: each starts its own stub, and the machine may be small.
node --test --test-concurrency=1 --test-reporter=./reporter.mjs dap.test.js
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || echo "FAIL dap/run: node --test exited $rc"
exit "$rc"
