#!/usr/bin/env python3
"""tests/integration/server_api.py -- rspwalkd's HTTP API against real stubs, as a client sees it.

Fixtures under gdbserver and qemu-user are brought to their stop (`rspwalk -c`), gdb-multiarch
walks that stop (gdb_oracle.sh), then one rspwalkd gets them all through POST /v1/targets and
each answer is checked:
  stacks/LABEL   GET /v1/targets/ID/stacks against gdb's walk (compare.py, as lib.sh's cases)
                 and frame for frame equal to `rspwalk -f json` of the same stop
  targets        GET /v1/targets: every target, its arch and state
  stack-options  ?thread=, ?max_frames=, ?locals=1 of one target's stacks
  stacks-all     GET /v1/stacks (all, and ?targets= a subset in the order asked)
  tree           GET /v1/tree: json (counts and tasks), dot (`dot -Tsvg` renders it), folded
                 (the counts sum to the tasks)
  snapshots      GET /v1/targets/ID/snapshots: the history of the walks served
  resume-pause   a running program (server_spin.c): POST resume, a walk of the running
                 target (it keeps running), POST pause, the events stream saw both states
  errors         unknown ids and paths, bad bodies, a target nobody listens on: JSON errors
                 with fitting statuses
  delete         DELETE /v1/targets/ID leaves each target stopped where it was: the inferior's
                 threads still in tracing stop, `rspwalk` after it sees the same frames
Run by run-server.sh (run-all).  Env: RSPWALKD, RSPWALK (default build/release/...),
SERVER_API_QEMU (default "aarch64 ppc64"; empty: no qemu cases).
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srvlib  # noqa: E402
from srvlib import Failure  # noqa: E402

GDBSERVER_CASES = ["chain-s0-O0-dyn", "threads-s0-O0-dyn", "signal-s0-O0-dyn",
                   "recurse-s0-O0-dyn", "threads-s1-O0-static"]
# (arch, fixture, qemu -cpu): gdb 13 reads no SVE signal frame (qemu.tab), hence sve=off.
QEMU_CASES = {"aarch64": ("threads-s0-O0-dyn", "max,sve=off"),
              "ppc64": ("chain-s0-O0-dyn", None),
              "ppc64le": ("threads-s0-O0-dyn", None),
              "ppc": ("chain-s0-O0-dyn", None)}
# Frame members that must be the CLI's exactly (the document is one renderer's for both).
FRAME_KEYS = ("level", "pc", "sp", "fp", "function", "symbol", "offset", "module", "stepper",
              "trust", "kind")


class Case:
    def __init__(self, stub, label):
        self.stub = stub
        self.label = label
        self.cli = None      # rspwalk -c's document of the stop
        self.oracle = None   # gdb's walk, a file
        self.id = None       # the server's id
        self.doc = None      # the server's document
        self.error = None    # a Failure during set-up


def setup_case(c, work, cache):
    try:
        c.cli = srvlib.to_stop(c.stub, cache)
        c.oracle = srvlib.oracle(c.stub, os.path.join(work, "oracle-%s.json" % c.label.replace("/", "-")))
    except (Failure, subprocess.TimeoutExpired) as exc:
        c.error = exc if isinstance(exc, Failure) else Failure(str(exc))


def error_doc(status, doc, what):
    if status not in srvlib.ERROR_STATUSES:
        raise Failure("%s: status %d, expected an error status" % (what, status))
    if not isinstance(doc, dict) or not isinstance(doc.get("error"), str) or not doc["error"]:
        raise Failure("%s: %d without a JSON {\"error\": ...}: %r" % (what, status, doc))
    if "\n" in doc["error"]:
        raise Failure("%s: error message of more than one line: %r" % (what, doc["error"]))


def same_frames(ours, cli, what):
    """Every thread's frames of the server's document equal the CLI's, member for member."""
    a = {t["id"]: t for t in ours["threads"]}
    b = {t["id"]: t for t in cli["threads"]}
    if sorted(a) != sorted(b):
        raise Failure("%s: threads %s, rspwalk's %s" % (what, sorted(a), sorted(b)))
    for tid, t in a.items():
        fa, fb = t["frames"], b[tid]["frames"]
        if len(fa) != len(fb):
            raise Failure("%s: thread %s has %d frames, rspwalk's %d" % (what, tid, len(fa), len(fb)))
        for i, (x, y) in enumerate(zip(fa, fb)):
            for k in FRAME_KEYS:
                if x.get(k) != y.get(k):
                    raise Failure("%s: thread %s frame %d: %s %r, rspwalk's %r"
                                  % (what, tid, i, k, x.get(k), y.get(k)))
        for k in ("lwp", "stopped", "end"):
            if t.get(k) != b[tid].get(k):
                raise Failure("%s: thread %s: %s %r, rspwalk's %r" % (what, tid, k, t.get(k),
                                                                     b[tid].get(k)))
    for k in ("version", "arch"):
        if ours.get(k) != cli.get(k):
            raise Failure("%s: %s %r, rspwalk's %r" % (what, k, ours.get(k), cli.get(k)))


