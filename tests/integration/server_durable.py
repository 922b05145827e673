#!/usr/bin/env python3
"""tests/integration/server_durable.py -- rspwalkd killed mid-sample loses nothing it reported.

One rspwalkd on a --db in a temporary directory gets a stopped fixture (threads-s0-O0-dyn at its
stop: two walks, so the snapshot history has something) and a running one (server_spin.c),
then samples the running one (POST /v1/samples, 50 Hz for 30 s).  While the run goes, its
progress is read from GET /v1/samples/ID and the events stream; after at least MIN_TICKS
ticks reported stored, the server gets SIGKILL.  A new rspwalkd on the same --db must have:
  targets     the same targets (ids, TARGET strings), their links up again (the sampled
              one after its inferior stops: gdbserver takes no new client while it runs)
  snapshots   every snapshot listed before the kill
  sample      the run, marked "interrupted", with at least as many ticks stored as the last
              progress reported, and its stacks served (format=json and folded)
Run by run-server-durable.sh (run-all).  Env: RSPWALKD, RSPWALK.
"""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srvlib  # noqa: E402
from srvlib import Failure  # noqa: E402

MIN_TICKS = 20


def ticks_of(obj, key="ticks"):
    """The stored-tick count of a sample record (its "ticks": stacks in the store) or of a
    "sample" event (its "stored"; its "ticks" counts the ticks tried), or None."""
    if isinstance(obj, dict) and isinstance(obj.get(key), int):
        return obj[key]
    return None


def snapshot_ids(srv, tid):
    doc = srv.json("GET", "/v1/targets/%s/snapshots" % tid, expect=200)[1]
    items = doc.get("snapshots", []) if isinstance(doc, dict) else doc
    return [s["id"] for s in items]


