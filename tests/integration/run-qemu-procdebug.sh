#!/usr/bin/env bash
# tests/integration/run-qemu-procdebug.sh -- ProcDebug under QEMU user mode on several
# architectures, the same steps under gdbserver, and one walker set over several QEMU links.
#
# pd_guest.c (built here for each architecture) stops itself in raise(SIGTRAP) under
# main -> a -> b -> c, then sleeps in nanosleep under main -> nap_outer -> nap_inner and exits 0.
# pd_drive.c (built here against build/release) drives it over the stub's socket:
#   debug-ARCH  resume; take in the SIGTRAP stop (poll on the notification descriptor) and walk
#               it (c b a main); resume; pause while it sleeps; walk (nap_inner nap_outer main);
#               resume; see the exit (status 0); a register read afterwards is SW_EEXITED; the
#               qemu process ends with status 0.  QEMU 7.2 user mode ignores the interrupt
#               byte while the guest runs; its process runs on this host, so pause stops it
#               with SIGINT to a guest thread: pause must work (signal 2), as under gdbserver
#               (x86_64), where the interrupt does it.
#   set         three qemu-user instances of three architectures, one link each, gathered in
#               one walker set (sw_walker_set_create/add): each resumed to its own stop, every
#               thread walked by sw_walker_set_walk_all, all detached; each guest then runs to
#               its exit (qemu status 0).
# Kills only the pids it started (qemu: SIGKILL, its gdbstub holds the guest).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

work=$IT_TMP
qemus=()
gs=
pd_cleanup() {
    local p
    for p in "${qemus[@]}"; do kill -KILL "$p" 2>/dev/null; done
    [ -n "$gs" ] && kill "$gs" 2>/dev/null
    wait 2>/dev/null
    it_cleanup
}
trap pd_cleanup EXIT

failed=
report() { # report NAME WHY START [DETAILS-FILE]
    local ms=$((($(date +%s%N) - $3) / 1000000))
    if [ -z "$2" ]; then
        echo "PASS qemu-procdebug/$1 ($ms ms)"
    else
        echo "FAIL qemu-procdebug/$1: $2"
        [ -n "${4:-}" ] && [ -s "$4" ] && sed 's/^/    /' "$4" | head -30
        failed=1
    fi
}

declare -A CC=([x86_64]=gcc [i386]=i686-linux-gnu-gcc [aarch64]=aarch64-linux-gnu-gcc
    [ppc64]=powerpc64-linux-gnu-gcc [ppc64le]=powerpc64le-linux-gnu-gcc)
arches=(aarch64 ppc64 ppc64le i386)
peers=(gdbserver:gdbserver)
for a in "${arches[@]}"; do peers+=("qemu-$a:qemu-user" "${CC[$a]}:gcc-${CC[$a]%-gcc}"); done
if ! why=$(it_missing_peers "${peers[@]}"); then
    echo "FAIL qemu-procdebug/build: $why"
    exit 1
fi
lib=$IT_ROOT/build/release/librspwalk.a
[ -f "$lib" ] || { echo "FAIL qemu-procdebug/build: library not built: $lib (make all)"; exit 1; }
if ! cc -std=c11 -Wall -Wextra -Werror -I"$IT_ROOT/include" -o "$work/pd_drive" \
    "$IT_DIR/pd_drive.c" "$lib" -lelf -ldwarf -lcapstone -lexpat -lz 2>"$work/cc.err"; then
    echo "FAIL qemu-procdebug/build: pd_drive.c: $(head -c 300 "$work/cc.err")"
    exit 1
fi
for a in x86_64 "${arches[@]}"; do
    if ! "${CC[$a]}" -O0 -g -fno-omit-frame-pointer -o "$work/guest-$a" "$IT_DIR/pd_guest.c" \
        2>"$work/cc.err"; then
        echo "FAIL qemu-procdebug/build: pd_guest.c for $a: $(head -c 300 "$work/cc.err")"
        exit 1
    fi
done

# qemu_start ARCH SOCKET NAPS: qemu-ARCH with its gdbstub on SOCKET; its pid in $qpid.
qemu_start() {
    rm -f "$2"
    "qemu-$1" -L "$(it_qemu_sysroot "$1")" -g "$2" "$work/guest-$1" "$3" \
        </dev/null >"$work/qemu-$1.log" 2>&1 &
    qpid=$!
    qemus+=("$qpid")
    for _ in $(seq 100); do [ -S "$2" ] && return 0; sleep 0.02; done
    return 1
}

