#!/usr/bin/env bash
# tests/integration/run-qemu-pac.sh -- AArch64 return addresses signed by `paciasp`.
#
# A program built here with `-mbranch-protection=pac-ret` (main -> a -> b -> c -> kill(SIGTRAP);
# -O1 -g, static and dynamic) runs under qemu-aarch64 -cpu max,sve=off, whose pointer
# authentication is on: every saved x30 carries a code in its top bits.  `rspwalk -c` walks
# the SIGTRAP stop; its frames must be kill c b a main __libc_start_call_main (unnamed in the
# stripped cross libc) __libc_start_main(_impl) [_start], every pc without a code, ended at
# the bottom.  Checked against that expectation,
# not against gdb: gdb 13 has no pauth registers from QEMU 7.2's stub and stops at the
# first signed return address (docs/gdb-differences.md section 8; its walk is kept in the
# artifacts as gdb.log).  Kills only the pids it started.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RSPWALK=${RSPWALK:-$root/build/release/rspwalk}
IT_TIMEOUT=${IT_TIMEOUT:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-pac.XXXXXX")
qemu_pid=
failed=0
cleanup() {
    [ -n "$qemu_pid" ] && kill -KILL "$qemu_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$work/pac.c" <<'C'
#include <signal.h>
#include <unistd.h>
__attribute__((noinline)) void c(int x) { if (x) kill(getpid(), SIGTRAP); }
__attribute__((noinline)) void b(int x) { c(x + 1); __asm__ volatile(""); }
__attribute__((noinline)) void a(int x) { b(x + 1); __asm__ volatile(""); }
int main(void) { a(1); return 0; }
C

check() { # JSON: the expected functions in the stopped thread, ended at the bottom
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = [t for t in d["threads"] if t.get("stopped")][0]
names = [f["function"] for f in t["frames"]]
# The cross libc is stripped: its local __libc_start_call_main has no name when dynamic.
assert names[1:5] == ["c", "b", "a", "main"], names
assert names[5] in ("__libc_start_call_main", None), names
assert names[6] in ("__libc_start_main", "__libc_start_main_impl"), names
assert t["end"] == "bottom", (t["end"], names)
assert all(int(f["pc"], 16) < 1 << 48 for f in t["frames"]), [f["pc"] for f in t["frames"]]
PY
}

one() { # LINK (static or dyn): one case, one line
    local link=$1 name=pac-$1 flags=() sock=$work/$1.sock why='' start
    local keep=$root/build/integration/qemu-aarch64/$name
    start=$(date +%s%N)
    [ "$link" = static ] && flags=(-static)
    for peer in aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu qemu-aarch64:qemu-user \
        gdb-multiarch:gdb-multiarch; do
        if ! command -v "${peer%%:*}" >/dev/null; then
            echo "FAIL qemu-aarch64/$name: missing peer: ${peer%%:*} (apt-get install ${peer#*:})"
            failed=1
            return
        fi
    done
    if ! aarch64-linux-gnu-gcc -O1 -g -mbranch-protection=pac-ret "${flags[@]}" \
        -o "$work/$name" "$work/pac.c" 2>"$work/$name.cc"; then
        why="cannot build: $(head -c 300 "$work/$name.cc")"
    else
        qemu-aarch64 -cpu max,sve=off -L /usr/aarch64-linux-gnu -g "$sock" "$work/$name" \
            </dev/null >"$work/$name.qemu" 2>&1 &
        qemu_pid=$!
        for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
        if ! timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -c -f json --sysroot /usr/aarch64-linux-gnu \
            --exe "$work/$name" "unix:$sock" >"$work/$name.json" 2>"$work/$name.err"; then
            why="rspwalk failed: $(head -n 1 "$work/$name.err")"
        elif ! check "$work/$name.json" >"$work/$name.check" 2>&1; then
            why="unexpected walk: $(tail -n 1 "$work/$name.check")"
        fi
        # gdb's view of the same stop, for the record (docs/gdb-differences.md section 8).
        timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set debuginfod enabled off' \
            -ex "file $work/$name" -ex "set sysroot /usr/aarch64-linux-gnu" \
            -ex "target remote $sock" -ex bt </dev/null >"$work/$name.gdb" 2>&1
        kill -KILL "$qemu_pid" 2>/dev/null
        wait "$qemu_pid" 2>/dev/null
        qemu_pid=
    fi
    rm -rf "$keep"
    if [ -z "$why" ]; then
        echo "PASS qemu-aarch64/$name ($((($(date +%s%N) - start) / 1000000)) ms)"
        return
    fi
    failed=1
    mkdir -p "$keep" && cp "$work/$name"* "$keep/" 2>/dev/null
    echo "FAIL qemu-aarch64/$name: $why"
    echo "    (artifacts: build/integration/qemu-aarch64/$name/)"
}

one static
one dyn
[ "$failed" = 0 ]
