#!/usr/bin/env bash
# tests/integration/run-libpath.sh -- --lib-path: a program's own library outside the sysroot.
# A program and its library (written and built here for aarch64), the library in a directory
# of its own that the program finds by its rpath; under qemu-aarch64 -L /usr/aarch64-linux-gnu
# the guest loads it from the host path, which is not under rspwalk's --sysroot.  Without
# --lib-path the library's frames are in no module; with --lib-path DIR rspwalk finds the file
# by its name, as gdb does with `set solib-search-path DIR`, and every frame's name is gdb's
# (names_compare.py against gdb given the same directory).
IT_ARCH=aarch64 IT_STUB=qemu IT_QEMU_CPU=${IT_QEMU_CPU:-max,sve=off}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

label=$(it_label)
work=$IT_TMP/libpath
mkdir -p "$work/lib"
cat >"$work/lp.c" <<'C'
/* lp_inner calls back into the program, which stops. */
typedef void (*lp_cb)(int);
__attribute__((noinline)) void lp_inner(lp_cb cb, int x) { cb(x + 1); __asm__ volatile(""); }
__attribute__((noinline)) void lp_outer(lp_cb cb, int x) { lp_inner(cb, x * 2); __asm__ volatile(""); }
C
cat >"$work/prog.c" <<'C'
void lp_outer(void (*cb)(int), int x);
__attribute__((noinline)) static void stop_here(int x) { if (x) __asm__ volatile("brk #0"); }
__attribute__((noinline)) static void cb(int x) { stop_here(x); __asm__ volatile(""); }
int main(void) { lp_outer(cb, 3); return 0; }
C
cc=aarch64-linux-gnu-gcc
it_missing_peers "$cc:gcc-aarch64-linux-gnu" qemu-aarch64:qemu-user gdb-multiarch:gdb-multiarch \
    python3:python3 || { echo "FAIL $label/libpath: missing peers"; exit 1; }
if ! $cc -O0 -g -fno-omit-frame-pointer -shared -fPIC -o "$work/lib/liblp.so" "$work/lp.c" ||
    ! $cc -O0 -g -fno-omit-frame-pointer -o "$work/prog" "$work/prog.c" -L"$work/lib" -llp \
        -Wl,-rpath,"$work/lib"; then
    echo "FAIL $label/libpath: building the program and its library"
    exit 1
fi

ok=1
it_qemu_start "$work/prog" || { echo "FAIL $label/libpath: qemu did not start"; exit 1; }
timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -c -f json --sysroot "$IT_SYSROOT" --lib-path \
    "/nonexistent:$work/lib" --exe "$work/prog" "127.0.0.1:$IT_PORT" >"$work/with.json" \
    2>"$work/with.err" || ok=0
timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --sysroot "$IT_SYSROOT" --exe "$work/prog" \
    "127.0.0.1:$IT_PORT" >"$work/without.json" 2>"$work/without.err" || ok=0
# gdb on the same stop, given the same directory (a wrapper puts the setting first).
printf '#!/bin/sh\nexec gdb-multiarch -ex "set solib-search-path %s" "$@"\n' "$work/lib" \
    >"$work/gdb" && chmod +x "$work/gdb"
GDB=$work/gdb ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$work/gdb.log ORACLE_SYSROOT=$IT_SYSROOT \
    "$IT_DIR/gdb_oracle.sh" "127.0.0.1:$IT_PORT" "$work/prog" >"$work/oracle.json" \
    2>"$work/oracle.err" || ok=0
it_stub_stop
if [ "$ok" != 1 ]; then
    echo "FAIL $label/libpath: a walk failed: $(cat "$work/with.err" "$work/without.err" \
        "$work/oracle.err" | head -n 1)"
    exit 1
fi

# The main thread's functions, frame 0 outwards, and the module of lp_inner's frame.
summary() {
    python3 -c '
import json, sys
t = [t for t in json.load(open(sys.argv[1]))["threads"] if t["stopped"]][0]
print(" ".join(str(f["function"]) for f in t["frames"]))
print(" ".join(str(f["module"]).rsplit("/", 1)[-1] for f in t["frames"]))' "$1"
}
with=$(summary "$work/with.json") without=$(summary "$work/without.json")
if [[ $(head -n 1 <<<"$with") == "stop_here cb lp_inner lp_outer main "* ]] &&
    [[ $(tail -n 1 <<<"$with") == "prog prog liblp.so liblp.so prog "* ]]; then
    IT_PASSED=$((IT_PASSED + 1))
    echo "PASS $label/libpath: --lib-path finds liblp.so by name: $(head -n 1 <<<"$with")"
else
    IT_FAILED=$((IT_FAILED + 1))
    echo "FAIL $label/libpath: --lib-path: $with" | head -n 2
fi
if [[ $(head -n 1 <<<"$without") == "stop_here cb None "* ]] &&
    [[ $(tail -n 1 <<<"$without") == "prog prog None "* ]]; then
    IT_PASSED=$((IT_PASSED + 1))
    echo "PASS $label/libpath: without it the library's frames are in no module"
else
    IT_FAILED=$((IT_FAILED + 1))
    echo "FAIL $label/libpath: without --lib-path: $without" | head -n 2
fi
if out=$(python3 "$IT_DIR/names_compare.py" "$work/with.json" "$work/oracle.json" 2>&1); then
    IT_PASSED=$((IT_PASSED + 1))
    echo "PASS $label/libpath names: $out"
else
    IT_FAILED=$((IT_FAILED + 1))
    echo "FAIL $label/libpath names: $(head -n 1 <<<"$out")"
    tail -n +2 <<<"$out" | sed 's/^/    /'
fi
[ "$IT_FAILED" = 0 ]
