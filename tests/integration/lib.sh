# shellcheck shell=bash
# tests/integration/lib.sh -- shared steps of the integration tests (sourced, not run).
#
# One case: start the fixture under gdbserver on a loopback port the kernel picks, let
# rspwalk resume it to its stop and walk it (JSON), let gdb-multiarch look at the same stop
# (gdb_oracle.sh), and compare the two (compare.py), which also checks the stack the fixture
# says it expects.  Under qemu-user (IT_STUB=qemu) the fixture runs as `qemu-ARCH [-cpu CPU]
# -L SYSROOT -g SOCKET PROG` behind tests/tools/rsp_proxy.py: qemu resumes the guest when its
# client disconnects, the proxy keeps that one connection open for rspwalk and
# then gdb.  Each case prints one line, "PASS name (N ms)" or "FAIL name: why", and on
# failure indented details; run-all counts those lines.  Artifacts of a failed case are kept
# in build/integration/<arch>/<name>/.
# Not a stub launcher for users: it kills only the pids it started, and only on loopback.
#
# Env: IT_ORACLE_ONLY=1  no rspwalk: gdb resumes to the stop itself, only the oracle is checked
#                        against the fixture's expectation (tests the fixtures and the oracle)
#      RSPWALK           the CLI (default build/release/rspwalk)
#      IT_WRAP           command prefix for rspwalk (run-valgrind sets valgrind here)
#      IT_TIMEOUT        seconds for one rspwalk or gdb run (default 60)
#      IT_KEEP=1         keep the artifacts of passed cases too
#      IT_ARCH           x86_64 (default), i386, aarch64, ppc, ppc64, ppc64le
#      IT_STUB           gdbserver (default; x86_64 only) or qemu
#      IT_QEMU_CPU       qemu's -cpu (default: qemu's own; aarch64 needs max,sve=off for gdb)
#      IT_ORACLE         gdb (default): rspwalk against gdb's walk of the same stop;
#                        expect: rspwalk against the fixture's .rspwalk_expect only, where gdb
#                        is known wrong (docs/gdb-differences.md)
#      IT_SYSROOT        where the target's libraries are (default per arch, see it_qemu_sysroot)
#      IT_STEPPERS       rspwalk --steppers LIST (default: all); compare.py then checks that
#                        the frames came from those steppers
#      IT_FIXTURE_CALLERS  compare.py --fixture-callers: the steppers that must have found
#                        the caller of each frame in the fixture's own functions
#      IT_LABEL_TAG      appended to the case label ("x86_64-wanderer", "qemu-aarch64-sve")
#      IT_RECORD_DIR     where each case's record for docs/comparison.md goes, as
#                        LABEL/NAME.json (default build/integration/records; record.py);
#                        with IT_ORACLE=expect gdb runs too, for the record only

set -u

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IT_ROOT=$(cd "$IT_DIR/../.." && pwd)
RSPWALK=${RSPWALK:-$IT_ROOT/build/release/rspwalk}
IT_ARCH=${IT_ARCH:-x86_64}
IT_STUB=${IT_STUB:-gdbserver}
IT_QEMU_CPU=${IT_QEMU_CPU:-}
IT_ORACLE=${IT_ORACLE:-gdb}
IT_TIMEOUT=${IT_TIMEOUT:-60}
IT_WRAP=${IT_WRAP:-}
IT_ORACLE_ONLY=${IT_ORACLE_ONLY:-0}
IT_STEPPERS=${IT_STEPPERS:-}
IT_FIXTURE_CALLERS=${IT_FIXTURE_CALLERS:-}
IT_LABEL_TAG=${IT_LABEL_TAG:-}
IT_RECORD_DIR=${IT_RECORD_DIR:-$IT_ROOT/build/integration/records}
IT_KEEP=${IT_KEEP:-0}
IT_FAILED=0
IT_PASSED=0
IT_STUB_PID=
IT_INFERIOR_PID=
IT_PROXY_PID=
IT_MAIN_LWP=
IT_PORT=
IT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rspwalk-it.XXXXXX")