def case_stacks(srv, c, work):
    if c.error:
        raise c.error
    c.doc = srv.stacks(c.id)
    path = os.path.join(work, "server-%s.json" % c.label.replace("/", "-"))
    with open(path, "w") as f:
        json.dump(c.doc, f)
    verdict = srvlib.compare(c.stub, path, c.oracle)
    same_frames(c.doc, c.cli, "server vs rspwalk")
    return "(%s)" % verdict.replace("compare: ", "")


def case_targets(srv, cases, spin_id):
    listed = {t["id"]: t for t in srv.targets()}
    for c in cases:
        t = listed.get(c.id)
        if t is None:
            raise Failure("GET /v1/targets: no target %s (%s)" % (c.id, c.label))
        if t.get("target") != c.stub.target:
            raise Failure("target %s: target %r, registered %r" % (c.id, t.get("target"),
                                                                  c.stub.target))
        if t.get("state") != "stopped":
            raise Failure("target %s (%s): state %r, expected stopped" % (c.id, c.label,
                                                                         t.get("state")))
        want = c.stub.arch if c.stub.arch != "ppc" else "ppc32"
        if t.get("arch") != want:
            raise Failure("target %s (%s): arch %r, expected %s" % (c.id, c.label, t.get("arch"),
                                                                   want))
        for k in ("id", "name", "target", "arch", "stub", "state"):
            if k not in t:
                raise Failure("target %s: no %r member: %r" % (c.id, k, t))
    if spin_id is not None and spin_id not in listed:
        raise Failure("GET /v1/targets: no target %s (server_spin)" % spin_id)


def case_stacks_all(srv, cases):
    ok = [c for c in cases if c.doc is not None]
    doc = srv.json("GET", "/v1/stacks", expect=200)[1]
    got = {t.get("id"): t for t in doc.get("targets", [])}
    for c in ok:
        t = got.get(c.id)
        if t is None:
            raise Failure("GET /v1/stacks: no target %s" % c.id)
        if "error" in t:
            raise Failure("GET /v1/stacks: target %s: %s" % (c.id, t["error"]))
        if srvlib.frames_key(t) != srvlib.frames_key(c.doc):
            raise Failure("GET /v1/stacks: target %s (%s) differs from its own stacks"
                          % (c.id, c.label))
    if len(ok) >= 2:
        pick = [ok[-1].id, ok[0].id]
        doc = srv.json("GET", "/v1/stacks?targets=%s" % ",".join(map(str, pick)), expect=200)[1]
        ids = [t.get("id") for t in doc.get("targets", [])]
        if ids != pick:
            raise Failure("GET /v1/stacks?targets=%s: ids %s, in that order expected" % (pick, ids))
    return "(%d targets)" % len(got)


def tree_walk(node, path, out):
    """Checks counts down the tree; OUT collects (path, count) of every node."""
    kids = node.get("children", [])
    total = sum(k.get("count", 0) for k in kids)
    if total > node.get("count", 0):
        raise Failure("tree node %s: children count %d > its own %d"
                      % ("/".join(path) or "/", total, node.get("count", 0)))
    for k in kids:
        tree_walk(k, path + [k.get("function") or "??"], out)
    out.append((path, node.get("count")))


