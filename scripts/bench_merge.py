#!/usr/bin/env python3
"""scripts/bench_merge.py -- the merge section of docs/bench.md: rspwalk-mpi's tree merge.

Emulated (STATBench's method, `rspwalk-mpi --emulate TASKS,30,100`): 10^3 .. 10^6 tasks over 1,
2, 4 and 8 ranks (the default fan-out, 8, and a binary tree of ranks at 8), then states
scattered over the tasks (10^5 with task sets, 10^6 in count+rep mode), BENCH_MERGE_RUNS
times each (default 3), medians: the merge's wall time on rank 0 (from the barrier after every
rank has its tree to rank 0 holding the whole one), the emulation's, and mpirun's whole run;
each tree checked identical (-f dot, byte for byte) to one rank's. Then a real run:
tests/integration/mpi_park.c's 256 processes in 4 states under 4 `gdbserver --multi` links (64
processes each) walked over 1, 2, 4 and 8 ranks, its tree checked against the known states
(tests/integration/mpi_check.py). All under `mpirun --oversubscribe --allow-run-as-root` on
this machine, however many cores it has. Loopback only; kills only what it started.

Run alone: `scripts/bench merge` (replaces this section of docs/bench.md, BENCH_OUT).
"""

import hashlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPIWALK = os.environ.get("BENCH_MPIWALK", os.path.join(TOP, "build/release/rspwalk-mpi"))
RUNS = int(os.environ.get("BENCH_MERGE_RUNS", "3"))
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root"]
BEGIN = "<!-- merge section: scripts/bench_merge.py -->"
END = "<!-- end of merge section -->"
TIMINGS = re.compile(r"^rspwalk-mpi: (\d+) ranks \(fan-out (\d+)\), (\d+) tasks: (\w+) ([0-9.]+) ms "
                     r"\(slowest rank\), merge ([0-9.]+) ms \((\d+) bytes sent", re.M)


def run_mpi(ranks, args, fanout=None):
    """One mpirun: (stdout bytes, parsed timings dict, wall seconds)."""
    cmd = MPIRUN + ["-np", str(ranks), MPIWALK] + args
    if fanout is not None:
        cmd += ["--fanout", str(fanout)]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    wall = time.monotonic() - t0
    err = p.stderr.decode(errors="replace")
    m = TIMINGS.search(err)
    if p.returncode != 0 or m is None:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd[3:]), p.returncode, err[:300]))
    return p.stdout, {"phase_ms": float(m.group(5)), "merge_ms": float(m.group(6)),
                      "bytes": int(m.group(7)), "tasks": int(m.group(3))}, wall


def emulated():
    rows = []
    for tasks in (10**3, 10**4, 10**5, 10**6):
        arg = ["--emulate", "%d,30,100" % tasks, "-f", "dot"]
        ref = None
        for ranks, fanout in ((1, None), (2, None), (4, None), (8, None), (8, 2)):
            merge, phase, wall, digest, nbytes = [], [], [], None, 0
            for _ in range(RUNS):
                out, t, w = run_mpi(ranks, arg, fanout)
                merge.append(t["merge_ms"])
                phase.append(t["phase_ms"])
                wall.append(w)
                nbytes = t["bytes"]
                digest = hashlib.sha256(out).hexdigest()
            if ref is None:
                ref = digest
            rows.append({"tasks": tasks, "ranks": ranks, "fanout": fanout or 8,
                         "merge_ms": statistics.median(merge),
                         "emulate_ms": statistics.median(phase),
                         "wall_s": statistics.median(wall), "bytes": nbytes,
                         "same": digest == ref})
            print("bench merge: %d tasks, %d ranks: merge %.1f ms" % (tasks, ranks, rows[-1]["merge_ms"]),
                  file=sys.stderr)
    return rows


def scattered():
    """Task G in class G mod 100 (`,scatter`): task sets of many ranges, with and without
    count+rep."""
    rows = []
    for tasks, extra in ((10**5, []), (10**6, ["--countrep"])):
        arg = ["--emulate", "%d,30,100,scatter" % tasks, "-f", "dot"] + extra
        ref = None
        for ranks in (1, 8):
            merge, wall, digest, nbytes = [], [], None, 0
            for _ in range(RUNS):
                out, t, w = run_mpi(ranks, arg)
                merge.append(t["merge_ms"])
                wall.append(w)
                nbytes = t["bytes"]
                digest = hashlib.sha256(out).hexdigest()
            if ref is None:
                ref = digest
            rows.append({"tasks": tasks, "ranks": ranks, "mode": " ".join(extra) or "task sets",
                         "merge_ms": statistics.median(merge), "wall_s": statistics.median(wall),
                         "bytes": nbytes, "same": digest == ref})
    return rows


