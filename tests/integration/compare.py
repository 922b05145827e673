#!/usr/bin/env python3
"""tests/integration/compare.py -- rspwalk's walk of a stop against gdb's, and against the
stack the fixture says it expects.

usage: compare.py --exe PROG RSPWALK_JSON ORACLE_JSON
       compare.py --exe PROG --oracle-only ORACLE_JSON
       compare.py --exe PROG --expect-only RSPWALK_JSON   (steps 2 only: where gdb is known
                                                           wrong, docs/gdb-differences.md)
       --names-from UNSTRIPPED (either form): PROG is stripped; rspwalk's frames in it are
       named from the unstripped copy before any check
       --steppers LIST: rspwalk ran with --steppers LIST; every frame beyond frame 0 must
       come from one of them, and each thread walked past frame 0 from the one(s) besides
       stackbottom and sighandler (step 2); --fixture-callers LIST: the caller of every
       frame in one of the fixture's own functions comes from one of LIST
       --record FILE [--meta K=V]... [--gdb-json ORACLE_JSON]: also write the case's
       record for docs/comparison.md (tests/integration/record.py), whatever the outcome;
       --record FILE --failed WHY: a case that failed before there was anything to compare

Checks, in order:
  1. the oracle (gdb_oracle.sh) shows the fixture's expected stack (the ".rspwalk_expect"
     section of PROG, written by fixtures/src/fixture.c); if not, gdb is no oracle here;
  2. invariants of rspwalk's output: JSON shape, frame 0 is the stop function (or libc for
     stop method 1), the expected fixture frames in order, main in the main thread, SPs not
     decreasing (except next to a signal frame), the main thread ends at _start, the others
     at the thread start (clone3 / start_thread), every walk ended at the bottom, trust
     "scan" on exactly the frames the wanderer found;
  3. rspwalk against gdb, thread by thread (matched by LWP), frame by frame, gdb's inline
     and tail-call frames (reconstructed from DWARF, not on the stack) included: same pc,
     the same function or an alias of it (same entry address), gdb's "inline" and
     "tailcall" frames against rspwalk's kinds of the same names, and gdb's
     <signal handler called> against rspwalk's "kind": "signal".
Prints the first problem on one line, then details (both stacks side by side); exit 0 when
all hold, 1 otherwise, 2 on bad usage or unreadable input.  Python 3 standard library only.
Not a general ELF tool: symbols come from readelf, the expectation from a tiny ELF reader.
"""

import argparse
import json
import os
import re
import struct
import subprocess
import sys

# thread_start: the local label aarch64's clone3 calls the thread function from.
THREAD_BOTTOMS = ("clone3", "__clone3", "clone", "__clone", "start_thread", "thread_start")
SIGNAL = "<signal>"
VIRTUAL = ("inline", "tailcall")
# PowerPC's _start branches to __libc_start_main without linking: it is not on the stack.
MAIN_BOTTOMS = ("_start", "__libc_start_main", "__libc_start_main_impl")


class Mismatch(Exception):
    """One problem: a one-line summary and optional detail lines."""

    def __init__(self, summary, details=()):
        super().__init__(summary)
        self.summary = summary
        self.details = list(details)


# ---- the fixture's expectation ---------------------------------------------------------


def elf_section(path, wanted):
    """Bytes of section `wanted` of ELF file `path`, or None (any class, either byte order)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        return None
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x3A)
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x2E)

    def header(i):
        base = shoff + i * shentsize
        if is64:
            name, _, _, _, off, size = struct.unpack_from(end + "IIQQQQ", data, base)
        else:
            name, _, _, _, off, size = struct.unpack_from(end + "IIIIII", data, base)
        return name, off, size

    _, str_off, str_size = header(shstrndx)
    names = data[str_off:str_off + str_size]
    for i in range(shnum):
        name_off, off, size = header(i)
        name = names[name_off:names.index(b"\0", name_off)].decode()
        if name == wanted:
            return data[off:off + size]
    return None


def read_expectation(prog):
    """{"stop": N, "main": [names], "threads": [[names], ...]} from PROG's .rspwalk_expect."""
    raw = elf_section(prog, ".rspwalk_expect")
    if raw is None:
        raise Mismatch("%s: no .rspwalk_expect section (not a fixture?)" % prog)
    exp = {"stop": 0, "main": None, "threads": []}
    for line in re.split(r"[\n\0]+", raw.decode()):
        key, _, value = line.partition(":")
        words = []
        for word in value.split():
            name, star, count = word.partition("*")
            words += [name] * (int(count) if star else 1)
        if key == "stop":
            exp["stop"] = int(value)
        elif key == "main":
            exp["main"] = words
        elif key == "thread":
            exp["threads"].append(words)
    if exp["main"] is None:
        raise Mismatch("%s: .rspwalk_expect has no main: line" % prog)
    return exp