def case_tree(srv, cases, work):
    ok = [c for c in cases if c.doc is not None]
    ids = ",".join(str(c.id) for c in ok)
    tasks = sum(len(c.doc["threads"]) for c in ok)
    status, ctype, raw = srv.request("GET", "/v1/tree?targets=%s&format=json" % ids)
    if status != 200:
        raise Failure("GET /v1/tree json: %d %s" % (status, raw[:200]))
    doc = json.loads(raw)
    if doc.get("tasks") != tasks:
        raise Failure("tree json: tasks %r, expected %d (threads of %d targets)"
                      % (doc.get("tasks"), tasks, len(ok)))
    root = doc.get("tree") or {}
    if root.get("function") != "/" or root.get("count") != tasks:
        raise Failure("tree json: root %r count %r, expected \"/\" %d"
                      % (root.get("function"), root.get("count"), tasks))
    if len(doc.get("tasks_index", [])) != tasks:
        raise Failure("tree json: tasks_index has %d entries, expected %d"
                      % (len(doc.get("tasks_index", [])), tasks))
    nodes = []
    tree_walk(root, [], nodes)
    if not any(p and p[-1] == "main" for p, _ in nodes):
        raise Failure("tree json: no main below the root")
    status, ctype, raw = srv.request("GET", "/v1/tree?targets=%s&format=dot" % ids)
    if status != 200 or b"digraph" not in raw:
        raise Failure("GET /v1/tree dot: %d %s" % (status, raw[:200]))
    if b"stat_4_1" not in raw:
        raise Failure("tree dot: no graph [type=\"stat_4_1\"]")
    r = subprocess.run(["dot", "-Tsvg"], input=raw, capture_output=True, timeout=60)
    if r.returncode != 0 or b"<svg" not in r.stdout:
        raise Failure("dot -Tsvg failed (%d): %s" % (r.returncode, r.stderr[:200]))
    with open(os.path.join(work, "tree.svg"), "wb") as f:
        f.write(r.stdout)
    status, ctype, raw = srv.request("GET", "/v1/tree?targets=%s&format=folded" % ids)
    if status != 200:
        raise Failure("GET /v1/tree folded: %d %s" % (status, raw[:200]))
    total = 0
    for line in raw.decode().splitlines():
        m = re.fullmatch(r"(\S.*) (\d+)", line)
        if not m:
            raise Failure("tree folded: not \"a;b;c COUNT\": %r" % line)
        total += int(m.group(2))
    if total != tasks:
        raise Failure("tree folded: counts sum to %d, expected %d tasks" % (total, tasks))
    return "(%d tasks, %d nodes)" % (tasks, len(nodes))


def case_stack_options(srv, c):
    """?thread=, ?max_frames=, ?locals=1 as the CLI's -t, -n and --locals."""
    lwps = [t["lwp"] for t in c.doc["threads"]]
    other = [t for t in c.doc["threads"] if not t.get("stopped")][-1]
    one = srv.stacks(c.id, "?thread=%d" % other["lwp"])
    if [t["lwp"] for t in one["threads"]] != [other["lwp"]]:
        raise Failure("?thread=%d: threads %s" % (other["lwp"], [t["lwp"] for t in one["threads"]]))
    if srvlib.frames_key(one) != {other["lwp"]: [(f["pc"], f["function"]) for f in other["frames"]]}:
        raise Failure("?thread=%d: frames differ from the whole walk's" % other["lwp"])
    short = srv.stacks(c.id, "?max_frames=3")
    if sorted(t["lwp"] for t in short["threads"]) != sorted(lwps):
        raise Failure("?max_frames=3: threads %s, expected %s" % (
            [t["lwp"] for t in short["threads"]], lwps))
    # As the CLI's -n: physical frames; gdb's inline and tail-call frames come beside them.
    for t in short["threads"]:
        n = sum(f["kind"] not in ("inline", "tailcall") for f in t["frames"])
        if n > 3 or (n == 3 and t.get("end") != "depth"):
            raise Failure("?max_frames=3: thread %s has %d physical frames, end %r"
                          % (t["id"], n, t.get("end")))
    loc = srv.stacks(c.id, "?locals=1")
    if not any(isinstance(f.get("locals"), list) and f["locals"]
               for t in loc["threads"] for f in t["frames"]):
        raise Failure("?locals=1: no frame with locals")
    st, doc = srv.json("GET", "/v1/targets/%s/stacks?max_frames=-1" % c.id)
    error_doc(st, doc, "?max_frames=-1")
    if st != 400:
        raise Failure("?max_frames=-1: status %d, expected 400" % st)