def wait_port(log):
    for _ in range(200):
        try:
            with open(log) as f:
                m = re.search(r"^Listening on port (\d+)$", f.read(), re.M)
            if m:
                return int(m.group(1))
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError("gdbserver --multi did not listen: %s" % open(log).read()[:300])


def real(work, nproc=256, links=4):
    """mpi_park's NPROC processes under LINKS gdbserver --multi links over 1..8 ranks."""
    park = os.path.join(work, "park")
    subprocess.run(["cc", "-O0", "-g", "-fno-omit-frame-pointer", "-o", park,
                    os.path.join(TOP, "tests/integration/mpi_park.c")], check=True)
    pidfile = os.path.join(work, "pids")
    started = []
    try:
        with open(pidfile, "w") as out:
            started.append(subprocess.Popen([park, str(nproc)], stdout=out))
        pids = []
        for _ in range(400):
            with open(pidfile) as f:
                pids = [int(x) for x in f.read().split()]
            if len(pids) == nproc and all(
                    open("/proc/%d/stat" % p).read().split()[2] == "S" for p in pids):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("mpi_park's %d children not all asleep" % nproc)
        lines = []
        per = nproc // links
        for l in range(links):
            log = os.path.join(work, "gs%d.log" % l)
            with open(log, "w") as lf:
                started.append(subprocess.Popen(["gdbserver", "--multi", "127.0.0.1:0"],
                                                stdin=subprocess.DEVNULL, stdout=lf, stderr=lf))
            port = wait_port(log)
            lines.append("127.0.0.1:%d --attach %s --exe %s --sysroot /" % (
                port, ",".join(str(p) for p in pids[l * per:(l + 1) * per]), park))
        targets = os.path.join(work, "targets")
        with open(targets, "w") as f:
            f.write("\n".join(lines) + "\n")
        rows = []
        for ranks in (1, 2, 4, 8):
            walk, merge, wall = [], [], []
            for _ in range(RUNS):
                out, t, w = run_mpi(ranks, ["--targets", targets, "-f", "json"])
                walk.append(t["phase_ms"])
                merge.append(t["merge_ms"])
                wall.append(w)
            tree = os.path.join(work, "tree%d.json" % ranks)
            with open(tree, "wb") as f:
                f.write(out)
            chk = subprocess.run(["python3", os.path.join(TOP, "tests/integration/mpi_check.py"),
                                  "states", tree, pidfile], capture_output=True, text=True)
            rows.append({"ranks": ranks, "walk_ms": statistics.median(walk),
                         "merge_ms": statistics.median(merge), "wall_s": statistics.median(wall),
                         "ok": chk.returncode == 0, "why": (chk.stderr or chk.stdout).strip()})
            print("bench merge: real %d processes, %d ranks: walk %.0f ms" % (
                nproc, ranks, rows[-1]["walk_ms"]), file=sys.stderr)
        return rows
    finally:
        for p in reversed(started):
            p.send_signal(signal.SIGKILL if p.args[0] == park else signal.SIGTERM)
            p.wait()


