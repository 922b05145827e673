#!/usr/bin/env python3
"""tests/integration/sample_check.py -- checks of rspwalk --sample output (run-sample.sh).

  sample_check.py shares FOLDED          the share_70/share_20/share_10 shares within 3 points
  sample_check.py folded FOLDED          every line "frame;frame;... COUNT", no empty frame
  sample_check.py parked FOLDED N        N parked threads: one stack through parked(), counted
                                         N times for each sample of main's
  sample_check.py json JSON [MIN_RATE [MIN_REUSED]]
                                         the profile's counters: every walk to the bottom, none
                                         failed, no stop missed, no stub brought back in step
                                         (QEMU user: stats.resyncs 0, no desync), the tree's
                                         counts add up; at least MIN_REUSED (a fraction) of the
                                         walks taken again
  sample_check.py threads JSON PARKED WORKERS
                                         a program sampled from its first instruction: its
                                         1 + PARKED + WORKERS threads, created while it was
                                         sampled, all found and walked through parked() and
                                         worker(); the profile's counters as with json
Prints one line; exits 1 when a check fails.
"""
import json
import sys

TRUTH = {"share_70": 70.0, "share_20": 20.0, "share_10": 10.0}
TOLERANCE = 3.0


def folded_lines(path):
    out = []
    for n, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit() or int(count) <= 0:
            raise ValueError("line %d is not 'frame;...;frame COUNT': %r" % (n, line[:120]))
        frames = stack.split(";")
        if any(f == "" for f in frames):
            raise ValueError("line %d has an empty frame: %r" % (n, line[:120]))
        out.append((frames, int(count)))
    return out


def shares(path):
    got = {f: 0 for f in TRUTH}
    for frames, count in folded_lines(path):
        for f in TRUTH:
            if f in frames:
                got[f] += count
    total = sum(got.values())
    if total == 0:
        return False, "no sample in share_70, share_20 or share_10"
    pct = {f: 100.0 * got[f] / total for f in got}
    text = ", ".join("%s %.1f%% (%d)" % (f, pct[f], got[f]) for f in TRUTH)
    bad = [f for f in TRUTH if abs(pct[f] - TRUTH[f]) > TOLERANCE]
    if bad:
        return False, "%s: %s off by more than %.0f points" % (text, ", ".join(bad), TOLERANCE)
    return True, "%s of %d samples in them" % (text, total)


def folded(path):
    lines = folded_lines(path)
    return True, "%d distinct stacks, %d samples" % (len(lines), sum(c for _, c in lines))


def parked(path, n):
    lines = folded_lines(path)
    stacks = [(f, c) for f, c in lines if "parked" in f]
    mains = sum(c for f, c in lines if "main" in f and "parked" not in f)
    if len(stacks) != 1:
        return False, "%d distinct stacks through parked(), not 1: %s" % (
            len(stacks), "; ".join(";".join(f) for f, _ in stacks[:3]))
    count = stacks[0][1]
    text = "%d walks of %d parked threads in %d samples, all %s" % (count, n, mains,
                                                                    ";".join(stacks[0][0]))
    if count != n * mains:
        return False, text + ": not %d each" % n
    return True, text


def profile(path, min_rate=0.0, min_reused=0.0):
    d = json.load(open(path))
    st = d["stats"]
    problems = []
    if d["samples"] <= 0:
        problems.append("no sample")
    # QEMU user mode: a signal waits until the thread stopped last is out of
    # the stub, so the stub is never out of step (stats.resyncs), and no
    # walk may fail or end short.
    resyncs = st.get("resyncs", 0)
    short = st["walks"] - st["walks_failed"] - st["walks_bottom"]
    if st["walks_failed"] or short or st["stops_failed"] or resyncs:
        problems.append("%d walks failed and %d of %d did not reach the bottom, %d stops "
                        "missed, %d stub resyncs" % (st["walks_failed"], short, st["walks"],
                                                    st["stops_failed"], resyncs))
    # The root counts every walk that succeeded once (3D: a sample a thread).
    if d["tree"]["count"] != st["walks"] - st["walks_failed"]:
        problems.append("the tree's root counts %d, %d walks" % (d["tree"]["count"], st["walks"]))
    if st.get("walks_reused", 0) < min_reused * st["walks"]:
        problems.append("%d of %d walks taken again, fewer than %.0f%%" %
                        (st.get("walks_reused", 0), st["walks"], 100 * min_reused))
    if st["rate"] < min_rate:
        problems.append("%.0f samples/s, fewer than %.0f" % (st["rate"], min_rate))
    text = ("%d samples in %.2f s (%.0f/s, stop by %s), %.2f round trips a sample, %d walks "
            "(%d taken again), %d threads running not walked, %d stub resyncs" %
            (d["samples"], d["seconds"], st["rate"], st["stop"], st["round_trips_per_sample"],
             st["walks"], st.get("walks_reused", 0), st["threads_running"], resyncs))
    return not problems, text + ("; " + "; ".join(problems) if problems else "")


def task_count(ranges):
    """The tasks of a set written "[0-2,5]"."""
    n = 0
    for part in ranges.strip("[]").split(","):
        if part:
            lo, _, hi = part.partition("-")
            n += int(hi or lo) - int(lo) + 1
    return n


def threads(path, parked_n, workers_n):
    ok, text = profile(path)
    d = json.load(open(path))
    problems = [] if ok else ["counters: " + text]
    want = 1 + parked_n + workers_n
    if d["tasks"] != want:
        problems.append("%d threads found, not %d" % (d["tasks"], want))
    seen = {}

    def visit(node):
        if node.get("function") in ("parked", "worker"):
            seen[node["function"]] = max(seen.get(node["function"], 0),
                                         task_count(node["tasks"]))
        for c in node.get("children", []):
            visit(c)
    visit(d["tree"])
    for f, n in (("parked", parked_n), ("worker", workers_n)):
        if seen.get(f, 0) != n:
            problems.append("%d threads walked through %s(), not %d" % (seen.get(f, 0), f, n))
    head = "%d threads found (%d parked, %d workers created after the first sample), %s" % (
        d["tasks"], seen.get("parked", 0), seen.get("worker", 0), text)
    return not problems, head + ("; " + "; ".join(problems) if problems else "")


def main():
    what, path = sys.argv[1], sys.argv[2]
    try:
        if what == "shares":
            ok, text = shares(path)
        elif what == "folded":
            ok, text = folded(path)
        elif what == "parked":
            ok, text = parked(path, int(sys.argv[3]))
        elif what == "threads":
            ok, text = threads(path, int(sys.argv[3]), int(sys.argv[4]))
        else:
            ok, text = profile(path, float(sys.argv[3]) if len(sys.argv) > 3 else 0.0,
                               float(sys.argv[4]) if len(sys.argv) > 4 else 0.0)
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        ok, text = False, "%s: %s" % (path, e)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
