#!/usr/bin/env bash
# tests/integration/run-cxx.sh -- C++ function names exactly as gdb prints them (x86_64).
# fixtures/src/cxxnames.cc built -O0 -g, -O2 -g and without debug information, under
# gdbserver: the usual case (lib.sh: rspwalk against gdb, the fixture's expectation), then
# every frame's "function" against gdb's frame name, to the letter (names_compare.py):
# demangled, without parameters where gdb strips them, whole where gdb's parser cannot.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

for name in cxxnames-O0 cxxnames-O2 cxxnames-nodebug; do
    it_case "$name" || continue
    label=$(it_label)
    if out=$(python3 "$IT_DIR/names_compare.py" "$IT_TMP/$name/rspwalk.json" \
        "$IT_TMP/$name/oracle.json" 2>&1); then
        IT_PASSED=$((IT_PASSED + 1))
        echo "PASS $label/$name names: $(head -n 1 <<<"$out")"
    else
        IT_FAILED=$((IT_FAILED + 1))
        echo "FAIL $label/$name names: $(head -n 1 <<<"$out")"
        tail -n +2 <<<"$out" | head -n 40 | sed 's/^/    /'
    fi
done
[ "$IT_FAILED" = 0 ]