# ---- both documents in one shape -------------------------------------------------------


def parse_thread_id(text):
    """rspwalk's "p1f2.1f2" (multiprocess, hex) or "1f2": (pid or None, tid)."""
    m = re.fullmatch(r"p(-?[0-9a-fA-F]+)\.(-?[0-9a-fA-F]+)", text)
    if m:
        return int(m.group(1), 16), int(m.group(2), 16)
    return None, int(text, 16)


def hexnum(value, what):
    if value is None:
        return None
    if isinstance(value, int):
        return value
    try:
        return int(value, 16)
    except (TypeError, ValueError):
        raise Mismatch("%s: not a hex number: %r" % (what, value))


def load_rspwalk(doc):
    """[{lwp, pid, end, frames: [{pc, sp, function, offset, module, signal, raw}]}]"""
    if not isinstance(doc, dict) or not isinstance(doc.get("threads"), list):
        raise Mismatch("rspwalk JSON: no \"threads\" list")
    for key in ("version", "arch"):
        if key not in doc:
            raise Mismatch("rspwalk JSON: no \"%s\"" % key)
    threads = []
    for t in doc["threads"]:
        if "id" not in t or not isinstance(t.get("frames"), list):
            raise Mismatch("rspwalk JSON: a thread without \"id\" or \"frames\": %r" % t)
        pid, lwp = parse_thread_id(t["id"])
        frames = []
        for i, f in enumerate(t["frames"]):
            where = "rspwalk thread %s frame %d" % (t["id"], i)
            if f.get("level") != i:
                raise Mismatch("%s: level is %r" % (where, f.get("level")))
            for key in ("pc", "sp", "function", "kind"):
                if key not in f:
                    raise Mismatch("%s: no \"%s\"" % (where, key))
            frames.append(
                {
                    "pc": hexnum(f["pc"], where + " pc"),
                    "sp": hexnum(f["sp"], where + " sp"),
                    "function": f["function"],
                    "offset": f.get("offset"),
                    "module": f.get("module"),
                    "signal": f["kind"] == "signal",
                    "kind": f["kind"] if f["kind"] in VIRTUAL else "normal",
                    "raw": f,
                }
            )
        threads.append({"id": t["id"], "pid": pid, "lwp": lwp, "end": t.get("end"),
                        "frames": frames})
    return threads


def load_oracle(doc):
    """[{lwp, pid, end, stopped, frames, virtual: count of inline and tail-call frames}]"""
    threads = []
    for t in doc["threads"]:
        frames = []
        virtual = 0
        raw = t["frames"]
        if len(raw) > 1 and int(raw[-1]["pc"], 16) == 0 and t["end"] == "bottom":
            # gdb on PowerPC shows the back chain's last record (saved LR 0) as a frame
            # at pc 0 (docs/gdb-differences.md): the end of the stack, not a frame.
            raw = raw[:-1]
        for f in raw:
            if f["type"] in VIRTUAL:
                virtual += 1
            frames.append(
                {
                    "pc": int(f["pc"], 16),
                    "sp": hexnum(f.get("sp"), "gdb sp"),
                    "function": f["function"],
                    "entry": hexnum(f.get("entry"), "gdb entry"),
                    "module": f.get("module"),
                    "signal": f["type"] == "sigtramp",
                    "kind": f["type"] if f["type"] in VIRTUAL else "normal",
                }
            )
        threads.append({"lwp": t["lwp"], "pid": doc.get("pid"), "end": t["end"],
                        "stopped": t.get("stopped", False), "frames": frames,
                        "virtual": virtual, "error": t.get("error")})
    return threads


def label(frame):
    if frame["signal"]:
        return SIGNAL
    return frame["function"] or "??"


def main_thread(threads, pid):
    """The thread whose LWP is the pid, else the lowest LWP (qemu-user reports pid 1 for
    every process; the main thread is the first one created)."""
    for t in threads:
        if pid is not None and t["lwp"] == pid:
            return t
    return min(threads, key=lambda t: t["lwp"]) if threads else None


