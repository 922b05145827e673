#!/usr/bin/env python3
"""tests/integration/v8_check.py -- check one walk of node's main thread against the code's bytes.

usage: v8_check.py HOST:PORT RSPWALK_JSON LWP STEP_TRACE [--strict]

The stub (gdbserver) holds the stop rspwalk walked (`-f json -t LWP`, with RSPWALK_DEBUG=step
writing STEP_TRACE); this reads the code and the stack itself (`m` packets) and checks:
  - the walk ends at the bottom in _start, __libc_start_call_main or __libc_start_main (the
    walker reads the same map through the stub, rspwalk --no-maps does not); or (without
    --strict) it ends "corrupt" where a stepper's caller lies in an anonymous
    executable mapping of /proc/LWP/maps or a second one of a file (V8's code space and its
    copy of the builtins), which no module covers and the walker does not believe (the walk
    stops there; counted as "jit-caller", not a failure);
  - every return address in a module or in V8's code (the mappings above) follows a call
    (e8 rel32, or ff /2 with its ModRM), and a tail-call frame's PC (`"kind": "tailcall"`,
    the address after the caller's jump) follows a jump (e9 rel32, eb rel8, or ff /4);
  - where frame 0 is in code of no module (V8's JIT code), the truth from its bytes, decoded
    along the fall-through path by objdump (not by rspwalk's decoder): before `push %rbp;
    mov %rsp,%rbp` the caller is [sp] with SP sp+8; between the two, [sp+8] with SP sp+16;
    after `pop %rbp` with a `ret` ahead (only a compare and conditional jumps between), [sp]
    with SP sp+8.  The frame-pointer stepper's caller for frame 0 (from the trace, believed
    or not) and frame 1 of the walk, if any, must be that.  Other states are not checked.
Prints one line per finding and a last line: "ok: <state> ..." (exit 0), or the failures
(exit 1).  Python 3 standard library and objdump (binutils) only.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

BOTTOMS = ("_start", "__libc_start_call_main", "__libc_start_main")
SCAN_BYTES = 96  # V8's prologue follows at most a few checks at a function's entry
SCAN_INSNS = 12


def frame(payload):
    return b"$" + payload + b"#%02x" % (sum(payload) & 0xFF)


def unrle(body):
    out = bytearray()
    i = 0
    while i < len(body):
        if body[i:i + 1] == b"*" and out:
            out += out[-1:] * (body[i + 1] - 29)
            i += 2
        else:
            out += body[i:i + 1]
            i += 1
    return bytes(out)


class Stub:
    def __init__(self, target):
        host, port = target.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.buf = b""
        self.ask(b"qSupported:multiprocess+")

    def ask(self, payload):
        self.sock.sendall(frame(payload))
        deadline = time.monotonic() + 10
        while True:
            start = self.buf.find(b"$")
            end = self.buf.find(b"#", start) if start >= 0 else -1
            if end >= 0 and len(self.buf) >= end + 3:
                body = self.buf[start + 1:end]
                self.buf = self.buf[end + 3:]
                self.sock.sendall(b"+")
                return unrle(body)
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("the stub closed the link")
            self.buf += chunk

    def read(self, addr, n):
        r = self.ask(b"m%x,%x" % (addr, n))
        if r[:1] == b"E" or len(r) < 2:
            return None
        return bytes.fromhex(r.decode())

    def word(self, addr):
        b = self.read(addr, 8)
        return None if b is None or len(b) < 8 else int.from_bytes(b, "little")


def modrm_len(b, i):
    """Length of a ModRM (+SIB, +displacement) at b[i], 64-bit addressing."""
    if i >= len(b):
        return None
    modrm = b[i]
    mod, rm = modrm >> 6, modrm & 7
    n = 1
    if mod != 3 and rm == 4:
        if i + 1 >= len(b):
            return None
        sib = b[i + 1]
        n += 1
        if mod == 0 and (sib & 7) == 5:
            n += 4
    if mod == 0 and rm == 5:
        n += 4
    elif mod == 1:
        n += 1
    elif mod == 2:
        n += 4
    return n


def follows_call(stub, ra, jump=False):
    """Whether the instruction that ends at RA is a call (e8 rel32, ff /2), or with JUMP a
    jump (e9 rel32, eb rel8, ff /4): a tail-call frame's PC is the address after its jump."""
    code = stub.read(ra - 8, 8)
    if code is None:
        return False
    rel, reg = ((0xE9, 5), 4) if jump else ((0xE8, 5), 2)
    for k in range(2, 9):
        b = code[8 - k:]
        j = 0
        if b[j] == 0x41 or b[j] == 0x40 or b[j] == 0x48 or b[j] == 0x49:  # REX
            j += 1
        if j < len(b) and b[j] == rel[0] and len(b) - j == rel[1]:
            return True
        if jump and j < len(b) and b[j] == 0xEB and len(b) - j == 2:
            return True
        if j + 1 < len(b) and b[j] == 0xFF and ((b[j + 1] >> 3) & 7) == reg:
            if modrm_len(b, j + 1) == len(b) - j - 1:
                return True
    return False