# it_qemu_sysroot ARCH: where qemu (-L) and gdb (set sysroot) find the target's libraries.
# i386 runs on the host's /lib32 glibc (libc6-i386), not /usr/i686-linux-gnu.
it_qemu_sysroot() {
    case $1 in
    x86_64 | i386) echo / ;;
    aarch64) echo /usr/aarch64-linux-gnu ;;
    ppc) echo /usr/powerpc-linux-gnu ;;
    ppc64) echo /usr/powerpc64-linux-gnu ;;
    ppc64le) echo /usr/powerpc64le-linux-gnu ;;
    *) return 1 ;;
    esac
}

if [ "$IT_STUB" = qemu ]; then
    IT_SYSROOT=${IT_SYSROOT:-$(it_qemu_sysroot "$IT_ARCH")}
else
    IT_SYSROOT=${IT_SYSROOT:-/}
fi

it_cleanup() {
    it_stub_stop
    rm -rf "$IT_TMP"
}
trap it_cleanup EXIT
trap 'exit 130' INT TERM

# it_label: the case prefix, "ARCH[-tag]" under gdbserver, "qemu-ARCH[-tag]" under qemu.
it_label() {
    if [ "$IT_STUB" = qemu ]; then
        echo "qemu-$IT_ARCH${IT_LABEL_TAG:+-$IT_LABEL_TAG}"
    else
        echo "$IT_ARCH${IT_LABEL_TAG:+-$IT_LABEL_TAG}"
    fi
}

# it_now_ms: wall clock in milliseconds.
it_now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

# it_missing_peers CMD:PACKAGE...: prints "missing peer: CMD (apt-get install PACKAGE)" for
# the first command not found and returns 1.  A missing peer is a failure, never a skip.
it_missing_peers() {
    local spec
    for spec in "$@"; do
        if ! command -v "${spec%%:*}" >/dev/null 2>&1; then
            echo "missing peer: ${spec%%:*} (apt-get install ${spec#*:})"
            return 1
        fi
    done
    return 0
}

# it_stub_start PROG [ARGS...]: gdbserver on 127.0.0.1, port chosen by the kernel.  Not
# --once: the target stays stopped across connections (gdbserver does so), so rspwalk
# and then gdb see the same stop.  Sets IT_PORT, IT_STUB_PID, IT_INFERIOR_PID.
it_stub_start() {
    local log=$IT_TMP/gdbserver.log i line
    IT_PORT=
    IT_INFERIOR_PID=
    : >"$log" # emptied now, not when the background job gets to it: no earlier case's port
    gdbserver 127.0.0.1:0 "$@" </dev/null >"$log" 2>&1 &
    IT_STUB_PID=$!
    for ((i = 0; i < 100; i++)); do
        # Complete lines only: `read` fails on a last line without its newline, so a port
        # number gdbserver is still writing ("3857" of "38579") is never taken.
        while IFS= read -r line; do
            case $line in
            "Listening on port "*[0-9]) IT_PORT=${line#Listening on port } && break ;;
            esac
        done <"$log"
        [ -n "$IT_PORT" ] && break
        kill -0 "$IT_STUB_PID" 2>/dev/null || break
        sleep 0.05
    done
    IT_INFERIOR_PID=$(sed -n 's/^Process .* created; pid = \([0-9][0-9]*\)$/\1/p' "$log")
    if [ -z "$IT_PORT" ]; then
        echo "gdbserver did not start: $(tail -n 1 "$log")"
        it_stub_stop
        return 1
    fi
    return 0
}

