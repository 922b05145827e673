# tests/integration/locals_gdb.py -- run inside gdb: every frame's args and locals, one line
# each: "LOCALS <level> <function> <name> = <value>" (info args, then info locals), gdb's
# own formatting.  When the variable rspwalk_json names rspwalk's JSON output of the same
# stop, a variable rspwalk lists in a frame and gdb's info commands do not is printed with
# `print` in that frame: "PRINT <level> <function> <name> = <value>" (gdb's info locals leaves
# out locals whose DW_AT_const_value is a block, a float or a double, which print shows).
# Read by locals_compare.py.  Not a test on its own.
import json
import re

import gdb

ours = {}
try:
    for t in json.load(open(rspwalk_json))["threads"]:  # noqa: F821 (set by run-locals.sh)
        if t.get("stopped"):
            ours = {fr["level"]: [v["name"] for v in fr.get("locals", [])] for fr in t["frames"]}
except NameError:
    pass

f = gdb.newest_frame()
level = 0
while f is not None:
    f.select()
    name = f.name() or "??"
    seen = set()
    for cmd in ("info args", "info locals"):
        try:
            out = gdb.execute(cmd, to_string=True)
        except gdb.error:
            out = ""
        for line in out.splitlines():
            if " = " in line and not line.startswith(" "):
                print("LOCALS %d %s %s" % (level, name, line))
                seen.add(line.split(" = ")[0])
    for var in ours.get(level, []):
        if var in seen:
            continue
        try:
            out = gdb.execute("print " + var, to_string=True)
        except gdb.error as e:
            out = "$0 = <error: %s>" % e
        m = re.match(r"\$\d+ = (.*)", out.strip(), re.S)
        print("PRINT %d %s %s = %s" % (level, name, var, m.group(1) if m else out.strip()))
    level += 1
    f = f.older()
