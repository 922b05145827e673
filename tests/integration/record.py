"""tests/integration/record.py -- one integration case's record for docs/comparison.md.

compare.py --record FILE calls write() after its checks, whatever their outcome: the case
(label, arch, stub, fixture, the steppers rspwalk ran with, what the test checked against),
the test's result, and for every thread both walks, whether each shows the stack the fixture
expects, whether they are the same frame for frame, and a verdict:

  agree          the same frames (compare.py's rules), and the expected stack
  gdb-wrong      they differ; rspwalk shows the expected stack, gdb does not
  rspwalk-wrong  they differ; gdb shows the expected stack, rspwalk does not
  differ         they differ, yet both show the expected stack (a difference outside the
                 fixture's own frames: to be judged from the evidence)
  both-wrong     neither shows the expected stack (the same frames or not)
  no-gdb         gdb gave no walk at all (crashed, timed out); rspwalk's stands alone
  failed         rspwalk gave no walk (the case failed before the comparison)

"Shows the expected stack" is compare.py's check_expectation for the thread (the fixture's
own frames in order, the stop function on top) and no frame up to main that is no code
(compare.unnamed_frame: "??" outside every library), plus, for rspwalk, its invariants
(ended at the bottom, SPs outward); for gdb, a walk that ended at the bottom rather than
with an error.
scripts/comparison turns a directory of records into the table.  Not a check: compare.py's
exit status alone decides the case.
"""

import json
import os

import compare

SCHEMA = 1


def stack_text(frames, limit=24):
    """Labels of FRAMES, runs of one name as NAME*N, "??" with its pc, virtual frames marked;
    at most LIMIT items."""
    items = []
    for f in frames:
        name = compare.label(f)
        if name == "??":
            name = "??(0x%x)" % f["pc"]
        if f["kind"] in compare.VIRTUAL:
            name += "[%s]" % f["kind"]
        if items and items[-1][0] == name:
            items[-1][1] += 1
        else:
            items.append([name, 1])
    words = [n if c == 1 else "%s*%d" % (n, c) for n, c in items]
    if len(words) > limit:
        words = words[:limit] + ["... (%d frames)" % len(frames)]
    return " ".join(words)


def expect_names(exp):
    names = set(exp["main"])
    for t in exp["threads"]:
        names.update(t)
    names.discard(compare.SIGNAL)
    return names


def expectation_problem(t, is_main, exp, names):
    """Why thread T does not show what the fixture expects of it (None when it does), and
    the expected stack it was held against."""
    got = compare.fixture_frames(t["frames"], names)
    if is_main:
        want = exp["main"]
        if got != want:
            return "fixture frames %s" % (" ".join(got) or "none"), want
        top = compare.label(t["frames"][0]) if t["frames"] else None
        if exp["stop"] == 0 and top != want[0]:
            return "frame 0 is %s" % top, want
        if exp["stop"] == 1 and top in names:
            return "frame 0 is %s, not libc" % top, want
        return None, want
    if got in exp["threads"]:
        return None, got
    return "fixture frames %s" % (" ".join(got) or "none"), None


def side(t, is_main, exp, names, exe, rspwalk):
    """One walk of one thread: its stack, how it ended, whether it is right and why not."""
    why, want = expectation_problem(t, is_main, exp, names)
    if why is None:
        if rspwalk:
            why = compare.thread_invariant_problem(t, is_main, exe)
        elif t["end"] != "bottom":
            why = "walk ended: %s%s" % (t["end"], ": " + t["error"] if t.get("error") else "")
        elif compare.unnamed_frame(t["frames"], exe):
            why = "%s is no function's" % compare.unnamed_frame(t["frames"], exe)
    out = {"stack": stack_text(t["frames"]), "end": t["end"], "ok": why is None, "why": why,
           "frames": len(t["frames"])}
    if t.get("error"):
        out["error"] = t["error"]
    if rspwalk:
        counts = {}
        for f in t["frames"][1:]:
            name = f["raw"].get("stepper")
            if name:
                counts[name] = counts.get(name, 0) + 1
        out["steppers"] = counts
    return out, want