def decode(code, pc):
    """[(addr, mnemonic, operands)] of CODE at PC, AT&T syntax, by objdump."""
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
        f.write(code)
        path = f.name
    try:
        out = subprocess.run(
            ["objdump", "-D", "-b", "binary", "-m", "i386:x86-64",
             "--adjust-vma=%#x" % pc, path],
            capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    insns = []
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\t[0-9a-f ]+\t(\S+)\s*(.*)$", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3).split("#")[0].strip()))
    return insns


def touches_sp_fp(mn, ops):
    """Whether an instruction (other than the prologue's) changes %rsp or %rbp."""
    if mn.startswith(("push", "pop", "call", "ret", "leave", "enter", "jmp", "syscall")):
        return True
    dest = ops.rsplit(",", 1)[-1] if ops else ""
    return dest in ("%rsp", "%rbp", "%esp", "%ebp", "%sp", "%bp")


def frame0_state(stub, pc):
    """'entry' (no record pushed), 'pushed' (push %rbp done, mov not yet), 'ret', or other."""
    code = stub.read(pc, SCAN_BYTES)
    if code is None:
        return "unreadable", []
    insns = decode(code, pc)[:SCAN_INSNS]
    text = ["%#x %s %s" % i for i in insns]
    if not insns:
        return "undecoded", text
    for _, mn, ops in insns:
        if mn.startswith("ret"):
            return "ret", text
        if mn.startswith("j") and mn != "jmp" or mn in ("cmp", "test", "testb", "cmpl", "cmpq"):
            continue
        break
    if insns[0][1] == "mov" and insns[0][2] == "%rsp,%rbp":
        return "pushed", text
    for k, (_, mn, ops) in enumerate(insns):
        if mn == "push" and ops == "%rbp":
            nxt = insns[k + 1] if k + 1 < len(insns) else None
            if nxt and nxt[1] == "mov" and nxt[2] == "%rsp,%rbp":
                return "entry", text
            return "other", text
        if mn.startswith("j") and mn != "jmp":
            continue  # a check's branch: the fall-through path goes on
        if touches_sp_fp(mn, ops) or mn.startswith(("hlt", "ud2", "int3")):
            return "other", text
    return "other", text


def v8_code(pid):
    """[(lo, hi)] of PID's code no module covers: executable mappings without a file (V8's
    code space), and those of a file already mapped executable lower down (V8's copy of its
    embedded builtins in the code range, a second mapping of /usr/bin/node)."""
    spans, seen = [], set()
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 5 or "x" not in parts[1]:
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5] if len(parts) > 5 else ""
            if not path or path in seen:
                spans.append((lo, hi))
            seen.add(path)
    return spans


