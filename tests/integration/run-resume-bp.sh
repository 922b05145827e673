#!/usr/bin/env bash
# tests/integration/run-resume-bp.sh -- resuming a program stopped at a breakpoint instruction
# of its own (the fixtures' STOP_NOW(): int3, brk #0, trap) goes past it.
#
# Each case starts a fixture under a stub and runs `rspwalk -c` again and again, one
# connection each, until the program exits: every run must show the next stop of the program
# (frame 0's function), never the same stop twice in a row, and the last one its exit (status
# 0).  gdb-multiarch then does the same with `continue` on a fresh copy of the program, and the
# two sequences must be equal.  gdb 13 itself steps over a program's int3 (x86, where
# gdbserver reports swbreak); on AArch64 and PowerPC its `continue` runs the brk or trap again
# and reports the same stop for ever (measured under qemu-user 7.2), so there the oracle moves
# the PC past the 4-byte instruction before each `continue`, as a gdb user would.
#   x86_64/stops, x86_64/chain    gdbserver (int3, swbreak: 'P' is empty, so 'g' and 'G')
#   qemu-aarch64/stops            brk #0 ('P' answered)
#   qemu-ppc64/stops              trap, big-endian
#   qemu-ppc64le/stops            trap, little-endian
# Round trips: under gdbserver --stats must show no register write for the first run (the
# program's first stop is at its entry, no breakpoint) and one 'G' for each run resumed from
# a breakpoint; a stop of another signal costs nothing more (run-warm.sh: 2 a cycle).
# Kills only the pids it started (lib.sh).
# shellcheck disable=SC2016  # $pc is gdb's, not the shell's
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

RB_MAX_RUNS=8 # the longest expected sequence is 5 (four stops and the exit)

# rb_expected NAME: the stops the program makes, then its exit.
rb_expected() {
    case $1 in
    stops-*) echo "stop_a stop_b stop_a stop_b exit:0" ;;
    chain-*) echo "e exit:0" ;;
    esac
}

# rb_start PROG: the stub for this case's IT_STUB and IT_ARCH.
rb_start() {
    if [ "$IT_STUB" = qemu ]; then
        it_qemu_start "$1"
    else
        it_stub_start "$1"
    fi
}