# ---- the expectation on either walk ----------------------------------------------------


def fixture_frames(frames, fixture_names):
    return [label(f) for f in frames if f["signal"] or f["function"] in fixture_names]


def name_from(threads, exe, unstripped):
    """Name rspwalk's frames in EXE, a stripped program, from UNSTRIPPED, the same program
    before `strip` (position-dependent: link-time addresses are run-time ones)."""
    funcs = []
    out = subprocess.run(["readelf", "-Ws", "--wide", unstripped], capture_output=True,
                         text=True, check=False).stdout
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[3] in ("FUNC", "IFUNC") and cols[6] != "UND":
            # The name is the last column: ppc64le puts "[<localentry>: 8]" after Vis.
            funcs.append((int(cols[1], 16), int(cols[2], 0), cols[-1].split("@")[0]))
    exe = os.path.realpath(exe)
    for t in threads:
        exact = True  # frame 0 and the frame a signal interrupted hold exact PCs
        for f in t["frames"]:
            pc = f["pc"] if exact else f["pc"] - 1
            exact = f["signal"]
            if f["function"] is not None and f["module"] and os.path.realpath(f["module"]) != exe:
                continue
            for start, size, name in funcs:
                if start <= pc < start + max(size, 1):
                    f["function"] = name
                    break


def check_expectation(who, threads, pid, exp):
    names = set(exp["main"])
    for t in exp["threads"]:
        names.update(t)
    names.discard(SIGNAL)
    main = main_thread(threads, pid)
    if main is None:
        raise Mismatch("%s: no threads" % who)
    got = fixture_frames(main["frames"], names)
    if got != exp["main"]:
        raise Mismatch("%s: main thread %d: fixture frames differ from the expectation"
                       % (who, main["lwp"]),
                       ["expected: " + " ".join(exp["main"]), "got:      " + " ".join(got),
                        "stack:    " + " ".join(label(f) for f in main["frames"])])
    if not main["frames"]:
        raise Mismatch("%s: main thread has no frames" % who)
    top = label(main["frames"][0])
    if exp["stop"] == 0 and top != exp["main"][0]:
        raise Mismatch("%s: frame 0 is %s, expected the stop function %s"
                       % (who, top, exp["main"][0]))
    if exp["stop"] == 1 and top in names:
        raise Mismatch("%s: frame 0 is %s, expected a libc frame (raise)" % (who, top))
    wanted = [list(w) for w in exp["threads"]]
    others = [t for t in threads if t is not main]
    for t in others:
        got = fixture_frames(t["frames"], names)
        if got in wanted:
            wanted.remove(got)
    if wanted or len(others) != len(exp["threads"]):
        raise Mismatch("%s: %d other threads, expected %d; unmatched: %s"
                       % (who, len(others), len(exp["threads"]),
                          "; ".join(" ".join(w) for w in wanted) or "-"),
                       ["thread %d: %s" % (t["lwp"], " ".join(label(f) for f in t["frames"]))
                        for t in others])


def unnamed_frame(frames, exe):
    """The first frame up to main (the fixture's own part of the stack) that no symbol
    names and that lies in no library, as "frame N (0xPC)", or None.  Every function of the
    fixture has a symbol (the stripped ones are named from their unstripped copy), so such a
    frame is not code: a stack slot or a stale value taken for a return address.  Unnamed
    code in a library (the stripped cross libcs) is allowed."""
    names = [f["function"] for f in frames]
    end = names.index("main") if "main" in names else len(frames) - 1
    for i, f in enumerate(frames[:end + 1]):
        if f["function"] is None and not f["signal"] and (
                not f["module"] or os.path.realpath(f["module"]) == exe):
            return "frame %d (0x%x)" % (i, f["pc"])
    return None


