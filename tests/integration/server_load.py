#!/usr/bin/env python3
"""tests/integration/server_load.py -- rspwalkd under load while stubs die and come back.

usage: server_load.py [--targets N] [--requests M] [--kill K] [--server BIN]
                      [--valgrind] [--label NAME]

N gdbservers (threads-s0-O0-dyn at its stop: 4 threads each) registered with one rspwalkd,
then M requests at once (threads released together: stacks of one target mostly, and every
target's stacks, the merged tree, the target list), while K of the stubs are killed and
started again on the same port.  Checks, one case line each:
  answers     every answer is a stack document (or list, tree) or a JSON {"error"} with a
              fitting status; no connection refused, reset or left without an answer
  up          the server answered GET /v1/targets every 0.25 s throughout
  reconnect   the killed targets' links come back (a new stop at the program's entry) and
              their stacks are served again
  clean-exit  SIGTERM ends the server with status 0 and, under ASan (--server
              build/asan/rspwalkd) or valgrind (--valgrind: --leak-check=full
              --errors-for-leak-kinds=definite), no error and no leak reported
Env: RSPWALK (build/release/rspwalk brings the fixtures to their stops).
"""

import argparse
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srvlib  # noqa: E402
from srvlib import Failure  # noqa: E402

VALGRIND_EXIT = 97
FIXTURE = "threads-s0-O0-dyn"


