#!/usr/bin/env python3
"""tests/integration/tree_check.py -- rspwalk's merged tree of a stop against its walks of it.

usage: tree_check.py STACKS_JSON FOLDED DOT TREE_JSON

STACKS_JSON is `rspwalk -f json` of the stop (checked against gdb by compare.py before);
FOLDED, DOT and TREE_JSON are `rspwalk -f folded`, `-f dot` and `-f tree` of the same stop.
A thread's path is its frames reversed (outermost first), each named by its "function", or
its "pc" where it has none.  Checks:
  folded  one line a distinct path, sorted, counts summing to the number of threads, each
          path with as many lines' worth as threads on it;
  dot     STAT's header, one node a distinct prefix of the paths, one edge into each node
          but the root, every edge's bv the tasks whose path passes it, the root's edges
          covering every task;
  tree    "tasks" and "tasks_index" the threads in the document's order, the tree's nodes
          the prefixes with their task sets, the classes the leaves' task sets.
Prints the first problem on one line, then details; exit 0 when all hold, 1 otherwise.
Python 3 standard library only.
"""

import collections
import json
import re
import sys


def ranges(tasks):
    """'[0-3,5]' for {0, 1, 2, 3, 5}."""
    out, tasks = [], sorted(tasks)
    i = 0
    while i < len(tasks):
        j = i
        while j + 1 < len(tasks) and tasks[j + 1] == tasks[j] + 1:
            j += 1
        out.append(str(tasks[i]) if i == j else "%d-%d" % (tasks[i], tasks[j]))
        i = j + 1
    return "[" + ",".join(out) + "]"


def fail(why, *details):
    print(why)
    for d in details:
        print("  " + d)
    sys.exit(1)


def main():
    if len(sys.argv) != 5:
        print(__doc__.splitlines()[2])
        sys.exit(2)
    stacks = json.load(open(sys.argv[1]))
    folded = open(sys.argv[2]).read()
    dot = open(sys.argv[3]).read()
    tree = json.load(open(sys.argv[4]))

    threads = stacks["threads"]
    paths = []
    for t in threads:
        if t["end"] != "bottom":
            fail("thread %s: walk ended %s, not at the bottom" % (t["id"], t["end"]))
        paths.append(tuple(f["function"] or f["pc"] for f in reversed(t["frames"])))
    n = len(threads)

    # folded
    lines = folded.splitlines()
    if lines != sorted(lines):
        fail("folded: lines not sorted", *lines)
    got = collections.Counter()
    for line in lines:
        path, _, count = line.rpartition(" ")
        got[tuple(path.split(";"))] += int(count)
    want = collections.Counter(paths)
    if sum(got.values()) != n:
        fail("folded: counts sum to %d, not the %d threads" % (sum(got.values()), n), *lines)
    if got != want:
        fail("folded: paths differ from the walks' frames reversed",
             *["folded: %s %d" % (";".join(p), c) for p, c in sorted(got.items())],
             *["walks:  %s %d" % (";".join(p), c) for p, c in sorted(want.items())])

    # the tasks through each prefix
    through = collections.defaultdict(set)
    for task, p in enumerate(paths):
        for d in range(1, len(p) + 1):
            through[p[:d]].add(task)

    # dot
    head = ('digraph G {\n\tgraph [type="stat_4_1"];\n'
            '\tnode [shape=record,style=filled,labeljust=c,height=0.2];\n')
    if not dot.startswith(head) or not dot.endswith("}\n"):
        fail("dot: not STAT's header and footer", dot[:200])
    nodes = dict(re.findall(r'^\t(\d+) \[function="((?:[^"\\]|\\.)*)"', dot, re.M))
    edges = re.findall(r'^\t(\d+) -> (\d+) \[bv="([^"]*)",count=(\d+),label="[^"]+"\];$',
                       dot, re.M)
    if len(nodes) != len(through) + 1:
        fail("dot: %d nodes for %d distinct prefixes and the root" % (len(nodes),
                                                                      len(through)))
    if len(edges) != len(nodes) - 1 or len({e[1] for e in edges}) != len(edges):
        fail("dot: %d edges for %d nodes, or a node with two parents" % (len(edges),
                                                                         len(nodes)))
    parent = {e[1]: e[0] for e in edges}
    bvs = {e[1]: e[2] for e in edges}

    def dot_path(node):
        out = []
        while node != "0":
            out.append(nodes[node])
            node = parent[node]
        return tuple(reversed(out))

    for node in bvs:
        p = dot_path(node)
        if p not in through or bvs[node] != ranges(through[p]):
            fail("dot: edge into %s has bv %s; the walks say %s" %
                 (";".join(p), bvs[node], ranges(through.get(p, ()))))
    root_tasks = set()
    for e in edges:
        if e[0] == "0":
            for r in e[2].strip("[]").split(","):
                lo, _, hi = r.partition("-")
                root_tasks.update(range(int(lo), int(hi or lo) + 1))
    if root_tasks != set(range(n)):
        fail("dot: the root's edges cover %s, not every task" % ranges(root_tasks))

    # tree JSON
    if tree.get("version") != 1 or tree.get("tasks") != n:
        fail("tree: version %s, tasks %s for %d threads" % (tree.get("version"),
                                                            tree.get("tasks"), n))
    index = [(k["task"], k["thread"], k["pid"], k["target"]) for k in tree["tasks_index"]]
    want_index = [(i, t["id"], index[0][2], stacks["target"]) for i, t in enumerate(threads)]
    if index != want_index:
        fail("tree: tasks_index is not the threads in order", str(index), str(want_index))
    seen = {}
    stack = [((), tree["tree"])]
    while stack:
        p, node = stack.pop()
        seen[p] = node["tasks"]
        for kid in node["children"]:
            stack.append((p + (kid["function"],), kid))
    want_nodes = {p: ranges(s) for p, s in through.items()}
    want_nodes[()] = ranges(range(n))
    if seen != want_nodes:
        fail("tree: nodes or their task sets differ from the walks",
             *["tree:  %s %s" % (";".join(p), s) for p, s in sorted(seen.items())],
             *["walks: %s %s" % (";".join(p), s) for p, s in sorted(want_nodes.items())])
    classes = {tuple(c["path"]): c["tasks"] for c in tree["classes"]}
    ends = collections.defaultdict(set)
    for task, p in enumerate(paths):
        ends[p].add(task)
    if classes != {p: ranges(s) for p, s in ends.items()}:
        fail("tree: classes are not the leaves' task sets", str(classes))
    print("tree_check: %d threads, %d paths, %d nodes: folded, dot and tree agree with the "
          "walks" % (n, len(want), len(nodes)))


if __name__ == "__main__":
    main()
