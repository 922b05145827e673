#!/usr/bin/env python3
"""tests/integration/jit_check.py -- one stop walked with and without the GDB JIT interface.

usage: jit_check.py WITH_JIT_JSON NO_JIT_JSON

WITH_JIT_JSON is `rspwalk -f json`'s walk of a stop of a program whose generated code is
registered through __jit_debug_descriptor (run-jit.sh: qemu-aarch64), NO_JIT_JSON the walk of
the same stop with --no-jit.  A frame is a JIT frame when its module is a JIT object
("[jit 0x...]").  Checks, for every thread:
  - with a JIT frame at level K: without the JIT objects the walk has the same first frames
    (K of them, or frame 0 alone when K is 0) and ends "corrupt", never "bottom"; or it has
    the JIT frame too, with module null (its code known from the process's memory map, the
    anonymous rwx code_gen_buffer, but without the object's CFI), and ends "corrupt" there;
  - without one: both walks are the same and end at the bottom.
Exit 0 when all hold (one summary line), 1 otherwise (the problems), 3 when no thread has a
JIT frame (the stop found no thread in generated code: take another), 2 on bad input.
Python 3 standard library only.
"""

import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    return {t["id"]: t for t in doc["threads"]}


def pcs(frames):
    return [f["pc"] for f in frames]


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[2])
        return 2
    try:
        jit, nojit = load(sys.argv[1]), load(sys.argv[2])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print("jit_check: %s" % exc)
        return 2
    problems = []
    with_jit = 0
    jit_frames = 0
    if sorted(jit) != sorted(nojit):
        problems.append("threads differ: %s with the JIT objects, %s without"
                        % (sorted(jit), sorted(nojit)))
    for tid in sorted(set(jit) & set(nojit)):
        a, b = jit[tid], nojit[tid]
        fa, fb = a["frames"], b["frames"]
        levels = [i for i, f in enumerate(fa) if (f.get("module") or "").startswith("[jit")]
        if not levels:
            if pcs(fa) != pcs(fb) or a.get("end") != "bottom" or b.get("end") != "bottom":
                problems.append("thread %s (no JIT frame): walks differ or do not end at the "
                                "bottom: %d frames ending %r with the JIT objects, %d ending %r "
                                "without" % (tid, len(fa), a.get("end"), len(fb), b.get("end")))
            continue
        with_jit += 1
        jit_frames += len(levels)
        k = max(levels[0], 1)
        if b.get("end") != "corrupt":
            problems.append("thread %s: without the JIT objects the walk ends %r, not 'corrupt' "
                            "(%d frames, the first JIT frame is frame %d)"
                            % (tid, b.get("end"), len(fb), levels[0]))
        elif pcs(fb) != pcs(fa[:k]) and not (
                pcs(fb) == pcs(fa[:k + 1]) and len(fb) > k and fb[k].get("module") is None):
            problems.append("thread %s: without the JIT objects the frames are %s, expected %s"
                            % (tid, pcs(fb), pcs(fa[:k])))
    if problems:
        print(problems[0])
        for p in problems[1:]:
            print("  " + p)
        return 1
    if with_jit == 0:
        print("no thread has a JIT frame")
        return 3
    print("--no-jit: %d of %d threads with %d JIT frames end 'corrupt' before them, the others "
          "at the bottom as with them" % (with_jit, len(jit), jit_frames))
    return 0


if __name__ == "__main__":
    sys.exit(main())