def main():
    rep = srvlib.Report("server-durable")
    work = srvlib.workdir("server-durable")
    db = os.path.join(work, "store", "rspwalkd.db")
    state = {}
    try:
        stopped = srvlib.Stub(work, os.path.join(srvlib.FIXTURES, "x86_64", "threads-s0-O0-dyn"),
                              tag="threads").start()
        spin = srvlib.Stub(work, srvlib.build_spin(os.path.join(work, "bin")), tag="spin").start()
        state["spin"] = spin
        srvlib.to_stop(stopped, os.path.join(work, "cache"))

        def before_kill():
            srv = srvlib.Server(work, db=db, name="first").start()
            state["srv"] = srv
            a = srv.add_target(stopped.target, exe=stopped.prog, sysroot=None, name="stopped")
            b = srv.add_target(spin.target, exe=spin.prog, sysroot=None, name="spin")
            state["ids"] = {a: stopped.target, b: spin.target}
            state["a"], state["b"] = a, b
            srv.wait_state(a, ("stopped",))
            srv.wait_state(b, ("stopped",))
            state["doc_a"] = srv.stacks(a)
            srv.stacks(a)
            srv.stacks(b)
            state["snaps"] = {a: snapshot_ids(srv, a), b: snapshot_ids(srv, b)}
            if not state["snaps"][a]:
                raise Failure("no snapshot listed for target %s after two walks" % a)
            srv.json("POST", "/v1/targets/%s/resume" % b, expect=None)
            srv.wait_state(b, ("running",), 10)
            srvlib.wait_for(lambda: len(spin.task_states()) == 4, 10)
            events = srvlib.Events(srv)
            st, doc = srv.json("POST", "/v1/samples", {"targets": [b], "hz": 50, "seconds": 30})
            if st not in (200, 201, 202) or not isinstance(doc, dict) or "id" not in doc:
                raise Failure("POST /v1/samples: %d %r" % (st, doc))
            sid = state["sid"] = doc["id"]
            reported = 0
            t0 = time.monotonic()
            while time.monotonic() - t0 < 20:
                st, rec = srv.json("GET", "/v1/samples/%s" % sid)
                if st != 200:
                    raise Failure("GET /v1/samples/%s while it runs: %d %r" % (sid, st, rec))
                n = ticks_of(rec)
                if n is None:
                    raise Failure("GET /v1/samples/%s: no tick count in %r" % (sid, rec))
                reported = max(reported, n)
                if reported >= MIN_TICKS and time.monotonic() - t0 > 1.0:
                    break
                time.sleep(0.05)
            # Progress the events stream reported counts as reported too.
            with events.lock:
                for ev, data in events.events:
                    try:
                        obj = json.loads(data)
                    except ValueError:
                        continue
                    if ev == "sample" and isinstance(obj, dict) and obj.get("id") == sid:
                        reported = max(reported, ticks_of(obj, "stored") or 0)
            events.close()
            if reported < MIN_TICKS:
                raise Failure("sample %s: %d ticks reported after 20 s, expected %d"
                              % (sid, reported, MIN_TICKS))
            srv.kill9()
            state["reported"] = reported
            return "(%d ticks reported stored, then SIGKILL)" % reported

        if not rep.case("sample-then-kill", before_kill):
            return 1
        srv = srvlib.Server(work, db=db, name="second").start()

        def targets_back():
            listed = {t["id"]: t["target"] for t in srv.targets()}
            if listed != state["ids"]:
                raise Failure("targets after the restart %s, before %s" % (listed, state["ids"]))
            srv.wait_state(state["a"], ("stopped",))
            # The sampled target was most likely running when the server died: gdbserver
            # (all-stop) takes no new client while the inferior it resumed for a client that
            # went away runs; it listens again at the inferior's next stop.  A SIGINT is that
            # stop; the link must then come back by itself (reconnect with backoff).
            note = ""
            try:
                srv.wait_state(state["b"], ("stopped", "running"), 3)
            except Failure:
                os.kill(state["spin"].pid, signal.SIGINT)
                srv.wait_state(state["b"], ("stopped",), 30)
                note = "(the sampled target's link back after a SIGINT stopped it)"
            doc = srv.stacks(state["a"])
            if srvlib.frames_key(doc) != srvlib.frames_key(state["doc_a"]):
                raise Failure("target %s's stacks after the restart differ from before" % state["a"])
            if len(srv.stacks(state["b"]).get("threads", [])) != 4:
                raise Failure("target %s (server_spin): not 4 threads after the restart"
                              % state["b"])
            return note

        def snapshots_back():
            for tid, ids in state["snaps"].items():
                now = snapshot_ids(srv, tid)
                lost = sorted(set(ids) - set(now))
                if lost:
                    raise Failure("target %s: snapshots %s lost" % (tid, lost))
            return "(%d snapshots)" % sum(len(v) for v in state["snaps"].values())

        def sample_back():
            sid = state["sid"]
            rec = srv.json("GET", "/v1/samples/%s" % sid, expect=200)[1]
            if rec.get("state") != "interrupted":
                raise Failure("sample %s: state %r after the restart, expected interrupted"
                              % (sid, rec.get("state")))
            n = ticks_of(rec)
            if n is None or n < state["reported"]:
                raise Failure("sample %s: %r ticks stored, %d were reported before the kill"
                              % (sid, n, state["reported"]))
            doc = srv.json("GET", "/v1/samples/%s?format=json" % sid, expect=200)[1]
            tree = doc.get("tree") if isinstance(doc, dict) else None
            root = tree.get("tree", tree) if isinstance(tree, dict) else {}
            got = root.get("count")
            if not isinstance(got, int) or got < state["reported"]:
                raise Failure("sample %s?format=json: the tree's root counts %r, %d ticks were "
                              "reported before the kill" % (sid, got, state["reported"]))
            st, ctype, raw = srv.request("GET", "/v1/samples/%s?format=folded" % sid)
            total = sum(int(line.rsplit(" ", 1)[1]) for line in raw.decode().splitlines()
                        if line.strip())
            if st != 200 or total < state["reported"]:
                raise Failure("sample %s?format=folded: %d, counts sum to %d, %d reported"
                              % (sid, st, total, state["reported"]))
            return "(%d ticks stored, %d reported)" % (n, state["reported"])

        rep.case("targets-back", targets_back)
        rep.case("snapshots-back", snapshots_back)
        rep.case("sample-back", sample_back)
        rc = srv.stop()
        if rc != 0:
            rep.fail("server-exit", "rspwalkd exited %s on SIGTERM: %s" % (rc, srv.tail()))
    except Failure as f:
        rep.fail("setup", f.summary)
    finally:
        srvlib.cleanup(work, "server-durable" if rep.failed else None)
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
