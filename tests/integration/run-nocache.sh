#!/usr/bin/env bash
# tests/integration/run-nocache.sh -- the caches change the cost of a walk, never its frames.
#
# For each fixture: one stop (rspwalk -c walks it with every cache on), then the same stop
# walked again with --no-cache (every register and memory range read from the stub, no
# window, no 'g' cache, no expedited registers).  The two JSON documents must be identical
# but for their stats (threads, ids, frames, ends, steppers, trust).  The second walk must
# also cost more round trips, or the switch did nothing.  Under gdbserver (x86_64) the stop
# stays across connections; under qemu-user (aarch64) the proxy of lib.sh keeps it.
# Prints "PASS name" / "FAIL name: why" lines like the other run-*.sh scripts.
# NOCACHE_QEMU=0 skips the qemu half (run as a second process of this script).
if [ "${NOCACHE_SUB:-}" = qemu ]; then
    IT_STUB=qemu
    IT_ARCH=aarch64
    IT_QEMU_CPU=max,sve=off
fi
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# nocache_compare A.json B.json: identical frames; B costs more round trips.
nocache_compare() {
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
rt = (a["stats"]["round_trips"], b["stats"]["round_trips"])
def strip(d):
    d = dict(d)
    d.pop("stats", None)
    d["threads"] = [{k: v for k, v in t.items() if k != "stats"} for t in d["threads"]]
    return d
sa, sb = strip(a), strip(b)
if sa != sb:
    for ta, tb in zip(sa["threads"], sb["threads"]):
        if ta != tb:
            fa = [(f.get("pc"), f.get("function")) for f in ta["frames"]]
            fb = [(f.get("pc"), f.get("function")) for f in tb["frames"]]
            print(f"thread {ta.get('id')}: cached {fa} (end {ta.get('end')})")
            print(f"  no-cache {fb} (end {tb.get('end')})")
            break
    else:
        print("thread lists differ")
    sys.exit(1)
# rspwalk -c pays for the resume and the stop too: compare the walks alone.
wa = sum(t["stats"]["round_trips"] for t in a["threads"])
wb = sum(t["stats"]["round_trips"] for t in b["threads"])
if wb <= wa:
    print(f"--no-cache walks cost {wb} round trips, cached {wa}: the switch did nothing")
    sys.exit(1)
frames = sum(len(t["frames"]) for t in a["threads"])
print(f"{len(a['threads'])} threads, {frames} frames; walk round trips {wa} cached, {wb} without")
PY
}

nocache_case_run() {
    local name=$1 dir=$2 rc
    local prog=$IT_ROOT/build/fixtures/$IT_ARCH/$name
    if [ "$IT_STUB" = qemu ]; then
        it_missing_peers "qemu-$IT_ARCH:qemu-user" python3:python3 || return 1
    else
        it_missing_peers gdbserver:gdbserver python3:python3 || return 1
    fi
    if [ ! -x "$prog" ]; then
        echo "fixture not built: build/fixtures/$IT_ARCH/$name (make fixtures)"
        return 1
    fi
    if [ "$IT_STUB" = qemu ]; then
        it_qemu_start "$prog" || return 1
    else
        it_stub_start "$prog" || return 1
    fi
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -c -f json --sysroot "$IT_SYSROOT" --exe "$prog" \
        "127.0.0.1:$IT_PORT" >"$dir/cached.json" 2>"$dir/cached.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        it_stub_stop
        echo "rspwalk exited $rc: $(head -n 1 "$dir/cached.err")"
        return 1
    fi
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" --no-cache -f json --sysroot "$IT_SYSROOT" \
        --exe "$prog" "127.0.0.1:$IT_PORT" >"$dir/nocache.json" 2>"$dir/nocache.err"
    rc=$?
    it_stub_stop
    it_keep_logs "$dir"
    if [ "$rc" != 0 ]; then
        echo "rspwalk --no-cache exited $rc: $(head -n 1 "$dir/nocache.err")"
        return 1
    fi
    nocache_compare "$dir/cached.json" "$dir/nocache.json"
}

nocache_case() {
    local name=$1 label dir start keep
    label=$(it_label)-nocache
    dir=$IT_TMP/$name
    mkdir -p "$dir"
    start=$(it_now_ms)
    if nocache_case_run "$name" "$dir" >"$dir/why.txt" 2>&1; then
        IT_PASSED=$((IT_PASSED + 1))
        echo "PASS $label/$name ($(($(it_now_ms) - start)) ms): $(tail -n 1 "$dir/why.txt")"
        return 0
    fi
    IT_FAILED=$((IT_FAILED + 1))
    keep=$IT_ROOT/build/integration/$label/$name
    rm -rf "$keep" && mkdir -p "$keep" && cp -r "$dir/." "$keep/"
    echo "FAIL $label/$name: $(head -n 1 "$dir/why.txt")"
    tail -n +2 "$dir/why.txt" | head -n 20 | sed 's/^/    /'
    echo "    (artifacts: build/integration/$label/$name/)"
    return 1
}

if [ "$IT_STUB" = qemu ]; then
    names=(chain-s0-O0-dyn signal-s0-O0-dyn threads-s0-O0-dyn)
else
    names=(chain-s0-O0-dyn chain-s1-O0-static recurse-s0-O0-dyn signal-s0-O0-dyn
        threads-s0-O0-dyn threads-s1-O0-static)
fi
for n in "${names[@]}"; do
    nocache_case "$n"
done
status=0
[ "$IT_FAILED" = 0 ] || status=1
if [ -z "${NOCACHE_SUB:-}" ] && [ "${NOCACHE_QEMU:-1}" != 0 ]; then
    NOCACHE_SUB=qemu "$0" || status=1
fi
exit "$status"