# it_qemu_start PROG: qemu-ARCH with its gdbstub on a unix socket in IT_TMP (no port to
# race for), and rsp_proxy.py in front of it on a loopback port the kernel picks.  Sets
# IT_PORT (the proxy's), IT_STUB_PID (qemu), IT_PROXY_PID.
it_qemu_start() {
    local prog=$1 sock=$IT_TMP/qemu.sock i line
    local cpu=()
    [ -n "$IT_QEMU_CPU" ] && cpu=(-cpu "$IT_QEMU_CPU")
    IT_PORT=
    rm -f "$sock" "$IT_TMP/proxy.port" # not the last case's port
    : >"$IT_TMP/proxy.port"
    "qemu-$IT_ARCH" "${cpu[@]}" -L "$IT_SYSROOT" -g "$sock" "$prog" \
        </dev/null >"$IT_TMP/qemu.log" 2>&1 &
    IT_STUB_PID=$!
    IT_MAIN_LWP=$IT_STUB_PID # qemu-user runs the guest's main thread as its own
    python3 "$IT_ROOT/tests/tools/rsp_proxy.py" --idle "$IT_TIMEOUT" \
        --stats "$IT_TMP/proxy-stats.json" "unix:$sock" \
        </dev/null >"$IT_TMP/proxy.port" 2>"$IT_TMP/proxy.log" &
    IT_PROXY_PID=$!
    for ((i = 0; i < 200; i++)); do
        # A complete first line only (`read` fails without its newline).
        if IFS= read -r line <"$IT_TMP/proxy.port" && [[ $line =~ ^[0-9]+$ ]]; then
            IT_PORT=$line
            break
        fi
        kill -0 "$IT_PROXY_PID" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$IT_PORT" ]; then
        echo "qemu-$IT_ARCH or the proxy did not start: $(tail -n 1 "$IT_TMP/proxy.log")" \
            "$(tail -n 1 "$IT_TMP/qemu.log")"
        it_stub_stop
        return 1
    fi
    return 0
}

# it_stub_stop: kill the inferior gdbserver reported, then gdbserver (or qemu, then the
# proxy); only those pids.
it_stub_stop() {
    local i
    if [ "$IT_STUB" = qemu ] && [ -n "$IT_STUB_PID" ]; then
        # SIGKILL: qemu-user hands SIGTERM to the guest, which its gdbstub holds stopped.
        kill -KILL "$IT_STUB_PID" 2>/dev/null
        wait "$IT_STUB_PID" 2>/dev/null
        IT_STUB_PID=
    fi
    if [ -n "$IT_PROXY_PID" ]; then
        # It exits by itself once qemu's end of the socket is gone.
        for ((i = 0; i < 50; i++)); do
            kill -0 "$IT_PROXY_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill -TERM "$IT_PROXY_PID" 2>/dev/null
        wait "$IT_PROXY_PID" 2>/dev/null
        IT_PROXY_PID=
    fi
    if [ -n "$IT_INFERIOR_PID" ]; then
        kill -KILL "$IT_INFERIOR_PID" 2>/dev/null
        IT_INFERIOR_PID=
    fi
    if [ -n "$IT_STUB_PID" ]; then
        kill -TERM "$IT_STUB_PID" 2>/dev/null
        for ((i = 0; i < 50; i++)); do
            kill -0 "$IT_STUB_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL "$IT_STUB_PID" 2>/dev/null
        wait "$IT_STUB_PID" 2>/dev/null
        IT_STUB_PID=
    fi
}

# it_record_failure WHY...: the case's record says it failed before any comparison.
it_record_failure() {
    [ -n "${IT_RECORD:-}" ] || return 0
    python3 "$IT_DIR/compare.py" --exe "$IT_RECORD_EXE" "${IT_RECORD_ARGS[@]}" \
        --record "$IT_RECORD" --failed "$*" >/dev/null 2>&1
}

