#!/usr/bin/env python3
# tests/integration/names_compare.py -- every frame's function name, rspwalk's against gdb's, exactly.
#
# usage: names_compare.py RSPWALK_JSON ORACLE_JSON
#   RSPWALK_JSON: `rspwalk -f json` (docs/json.md); ORACLE_JSON: gdb_oracle.sh's document
#   (oracle.py: gdb's frame.name()).  Threads are matched by LWP, frames by position and pc.
#   Unlike compare.py, which counts two aliases of one address as one function, a name is
#   right here only when it is gdb's to the letter ("Square::area", "Level<0>::go(std::
#   function<long (int)> const&, int)"): the demangling and parameter rules of
#   walker/demangle.c.  gdb's "<signal handler called>" frames are skipped.
#   One known difference is counted apart, not failed (docs/gdb-differences.md section 9): a
#   C++ function without a linkage name whose name gdb's parser cannot take apart, where gdb
#   appends the parameter list its own type printer writes ("...::_M_invoke(const
#   std::_Any_data &, int &&)") to the name rspwalk gives.
# Exit: 0 all names equal (or known), 1 a difference (listed), 2 usage or unreadable input.
import json
import sys


def frames_by_lwp(doc, name_key):
    out = {}
    for t in doc.get("threads", []):
        out[int(t["lwp"])] = [(int(f["pc"], 16), f.get(name_key)) for f in t.get("frames", [])]
    return out


def main():
    if len(sys.argv) != 3:
        print("usage: names_compare.py RSPWALK_JSON ORACLE_JSON", file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            ours = frames_by_lwp(json.load(f), "function")
        with open(sys.argv[2]) as f:
            theirs = frames_by_lwp(json.load(f), "function")
    except (OSError, ValueError, KeyError) as exc:
        print("names_compare: %s" % exc, file=sys.stderr)
        return 2
    bad, known, total = [], [], 0
    for lwp, gframes in sorted(theirs.items()):
        rframes = ours.get(lwp)
        if rframes is None:
            bad.append("thread %d: not in rspwalk's walk" % lwp)
            continue
        if len(rframes) != len(gframes):
            bad.append("thread %d: %d frames, gdb %d" % (lwp, len(rframes), len(gframes)))
        for i, ((rpc, rname), (gpc, gname)) in enumerate(zip(rframes, gframes)):
            if gname == "<signal handler called>":
                continue
            total += 1
            if rpc != gpc:
                bad.append("thread %d frame %d: pc 0x%x, gdb 0x%x" % (lwp, i, rpc, gpc))
            elif rname != gname:
                line = "thread %d frame %d (0x%x): %r, gdb %r" % (lwp, i, rpc, rname, gname)
                if rname and gname and gname.startswith(rname + "(") and gname.endswith(")"):
                    known.append(line)
                else:
                    bad.append(line)
    if bad:
        print("%d of %d names differ from gdb's" % (len(bad), total))
        for line in bad:
            print("  " + line)
        return 1
    print("%d names equal to gdb's%s" % (total - len(known), "; %d with gdb's own parameter list "
          "(known, docs/gdb-differences.md section 9)" % len(known) if known else ""))
    for line in known:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
