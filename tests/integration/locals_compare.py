#!/usr/bin/env python3
"""tests/integration/locals_compare.py -- rspwalk --locals JSON against gdb's info args/locals.

usage: locals_compare.py RSPWALK.json GDB.out [--require F,...] [--inline F,...]
Frames are matched by level and function name; physical and inline frames are compared
(tail-call and signal frames are skipped: rspwalk lists no variables for them).  gdb may list
a name twice in one frame: GCC moves an inlined function's locals into a lexical block, and gdb
adds an optimized-out copy of each from the abstract instance; the first (innermost) one is the
binding `print NAME` shows and the one compared, as rspwalk lists each variable once.
For each variable gdb prints: when gdb has a value and rspwalk has one, they must be equal
(pointers: gdb's hex prefix; gdb adds a string for char *); gdb's "<optimized out>" must be
rspwalk's "<optimized out>".  A value gdb finds that rspwalk cannot is a note.  A variable
rspwalk lists that gdb's info commands leave out (gdb skips locals whose constant value is a
block: floats, doubles) is compared with gdb's `print` of it (PRINT lines, locals_gdb.py).  In
the test programs' own frames (chain: a-e and main, locals_inline.c: lv_*) every variable gdb
lists must be listed by rspwalk and no other, and at least one variable must be compared.
--require F,...: each function F must have a frame in both with a variable compared equal.
--inline F,...: rspwalk's frames of each function F must be inline frames.
Exit 0 on agreement, 1 with the differences on stdout (first line: a summary).
"""
import json
import re
import sys

OWN = ("a", "b", "c", "d", "e", "main")


def own(name):
    return name in OWN or name.startswith("lv_")


def opt_list(argv, flag):
    if flag in argv:
        i = argv.index(flag)
        return [x for x in argv[i + 1].split(",") if x]
    return []


def main():
    argv = sys.argv[1:]
    require, inline = opt_list(argv, "--require"), opt_list(argv, "--inline")
    rs = json.load(open(argv[0]))
    gdb, printed = {}, {}
    for line in open(argv[1]):
        m = re.match(r"(LOCALS|PRINT) (\d+) (\S+) (\S+) = (.*)$", line.rstrip("\n"))
        if m and m.group(1) == "LOCALS":
            gdb.setdefault(int(m.group(2)), (m.group(3), []))[1].append((m.group(4), m.group(5)))
        elif m:
            printed[(int(m.group(2)), m.group(4))] = m.group(5)
    thread = next(t for t in rs["threads"] if t.get("stopped"))
    errors, notes, compared = [], [], 0
    equal_in = set()
    for fr in thread["frames"]:
        lvl = fr["level"]
        if fr["function"] in inline and fr["kind"] != "inline":
            errors.append("frame %d %s: kind %s, not inline" % (lvl, fr["function"], fr["kind"]))
        if lvl not in gdb or fr["kind"] not in ("normal", "inline"):
            continue
        gname, glist = gdb[lvl]
        if fr["function"] != gname:
            errors.append("frame %d: rspwalk %s, gdb %s" % (lvl, fr["function"], gname))
            continue
        gvars = []
        for name, gval in glist:
            if name not in [n for n, _ in gvars]:
                gvars.append((name, gval))
        ours = {v["name"]: v for v in fr.get("locals", [])}
        # What gdb's info commands leave out (constants held as blocks) is checked
        # against gdb's print of the name in that frame.
        for name in ours:
            if name not in [n for n, _ in gvars]:
                if (lvl, name) in printed and not printed[(lvl, name)].startswith("<error"):
                    gvars.append((name, printed[(lvl, name)]))
                elif own(gname):
                    errors.append("frame %d %s: %s listed, gdb has no such variable (%s)"
                                  % (lvl, gname, name, printed.get((lvl, name), "not printed")))
        for name, gval in gvars:
            if name not in ours:
                if own(gname):
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
            else:
                equal_in.add(gname)
            compared += 1
    for f in require:
        if f not in equal_in:
            errors.append("%s: no variable compared equal in its frame" % f)
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
