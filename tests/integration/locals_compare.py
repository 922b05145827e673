#!/usr/bin/env python3
"""tests/integration/locals_compare.py -- rspwalk --locals JSON against gdb's info args/locals.

usage: locals_compare.py RSPWALK.json GDB.out
Frames are matched by level and function name (inline and tail-call frames are skipped:
rspwalk lists no variables for them).  For each variable gdb prints: when gdb has a value and
rspwalk has one, they must be equal (pointers: gdb's hex prefix; gdb adds a string for char *);
gdb's "<optimized out>" must be rspwalk's "<optimized out>".  A value gdb finds that rspwalk
cannot is a note.  The fixture's own frames must have at least one variable compared.
Exit 0 on agreement, 1 with the differences on stdout (first line: a summary).
"""
import json
import re
import sys


def main():
    rs = json.load(open(sys.argv[1]))
    gdb = {}
    for line in open(sys.argv[2]):
        m = re.match(r"LOCALS (\d+) (\S+) (\S+) = (.*)$", line.rstrip("\n"))
        if m:
            gdb.setdefault(int(m.group(1)), (m.group(2), []))[1].append((m.group(3), m.group(4)))
    thread = next(t for t in rs["threads"] if t.get("stopped"))
    errors, notes, compared = [], [], 0
    for fr in thread["frames"]:
        lvl = fr["level"]
        if lvl not in gdb or fr["kind"] != "normal":
            continue
        gname, gvars = gdb[lvl]
        if fr["function"] != gname:
            errors.append("frame %d: rspwalk %s, gdb %s" % (lvl, fr["function"], gname))
            continue
        ours = {v["name"]: v for v in fr.get("locals", [])}
        for name, gval in gvars:
            if name not in ours:
                if gname in ("a", "b", "c", "d", "e", "main"):
                    errors.append("frame %d %s: %s missing (gdb: %s)" % (lvl, gname, name, gval))
                continue
            val = ours[name]["value"]
            if gval == "<optimized out>":
                if val != "<optimized out>":
                    errors.append("frame %d %s: %s = %s, gdb <optimized out>" % (lvl, gname, name, val))
                continue
            if val in ("<optimized out>", "<unavailable>"):
                notes.append("note frame %d %s: %s = %s, gdb %s" % (lvl, gname, name, val, gval))
                continue
            ok = val == gval or (val.startswith("0x") and gval.split(" ")[0] == val) \
                or (val.startswith("0x") and gval.split(" ")[-1] == val)
            if not ok:
                errors.append("frame %d %s: %s = %s, gdb %s" % (lvl, gname, name, val, gval))
            compared += 1
    for n in notes:
        print(n)
    if compared == 0:
        errors.append("no variable compared")
    if errors:
        print("%d differences with gdb (%d compared)" % (len(errors), compared))
        for e in errors:
            print(e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
