#!/usr/bin/env bash
# tests/integration/run-plt.sh -- frame 0 in a PLT stub under qemu-user, rspwalk against gdb.
#
# chain-s1-O0-dyn's e calls raise through the linker's stub: aarch64's and x86's .plt entry
# raise@plt, PowerPC's call stub in .text (ld's "*.plt_call.raise@..." / "*.plt_pic32.raise@...").
# gdb-multiarch, through the proxy, runs the program to main, then to the stub's first
# instruction, and leaves; rspwalk walks that stop (JSON), gdb_oracle.sh gives gdb's walk of
# it, and the main thread's frames must have the same pcs, every one gdb shows (the stub,
# e d c b a main, libc's start, _start), with rspwalk's walk ended at the bottom.  aarch64's
# .plt and ppc64's stubs carry no CFI: the stub is analysed as a leaf.  One case per arch,
# "PASS plt/qemu-ARCH (N ms)".  Kills only what it started.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"


trap it_cleanup EXIT
IT_STUB=qemu

# plt_stub_name PROG ARCH: the symbol gdb can break on at the stub's first instruction.
plt_stub_name() {
    case $2 in
    ppc*)
        readelf -sW "$1" | awk '$8 ~ /\.plt_(call|pic32)\.raise@/ { print $8; exit }'
        ;;
    *) echo 'raise@plt' ;;
    esac
}

# plt_case ARCH: one case; prints why on failure (one line first).
plt_case() {
    local arch=$1 dir=$IT_TMP/$1 prog stub tdesc=() gdb_tdesc=()
    prog=$IT_ROOT/build/fixtures/$arch/chain-s1-O0-dyn
    mkdir -p "$dir"
    IT_ARCH=$arch
    IT_SYSROOT=$(it_qemu_sysroot "$arch")
    IT_QEMU_CPU=
    [ "$arch" = aarch64 ] && IT_QEMU_CPU=max,sve=off # gdb 13 and SVE: qemu.tab says why
    case $arch in
    x86_64 | i386)
        tdesc=("$IT_DIR/tdesc/qemu-$arch-linux.xml")
        gdb_tdesc=(-ex "set tdesc filename ${tdesc[0]}")
        ;;
    esac
    it_missing_peers gdb-multiarch:gdb-multiarch python3:python3 readelf:binutils \
        "qemu-$arch:qemu-user" || return 1
    [ -x "$prog" ] || { echo "fixture not built: $prog (make fixtures)"; return 1; }
    stub=$(plt_stub_name "$prog" "$arch")
    [ -n "$stub" ] || { echo "no PLT stub of raise in $prog"; return 1; }
    it_qemu_start "$prog" || return 1
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set pagination off' \
        -ex 'set confirm off' -ex "set sysroot $IT_SYSROOT" -ex "file $prog" "${gdb_tdesc[@]}" \
        -ex "target remote 127.0.0.1:$IT_PORT" -ex "break main" -ex continue -ex delete \
        -ex "break *'$stub'" -ex continue -ex delete -ex 'info registers pc' -ex disconnect \
        </dev/null >"$dir/gdb-stop.log" 2>&1
    if ! grep -q "in $stub\|<$stub" "$dir/gdb-stop.log"; then
        it_stub_stop
        echo "gdb did not stop in $stub: $(grep -v '^warning' "$dir/gdb-stop.log" | tail -n 1)"
        return 1
    fi
    if ! timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --sysroot "$IT_SYSROOT" --exe "$prog" \
        "127.0.0.1:$IT_PORT" >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"; then
        it_stub_stop
        echo "rspwalk failed: $(head -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    if ! ORACLE_TIMEOUT=$IT_TIMEOUT ORACLE_SYSROOT=$IT_SYSROOT ORACLE_TDESC="${tdesc[*]}" \
        "$IT_DIR/gdb_oracle.sh" "127.0.0.1:$IT_PORT" "$prog" >"$dir/oracle.json" \
        2>"$dir/oracle.err"; then
        it_stub_stop
        echo "gdb oracle failed: $(head -n 1 "$dir/oracle.err")"
        return 1
    fi
    it_stub_stop
    python3 - "$dir/rspwalk.json" "$dir/oracle.json" "$IT_MAIN_LWP" <<'EOF'
import json, sys
ours = json.load(open(sys.argv[1]))
gdb = json.load(open(sys.argv[2]))
lwp = int(sys.argv[3])
def thread(doc):
    for t in doc["threads"]:
        if t.get("lwp") == lwp:
            return t
    sys.exit("no thread %d in %s" % (lwp, doc))