def thread_invariant_problem(t, is_main, exe):
    """The first rspwalk-only property that thread T breaks, or None."""
    frames = t["frames"]
    who = "rspwalk thread %s" % t["id"]
    if is_main and frames and "main" not in [f["function"] for f in frames]:
        return "rspwalk: main() is not in the main thread's stack"
    if t["end"] != "bottom":
        return "%s: walk ended with %r, not at the bottom" % (who, t["end"])
    if not frames:
        return "%s: no frames" % who
    bogus = unnamed_frame(frames, exe)
    if bogus:
        return "%s: %s has no function and is in no library" % (who, bogus)
    for i in range(1, len(frames)):
        near_signal = frames[i]["signal"] or frames[i - 1]["signal"]
        if frames[i]["sp"] < frames[i - 1]["sp"] and not near_signal:
            return ("%s: sp decreases from frame %d (0x%x) to frame %d (0x%x)"
                    % (who, i - 1, frames[i - 1]["sp"], i, frames[i]["sp"]))
    for i, f in enumerate(frames):
        # Stack scanning is the wanderer's alone, and all the wanderer does (inline and
        # tail-call frames have no stepper and the trust of the frame they are in).
        if f["kind"] in VIRTUAL:
            continue
        if (f["raw"].get("trust") == "scan") != (f["raw"].get("stepper") == "wanderer"):
            return ("%s: frame %d has trust %r from stepper %r (scan is the wanderer's)"
                    % (who, i, f["raw"].get("trust"), f["raw"].get("stepper")))
    last = frames[-1]["function"]
    if is_main and last not in MAIN_BOTTOMS:
        return "%s: last frame is %s, expected one of %s" % (who, last, ", ".join(MAIN_BOTTOMS))
    # The cross libcs are stripped: their thread bottom has no name.
    unnamed_lib = last is None and frames[-1]["module"] not in (None, exe)
    if not is_main and last not in THREAD_BOTTOMS and not unnamed_lib:
        return "%s: last frame is %s, expected one of %s" % (who, last, ", ".join(THREAD_BOTTOMS))
    return None


def check_invariants(threads, pid, exe):
    """rspwalk-only properties that hold for every fixture."""
    main = main_thread(threads, pid)
    for t in threads:
        problem = thread_invariant_problem(t, t is main, exe)
        if problem:
            raise Mismatch(problem)


def check_steppers(threads, allowed, exp, fixture_callers=None):
    """--steppers: every frame beyond the top physical one was found by a stepper of ALLOWED
    (virtual frames have none), and every thread walked past frame 0 has frames from the
    stepper(s) under test: those of ALLOWED other than stackbottom and sighandler.
    --fixture-callers: the caller of every frame in one of the fixture's own functions was
    found by a stepper of FIXTURE_CALLERS."""
    forced = [s for s in allowed if s not in ("stackbottom", "sighandler")]
    names = set(exp["main"])
    for t in exp["threads"]:
        names.update(t)
    for t in threads:
        used = set()
        callee = None  # the physical frame before this one
        for i, f in enumerate(t["frames"]):
            # Frame 0's function may be inlined: its physical frame, the top one (trust
            # "registers"), comes after the inline frames.
            if f["kind"] in VIRTUAL:
                continue
            stepper = f["raw"].get("stepper")
            if f["raw"].get("trust") != "registers":
                if stepper not in allowed:
                    raise Mismatch("rspwalk thread %s: frame %d (%s) found by %r, not one of %s"
                                   % (t["id"], i, label(f), stepper, ",".join(allowed)))
                used.add(stepper)
                if (fixture_callers and callee is not None and not callee["signal"]
                        and callee["function"] in names and stepper not in fixture_callers):
                    raise Mismatch("rspwalk thread %s: frame %d (%s), the caller of %s, found "
                                   "by %r, not %s" % (t["id"], i, label(f), label(callee),
                                                      stepper, " or ".join(fixture_callers)))
            callee = f
        if len(t["frames"]) > 1 and forced and not used & set(forced):
            raise Mismatch("rspwalk thread %s: no frame found by %s"
                           % (t["id"], " or ".join(forced)))


# ---- rspwalk against gdb ---------------------------------------------------------------


class Symbols:
    """Entry addresses of names in a module and in its separate debug file (readelf -Ws)."""

    def __init__(self):
        self.cache = {}

    @staticmethod
    def debug_file(path):
        try:
            notes = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                                   check=False).stdout
        except OSError:
            return None
        m = re.search(r"Build ID: ([0-9a-f]{2})([0-9a-f]+)", notes)
        if not m:
            return None
        debug = "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1), m.group(2))
        return debug if os.path.exists(debug) else None

    def table(self, path):
        if path in self.cache:
            return self.cache[path]
        table = {}
        files = [path]
        debug = self.debug_file(path)
        if debug:
            files.append(debug)
        for file in files:
            try:
                out = subprocess.run(["readelf", "-Ws", "--wide", file], capture_output=True,
                                     text=True, check=False).stdout
            except OSError:
                continue
            for line in out.splitlines():
                # Num: Value Size Type Bind Vis Ndx Name
                cols = line.split()
                if len(cols) < 8 or cols[3] not in ("FUNC", "IFUNC") or cols[6] == "UND":
                    continue
                name = cols[7].split("@")[0]
                table.setdefault(name, set()).add(int(cols[1], 16))
        self.cache[path] = table
        return table

    def known(self, module, name):
        return bool(module) and os.path.exists(module) and name in self.table(module)

    def aliases(self, module, name_a, name_b):
        if not module or not os.path.exists(module) or not name_a or not name_b:
            return False
        table = self.table(module)
        return bool(table.get(name_a, set()) & table.get(name_b, set()))


