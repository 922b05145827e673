# tests/integration/oracle.py -- gdb's backtrace of every thread, as one JSON document.
#
# Loaded by gdb_oracle.sh with `source`; it defines the gdb command `rspwalk-oracle FILE`,
# which writes {"threads":[{"lwp":N,"stopped":bool,"end":"...","frames":[...]}]} to FILE.
# Each frame: pc (gdb's frame.pc(): the return address for callers), function (frame.name(),
# null when gdb has none), type (normal | inline | tailcall | sigtramp | other), entry (the function's
# start address as gdb sees it, null if unknown), module (file holding pc), sp, file and line
# (frame.find_sal(): the source file's full name and the line backtrace prints; null if none).
# inline and tailcall frames are gdb's reconstructions from DWARF (inlined subroutines,
# DW_TAG_call_site tail calls: libc6-dbg has both); they have no stack frame of their own.
# Not a comparison: tests/integration/compare.py does that.

import json

import gdb

FRAME_TYPES = {
    gdb.NORMAL_FRAME: "normal",
    gdb.INLINE_FRAME: "inline",
    gdb.SIGTRAMP_FRAME: "sigtramp",
    gdb.TAILCALL_FRAME: "tailcall",
}

MAX_FRAMES = 4096  # a walk longer than this is a loop; gdb's own limit is unlimited


def _hex(value):
    return None if value is None else "0x%x" % value


def _module(pc):
    name = gdb.solib_name(pc)
    if name is not None:
        return name
    prog = gdb.current_progspace()
    for objfile in prog.objfiles():
        # the main executable is the progspace's filename
        if objfile.filename == prog.filename:
            return objfile.filename
    return prog.filename


def _entry(frame, lookup_pc):
    """Start address of the function holding lookup_pc: from the debug info symbol,
    else from the minimal symbol gdb reports for the address."""
    if frame.type() != gdb.INLINE_FRAME:
        try:
            fn = frame.function()
            if fn is not None:
                return int(fn.value().address)
        except gdb.error:
            pass
    try:
        text = gdb.execute("info symbol 0x%x" % lookup_pc, to_string=True)
    except gdb.error:
        return None
    # "NAME + 20 in section .text of /lib/...": entry = pc - 20; "NAME in section" : pc
    head = text.split(" in section ", 1)[0]
    if head == text:
        return None
    if " + " in head:
        try:
            return lookup_pc - int(head.rsplit(" + ", 1)[1])
        except ValueError:
            return None
    return lookup_pc


def _walk(thread):
    thread.switch()
    frames = []
    end = "bottom"
    error = None
    frame = gdb.newest_frame()
    newer_type = None
    while frame is not None and len(frames) < MAX_FRAMES:
        pc = frame.pc()
        # Callers' pcs are return addresses; gdb looks them up at pc-1 unless the newer
        # frame is a signal trampoline (the interrupted pc is exact).
        lookup_pc = pc if newer_type in (None, gdb.SIGTRAMP_FRAME) else pc - 1
        ftype = frame.type()
        try:
            sp = int(frame.read_register("sp"))
        except (gdb.error, ValueError):
            sp = None
        sal = frame.find_sal()
        line = sal.line if sal.symtab is not None and sal.line else None
        path = sal.symtab.fullname() if line is not None else None
        frames.append(
            {
                "pc": _hex(pc),
                "function": frame.name(),
                "type": FRAME_TYPES.get(ftype, "other"),
                "entry": _hex(_entry(frame, lookup_pc)),
                "module": _module(pc),
                "sp": _hex(sp),
                "file": path,
                "line": line,
            }
        )
        if ftype not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            newer_type = ftype
        try:
            older = frame.older()
        except gdb.error as exc:
            error = str(exc)
            end = "error"
            break
        if older is None:
            reason = frame.unwind_stop_reason()
            if reason not in (gdb.FRAME_UNWIND_NO_REASON, gdb.FRAME_UNWIND_OUTERMOST):
                end = gdb.frame_stop_reason_string(reason)
        frame = older
    if frame is not None and len(frames) >= MAX_FRAMES:
        end = "max-frames"
    out = {"lwp": thread.ptid[1], "end": end, "frames": frames}
    if error is not None:
        out["error"] = error
    return out


class OracleCommand(gdb.Command):
    """rspwalk-oracle FILE: write every thread's frames as JSON to FILE."""

    def __init__(self):
        super().__init__("rspwalk-oracle", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        path = arg.strip()
        if not path:
            raise gdb.GdbError("usage: rspwalk-oracle FILE")
        inferior = gdb.selected_inferior()
        stopped = gdb.selected_thread()
        if stopped is None or not inferior.threads():
            raise gdb.GdbError("rspwalk-oracle: no stopped thread")
        threads = []
        for thread in sorted(inferior.threads(), key=lambda t: t.ptid[1]):
            walked = _walk(thread)
            walked["stopped"] = thread.ptid == stopped.ptid
            threads.append(walked)
        stopped.switch()
        doc = {"pid": inferior.pid, "threads": threads}
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


OracleCommand()
