#!/usr/bin/env python3
"""tests/integration/stripped_check.py -- judge a walk of x86-64 code stripped of symbols and CFI.

usage: stripped_check.py --maps MAPS --walk NOCFI.json --cfi CFI.json [--gdb ORACLE.json]

The program ran from copies without .symtab, .eh_frame and .eh_frame_hdr; NOCFI.json is
`rspwalk -f json` of that stop, CFI.json rspwalk's walk of the same stop with Debian's
files (their CFI) in a sysroot, or with the symbols of a fixture built without CFI (the
walk run-opt.sh checks against the fixture's expectation), ORACLE.json gdb's (oracle.py)
with the same files.
MAPS is /proc/PID/maps of the stopped process: where each file's code lies.  Checks, each
failure one line on stdout:
  - the walk ends "bottom" and reaches __libc_start_call_main (named in it or, for a
    static program, in CFI.json: a stripped program's own frames must not hide it);
  - every frame above the top one returns to just after a call instruction (e8 rel32, or
    ff /2 in any addressing form, with a REX prefix or not), read from the file MAPS names
    (not a signal frame, nor the frame a signal interrupted);
  - its frames' pcs are the CFI walk's and, where gdb reached the bottom, gdb's (normal
    frames only: the inline and tail-call frames of libc6-dbg are no stack frames).
Exit 0 when every check passed, 1 otherwise, 2 on bad input.  Python 3 standard library only.
"""
import argparse
import json
import sys


def load_maps(path):
    """[(start, end, offset, file)] of the file-backed mappings."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6 or not parts[5].startswith("/"):
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, int(parts[2], 16), parts[5].strip()))
    return out


def code_before(maps, pc, n):
    """The N bytes before PC from the file mapped there, or None."""
    for lo, hi, off, path in maps:
        if lo <= pc - n and pc <= hi:
            try:
                with open(path, "rb") as f:
                    f.seek(off + pc - n - lo)
                    b = f.read(n)
            except OSError:
                return None
            return b if len(b) == n else None
    return None


def modrm_len(b, k):
    """Length of a ModRM operand starting at b[k] (ModRM, SIB, displacement)."""
    modrm = b[k]
    mod, rm = modrm >> 6, modrm & 7
    n = 1
    if mod == 3:
        return n
    if rm == 4:
        n += 1
        if mod == 0 and k + 1 < len(b) and (b[k + 1] & 7) == 5:
            n += 4
    if mod == 0 and rm == 5:
        n += 4
    elif mod == 1:
        n += 1
    elif mod == 2:
        n += 4
    return n


def follows_call(b):
    """Whether the bytes B (ending at a return address) end with a call instruction."""
    if len(b) >= 5 and b[-5] == 0xE8:
        return True
    for k in range(2, 9):  # ff /2: opcode, ModRM[, SIB][, disp]
        if k > len(b):
            break
        at = len(b) - k
        if b[at] != 0xFF or at + 1 >= len(b) or (b[at + 1] >> 3) & 7 != 2:
            continue
        if 1 + modrm_len(b, at + 1) == k:
            return True
    return False


def normal_pcs(frames):
    return [f["pc"] for f in frames if f.get("kind", f.get("type", "normal")) == "normal"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--maps", required=True)
    ap.add_argument("--walk", required=True)
    ap.add_argument("--cfi", required=True)
    ap.add_argument("--gdb")
    args = ap.parse_args()
    try:
        maps = load_maps(args.maps)
        walk = json.load(open(args.walk))["threads"][0]
        cfi = json.load(open(args.cfi))["threads"][0]
        gdb = json.load(open(args.gdb))["threads"][0] if args.gdb else None
    except (OSError, ValueError, KeyError, IndexError) as e:
        print("stripped_check: bad input: %s" % e)
        return 2
    bad = []
    frames = walk["frames"]
    names = [f.get("function") or f.get("symbol") or "" for f in frames]
    if walk.get("end") != "bottom":
        bad.append("the walk ends %r after %d frames, not at the bottom" % (walk.get("end"),
                                                                           len(frames)))
    ref_names = [f.get("function") or f.get("symbol") or "" for f in cfi["frames"]]
    if "__libc_start_call_main" not in names + ref_names:
        bad.append("no frame in __libc_start_call_main")
    for k, f in enumerate(frames[1:], 1):
        # A signal frame's pc is its trampoline's start, and the frame the signal
        # interrupted has the pc where it stopped: no call before either.
        if f.get("kind") == "signal" or frames[k - 1].get("kind") == "signal":
            continue
        pc = int(f["pc"], 16)
        b = code_before(maps, pc, 8)
        if b is None:
            bad.append("frame %d: %#x lies in no mapped file" % (f["level"], pc))
        elif not follows_call(b):
            bad.append("frame %d: %#x follows no call (%s)" % (f["level"], pc, b.hex()))
    mine, theirs = normal_pcs(frames), normal_pcs(cfi["frames"])
    if [int(p, 16) for p in mine] != [int(p, 16) for p in theirs]:
        bad.append("frames differ from the walk with CFI:\n    stripped: %s\n    with CFI: %s" %
                   (" ".join(mine), " ".join(theirs)))
    gpcs = normal_pcs(gdb["frames"]) if gdb else []
    gdb_note = "gdb did not reach the bottom (%s)" % gdb.get("end") if gdb else "no gdb"
    if gdb and gdb.get("end") == "bottom":
        gdb_note = "as gdb's"
        if [int(p, 16) for p in gpcs] != [int(p, 16) for p in mine]:
            bad.append("frames differ from gdb's with CFI:\n    stripped: %s\n    gdb:      %s" %
                       (" ".join(mine), " ".join(gpcs)))
    for line in bad:
        print(line)
    if not bad:
        print("%d frames to __libc_start_call_main, as with CFI, %s" % (len(frames), gdb_note))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