o, g = thread(ours), thread(gdb)
op = [int(f["pc"], 16) for f in o["frames"]]
gp = [int(f["pc"], 16) for f in g["frames"] if f.get("type") == "normal"]
# gdb ends a PowerPC walk with a frame at pc 0: the end of the stack (compare.py's rule).
if len(gp) > 1 and gp[-1] == 0:
    gp.pop()
names = " ".join(str(f.get("function")) for f in o["frames"])
if op[: len(gp)] != gp:
    print("walks differ: rspwalk %s, gdb %s" % ([hex(p) for p in op], [hex(p) for p in gp]))
    print("    rspwalk: %s" % names)
    sys.exit(1)
if o.get("end") != "bottom":
    print("rspwalk's walk ended '%s', not at the bottom: %s" % (o.get("end"), names))
    sys.exit(1)
EOF
}

# resolver_case: aarch64's lazy binding.  From raise@plt, 14 instructions on (the stub, PLT0's
# push of x16 and x30, into ld.so's _dl_runtime_resolve past its own push), frame 0 is in the
# resolver, whose CFI counts the CFA from below PLT0's push (glibc's dl-trampoline.S): rspwalk
# must still walk e d c b a main to the bottom.  gdb shows the caller twice and stops there, so
# it is no oracle here.
resolver_case() {
    local arch=aarch64 dir=$IT_TMP/resolver prog
    prog=$IT_ROOT/build/fixtures/$arch/chain-s1-O0-dyn
    mkdir -p "$dir"
    IT_ARCH=$arch
    IT_SYSROOT=$(it_qemu_sysroot "$arch")
    IT_QEMU_CPU=max,sve=off
    it_missing_peers gdb-multiarch:gdb-multiarch python3:python3 "qemu-$arch:qemu-user" || return 1
    [ -x "$prog" ] || { echo "fixture not built: $prog (make fixtures)"; return 1; }
    it_qemu_start "$prog" || return 1
    timeout -k 5 "$IT_TIMEOUT" gdb-multiarch -nx -batch -ex 'set pagination off' \
        -ex 'set confirm off' -ex "set sysroot $IT_SYSROOT" -ex "file $prog" \
        -ex "target remote 127.0.0.1:$IT_PORT" -ex "break main" -ex continue -ex delete \
        -ex "break *'raise@plt'" -ex continue -ex delete -ex 'stepi 14' -ex 'info registers pc' \
        -ex disconnect </dev/null >"$dir/gdb-stop.log" 2>&1
    if ! timeout -k 5 "$IT_TIMEOUT" "$RSPWALK" -f json --sysroot "$IT_SYSROOT" --exe "$prog" \
        "127.0.0.1:$IT_PORT" >"$dir/rspwalk.json" 2>"$dir/rspwalk.err"; then
        it_stub_stop
        echo "rspwalk failed: $(head -n 1 "$dir/rspwalk.err")"
        return 1
    fi
    it_stub_stop
    python3 - "$dir/rspwalk.json" "$IT_MAIN_LWP" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
lwp = int(sys.argv[2])
t = [t for t in doc["threads"] if t.get("lwp") == lwp]
if not t:
    sys.exit("no thread %d" % lwp)
f = t[0]["frames"]
names = [str(x.get("function")) for x in f]
if "ld-linux" not in str(f[0].get("module")):
    sys.exit("frame 0 is not in ld.so (the stop missed the resolver): %s in %s" % (names[0], f[0].get("module")))
want = ["e", "d", "c", "b", "a", "main"]
got = [n for n in names if n in want]
if got != want or t[0].get("end") != "bottom":
    sys.exit("walk from the resolver: %s, ended '%s'" % (" ".join(names), t[0].get("end")))
EOF
}

t0=$(date +%s%N)
if why=$(resolver_case); then
    echo "PASS plt/qemu-aarch64-resolver ($((($(date +%s%N) - t0) / 1000000)) ms)"
else
    echo "FAIL plt/qemu-aarch64-resolver: ${why%%$'\n'*}"
fi

for arch in aarch64 ppc64 ppc64le ppc x86_64 i386; do
    t0=$(date +%s%N)
    if why=$(plt_case "$arch"); then
        echo "PASS plt/qemu-$arch ($((($(date +%s%N) - t0) / 1000000)) ms)"
    else
        echo "FAIL plt/qemu-$arch: ${why%%$'\n'*}"
        [ "$why" != "${why%%$'\n'*}" ] && printf '    %s\n' "${why#*$'\n'}"
    fi
done
