#!/usr/bin/env bash
# tests/integration/run-dlopen.sh -- a library that appears and vanishes between two walks.
# A program of our own (written and built in a temp dir) dlopens a tiny library, raises SIGTRAP,
# dlcloses it and raises SIGTRAP again, under gdbserver.  A small client over the library API
# (build/release/librspwalk.a) resumes to each trap through ProcDebug and walks: the library is
# in the library state's list (sw_libstate_lib) at the first stop, gone at the second (stop_gen).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
command -v gdbserver >/dev/null || { echo "dlopen: FAILED: missing peer: gdbserver"; exit 1; }
[ -f build/release/librspwalk.a ] || { echo "dlopen: FAILED: build/release/librspwalk.a missing (make all)"; exit 1; }
work=$(mktemp -d)
gs_pid=
cleanup() { [ -n "$gs_pid" ] && kill "$gs_pid" 2>/dev/null; [ -n "$gs_pid" ] && wait "$gs_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cat >"$work/tiny.c" <<'C'
int tiny_value(void) { return 42; }
C
cat >"$work/prog.c" <<'C'
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
int main(int argc, char **argv) {
    (void)argc;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (h == NULL) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    raise(SIGTRAP); /* first stop: libtiny loaded */
    dlclose(h);
    raise(SIGTRAP); /* second stop: libtiny gone */
    return 0;
}
C
cat >"$work/client.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <rspwalk/rspwalk.h>
static int has_tiny(struct sw_walker *w) {
    struct sw_libstate *ls = sw_walker_libstate(w);
    for (size_t i = 0; i < sw_libstate_count(ls); i++)
        if (strstr(sw_libstate_lib(ls, i)->name, "libtiny.so")) return 1;
    return 0;
}
static int stop_and_walk(struct sw_walker *w, struct sw_proc *p, int first) {
    struct sw_stack st;
    if (p->debug->resume(p, SW_TID_DEFAULT, 0) < 0 || p->debug->handle_debug_event(p, true) < 0) {
        printf("FAIL: resume to trap %d: %s\n", first ? 1 : 2, sw_proc_errmsg(p)); return 1;
    }
    sw_stack_init(&st);
    int rc = sw_walk_stack(w, p->default_tid, &st);
    int tiny = has_tiny(w);
    printf("stop %d: stop_gen %llu, %zu frames, libtiny %s\n", first ? 1 : 2,
           (unsigned long long)p->stop_gen, st.n, tiny ? "present" : "absent");
    sw_stack_fini(&st);
    if (rc < 0) { printf("FAIL: walk: %s\n", sw_walker_errmsg(w)); return 1; }
    return tiny == first ? 0 : 1;
}
int main(int argc, char **argv) {
    struct rsp_session_config scfg; struct rsp_session *s; struct sw_proc *p; struct sw_walker *w;
    struct sw_errbuf err;
    (void)argc;
    rsp_session_config_init(&scfg);
    if (rsp_session_open(argv[1], &scfg, &s, &err) < 0) { printf("FAIL: %s\n", err.msg); return 1; }
    struct sw_rsp_config pcfg = {.exe = argv[2]};
    if (sw_proc_rsp_new(s, &pcfg, &p, &err) < 0) { printf("FAIL: %s\n", err.msg); return 1; }
    struct sw_walker_config wcfg = {.exe = argv[2], .sysroot = "/"};
    if (sw_walker_new(p, &wcfg, &w, &err) < 0) { printf("FAIL: %s\n", err.msg); return 1; }
    int bad = stop_and_walk(w, p, 1);
    bad |= stop_and_walk(w, p, 0);
    sw_addr brk;
    if (sw_libstate_trap_address(sw_walker_libstate(w), &brk) == 0)
        printf("trap address (r_brk): 0x%llx\n", (unsigned long long)brk);
    else { printf("FAIL: trap address: %s\n", sw_libstate_errmsg(sw_walker_libstate(w))); bad = 1; }
    p->debug->detach(p, false);
    sw_walker_free(w);
    return bad;
}
C
pass=0; fail=0
if ! cc -shared -fPIC -o "$work/libtiny.so" "$work/tiny.c" ||
   ! cc -g -o "$work/prog" "$work/prog.c" -ldl ||
   ! cc -std=c11 -Iinclude -o "$work/client" "$work/client.c" build/release/librspwalk.a \
        -lelf -ldwarf -lcapstone -lexpat -lz; then
  echo "dlopen: FAILED to build the program or the client"; exit 1
fi
gdbserver 127.0.0.1:0 "$work/prog" "$work/libtiny.so" >"$work/gs.log" 2>&1 &
gs_pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*Listening on port \([0-9]*\).*/\1/p' "$work/gs.log")
  [ -n "$port" ] && break; sleep 0.05
done
out=$(timeout 60 "$work/client" "127.0.0.1:$port" "$work/prog" 2>&1); rc=$?
echo "$out" | sed 's/^/dlopen:   /'
if [ $rc -eq 0 ] && grep -q "stop 1: .*libtiny present" <<<"$out" && grep -q "stop 2: .*libtiny absent" <<<"$out"; then
  echo "PASS dlopen: libtiny listed after dlopen, gone after dlclose"; pass=$((pass + 1))
else
  echo "FAIL dlopen: libtiny not seen loaded then unloaded (rc $rc)"; fail=$((fail + 1))
fi
if grep -q "trap address (r_brk): 0x" <<<"$out"; then
  echo "PASS dlopen: trap address read through DT_DEBUG (libraries-svr4 stub)"; pass=$((pass + 1))
else
  echo "FAIL dlopen: trap address"; fail=$((fail + 1))
fi
echo "dlopen: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