# it_case_run NAME DIR: the steps of one case; prints why on failure (one line first).
it_case_run() {
    local name=$1 dir=$2 rc tdesc="" main=() steppers=() checks=() label
    label=$(it_label)
    local prog=$IT_ROOT/build/fixtures/$IT_ARCH/$name
    # A stripped fixture (NAME-strip) runs as it is; gdb and compare.py name its frames from
    # the unstripped file it was made from (fixtures.mk), as a user would with a debug copy.
    local syms=$prog names=()
    case $name in *-strip) syms=${prog%-strip} && names=(--names-from "$syms") ;; esac
    [ -n "$IT_STEPPERS" ] && steppers=(--steppers "$IT_STEPPERS")
    checks=("${steppers[@]}")
    [ -n "$IT_FIXTURE_CALLERS" ] && checks+=(--fixture-callers "$IT_FIXTURE_CALLERS")
    # The record of this case (record.py): not for IT_ORACLE_ONLY, which has no rspwalk.
    IT_RECORD=
    IT_RECORD_EXE=$prog
    IT_RECORD_ARGS=(--meta "label=$label" --meta "arch=$IT_ARCH" --meta "stub=$IT_STUB"
        "${checks[@]}")
    if [ "$IT_ORACLE_ONLY" != 1 ] && [ -n "$IT_RECORD_DIR" ] && [ -x "$prog" ]; then
        IT_RECORD=$IT_RECORD_DIR/$label/$name.json
        rm -f "$IT_RECORD"
    fi
    local peers=(gdb-multiarch:gdb-multiarch python3:python3 readelf:binutils)
    if [ "$IT_STUB" = qemu ]; then
        peers+=("qemu-$IT_ARCH:qemu-user")
        case $IT_ARCH in
        x86_64 | i386) tdesc=$IT_DIR/tdesc/qemu-$IT_ARCH-linux.xml ;;
        esac
    elif [ "$IT_STUB" = gdbserver ]; then
        peers+=(gdbserver:gdbserver)
    else
        echo "unknown stub: $IT_STUB (gdbserver or qemu)"
        return 1
    fi
    it_missing_peers "${peers[@]}" || return 1
    if [ ! -x "$prog" ]; then
        echo "fixture not built: build/fixtures/$IT_ARCH/$name (make fixtures)"
        return 1
    fi
    if [ "$IT_ORACLE_ONLY" != 1 ] && [ ! -x "$RSPWALK" ]; then
        echo "rspwalk not built: $RSPWALK (make build/release/rspwalk)"
        return 1
    fi
    if [ "$IT_STUB" = qemu ]; then
        it_qemu_start "$prog" || return 1
        main=(--main-lwp "$IT_MAIN_LWP")
    else
        it_stub_start "$prog" || return 1
    fi

    if [ "$IT_ORACLE_ONLY" = 1 ]; then
        ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log ORACLE_SYSROOT=$IT_SYSROOT \
            ORACLE_TDESC=$tdesc "$IT_DIR/gdb_oracle.sh" --continue "127.0.0.1:$IT_PORT" "$prog" \
            >"$dir/oracle.json" 2>"$dir/oracle.err"
        rc=$?
    else
        # The default --max-frames (4096) covers recurse's 200 frames: no per-fixture options.
        # shellcheck disable=SC2086  # IT_WRAP is a command prefix: word splitting intended
        timeout -k 5 "$IT_TIMEOUT" $IT_WRAP "$RSPWALK" -c -f json --sysroot "$IT_SYSROOT" \
            "${steppers[@]}" --exe "$prog" "127.0.0.1:$IT_PORT" \
            >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"
        rc=$?
        if [ "$rc" != 0 ]; then
            it_stub_stop
            it_keep_logs "$dir"
            [ "$rc" = 124 ] && echo "rspwalk timed out after $IT_TIMEOUT s" && return 1
            echo "rspwalk exited $rc: $(head -n 1 "$dir/rspwalk.err")"
            return 1
        fi
        # gdb on the same stop: the oracle, or with IT_ORACLE=expect (gdb known wrong) only
        # the record's evidence, whose failure fails nothing.
        if [ "$IT_ORACLE" = gdb ] || [ -n "$IT_RECORD" ]; then
            ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_GDB_LOG=$dir/gdb.log ORACLE_SYSROOT=$IT_SYSROOT \
                ORACLE_TDESC=$tdesc "$IT_DIR/gdb_oracle.sh" "127.0.0.1:$IT_PORT" "$syms" \
                >"$dir/oracle.json" 2>"$dir/oracle.err"
            rc=$?
        fi
        if [ "$IT_ORACLE" = expect ]; then
            it_stub_stop
            it_keep_logs "$dir"
            local gdb_json=()
            [ "$rc" = 0 ] && [ -n "$IT_RECORD" ] && gdb_json=(--gdb-json "$dir/oracle.json")
            [ -n "$IT_RECORD" ] && gdb_json+=(--record "$IT_RECORD" "${IT_RECORD_ARGS[@]}")
            python3 "$IT_DIR/compare.py" --exe "$prog" "${main[@]}" "${names[@]}" \
                "${checks[@]}" "${gdb_json[@]}" --expect-only "$dir/rspwalk.json"
            return
        fi
    fi
    it_stub_stop
    it_keep_logs "$dir"
    if [ "$rc" != 0 ]; then
        set -- "gdb oracle failed ($rc): $(head -n 1 "$dir/oracle.err")"
        echo "$1"
        # The record keeps rspwalk's walk: gdb gave none (verdict no-gdb).
        [ -n "$IT_RECORD" ] && python3 "$IT_DIR/compare.py" --exe "$prog" "${main[@]}" \
            "${names[@]}" --record "$IT_RECORD" "${IT_RECORD_ARGS[@]}" \
            --meta result=FAIL --meta "summary=$1" --meta checked_against=gdb \
            --expect-only "$dir/rspwalk.json" >/dev/null 2>&1
        return 1
    fi
    if [ "$IT_ORACLE_ONLY" = 1 ]; then
        python3 "$IT_DIR/compare.py" --exe "$prog" "${main[@]}" --oracle-only "$dir/oracle.json"
    else
        local record=()
        [ -n "$IT_RECORD" ] && record=(--record "$IT_RECORD" "${IT_RECORD_ARGS[@]}")
        python3 "$IT_DIR/compare.py" --exe "$prog" "${main[@]}" "${names[@]}" "${checks[@]}" \
            "${record[@]}" "$dir/rspwalk.json" "$dir/oracle.json"
    fi
}