def same_function(ours, theirs, symbols):
    if ours["signal"] or theirs["signal"]:
        return ours["signal"] == theirs["signal"]
    a, b = ours["function"], theirs["function"]
    if a == b:
        return True
    if a is None or b is None:
        return False
    # ppc64 ELFv1: gdb names code by its dot symbol (".main"), the entry of the .opd
    # descriptor "main".
    if a.lstrip(".") == b.lstrip("."):
        return True
    module = ours["module"] or theirs["module"]
    if symbols.aliases(module, a, b):
        return True
    if symbols.known(module, a):
        return False
    # A name the module's symbol tables do not hold (rspwalk's own label for something):
    # the same function if it starts where gdb's does.
    offset = ours["offset"]
    return (theirs["entry"] is not None and isinstance(offset, int)
            and theirs["entry"] == ours["pc"] - offset)


def side_by_side(ours, theirs, bad_rows):
    def cell(f):
        if f is None:
            return ""
        sp = "" if f["sp"] is None else " sp=0x%x" % f["sp"]
        kind = " [%s]" % f["kind"] if f["kind"] in VIRTUAL else ""
        return "0x%x %s%s%s" % (f["pc"], label(f), kind, sp)

    rows = ["   # %-56s | %s" % ("rspwalk", "gdb")]
    for i in range(max(len(ours), len(theirs))):
        a = ours[i] if i < len(ours) else None
        b = theirs[i] if i < len(theirs) else None
        mark = "!" if i in bad_rows else " "
        rows.append("%s%3d %-56s | %s" % (mark, i, cell(a), cell(b)))
    return rows


def diff_thread(t, g, symbols):
    """rspwalk's thread T against gdb's G, frame by frame: (the first difference as
    "frame N: why", or None; the set of rows that differ)."""
    bad = set()
    first = None
    for i in range(max(len(t["frames"]), len(g["frames"]))):
        a = t["frames"][i] if i < len(t["frames"]) else None
        b = g["frames"][i] if i < len(g["frames"]) else None
        why = None
        if a is None or b is None:
            why = "rspwalk has %d frames, gdb %d" % (len(t["frames"]), len(g["frames"]))
        elif a["pc"] != b["pc"]:
            why = "pc 0x%x, gdb 0x%x" % (a["pc"], b["pc"])
        elif a["kind"] != b["kind"]:
            why = "%s frame %s, gdb %s frame %s" % (a["kind"], label(a), b["kind"], label(b))
        elif not same_function(a, b, symbols):
            why = "function %s, gdb %s" % (label(a), label(b))
        if why:
            bad.add(i)
            if first is None:
                first = "frame %d: %s" % (i, why)
    return first, bad


def compare_threads(ours, theirs, symbols):
    by_lwp = {t["lwp"]: t for t in theirs}
    ours_lwps = sorted(t["lwp"] for t in ours)
    if ours_lwps != sorted(by_lwp):
        raise Mismatch("threads differ: rspwalk has LWPs %s, gdb has %s"
                       % (ours_lwps, sorted(by_lwp)))
    for t in ours:
        g = by_lwp[t["lwp"]]
        if g["end"] not in ("bottom",):
            raise Mismatch("gdb thread %d: gdb's walk ended with %r (%s); no oracle here"
                           % (g["lwp"], g["end"], g.get("error") or ""))
        first, bad = diff_thread(t, g, symbols)
        if first:
            raise Mismatch("thread %s: %s" % (t["id"], first),
                           side_by_side(t["frames"], g["frames"], bad))