def check_answer(path, status, ctype, raw):
    """None when the answer is one the contract allows, else why not."""
    if status in srvlib.ERROR_STATUSES:
        try:
            doc = json.loads(raw)
        except ValueError:
            return "%s: %d with a body that is not JSON: %r" % (path, status, raw[:120])
        if not isinstance(doc, dict) or not isinstance(doc.get("error"), str):
            return "%s: %d without {\"error\": ...}: %r" % (path, status, raw[:120])
        return None
    if status != 200:
        return "%s: status %d: %r" % (path, status, raw[:120])
    if "format=folded" in path:
        for line in raw.decode(errors="replace").splitlines():
            if not line.rsplit(" ", 1)[-1].isdigit():
                return "%s: not a folded line: %r" % (path, line[:120])
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        return "%s: 200 with a body that is not JSON: %r" % (path, raw[:120])
    if path.startswith("/v1/targets/") and path.endswith("/stacks"):
        docs = [doc]
    elif path.startswith("/v1/stacks"):
        docs = doc.get("targets") if isinstance(doc, dict) else None
        if not isinstance(docs, list):
            return "%s: no \"targets\" list" % path
        docs = [d for d in docs if "error" not in d]
    elif path.startswith("/v1/tree"):
        return None if isinstance(doc, dict) and "tree" in doc else "%s: no \"tree\"" % path
    else:
        return None
    for d in docs:
        if not isinstance(d.get("threads"), list) or not d["threads"]:
            return "%s: a stack document without threads: %r" % (path, str(d)[:160])
        for t in d["threads"]:
            if "error" not in t and not t.get("frames"):
                return "%s: thread %s without frames or error" % (path, t.get("id"))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=int, default=64)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--kill", type=int, default=8)
    ap.add_argument("--server", default=srvlib.RSPWALKD)
    ap.add_argument("--valgrind", action="store_true")
    ap.add_argument("--label", default=None)
    args = ap.parse_args()
    label = args.label or ("server-load-%s%d" % ("valgrind-" if args.valgrind else "", args.targets))
    rep = srvlib.Report(label)
    work = srvlib.workdir(label)
    t_start = time.monotonic()
    try:
        prog = os.path.join(srvlib.FIXTURES, "x86_64", FIXTURE)
        stubs = srvlib.start_many(work, prog, args.targets, cache=os.path.join(work, "cache"))
        wrap, env = [], {}
        if args.valgrind:
            wrap = ["valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite",
                    "--show-leak-kinds=definite", "--error-exitcode=%d" % VALGRIND_EXIT,
                    "--log-file=%s" % os.path.join(work, "valgrind.log")]
        else:
            env = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:exitcode=96",
                   "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
        slow = 20.0 if args.valgrind else 1.0
        srv = srvlib.Server(work, wrap=wrap, binary=args.server, env=env,
                            args=["--max-requests", str(args.requests + 16)]).start(30 * slow)
        ids = [srv.add_target(s.target, exe=s.prog, sysroot=None, name="t%d" % i)
               for i, s in enumerate(stubs)]
        for tid in ids:
            srv.wait_state(tid, ("stopped",), 30 * slow)
        by_id = dict(zip(ids, stubs))
        rnd = random.Random(12)
        victims = rnd.sample(ids, min(args.kill, len(ids)))
        paths = []
        for i in range(args.requests):
            r = rnd.random()
            if r < 0.7:
                paths.append("/v1/targets/%s/stacks" % rnd.choice(ids))
            elif r < 0.8:
                paths.append("/v1/stacks")
            elif r < 0.9:
                paths.append("/v1/tree?format=%s" % rnd.choice(("json", "folded")))
            elif r < 0.95:
                paths.append("/v1/targets")
            else:
                paths.append("/v1/targets/%s" % rnd.choice(ids))
        # The requests walk: the first ones after registering are cold.  Some victims die
        # before the burst, some in it.
        barrier = threading.Barrier(len(paths) + 2)
        bad, statuses, lock = [], {}, threading.Lock()
        down = []
        burst_over = threading.Event()

        # What the victims' answers were: the old stop (4 threads), the restarted program at
        # its entry (1 thread) or an error; so the note shows the kills were met.
        seen = {"old stop": 0, "new program": 0, "error": 0}

        def classify(d):
            if "error" in d:
                seen["error"] += 1
            else:
                seen["old stop" if len(d.get("threads", [])) == 4 else "new program"] += 1

        def client(path):
            barrier.wait()
            try:
                st, ctype, raw = srv.request("GET", path, timeout=120 * slow)
                why = check_answer(path, st, ctype, raw)
            except OSError as exc:
                st, why = "no answer", "%s: no answer: %s" % (path, exc)
            with lock:
                statuses[st] = statuses.get(st, 0) + 1
                if why:
                    bad.append(why)
                elif st == 200 and path.startswith("/v1/stacks"):
                    for d in json.loads(raw)["targets"]:
                        if d.get("id") in victims:
                            classify(d)
                elif path.endswith("/stacks") and int(path.split("/")[3]) in victims:
                    classify(json.loads(raw) if st == 200 else {"error": st})

        def killer():
            barrier.wait()
            for tid in victims:
                time.sleep(rnd.uniform(0, 0.3 * slow))
                s = by_id[tid]
                s.kill()
                time.sleep(0.1)
                # The same port: gdbserver binds with SO_REUSEADDR; a port still held is retried.
                for _ in range(50):
                    fresh = srvlib.Stub(work, s.prog, port=s.port, tag="re%s" % tid).launch()
                    try:
                        fresh.wait_ready(5)
                        by_id[tid] = fresh
                        break
                    except Failure:
                        fresh.kill()
                        time.sleep(0.1)
                else:
                    down.append("gdbserver could not listen on port %d again" % s.port)

        def monitor():
            barrier.wait()
            while not burst_over.is_set():
                try:
                    st, _, _ = srv.request("GET", "/v1/targets", timeout=30 * slow)
                    if st != 200:
                        down.append("GET /v1/targets: %d" % st)
                except OSError as exc:
                    down.append("GET /v1/targets: %s" % exc)
                if not srv.alive():
                    down.append("rspwalkd exited (%s)" % srv.proc.returncode)
                    return
                time.sleep(0.25)

        threads = [threading.Thread(target=client, args=(p,)) for p in paths]
        threads += [threading.Thread(target=killer)]
        mon = threading.Thread(target=monitor)
        for t in threads + [mon]:
            t.start()
        t0 = time.monotonic()
        for t in threads:
            t.join()
        burst_s = time.monotonic() - t0
        burst_over.set()
        mon.join()

        def answers():
            if bad:
                raise Failure("%d of %d answers not a document or a JSON error: %s"
                              % (len(bad), len(paths), bad[0]), bad[1:10])
            return "(%d requests in %.1f s: %s; the killed targets' documents: %s)" % (
                len(paths), burst_s, ", ".join("%s x%d" % (k, v) for k, v in
                                               sorted(statuses.items(), key=str)),
                ", ".join("%s %d" % kv for kv in seen.items()))

        def up():
            if down:
                raise Failure(down[0], down[1:5])

        def reconnect():
            for tid in victims:
                srv.wait_state(tid, ("stopped",), 30 * slow)
            for tid in victims:
                doc = srv.stacks(tid)
                if not doc.get("threads"):
                    raise Failure("target %s after its stub came back: no threads" % tid)
            return "(%d stubs killed and started again)" % len(victims)

        rep.case("answers", answers)
        rep.case("up", up)
        rep.case("reconnect", reconnect)

        def clean_exit():
            rc = srv.stop(120 * slow)
            log = open(srv.log, errors="replace").read()
            if args.valgrind:
                vlog = open(os.path.join(work, "valgrind.log"), errors="replace").read()
                if rc == VALGRIND_EXIT or "definitely lost" in vlog or "Invalid " in vlog:
                    lines = [ln for ln in vlog.splitlines() if ln.strip()]
                    raise Failure("valgrind reported errors (exit %s)" % rc, lines[:40])
            for mark in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
                if mark in log:
                    i = log.index(mark)
                    raise Failure("rspwalkd: %s" % log[i:].splitlines()[0],
                                  log[i:].splitlines()[1:40])
            if rc != 0:
                raise Failure("rspwalkd exited %s on SIGTERM: %s" % (rc, srv.tail()))

        rep.case("clean-exit", clean_exit)
    except Failure as f:
        rep.fail("setup", f.summary)
    finally:
        srvlib.cleanup(work, label if rep.failed else None)
    print("%s: %.0f s" % (label, time.monotonic() - t_start), file=sys.stderr)
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