# rb_rspwalk_runs PROG DIR: `rspwalk -c` until the program exits; "FUNC@PC" per stop and
# "exit:N" at the exit, one a line, in DIR/rspwalk.seq.  Returns 1 with the reason printed.
rb_rspwalk_runs() {
    local prog=$1 dir=$2 i rc line
    : >"$dir/rspwalk.seq"
    for ((i = 1; i <= RB_MAX_RUNS; i++)); do
        timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -c --stats --exe "$prog" --sysroot "$IT_SYSROOT" \
            "127.0.0.1:$IT_PORT" >"$dir/run$i.out" 2>"$dir/run$i.err"
        rc=$?
        line=$(grep -m1 -E '^#0 ' "$dir/run$i.out")
        if [ "$rc" = 0 ] && [[ $line =~ ^#0\ +(0x[0-9a-f]+)\ in\ ([A-Za-z0-9_.]+)[+\ ] ]]; then
            echo "${BASH_REMATCH[2]}@${BASH_REMATCH[1]}" >>"$dir/rspwalk.seq"
            continue
        fi
        if line=$(grep -m1 -oE 'the target exited with status [0-9]+' "$dir/run$i.err"); then
            echo "exit:${line##* }" >>"$dir/rspwalk.seq"
            return 0
        fi
        echo "rspwalk run $i exited $rc: $(head -n 1 "$dir/run$i.err")"
        return 1
    done
    echo "no exit after $RB_MAX_RUNS runs of rspwalk -c: $(tr '\n' ' ' <"$dir/rspwalk.seq")"
    return 1
}

# rb_gdb_runs PROG DIR N: gdb-multiarch's `continue` N times; the function at each stop and
# "exit:N" at the exit, one a line, in DIR/gdb.seq.
rb_gdb_runs() {
    local prog=$1 dir=$2 n=$3 i cmds=() fix=()
    # Where gdb does not step over the program's breakpoint itself (see the header).
    [ "$IT_ARCH" != x86_64 ] && fix=(-ex 'set $pc = $pc + 4')
    for ((i = 1; i <= n; i++)); do
        cmds+=(-ex continue -ex 'info symbol $pc' "${fix[@]}")
    done
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set debuginfod enabled off' \
        -ex 'set pagination off' -ex 'set confirm off' -ex "set sysroot $IT_SYSROOT" \
        -ex "file $prog" -ex "target remote 127.0.0.1:$IT_PORT" "${cmds[@]}" \
        >"$dir/gdb.out" 2>&1
    sed -n -E -e 's/^([A-Za-z0-9_.]+) \+ [0-9]+ in section .*/\1/p' \
        -e 's/^\[Inferior [0-9]+ \(.*\) exited normally\]$/exit:0/p' \
        -e 's/^\[Inferior [0-9]+ \(.*\) exited with code ([0-7]+)\]$/exit:\1/p' \
        "$dir/gdb.out" >"$dir/gdb.seq"
}

# rb_case_run NAME DIR: one case; prints why on failure (one line first).
rb_case_run() {
    local name=$1 dir=$2 prog=$IT_ROOT/build/fixtures/$IT_ARCH/$1 want got prev i n
    local peers=(gdb-multiarch:gdb-multiarch)
    if [ "$IT_STUB" = qemu ]; then
        peers+=("qemu-$IT_ARCH:qemu-user")
    else
        peers+=(gdbserver:gdbserver)
    fi
    it_missing_peers "${peers[@]}" || return 1
    [ -x "$prog" ] || { echo "fixture not built: build/fixtures/$IT_ARCH/$name (make fixtures)" &&
        return 1; }
    [ -x "$RSPWALK" ] || { echo "rspwalk not built: $RSPWALK (make all)" && return 1; }
    want=$(rb_expected "$name")

    rb_start "$prog" || return 1
    rb_rspwalk_runs "$prog" "$dir"
    local rc=$?
    it_stub_stop
    it_keep_logs "$dir"
    [ "$rc" = 0 ] || return 1
    got=$(sed 's/@.*//' "$dir/rspwalk.seq" | tr '\n' ' ')
    got=${got% }
    if [ "$got" != "$want" ]; then
        echo "rspwalk -c showed: $got; the program stops as: $want"
        sed 's/^/  /' "$dir/rspwalk.seq"
        return 1
    fi
    prev=
    while IFS= read -r i; do
        if [ "$i" = "$prev" ]; then
            echo "rspwalk -c showed the same stop twice in a row: $i"
            return 1
        fi
        prev=$i
    done <"$dir/rspwalk.seq"
    if [ "$IT_STUB" = gdbserver ]; then
        # The first run resumed from the entry stop: no write.  Each later one from a
        # breakpoint: 'P' refused once per connection, then one 'G'.  (The last run, which
        # saw the exit, prints no statistics.)
        n=$(wc -l <"$dir/rspwalk.seq")
        for ((i = 1; i < n; i++)); do
            local kinds
            kinds=$(grep -h '^stats: requests by kind:' "$dir/run$i.out" "$dir/run$i.err")
            if [ "$i" = 1 ] && [[ $kinds =~ \ [PG]= ]]; then
                echo "run 1 wrote a register resuming from the entry stop: $kinds"
                return 1
            fi
            if [ "$i" -gt 1 ] && ! [[ $kinds =~ \ P=1\  && $kinds =~ \ G=1\  ]]; then
                echo "run $i: want one 'P' (empty) and one 'G' for the step past the int3: $kinds"
                return 1
            fi
        done
    fi

    rb_start "$prog" || return 1
    rb_gdb_runs "$prog" "$dir" "$(wc -w <<<"$want")"
    it_stub_stop
    it_keep_logs "$dir"
    got=$(tr '\n' ' ' <"$dir/gdb.seq")
    got=${got% }
    if [ "$got" != "$want" ]; then
        echo "gdb's continue showed: ${got:-nothing}; rspwalk and the program: $want"
        grep -E 'SIGTRAP|exited|error|Error' "$dir/gdb.out" | head -n 10 | sed 's/^/  /'
        return 1
    fi
    return 0
}

# rb_case NAME: run one case under the current IT_STUB and IT_ARCH, print its line.
rb_case() {
    local name=$1 label dir start rc keep
    label=resume-bp/$(it_label)
    dir=$IT_TMP/$label/$name
    mkdir -p "$dir"
    start=$(it_now_ms)
    rb_case_run "$name" "$dir" >"$dir/why.txt" 2>&1
    rc=$?
    keep=$IT_ROOT/build/integration/$label/$name
    rm -rf "$keep"
    if [ "$rc" != 0 ] || [ "$IT_KEEP" = 1 ]; then
        mkdir -p "$keep" && cp -r "$dir/." "$keep/"
    fi
    if [ "$rc" = 0 ]; then
        IT_PASSED=$((IT_PASSED + 1))
        echo "PASS $label/$name ($(($(it_now_ms) - start)) ms)"
        return 0
    fi
    IT_FAILED=$((IT_FAILED + 1))
    echo "FAIL $label/$name: $(head -n 1 "$dir/why.txt")"
    tail -n +2 "$dir/why.txt" | head -n 40 | sed 's/^/    /'
    echo "    (artifacts: build/integration/$label/$name/)"
    return 1
}

IT_STUB=gdbserver IT_ARCH=x86_64 IT_SYSROOT=/
rb_case stops-s0-O0-dyn
rb_case chain-s0-O0-dyn
for arch in aarch64 ppc64 ppc64le; do
    IT_STUB=qemu IT_ARCH=$arch IT_SYSROOT=$(it_qemu_sysroot "$arch")
    rb_case stops-s0-O0-dyn
done
[ "$IT_FAILED" = 0 ]
