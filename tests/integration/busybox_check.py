#!/usr/bin/env python3
"""tests/integration/busybox_check.py -- judge a walk of a stripped static binary with no oracle.

usage: busybox_check.py WALK.json BINARY [--start-entry] [--expect PC,...] [--gdb|--gdb-bottom BT]

WALK.json is `rspwalk -f json` of one stopped thread of BINARY (a static ELF of AArch64 or
64-bit PowerPC, little- or big-endian).  Checks, each failure one line on stdout:
  - every frame above the top one returns to just after a call instruction in BINARY
    (AArch64 bl/blr, PowerPC bl/bctrl/blrl): a walk that believed garbage fails here;
  - the walk ends "bottom" (never "bottom" after a frame outside BINARY's code);
  - --start-entry: the bottom frame's pc lies in _start (BINARY's entry point, 64 bytes);
  - --expect: the frames' pcs are exactly these;
  - --gdb: the frames' pcs are those of gdb's `bt` in BT (where gdb walks right);
  - --gdb-bottom: the bottom frame's pc is that of gdb's last frame (gdb's back-chain walk of
    PowerPC ends right, but in a frame 0 of code without symbols it takes a stale LR for the
    caller: a return address into frame 0's own function, docs/gdb-differences.md).
Exit 0 when every check passed, 1 otherwise, 2 on bad usage.  Python 3 standard library only.
"""
import json
import re
import struct
import sys


def load_elf(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("%s: not a 64-bit ELF file" % path)
    end = "<" if data[5] == 1 else ">"
    machine = struct.unpack_from(end + "H", data, 18)[0]
    entry, phoff = struct.unpack_from(end + "QQ", data, 24)
    phentsize, phnum = struct.unpack_from(end + "HH", data, 54)
    segs = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(
            end + "IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_flags & 1:  # PT_LOAD, executable
            segs.append((p_vaddr, p_filesz, p_offset))
    return data, end, machine, entry, segs


def word_at(elf, addr):
    data, end, _machine, _entry, segs = elf
    for vaddr, filesz, off in segs:
        if vaddr <= addr and addr + 4 <= vaddr + filesz:
            return struct.unpack_from(end + "I", data, off + addr - vaddr)[0]
    return None


def is_call(machine, insn):
    if machine == 183:  # EM_AARCH64: bl, blr
        return (insn & 0xFC000000) == 0x94000000 or (insn & 0xFFFFFC1F) == 0xD63F0000
    if machine in (20, 21):  # EM_PPC, EM_PPC64: bl, bctrl, blrl
        return (insn & 0xFC000003) == 0x48000001 or insn in (0x4E800421, 0x4E800021)
    raise ValueError("machine %d: not AArch64 or PowerPC" % machine)


def gdb_pcs(path):
    pcs = []
    with open(path) as f:
        for line in f:
            m = re.match(r"#\d+\s+(0x[0-9a-f]+)", line)
            if m and int(m.group(1), 16) != 0:
                pcs.append(int(m.group(1), 16))
    return pcs


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    walk_path, binary = args[0], args[1]
    opts = args[2:]
    elf = load_elf(binary)
    with open(walk_path) as f:
        doc = json.load(f)
    threads = doc.get("threads", [])
    if len(threads) != 1:
        print("expected one thread in %s, got %d" % (walk_path, len(threads)))
        return 1
    t = threads[0]
    frames = t["frames"]
    pcs = [int(fr["pc"], 16) for fr in frames]
    bad = []
    for fr, pc in zip(frames[1:], pcs[1:]):
        if fr.get("kind") != "normal":
            continue
        insn = word_at(elf, pc - 4)
        if insn is None:
            bad.append("frame %d: pc %#x is not in %s's code (stepper %s)"
                       % (fr["level"], pc, binary, fr.get("stepper")))
        elif not is_call(elf[2], insn):
            bad.append("frame %d: pc %#x does not follow a call (%#010x before it; stepper %s)"
                       % (fr["level"], pc, insn, fr.get("stepper")))
    if t.get("end") != "bottom":
        bad.append("the walk ended %r after %d frames, not at the bottom" % (t.get("end"), len(pcs)))
    i = 0
    while i < len(opts):
        o = opts[i]
        if o == "--start-entry":
            entry = elf[3]
            if not (entry <= pcs[-1] - 4 < entry + 64):
                bad.append("the bottom frame's pc %#x is not in _start (%#x)" % (pcs[-1], entry))
        elif o == "--expect" and i + 1 < len(opts):
            i += 1
            want = [int(x, 16) for x in opts[i].split(",")]
            if pcs != want:
                bad.append("pcs %s, expected %s" % (" ".join("%#x" % p for p in pcs),
                                                    " ".join("%#x" % p for p in want)))
        elif o == "--gdb-bottom" and i + 1 < len(opts):
            i += 1
            want = gdb_pcs(opts[i])
            if not want or pcs[-1] != want[-1]:
                bad.append("the bottom frame's pc %#x, gdb's %s" % (
                    pcs[-1], "%#x" % want[-1] if want else "none"))
        elif o == "--gdb" and i + 1 < len(opts):
            i += 1
            want = gdb_pcs(opts[i])
            if pcs != want:
                bad.append("pcs %s, gdb's %s" % (" ".join("%#x" % p for p in pcs),
                                                 " ".join("%#x" % p for p in want)))
        else:
            print("busybox_check.py: bad option %r" % o, file=sys.stderr)
            return 2
        i += 1
    if bad:
        print(bad[0])
        for b in bad[1:]:
            print(b)
        return 1
    print("%d frames, every return address after a call, end bottom" % len(pcs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
