#!/usr/bin/env bash
# tests/integration/run-tree.sh -- the merged tree of every thread of a stop: -f folded, dot, tree.
#
# The threads fixture (four threads: main -> a -> b -> c stopped, three blocked in libc) under
# gdbserver, stop methods s0 and s1, dynamic and static.  One stop, four looks at it:
# `rspwalk -c -f json` (checked against gdb-multiarch's walk of the same stop by compare.py,
# as lib.sh's cases are), then `-f folded`, `-f dot` and `-f tree`, which tree_check.py checks
# against those walks (each folded path the walk's frames reversed, counts summing to the
# threads, dot's edges and the tree's nodes carrying the tasks through them); graphviz's
# `dot -Tsvg` must draw the dot.  Kills only the pids it started; loopback only.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
IT_LABEL_TAG=tree

# it_case_run NAME DIR: lib.sh's case, with the tree's looks at the stop before gdb's.
it_case_run() {
    local name=$1 dir=$2 rc f
    local prog=$IT_ROOT/build/fixtures/$IT_ARCH/$name
    it_missing_peers gdbserver:gdbserver gdb-multiarch:gdb-multiarch python3:python3 \
        readelf:binutils dot:graphviz || return 1
    if [ ! -x "$prog" ]; then
        echo "fixture not built: build/fixtures/$IT_ARCH/$name (make fixtures)"
        return 1
    fi
    it_stub_start "$prog" || return 1
    local args=(--sysroot "$IT_SYSROOT" --exe "$prog" "127.0.0.1:$IT_PORT")
    # shellcheck disable=SC2086  # IT_WRAP is a command prefix: word splitting intended
    timeout -k 5 "$IT_TIMEOUT" $IT_WRAP "$RSPWALK" -c -f json "${args[@]}" \
        >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
    rc=$?
    for f in folded dot tree; do
        [ "$rc" = 0 ] || break
        # shellcheck disable=SC2086
        timeout -k 5 "$IT_TIMEOUT" $IT_WRAP "$RSPWALK" -f "$f" "${args[@]}" \
            >"$dir/tree.$f" 2>"$dir/tree-$f.err"
        rc=$?
        [ "$rc" = 0 ] || set -- "rspwalk -f $f exited $rc: $(head -n 1 "$dir/tree-$f.err")"
    done
    if [ "$rc" != 0 ]; then
        it_stub_stop
        it_keep_logs "$dir"
        echo "${1:-rspwalk -c -f json exited $rc: $(head -n 1 "$dir/rspwalk.err")}"
        return 1
    fi
    ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log ORACLE_SYSROOT=$IT_SYSROOT \
        "$IT_DIR/gdb_oracle.sh" "127.0.0.1:$IT_PORT" "$prog" >"$dir/oracle.json" \
        2>"$dir/oracle.err"
    rc=$?
    it_stub_stop
    it_keep_logs "$dir"
    if [ "$rc" != 0 ]; then
        echo "gdb oracle failed ($rc): $(head -n 1 "$dir/oracle.err")"
        return 1
    fi
    python3 "$IT_DIR/compare.py" --exe "$prog" "$dir/rspwalk.json" "$dir/oracle.json" || return 1
    if ! dot -Tsvg "$dir/tree.dot" >"$dir/tree.svg" 2>"$dir/dot.err"; then
        echo "dot -Tsvg failed: $(head -n 1 "$dir/dot.err")"
        return 1
    fi
    grep -q '<svg' "$dir/tree.svg" || { echo "dot -Tsvg wrote no SVG" && return 1; }
    python3 "$IT_DIR/tree_check.py" "$dir/rspwalk.json" "$dir/tree.folded" "$dir/tree.dot" \
        "$dir/tree.tree"
}

it_run_matrix threads