def read_trace(path):
    """{level: [(stepper, ra, sp, note)]}: the callers each stepper proposed for each frame."""
    out, level, stepper = {}, None, None
    with open(path) as f:
        for line in f:
            m = re.match(r"step: frame (\d+) ra \S+ sp \S+: (\S+) -> (-?\d+)", line)
            if m:
                level, stepper = int(m.group(1)), m.group(2)
                continue
            m = re.match(r"step: caller ra (0x[0-9a-f]+) sp (0x[0-9a-f]+)(.*)", line)
            if m and level is not None:
                out.setdefault(level, []).append(
                    (stepper, int(m.group(1), 16), int(m.group(2), 16), m.group(3).strip(": ")))
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--strict"]
    strict = "--strict" in sys.argv[1:]
    if len(args) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    sys.argv[1:] = args
    with open(sys.argv[2]) as f:
        doc = json.load(f)
    lwp = int(sys.argv[3])
    threads = [t for t in doc["threads"] if t.get("lwp") == lwp]
    if not threads:
        print("FAIL: thread %d not in the walk" % lwp)
        return 1
    frames = threads[0]["frames"]
    stub = Stub(sys.argv[1])
    fails = []
    names = " <- ".join(f["function"] or ("?" if f["module"] else "jit") for f in frames[:8])
    trace = read_trace(sys.argv[4])
    jit = v8_code(lwp)
    last = frames[-1]
    ending = "bottom"
    proposed = trace.get(last["level"], [])
    if threads[0].get("end") == "corrupt" and not strict and any(
            lo <= ra < hi for _, ra, _, _ in proposed for lo, hi in jit):
        ending = "jit-caller"
    elif threads[0].get("end") != "bottom" or (last["function"] or "") not in BOTTOMS:
        fails.append("the walk ends %s at frame %d (%s), not in %s" % (
            threads[0].get("end"), last["level"], last["function"], "/".join(BOTTOMS)))
    for f in frames[1:]:
        # frame 0's own PC (an inline frame's caller there has it too) is no return address
        pc = int(f["pc"], 16)
        known = f["module"] is not None or any(lo <= pc < hi for lo, hi in jit)
        tail = f.get("kind") == "tailcall"
        if f["trust"] != "registers" and known and not follows_call(stub, pc, tail):
            fails.append("frame %d: %s (%s) does not follow a %s" % (
                f["level"], f["pc"], f["function"], "jump" if tail else "call"))
    state = "module"
    if frames[0]["module"] is None:
        pc, sp = int(frames[0]["pc"], 16), int(frames[0]["sp"], 16)
        state, text = frame0_state(stub, pc)
        want = {"entry": (sp, sp + 8), "ret": (sp, sp + 8), "pushed": (sp + 8, sp + 16)}.get(state)
        if want is not None:
            ra = stub.word(want[0])
            got = frames[1] if len(frames) > 1 else None
            ff = [(r, p) for st, r, p, _ in trace.get(0, []) if st == "frame-func"]
            print("frame 0 at %#x (%s): the caller is [%#x] = %#x, SP %#x; frame 1: %s; "
                  "frame-func's caller: %s" % (
                      pc, state, want[0], ra or 0, want[1],
                      "%s SP %s" % (got["pc"], got["sp"]) if got else "none",
                      "%#x SP %#x" % ff[0] if ff else "none"))
            for t in text[:6]:
                print("    " + t)
            if got is not None and (int(got["pc"], 16) != ra or int(got["sp"], 16) != want[1]):
                fails.append("frame 0 at %#x is at a JIT function's %s: frame 1 is %s SP %s, "
                             "should be %#x SP %#x" % (pc, state, got["pc"], got["sp"], ra or 0,
                                                       want[1]))
            if not ff or ff[0] != (ra, want[1]):
                fails.append("frame 0 at %#x is at a JIT function's %s: the frame-pointer "
                             "stepper's caller is %s, should be %#x SP %#x" % (
                                 pc, state, "%#x SP %#x" % ff[0] if ff else "none", ra or 0,
                                 want[1]))
    for m in fails:
        print("FAIL: " + m)
    if fails:
        print("    walk: " + names)
        return 1
    print("ok: frame 0 %s, %d frames, end %s: %s" % (state, len(frames), ending, names[:100]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