def section(emu, realrows, errors, scat=()):
    L = [BEGIN, "## The merged tree over MPI (rspwalk-mpi)", "",
         "Generated by `scripts/bench merge` (scripts/bench_merge.py) on %s; %d cores; %s." % (
             time.strftime("%Y-%m-%d", time.gmtime()), os.cpu_count(),
             subprocess.run(["mpirun", "--version"], capture_output=True, text=True)
             .stdout.splitlines()[0]),
         "Every rank is a process on this machine (`mpirun --oversubscribe`): 8 ranks share 2",
         "cores, so the emulation's time grows with the ranks; the merge is the wall time on",
         "rank 0 from the barrier after every rank holds its tree to rank 0 holding the whole",
         "one (packing, sending, reading back and merging at every level). Medians of %d runs." % RUNS,
         "Load average (1 min) %.1f at the start, %.1f at the end: other work on the machine" % (
             LOAD_START, os.getloadavg()[0]),
         "takes the same cores, and the times with it.", ""]
    judged = [r for r in emu if r["tasks"] == 10**6 and r["ranks"] == 8 and r["fanout"] == 8]
    if judged:
        j = judged[0]
        L += ["Judged: 10^6 emulated tasks, depth 30, 100 classes, merged over 8 ranks in under 3 s,",
              "the tree identical to one rank's: merge %.0f ms, tree %s one rank's: %s. The whole" % (
                  j["merge_ms"], "identical to" if j["same"] else "DIFFERENT from",
                  "met" if j["same"] and j["merge_ms"] < 3000.0 else "NOT met"),
              "`mpirun` run took %.2f s (Open MPI's start-up, 8 ranks emulating 125000 tasks each on" % j["wall_s"],
              "2 cores, the merge, writing the dot), %s." % (
                  "also under 3 s" if j["wall_s"] < 3.0 else "over 3 s on a loaded machine"), ""]
    L += ["Emulated (`--emulate TASKS,30,100 -f dot`; task G in class G x 100 / TASKS):", "",
          "| tasks | ranks | fan-out | merge ms | emulate ms (slowest rank) | bytes sent | whole run s | tree = 1 rank's |",
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in emu:
        L.append("| %d | %d | %d | %.1f | %.1f | %d | %.2f | %s |" % (
            r["tasks"], r["ranks"], r["fanout"], r["merge_ms"], r["emulate_ms"], r["bytes"],
            r["wall_s"], "yes" if r["same"] else "NO"))
    L += [""]
    if scat:
        L += ["Scattered (`--emulate TASKS,30,100,scatter`: task G in class G mod 100, so a class's",
              "task set is TASKS / 100 ranges; `--countrep` keeps a count and a representative):", "",
              "| tasks | mode | ranks | merge ms | bytes sent | whole run s | tree = 1 rank's |",
              "| ---: | --- | ---: | ---: | ---: | ---: | --- |"]
        for r in scat:
            L.append("| %d | %s | %d | %.1f | %d | %.2f | %s |" % (
                r["tasks"], r["mode"], r["ranks"], r["merge_ms"], r["bytes"], r["wall_s"],
                "yes" if r["same"] else "NO"))
        L += [""]
    if realrows:
        L += ["Real: 256 processes of tests/integration/mpi_park.c (4 states) under 4 "
              "`gdbserver --multi` links, 64 attached each (`--targets FILE -f json`):", "",
              "| ranks | walk ms (slowest rank) | merge ms | whole run s | branches and task sets |",
              "| ---: | ---: | ---: | ---: | --- |"]
        for r in realrows:
            L.append("| %d | %.0f | %.1f | %.2f | %s |" % (
                r["ranks"], r["walk_ms"], r["merge_ms"], r["wall_s"],
                "as known" if r["ok"] else "WRONG: " + r["why"][:80]))
        L += [""]
    if errors:
        L += ["Not measured:", ""] + ["- " + e for e in errors] + [""]
    L += ["Beside STAT's published figures (LLNL's STAT over MRNet with Dyninst's walker):",
          "STATBench's emulation merged 131072 tasks in under 3 s; the full BlueGene/L, 208K",
          "processes under 1664 tool daemons; runs of over 10^6 MPI tasks reported. Those are",
          "merges over a network of real nodes; these are ranks on one 2-core machine, which",
          "measures the tree's packing and merging, not a network's latency.", "", END]
    return L


def splice(doc_text, lines):
    block = "\n".join(lines)
    if BEGIN in doc_text and END in doc_text:
        head, rest = doc_text.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return doc_text.rstrip("\n") + "\n\n" + block + "\n"


LOAD_START = 0.0


def run():
    """The section's lines; what could not be measured is listed in it."""
    global LOAD_START
    LOAD_START = os.getloadavg()[0]
    errors, emu, realrows = [], [], []
    if shutil.which("mpirun") is None or not os.access(MPIWALK, os.X_OK):
        return section([], [], ["mpirun or %s missing (scripts/deps; make all)" % MPIWALK])
    scat = []
    try:
        emu = emulated()
        scat = scattered()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        errors.append("emulated: %s" % exc)
    with tempfile.TemporaryDirectory() as work:
        try:
            realrows = real(work)
        except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
            errors.append("real 256 processes: %s" % exc)
    return section(emu, realrows, errors, scat)


def main(out):
    lines = run()
    try:
        with open(out) as f:
            text = f.read()
    except OSError:
        text = "# rspwalk benchmarks\n"
    with open(out + ".tmp", "w") as f:
        f.write(splice(text, lines))
    os.replace(out + ".tmp", out)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(os.environ.get("BENCH_OUT", os.path.join(TOP, "docs/bench.md"))))