def snapshot_list(srv, tid):
    doc = srv.json("GET", "/v1/targets/%s/snapshots" % tid, expect=200)[1]
    return doc.get("snapshots", []) if isinstance(doc, dict) else doc


def case_snapshots(srv, c):
    before = snapshot_list(srv, c.id)
    if not before:
        raise Failure("target %s: no snapshot after a walk was served" % c.id)
    # A target that has not resumed answers from what the server has: no new walk is needed,
    # but what is listed stays listed.
    srv.stacks(c.id)
    after = snapshot_list(srv, c.id)
    if len(after) < len(before):
        raise Failure("target %s: %d snapshots, then %d" % (c.id, len(before), len(after)))
    for s in after:
        if not isinstance(s, dict) or "id" not in s or s.get("target") != c.id:
            raise Failure("target %s: a listed snapshot without its id or target: %r" % (c.id, s))
    ids = [s["id"] for s in after]
    if ids != sorted(ids):
        raise Failure("target %s: snapshots not oldest first: %s" % (c.id, ids))
    one = srv.json("GET", "/v1/snapshots/%s" % ids[-1], expect=200)[1]
    doc = one.get("document") if isinstance(one, dict) else None
    if not isinstance(doc, dict) or srvlib.frames_key(doc) != srvlib.frames_key(c.doc):
        raise Failure("snapshot %s: its document is not the last walk served of target %s"
                      % (ids[-1], c.id))
    st, page = srv.json("GET", "/v1/targets/%s/snapshots?after=%s" % (c.id, ids[-1]), expect=200)
    if page.get("snapshots"):
        raise Failure("target %s: snapshots after the last one: %r" % (c.id, page["snapshots"]))
    return "(%d snapshots)" % len(after)


def thread_functions(doc):
    return [[f["function"] for f in t["frames"]] for t in doc["threads"]]


def case_resume_pause(srv, stub):
    events = srvlib.Events(srv)
    try:
        if events.status != 200:
            raise Failure("GET /v1/events: status %d" % events.status)
        tid = srv.add_target(stub.target, exe=stub.prog, sysroot=None, name="spin")
        srv.wait_state(tid, ("stopped",))
        st, doc = srv.json("POST", "/v1/targets/%s/resume" % tid)
        if st not in (200, 202, 204):
            raise Failure("POST resume: %d %r" % (st, doc))
        srv.wait_state(tid, ("running",), 10)
        # The program starts its threads once running.
        if not srvlib.wait_for(lambda: len(stub.task_states()) == 4, 10):
            raise Failure("server_spin did not start its 4 threads: %s" % stub.task_states())
        time.sleep(0.2)
        doc = srv.stacks(tid)
        funcs = thread_functions(doc)
        if len(funcs) != 4:
            raise Failure("running target: %d threads walked, expected 4" % len(funcs))
        if not any("main_outer" in fs and "nap" in fs for fs in funcs) or \
                sum("worker_main" in fs for fs in funcs) != 3:
            raise Failure("running target: stacks are not server_spin's: %s" % funcs)
        t = srv.target(tid)
        if t.get("state") != "running":
            raise Failure("after a walk of a running target: state %r, expected running"
                          % t.get("state"))
        # Resumed after the walk: no thread left in tracing stop.
        if not srvlib.wait_for(lambda: "t" not in stub.task_states().values(), 5):
            raise Failure("after a walk of a running target: threads still stopped: %s"
                          % stub.task_states())
        st, doc = srv.json("POST", "/v1/targets/%s/pause" % tid)
        if st not in (200, 202, 204):
            raise Failure("POST pause: %d %r" % (st, doc))
        srv.wait_state(tid, ("stopped",), 10)
        states = stub.task_states()
        if set(states.values()) != {"t"}:
            raise Failure("after pause: thread states %s, expected all t (tracing stop)" % states)
        d1 = srv.stacks(tid)
        d2 = srv.stacks(tid)
        if srvlib.frames_key(d1) != srvlib.frames_key(d2):
            raise Failure("two walks of the paused target differ")
        saw = {}
        for want in ("running", "stopped"):
            saw[want] = srvlib.wait_for(lambda: events.seen(
                lambda ev, o: ev == "target" and isinstance(o, dict) and o.get("id") == tid
                and o.get("state") == want), 5)
        missing = [k for k, v in saw.items() if not v]
        if missing:
            raise Failure("GET /v1/events: no \"target\" event with state %s for target %s"
                          % (" or ".join(missing), tid))
        return tid, d2, ""
    finally:
        events.close()