# check_debug OUT PAUSE_OK: the driver's lines in OUT; "" when all hold, else why.
check_debug() {
    local out=$1 pause_ok=$2
    grep -q '^stopped: signal 5$' "$out" || { echo "the SIGTRAP stop was not taken in"; return; }
    grep -qE '^walk raise [0-9]+:.* c b a main .*\(bottom\)$' "$out" ||
        { echo "the stop in raise was not walked through c b a main"; return; }
    if [ "$pause_ok" = 1 ]; then
        grep -q '^pause: ok, signal 2$' "$out" || { echo "the pause did not stop it (SIGINT)"; return; }
    else
        grep -q '^pause: failed: ETIMEDOUT: .*QEMU user mode ignores the interrupt' "$out" ||
            { echo "the pause did not fail as measured (QEMU user ignores ^C)"; return; }
        grep -q '^stopped: signal 2$' "$out" || { echo "the stop after SIGINT was not taken in"; return; }
    fi
    grep -qE '^walk paused [0-9]+:.* nap_inner nap_outer main .*\(bottom\)$' "$out" ||
        { echo "the sleeping target was not walked through nap_inner nap_outer main"; return; }
    grep -q '^exited: the target exited with status 0' "$out" || { echo "the exit was not seen"; return; }
    grep -q '^read after the exit: EEXITED$' "$out" || { echo "a read after the exit did not fail with EEXITED"; return; }
}

# 1. ProcDebug under qemu-user, each architecture.
for a in "${arches[@]}"; do
    start=$(date +%s%N)
    why=
    sock=$work/q-$a.sock
    if ! qemu_start "$a" "$sock" 80; then
        why="qemu-$a did not open its socket: $(tail -1 "$work/qemu-$a.log")"
    else
        coproc DRV { timeout 60 "$work/pd_drive" debug "unix:$sock" "$work/guest-$a" \
            "$(it_qemu_sysroot "$a")" 1500 2>&1; }
        drv=$DRV_PID
        exec {drv_out}<&"${DRV[0]}"
        : >"$work/debug-$a.out"
        while IFS= read -r -t 60 line <&"$drv_out"; do
            echo "$line" >>"$work/debug-$a.out"
        done
        exec {drv_out}<&-
        wait "$drv" 2>/dev/null
        drc=$?
        # The guest ends by itself once the driver resumed it; a driver that failed early
        # leaves qemu waiting for a client.
        for _ in $(seq 100); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$qpid" 2>/dev/null
        wait "$qpid" 2>/dev/null
        qrc=$?
        why=$(check_debug "$work/debug-$a.out" 1)
        [ -z "$why" ] && [ "$drc" -ne 0 ] && why="the driver exited $drc"
        [ -z "$why" ] && [ "$qrc" -ne 0 ] && why="qemu-$a exited $qrc, not the guest's 0"
    fi
    report "debug-$a" "$why" "$start" "$work/debug-$a.out"
done

# 2. The same steps under gdbserver, where the interrupt works.
start=$(date +%s%N)
why=
gdbserver 127.0.0.1:0 "$work/guest-x86_64" 80 </dev/null >"$work/gs.log" 2>&1 &
gs=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's/^Listening on port \([0-9][0-9]*\)$/\1/p' "$work/gs.log")
    [ -n "$port" ] && break
    sleep 0.05
done
if [ -z "$port" ]; then
    why="gdbserver did not start: $(tail -1 "$work/gs.log")"
else
    timeout 60 "$work/pd_drive" debug "127.0.0.1:$port" "$work/guest-x86_64" / 5000 \
        >"$work/debug-gdbserver.out" 2>&1
    drc=$?
    why=$(check_debug "$work/debug-gdbserver.out" 1)
    [ -z "$why" ] && [ "$drc" -ne 0 ] && why="the driver exited $drc"
fi
kill "$gs" 2>/dev/null
wait "$gs" 2>/dev/null
gs=
report debug-gdbserver-x86_64 "$why" "$start" "$work/debug-gdbserver.out"

# 3. One walker set over three qemu links of three architectures.
start=$(date +%s%N)
why=
args=()
set_pids=()
for a in aarch64 ppc64 i386; do
    if ! qemu_start "$a" "$work/set-$a.sock" 10; then
        why="qemu-$a did not open its socket"
        break
    fi
    set_pids+=("$qpid")
    args+=("unix:$work/set-$a.sock" "$work/guest-$a" "$(it_qemu_sysroot "$a")")
done
if [ -z "$why" ]; then
    timeout 60 "$work/pd_drive" set "${args[@]}" >"$work/set.out" 2>&1
    drc=$?
    walked=$(grep -cE '^walk [0-9]/[a-z0-9_]+ [0-9]+:.* c b a main .*\(bottom\)$' "$work/set.out")
    arch_names=$(sed -n 's|^walk [0-9]/\([a-z0-9_]*\) .*|\1|p' "$work/set.out" | sort -u | wc -l)
    if [ "$drc" -ne 0 ]; then
        why="the driver exited $drc"
    elif [ "$(grep -c '^stopped [0-9]: signal 5$' "$work/set.out")" -ne 3 ]; then
        why="not every target reached its own stop"
    elif [ "$walked" -ne 3 ] || [ "$arch_names" -ne 3 ]; then
        why="want 3 walks through c b a main on 3 architectures, got $walked on $arch_names"
    elif ! grep -q '^walk_all: ok$' "$work/set.out" || ! grep -q '^detached 3$' "$work/set.out"; then
        why="walk_all or the detach failed"
    else
        for p in "${set_pids[@]}"; do
            wait "$p" 2>/dev/null
            qrc=$?
            [ "$qrc" -eq 0 ] || why="a qemu ($p) exited $qrc after the detach, not the guest's 0"
        done
    fi
fi
report set-three-arches "$why" "$start" "$work/set.out"
[ -z "$failed" ]