# it_keep_logs DIR: the stub's and the proxy's logs into the case's artifacts.
it_keep_logs() {
    local f
    for f in gdbserver.log qemu.log proxy.log proxy-stats.json proxy.port; do
        [ -f "$IT_TMP/$f" ] && mv "$IT_TMP/$f" "$1/$f"
    done
    return 0
}

# it_case NAME: run one case, print its line, count it.
it_case() {
    local name=$1 dir=$IT_TMP/$1 start rc keep label
    label=$(it_label)
    mkdir -p "$dir"
    start=$(it_now_ms)
    it_case_run "$name" "$dir" >"$dir/why.txt" 2>&1
    rc=$?
    # A case that failed before compare.py ran still has a record (IT_RECORD: it_case_run).
    if [ "$rc" != 0 ] && [ -n "${IT_RECORD:-}" ] && [ ! -f "$IT_RECORD" ]; then
        it_record_failure "$(head -n 1 "$dir/why.txt")"
    fi
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
    tail -n +2 "$dir/why.txt" | head -n 80 | sed 's/^/    /'
    echo "    (artifacts: build/integration/$label/$name/)"
    return 1
}

# it_run_matrix VARIANT: every stop method and link of one variant; exit status = failures.
it_run_matrix() {
    local variant=$1 stop link
    for stop in s0 s1; do
        for link in dyn static; do
            it_case "$variant-$stop-O0-$link"
        done
    done
    [ "$IT_FAILED" = 0 ]
}

# it_opt_match NAME PATTERNS: whether NAME matches one of the glob PATTERNS (words).
it_opt_match() {
    local pat pats
    read -r -a pats <<<"$2" # words, not globbed against the current directory
    for pat in "${pats[@]}"; do
        # shellcheck disable=SC2053  # PAT is a glob on purpose
        [[ $1 == $pat ]] && return 0
    done
    return 1
}

# it_run_opt_matrix: the optimized fixtures (fixtures.mk: O2, O2nocfi, -strip),
# stop method 0, against IT_ORACLE (gdb).  IT_OPT_EXPECT: glob patterns of names (without
# the arch) checked against the fixture's expectation only, where gdb is known wrong
# (docs/gdb-differences.md); IT_OPT_SKIP: patterns left out.  The caller (run-opt.sh, a row
# of qemu.tab) says why for each.  Exit status = failures.
it_run_opt_matrix() {
    local variant opt link name oracle
    local names=()
    for variant in chain tail alloca sigleaf coldbig; do
        for opt in O2 O2nocfi; do
            for link in dyn static; do
                names+=("$variant-s0-$opt-$link")
            done
        done
    done
    names+=(chain-s0-O2-nopie-strip chain-s0-O2-static-strip)
    for name in "${names[@]}"; do
        it_opt_match "$name" "${IT_OPT_SKIP:-}" && continue
        oracle=$IT_ORACLE
        it_opt_match "$name" "${IT_OPT_EXPECT:-}" && oracle=expect
        IT_ORACLE=$oracle it_case "$name"
    done
    [ "$IT_FAILED" = 0 ]
}