def case_errors(srv, work):
    checks = [
        ("GET", "/v1/targets/999999", None, 404),
        ("GET", "/v1/targets/999999/stacks", None, 404),
        ("DELETE", "/v1/targets/999999", None, 404),
        ("GET", "/v1/targets/notanumber/stacks", None, (400, 404)),
        ("GET", "/v1/no-such-thing", None, 404),
        ("POST", "/v1/targets", b"{not json", 400),
        ("POST", "/v1/targets", {"name": "no target member"}, 400),
        ("POST", "/v1/targets", {"target": 12}, 400),
        ("GET", "/v1/samples/999999", None, 404),
    ]
    for method, path, body, want in checks:
        st, doc = srv.json(method, path, body)
        error_doc(st, doc, "%s %s" % (method, path))
        if st not in (want if isinstance(want, tuple) else (want,)):
            raise Failure("%s %s: status %d, expected %s: %r" % (method, path, st, want, doc))
    # Nobody listens on this port: registered, its link lost, its walks a clear error.
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    tid = srv.add_target("127.0.0.1:%d" % port, name="nobody")
    # Never connected: "connecting" (or "link-lost") with the reason in "error".
    last = {}

    def refused():
        last["t"] = srv.target(tid)
        return last["t"].get("error") and last["t"].get("state") in ("connecting", "link-lost")
    if not srvlib.wait_for(refused, 15, 0.05):
        raise Failure("a target nobody listens on: state %r, error %r after 15 s"
                      % (last["t"].get("state"), last["t"].get("error")))
    st, doc = srv.json("GET", "/v1/targets/%s/stacks" % tid, timeout=60)
    error_doc(st, doc, "stacks of a target nobody listens on")
    if st not in (409, 502, 503, 504):
        raise Failure("stacks of a target nobody listens on: status %d" % st)
    st, doc = srv.json("DELETE", "/v1/targets/%s" % tid)
    if st not in (200, 204):
        raise Failure("DELETE of the dead target: %d %r" % (st, doc))
    return "(%d error answers)" % (len(checks) + 1)


def case_delete(srv, c, last_doc):
    st, doc = srv.json("DELETE", "/v1/targets/%s" % c.id)
    if st not in (200, 204):
        raise Failure("DELETE /v1/targets/%s: %d %r" % (c.id, st, doc))
    st, doc = srv.json("GET", "/v1/targets/%s" % c.id)
    if st != 404:
        raise Failure("GET /v1/targets/%s after DELETE: %d, expected 404" % (c.id, st))
    if c.stub.proc.poll() is not None:
        raise Failure("the stub exited after DELETE (%d)" % c.stub.proc.returncode)
    if c.stub.kind == "gdbserver":
        states = c.stub.task_states()
        if not states or set(states.values()) != {"t"}:
            raise Failure("after DELETE: inferior thread states %s, expected all t" % states)
    # The link is gone: the stub takes a new client, which finds the same stop.
    again = None
    for _ in range(50):
        again, err = srvlib.rspwalk(c.stub.target, c.stub.prog, c.stub.sysroot)
        if again is not None:
            break
        time.sleep(0.1)
    if again is None:
        raise Failure("rspwalk after DELETE: %s" % err.strip().splitlines()[-1:])
    if srvlib.frames_key(again) != srvlib.frames_key(last_doc):
        raise Failure("rspwalk after DELETE sees other frames than the server's last walk")


