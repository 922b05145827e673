#!/usr/bin/env bash
# tests/integration/run-locals.sh -- rspwalk --locals against gdb's info args / info locals.
# The chain fixture (d has one local of each kind of value), built -O0 by fixtures.mk and
# -O2 here, and locals_inline.c (two functions inlined into a third, so gdb shows two inline
# frames) built -O0 and -O2 here, stopped under gdbserver on loopback: every frame's
# variables from `rspwalk --locals -f json` must be gdb's, frame by frame, inline frames
# included (locals_compare.py).  gdb's "<optimized out>" must be rspwalk's out-of-scope; where
# gdb finds a value rspwalk cannot (entry values, vector registers, synthetic pointers) the
# case notes it and does not fail.
# Prints PASS/FAIL lines like the other run-*.sh; kills only the pids it started.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

lv_case_run() {
    local prog=$1 dir=$2 rc
    shift 2 # the rest: locals_compare.py's options
    it_missing_peers gdb-multiarch:gdb-multiarch python3:python3 gdbserver:gdbserver || return 1
    [ -x "$prog" ] || { echo "fixture not built: $prog (make fixtures)" && return 1; }
    it_stub_start "$prog" || return 1
    timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -c --locals -f json --exe "$prog" \
        "127.0.0.1:$IT_PORT" >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        it_stub_stop
        echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set debuginfod enabled off' \
        -ex 'set pagination off' -ex 'set confirm off' -ex 'set print frame-arguments none' \
        -ex "target remote 127.0.0.1:$IT_PORT" \
        -ex "python rspwalk_json = '$dir/rspwalk.json'" \
        -ex "python exec(open('$IT_DIR/locals_gdb.py').read())" \
        -ex 'disconnect' "$prog" >"$dir/gdb.out" 2>"$dir/gdb.err"
    rc=$?
    it_stub_stop
    if [ "$rc" != 0 ] || ! grep -q '^LOCALS ' "$dir/gdb.out"; then
        echo "gdb failed ($rc): $(tail -n 1 "$dir/gdb.err")"
        return 1
    fi
    python3 "$IT_DIR/locals_compare.py" "$dir/rspwalk.json" "$dir/gdb.out" "$@"
}

# lv_case NAME PROGRAM [locals_compare.py options]
lv_case() {
    local name=$1 prog=$2 dir=$IT_TMP/locals-$1 rc keep
    shift 2
    mkdir -p "$dir"
    lv_case_run "$prog" "$dir" "$@" >"$dir/why.txt" 2>&1
    rc=$?
    keep=$IT_ROOT/build/integration/locals/$name
    rm -rf "$keep"
    if [ "$rc" = 0 ]; then
        IT_PASSED=$((IT_PASSED + 1))
        echo "PASS locals/$name$(grep -c '^note' "$dir/why.txt" | sed 's/^0$//; s/^\(.\+\)$/ (\1 notes)/')"
        return 0
    fi
    IT_FAILED=$((IT_FAILED + 1))
    mkdir -p "$keep" && cp -r "$dir/." "$keep/"
    echo "FAIL locals/$name: $(head -n 1 "$dir/why.txt")"
    tail -n +2 "$dir/why.txt" | head -n 40 | sed 's/^/    /'
    echo "    (artifacts: build/integration/locals/$name/)"
    return 1
}

if [ "$IT_ARCH" != x86_64 ]; then
    echo "SKIP locals: x86_64 under gdbserver only"
    exit 0
fi
lv_case chain-s0-O0-dyn "$IT_ROOT/build/fixtures/x86_64/chain-s0-O0-dyn"
lv_case chain-s1-O0-static "$IT_ROOT/build/fixtures/x86_64/chain-s1-O0-static"
# -O2: variables in registers, location lists, constants; built here, not by the matrix.
o2=$IT_ROOT/build/integration/locals/chain-s0-O2-dyn.bin
mkdir -p "$(dirname "$o2")"
if gcc -std=gnu11 -Wall -Wextra -Werror -pthread -O2 -g -DVARIANT_CHAIN -DSTOP_METHOD=0 \
    -o "$o2" "$IT_ROOT/fixtures/src/fixture.c"; then
    lv_case chain-s0-O2-dyn "$o2"
else
    IT_FAILED=$((IT_FAILED + 1))
    echo "FAIL locals/chain-s0-O2-dyn: gcc could not build the -O2 fixture"
fi
# Inline frames: lv_leaf and lv_mid are inline frames over lv_work, with their own variables.
for opt in O0 O2; do
    bin=$IT_ROOT/build/integration/locals/inline-$opt.bin
    if gcc -std=gnu11 -Wall -Wextra -Werror -$opt -g -o "$bin" "$IT_DIR/locals_inline.c"; then
        lv_case "inline-$opt" "$bin" --require lv_leaf,lv_mid,lv_work --inline lv_leaf,lv_mid
    else
        IT_FAILED=$((IT_FAILED + 1))
        echo "FAIL locals/inline-$opt: gcc could not build $IT_DIR/locals_inline.c"
    fi
done
[ "$IT_FAILED" = 0 ]