# it_run_qemu_matrix [VARIANT...]: every variant (default: all four), stop method and link
# of IT_ARCH under qemu, against IT_ORACLE (gdb).  IT_QEMU_EXPECT: glob patterns of names
# (without the arch) checked against the fixture's expectation only, where gdb is known
# wrong (docs/gdb-differences.md); the row of qemu.tab that sets it says why.  Exit
# status = failures.
it_run_qemu_matrix() {
    local variant stop link name oracle
    [ $# -gt 0 ] || set -- chain recurse signal threads
    for variant in "$@"; do
        for stop in s0 s1; do
            for link in dyn static; do
                name=$variant-$stop-O0-$link
                oracle=$IT_ORACLE
                it_opt_match "$name" "${IT_QEMU_EXPECT:-}" && oracle=expect
                IT_ORACLE=$oracle it_case "$name"
            done
        done
    done
    [ "$IT_FAILED" = 0 ]
}

# it_run_stepper_matrix: the optimized fixtures, one stepper at a time, each frame checked to come from it
# (compare.py --steppers), the walk against gdb or, for names matching IT_STEPPER_EXPECT
# (where gdb is known wrong), against the fixture's expectation:
#   wanderer      rspwalk --steppers stackbottom,sighandler,wanderer on every fixture of the
#                 O0 matrix and the optimized ones, except IT_WANDER_SKIP: stack scanning
#                 alone finds every caller (trust "scan");
#   analysis      --steppers stackbottom,sighandler,analysis on the fixtures without CFI
#                 (*-O2nocfi-*), except IT_ANALYSIS_SKIP, with compare.py
#                 --fixture-callers analysis: the code analysis finds the caller of every
#                 frame of the fixture's own functions;
#   analysis-cfi  the same with the debug stepper too, for the names matching
#                 IT_ANALYSIS_CFI (the stripped cross libcs: no symbols for the analysis,
#                 CFI for the debug stepper), the fixture's frames still by the analysis.
# stackbottom only ends the walk and sighandler only crosses signal frames: neither finds
# the caller of an ordinary frame.  The caller (run-steppers.sh, a row of qemu.tab) says
# why for each list.  Exit status = failures.
it_run_stepper_matrix() {
    local variant stop opt link name oracle steppers tag
    local names=() nocfi=()
    for variant in chain recurse signal threads; do
        for stop in s0 s1; do
            for link in dyn static; do
                names+=("$variant-$stop-O0-$link")
            done
        done
    done
    for variant in chain tail alloca sigleaf coldbig; do
        for opt in O2 O2nocfi; do
            for link in dyn static; do
                # coldbig's frames (5616 and 70000 bytes) are beyond the wanderer's window
                # (256 words): the analysis alone
                [ "$variant" != coldbig ] && names+=("$variant-s0-$opt-$link")
                [ "$opt" = O2nocfi ] && nocfi+=("$variant-s0-$opt-$link")
            done
        done
    done
    names+=(chain-s0-O2-nopie-strip chain-s0-O2-static-strip)
    for name in "${names[@]}"; do
        it_opt_match "$name" "${IT_WANDER_SKIP:-}" && continue
        oracle=$IT_ORACLE
        it_opt_match "$name" "${IT_STEPPER_EXPECT:-}" && oracle=expect
        IT_ORACLE=$oracle IT_STEPPERS=stackbottom,sighandler,wanderer IT_LABEL_TAG=wanderer \
            it_case "$name"
    done
    for name in "${nocfi[@]}"; do
        it_opt_match "$name" "${IT_ANALYSIS_SKIP:-}" && continue
        oracle=$IT_ORACLE
        it_opt_match "$name" "${IT_STEPPER_EXPECT:-}" && oracle=expect
        steppers=stackbottom,sighandler,analysis tag=analysis
        if it_opt_match "$name" "${IT_ANALYSIS_CFI:-}"; then
            steppers=stackbottom,sighandler,debug,analysis tag=analysis-cfi
        fi
        IT_ORACLE=$oracle IT_STEPPERS=$steppers IT_FIXTURE_CALLERS=analysis \
            IT_LABEL_TAG=$tag it_case "$name"
    done
    [ "$IT_FAILED" = 0 ]
}