def verdict(ours, theirs, same):
    if ours is None:
        return "failed"
    if theirs is None:
        return "no-gdb"
    if ours["ok"] and same:
        return "agree"
    if ours["ok"] and theirs["ok"]:
        return "differ"
    if ours["ok"]:
        return "gdb-wrong"
    if theirs["ok"] and not same:
        return "rspwalk-wrong"
    return "both-wrong"


def load_missing(args, state):
    """What compare.py's checks stopped before loading, for the record."""
    exe = args.exe
    if state["exp"] is None:
        state["exp"] = compare.read_expectation(exe)
    paths = list(args.files)
    ours_path = paths[0] if paths and not args.oracle_only else None
    gdb_path = args.gdb_json if args.expect_only else (paths[-1] if paths else None)
    if state["ours"] is None and ours_path:
        with open(ours_path) as f:
            state["ours"] = compare.load_rspwalk(json.load(f))
        if args.names_from:
            compare.name_from(state["ours"], exe, args.names_from)
    if state["oracle"] is None and gdb_path and os.path.exists(gdb_path):
        with open(gdb_path) as f:
            doc = json.load(f)
        state["oracle"] = compare.load_oracle(doc)
        if state["pid"] is None:
            state["pid"] = doc.get("pid")
    if state["pid"] is None and state["ours"]:
        pids = [t["pid"] for t in state["ours"] if t["pid"] is not None]
        state["pid"] = pids[0] if pids else None


def threads_of(args, state):
    exp, ours, oracle, pid = state["exp"], state["ours"], state["oracle"], state["pid"]
    exe = os.path.realpath(args.exe)
    names = expect_names(exp)
    symbols = compare.Symbols()
    by_lwp = {}
    for t in ours or []:
        by_lwp.setdefault(t["lwp"], [None, None])[0] = t
    for g in oracle or []:
        by_lwp.setdefault(g["lwp"], [None, None])[1] = g
    main_lwp = None
    for group in (ours, oracle):
        if group:
            main_lwp = compare.main_thread(group, pid)["lwp"]
            break
    rows = []
    for lwp in sorted(by_lwp, key=lambda n: (n != main_lwp, n)):
        t, g = by_lwp[lwp]
        is_main = lwp == main_lwp
        row = {"lwp": lwp, "thread": "main" if is_main else None}
        ours_side = theirs_side = None
        want = None
        if t is not None:
            ours_side, want = side(t, is_main, exp, names, exe, True)
        if g is not None:
            theirs_side, gwant = side(g, is_main, exp, names, exe, False)
            want = want or gwant
        if not is_main:
            row["thread"] = want[0] if want else "lwp %d" % lwp
        row["expected"] = " ".join(want) if want else None
        row["rspwalk"], row["gdb"] = ours_side, theirs_side
        row["same"] = None
        if t is not None and g is not None:
            first, _ = compare.diff_thread(t, g, symbols)
            row["same"] = first is None
            row["diff"] = first
        row["verdict"] = verdict(ours_side, theirs_side, row["same"])
        rows.append(row)
    return rows


def write(args, state, status, summary):
    meta = dict(kv.split("=", 1) for kv in args.meta if "=" in kv)
    rec = {
        "schema": SCHEMA,
        "fixture": os.path.basename(args.exe),
        "steppers": args.steppers or "default",
        "checked_against": "expect" if args.expect_only else "gdb",
        "result": "PASS" if status == 0 else "FAIL",
        "summary": summary.splitlines()[0] if summary else "",
        "threads": [],
    }
    rec.update(meta)
    if args.failed is None:
        try:
            load_missing(args, state)
            rec["threads"] = threads_of(args, state)
        except (compare.Mismatch, OSError, ValueError, KeyError) as exc:
            rec["record_error"] = getattr(exc, "summary", str(exc))
    if not rec["threads"]:
        rec["threads"] = [{"thread": "all", "verdict": "failed", "rspwalk": None, "gdb": None,
                           "expected": None, "same": None}]
    os.makedirs(os.path.dirname(os.path.abspath(args.record)), exist_ok=True)
    with open(args.record, "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
        f.write("\n")
