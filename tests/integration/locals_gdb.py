# tests/integration/locals_gdb.py -- run inside gdb: every frame's args and locals, one line
# each: "LOCALS <level> <function> <name> = <value>" (info args, then info locals), gdb's
# own formatting.  Read by locals_compare.py.  Not a test on its own.
import gdb

f = gdb.newest_frame()
level = 0
while f is not None:
    f.select()
    name = f.name() or "??"
    for cmd in ("info args", "info locals"):
        try:
            out = gdb.execute(cmd, to_string=True)
        except gdb.error:
            out = ""
        for line in out.splitlines():
            if " = " in line and not line.startswith(" "):
                print("LOCALS %d %s %s" % (level, name, line))
    level += 1
    f = f.older()
