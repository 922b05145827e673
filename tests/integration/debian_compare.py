#!/usr/bin/env python3
"""tests/integration/debian_compare.py -- rspwalk's walk of a Debian program against gdb's.

usage: debian_compare.py --exe PROG [--threads N] [--need NAME]... RSPWALK_JSON ORACLE_JSON

For programs no one here wrote (run-debian.sh), which carry no .rspwalk_expect: the checks of
compare.py that need none, on every thread, all threads reported (not only the first):
  1. gdb's walk (gdb_oracle.sh) reached the bottom of every thread, else gdb is no oracle;
  2. rspwalk's walk: JSON shape, N threads (--threads), every walk ended at the bottom, SPs
     not decreasing, the main thread (LWP = pid) ends in _start or __libc_start_main (or an
     unnamed frame of PROG: a stripped program's _start), the others in clone3 or
     start_thread; each --need NAME is some frame's function or symbol;
  3. frame by frame against gdb (compare.compare_threads: same pc, same function or alias,
     same inline / tail-call / signal kinds), every frame of gdb's included: also its
     tail-call frames in another file than the physical caller below them (a call through
     the PLT to a function that tail-calls, as PyThread_acquire_lock_timed -> sem_wait ->
     __new_sem_wait_slow64), which the summary line counts.
Exit 0 when all hold, 1 otherwise, 2 on bad input.
Python 3 standard library only.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the shared loaders and the frame-by-frame comparison)


def cross_module_tailcalls(threads):
    """How many of gdb's tail-call frames are in another file than the physical frame below
    them (their caller)."""
    count = 0
    for t in threads:
        frames = t["frames"]
        for i, f in enumerate(frames):
            if f["kind"] == "tailcall":
                caller = next((g for g in frames[i + 1:] if g["kind"] == "normal"), None)
                if caller is not None and caller["module"] != f["module"]:
                    count += 1
    return count


def check_rspwalk(ours, pid, exe, threads, needs):
    problems = []
    if threads is not None and len(ours) != threads:
        problems.append("rspwalk has %d threads, expected %d" % (len(ours), threads))
    main = compare.main_thread(ours, pid)
    names = set()
    for t in ours:
        who = "rspwalk thread %s" % t["id"]
        frames = t["frames"]
        if not frames:
            problems.append("%s: no frames" % who)
            continue
        if t["end"] != "bottom":
            problems.append("%s: walk ended with %r, not at the bottom" % (who, t["end"]))
        for i in range(1, len(frames)):
            near_signal = frames[i]["signal"] or frames[i - 1]["signal"]
            if frames[i]["sp"] < frames[i - 1]["sp"] and not near_signal:
                problems.append("%s: sp decreases from frame %d to %d" % (who, i - 1, i))
        last = frames[-1]
        if t is main:
            unnamed_exe = (last["function"] is None and last["module"] is not None
                           and os.path.realpath(last["module"]) == exe)
            if last["function"] not in compare.MAIN_BOTTOMS and not unnamed_exe:
                problems.append("%s: last frame is %s, expected one of %s"
                                % (who, last["function"], ", ".join(compare.MAIN_BOTTOMS)))
        elif last["function"] not in compare.THREAD_BOTTOMS:
            problems.append("%s: last frame is %s, expected one of %s"
                            % (who, last["function"], ", ".join(compare.THREAD_BOTTOMS)))
        for f in frames:
            names.add(f["function"])
            names.add(f["raw"].get("symbol"))
    for need in needs:
        if need not in names:
            problems.append("rspwalk: no frame of %s in any thread" % need)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", required=True, help="the program (its real path is compared)")
    ap.add_argument("--threads", type=int, default=None, help="the number of threads")
    ap.add_argument("--need", action="append", default=[], metavar="NAME",
                    help="a function (or symbol) some thread must show")
    ap.add_argument("rspwalk_json")
    ap.add_argument("oracle_json")
    args = ap.parse_args()
    docs = []
    for path in (args.rspwalk_json, args.oracle_json):
        try:
            with open(path) as f:
                docs.append(json.load(f))
        except (OSError, ValueError) as exc:
            print("debian_compare: %s: %s" % (path, exc))
            return 2
    problems = []
    try:
        ours = compare.load_rspwalk(docs[0])
        theirs = compare.load_oracle(docs[1])
    except compare.Mismatch as m:
        print(m.summary)
        return 1
    pid = docs[1].get("pid")
    for g in theirs:
        if g["end"] != "bottom":
            problems.append("no oracle: gdb thread %d ended with %r (%s)"
                            % (g["lwp"], g["end"], g.get("error") or ""))
    problems += check_rspwalk(ours, pid, os.path.realpath(args.exe), args.threads,
                              args.need)
    cross = cross_module_tailcalls(theirs)
    details = []
    by_lwp = {t["lwp"]: t for t in theirs}
    if sorted(by_lwp) != sorted(t["lwp"] for t in ours):
        problems.append("threads differ: rspwalk has LWPs %s, gdb has %s"
                        % (sorted(t["lwp"] for t in ours), sorted(by_lwp)))
    else:
        symbols = compare.Symbols()
        for t in ours:
            try:
                compare.compare_threads([t], [by_lwp[t["lwp"]]], symbols)
            except compare.Mismatch as m:
                problems.append(m.summary)
                details += m.details
    if problems:
        print(problems[0])
        for p in problems[1:]:
            print("  " + p)
        for line in details:
            print("  " + line)
        return 1
    print("compare: rspwalk matches gdb (%d threads, %d frames%s)"
          % (len(ours), sum(len(t["frames"]) for t in ours),
             ", %d of them cross-file tail-call frames" % cross if cross else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