def main():
    rep = srvlib.Report("server")
    work = srvlib.workdir("server-api")
    cache = os.path.join(work, "cache")
    failed_before = 0
    try:
        peers = ["gdbserver", "gdb-multiarch", "dot"]
        qemu_arches = os.environ.get("SERVER_API_QEMU", "aarch64 ppc64").split()
        peers += ["qemu-" + a for a in qemu_arches]
        missing = [p for p in peers if subprocess.run(["sh", "-c", "command -v " + p],
                                                      capture_output=True).returncode != 0]
        if missing:
            rep.fail("setup", "missing peer: %s" % ", ".join(missing))
            return 1
        if not os.access(srvlib.RSPWALK, os.X_OK):
            rep.fail("setup", "rspwalk not built: %s" % srvlib.RSPWALK)
            return 1
        cases = []
        for name in GDBSERVER_CASES:
            stub = srvlib.Stub(work, os.path.join(srvlib.FIXTURES, "x86_64", name),
                               tag=name).launch()
            cases.append(Case(stub, "x86_64/" + name))
        for arch in qemu_arches:
            name, cpu = QEMU_CASES[arch]
            stub = srvlib.Stub(work, os.path.join(srvlib.FIXTURES, arch, name), arch=arch,
                               kind="qemu", cpu=cpu, tag="%s-%s" % (arch, name)).launch()
            cases.append(Case(stub, "qemu-%s/%s" % (arch, name)))
        spin = srvlib.Stub(work, srvlib.build_spin(os.path.join(work, "bin")), tag="spin").launch()
        for c in cases:
            try:
                c.stub.wait_ready()
            except Failure as f:
                c.error = f
        spin.wait_ready()
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            list(ex.map(lambda c: c.error or setup_case(c, work, cache),
                        [c for c in cases if c.error is None]))
        srv = srvlib.Server(work).start()
        for c in cases:
            if c.error is None:
                c.id = srv.add_target(c.stub.target, exe=c.stub.prog, sysroot=c.stub.api_sysroot,
                                      name=c.label)
        for c in cases:
            if c.error is None:
                try:
                    srv.wait_state(c.id, ("stopped",))
                except Failure as f:
                    c.error = f
        for c in cases:
            rep.case("stacks/" + c.label, case_stacks, srv, c, work)
        live = [c for c in cases if c.error is None]
        rep.case("targets", case_targets, srv, live, None)
        rep.case("stacks-all", case_stacks_all, srv, live)
        rep.case("tree", case_tree, srv, live, work)
        if live and live[0].doc is not None:
            rep.case("snapshots", case_snapshots, srv, live[0])
        threads = [c for c in live if c.label == "x86_64/threads-s0-O0-dyn" and c.doc]
        if threads:
            rep.case("stack-options", case_stack_options, srv, threads[0])
        res = {}

        def resume_pause():
            res["tid"], res["doc"], note = case_resume_pause(srv, spin)
            return note
        rep.case("resume-pause", resume_pause)
        rep.case("errors", case_errors, srv, work)
        for c in live:
            if c.doc is not None:
                rep.case("delete/" + c.label, case_delete, srv, c, c.doc)
        if "tid" in res:
            sc = Case(spin, "spin")
            sc.id = res["tid"]
            rep.case("delete/paused-spin", case_delete, srv, sc, res["doc"])
        if not srv.alive():
            rep.fail("server-up", "rspwalkd exited (%s): %s" % (srv.proc.returncode, srv.tail()))
        else:
            rc = srv.stop()
            if rc != 0:
                rep.fail("server-exit", "rspwalkd exited %s on SIGTERM: %s" % (rc, srv.tail()))
    finally:
        srvlib.cleanup(work, "server-api" if rep.failed > failed_before else None)
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