def run_checks(args, state):
    """The checks of the chosen mode; fills STATE (exp, ours, oracle, pid) as it goes.
    Returns (exit status, the one-line verdict)."""
    docs = []
    for path in args.files:
        try:
            with open(path) as f:
                docs.append(json.load(f))
        except (OSError, ValueError) as exc:
            return 2, "compare: %s: %s" % (path, exc)
    try:
        exp = state["exp"] = read_expectation(args.exe)
        if args.expect_only:
            ours = state["ours"] = load_rspwalk(docs[0])
            if args.names_from:
                name_from(ours, args.exe, args.names_from)
            pids = [t["pid"] for t in ours if t["pid"] is not None]
            pid = state["pid"] = args.main_lwp or (pids[0] if pids else None)
            check_expectation("rspwalk", ours, pid, exp)
            check_invariants(ours, pid, os.path.realpath(args.exe))
            if args.steppers:
                check_steppers(ours, args.steppers.split(","), exp, args.fixture_callers)
            return 0, ("compare: rspwalk shows the expected stack (%d threads, %d frames; no gdb)"
                       % (len(ours), sum(len(t["frames"]) for t in ours)))
        oracle = state["oracle"] = load_oracle(docs[-1])
        pid = state["pid"] = args.main_lwp or docs[-1].get("pid")
        try:
            check_expectation("gdb", oracle, pid, exp)
        except Mismatch as m:
            m.summary = "no oracle: " + m.summary
            raise
        if args.oracle_only:
            return 0, "compare: gdb shows the expected stack (%d threads)" % len(oracle)
        ours = state["ours"] = load_rspwalk(docs[0])
        if args.names_from:
            name_from(ours, args.exe, args.names_from)
        check_expectation("rspwalk", ours, pid, exp)
        check_invariants(ours, pid, os.path.realpath(args.exe))
        if args.steppers:
            check_steppers(ours, args.steppers.split(","), exp, args.fixture_callers)
        compare_threads(ours, oracle, Symbols())
    except Mismatch as m:
        return 1, "\n".join([m.summary] + ["  " + line for line in m.details])
    nframes = sum(len(t["frames"]) for t in ours)
    return 0, "compare: rspwalk matches gdb (%d threads, %d frames)" % (len(ours), nframes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", required=True, help="the fixture program")
    ap.add_argument("--oracle-only", action="store_true",
                    help="only check gdb's walk against the fixture's expectation")
    ap.add_argument("--main-lwp", type=int, default=None,
                    help="the main thread's LWP when the stub's pid is not it (qemu-user "
                         "reports pid 1; its guest's main thread is the qemu process)")
    ap.add_argument("--expect-only", action="store_true",
                    help="only check rspwalk's walk against the expectation and invariants")
    ap.add_argument("--names-from", metavar="UNSTRIPPED", default=None,
                    help="PROG is stripped: name rspwalk's frames in it from UNSTRIPPED")
    ap.add_argument("--steppers", metavar="LIST", default=None,
                    help="rspwalk ran with --steppers LIST: check who found each frame")
    ap.add_argument("--fixture-callers", metavar="LIST", default=None,
                    type=lambda v: v.split(","),
                    help="with --steppers: the callers of the fixture's own frames come "
                         "from these steppers")
    ap.add_argument("--record", metavar="FILE", default=None,
                    help="also write the case's record for the comparison table (record.py)")
    ap.add_argument("--gdb-json", metavar="ORACLE_JSON", default=None,
                    help="with --expect-only --record: gdb's walk, recorded, not checked")
    ap.add_argument("--meta", metavar="KEY=VALUE", action="append", default=[],
                    help="with --record: a field of the record (label, arch, stub)")
    ap.add_argument("--failed", metavar="WHY", default=None,
                    help="with --record and no JSON: record that the case failed before")
    ap.add_argument("files", nargs="*", metavar="JSON")
    args = ap.parse_args()
    if args.oracle_only and args.expect_only:
        ap.error("--oracle-only and --expect-only exclude each other")
    if args.failed is not None:
        if not args.record or args.files:
            ap.error("--failed needs --record and no JSON")
    elif len(args.files) != (1 if args.oracle_only or args.expect_only else 2):
        ap.error("expected " + ("ORACLE_JSON" if args.oracle_only else "RSPWALK_JSON"
                                if args.expect_only else "RSPWALK_JSON ORACLE_JSON"))
    state = {"exp": None, "ours": None, "oracle": None, "pid": args.main_lwp}
    if args.failed is not None:
        status, verdict = 1, args.failed
    else:
        status, verdict = run_checks(args, state)
        print(verdict)
    if args.record:
        import record  # tests/integration/record.py, next to this file

        record.write(args, state, status, verdict)
    return status


if __name__ == "__main__":
    sys.exit(main())
