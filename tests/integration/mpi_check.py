#!/usr/bin/env python3
"""tests/integration/mpi_check.py -- checks of rspwalk-mpi's trees for run-mpi.sh.

  mpi_check.py same A.json B.json       the two trees are one (the "timings" aside)
  mpi_check.py states TREE.json PIDFILE  mpi_park's 64 children: 4 branches under main, each
                                         state's chain, its tasks every 4th child
  mpi_check.py mixed TREE.json N PID...  N tasks of two processes (an rspwalkd's) first, then
                                         one task a PID, in that order
Prints one line saying what differs and exits 1 on a failure.
"""
import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    doc.pop("timings", None)
    return doc


def same(a, b):
    x, y = load(a), load(b)
    if x != y:
        for key in ("tasks", "tasks_index", "tree", "classes"):
            if x.get(key) != y.get(key):
                sys.exit(f"{a} and {b} differ in {key!r}")
        sys.exit(f"{a} and {b} differ")


# Each state's chain below main, outermost first, as mpi_park.c makes them.
CHAINS = {
    0: ["s0_a", "s0_leaf", "park"],
    1: ["s1_a", "s1_b", "s1_leaf", "park"],
    2: ["s2_leaf", "park"],
    3: ["s3_a", "s3_b", "s3_c", "s3_leaf", "park"],
}


def find(node, name):
    if node["function"] == name:
        return node
    for kid in node["children"]:
        hit = find(kid, name)
        if hit is not None:
            return hit
    return None


def states(tree_path, pid_path):
    doc = load(tree_path)
    with open(pid_path) as f:
        pids = [int(line) for line in f if line.strip()]
    n = len(pids)
    if doc["tasks"] != n:
        sys.exit(f"{doc['tasks']} tasks, not the {n} children")
    got = [t["pid"] for t in doc["tasks_index"]]
    if got != pids:
        sys.exit(f"tasks_index's pids are not the children's in file order: {got[:8]}...")
    main = find(doc["tree"], "main")
    if main is None:
        sys.exit("no node named main")
    if main["count"] != n or main["tasks"] != f"[0-{n - 1}]":
        sys.exit(f"main has count {main['count']} and tasks {main['tasks']}, not every task")
    names = sorted(k["function"] for k in main["children"])
    want = sorted(c[0] for c in CHAINS.values())
    if names != want:
        sys.exit(f"main's branches are {names}, not {want}")
    for state, chain in CHAINS.items():
        tasks = "[" + ",".join(str(i) for i in range(state, n, 4)) + "]"
        node = main
        for name in chain:
            kids = [k for k in node["children"] if k["function"] == name]
            if len(kids) != 1:
                sys.exit(f"state {state}: no single {name} under {node['function']}")
            node = kids[0]
            if node["tasks"] != tasks:
                sys.exit(f"state {state}: {name} has tasks {node['tasks']}, not {tasks}")
    # Each state's tasks end in one place (libc's pause below park): 4 classes.
    classes = sorted(c["tasks"] for c in doc["classes"])
    want = sorted("[" + ",".join(str(i) for i in range(s, n, 4)) + "]" for s in CHAINS)
    if classes != want:
        sys.exit(f"the classes' task sets are {classes}, not {want}")


def mixed(tree_path, n, pids):
    doc = load(tree_path)
    got = [t["pid"] for t in doc["tasks_index"]]
    if doc["tasks"] != n + len(pids) or got[n:] != pids or len(set(got[:n])) != 2:
        sys.exit(f"{doc['tasks']} tasks with pids {got}, not {n} of 2 processes then {pids}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "same":
        same(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "states":
        states(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "mixed":
        mixed(sys.argv[2], int(sys.argv[3]), [int(p) for p in sys.argv[4:]])
    else:
        sys.exit(__doc__)
