"""A library whose name has a carriage return, a line feed, an escape sequence and invalid UTF-8,
made to forge a frame line (a copy of the host's libc under --sysroot by that name, the PC in its
text), and a thread of the same name: the text output carries none of those bytes raw."""
import os
import shutil

EXPECT = None
# The walk decodes a real libc under ASan: seconds on a loaded 2-core machine (0.8 s released).
DEADLINE = 8
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"

BAD = b"x\r\n#1  0x0000000000401000 in injected_frame ()\x1b[2J\xff\xfe"
LIBS = (b'<library-list-svr4 version="1.0" main-lm="0x1000"><library name="/nonexistent/' + BAD +
        b'.so" lm="0x2000" l_addr="0x3da000" l_ld="0x5aa000"/></library-list-svr4>')
THREADS = b'<threads><thread id="p1.1" core="0" name="' + BAD + b'"/></threads>'


def args(tmp):
    d = os.path.join(tmp, "sysroot", "nonexistent")
    os.makedirs(d)
    shutil.copy(LIBC, os.path.join(d.encode(), BAD + b".so"))
    return ["--sysroot", os.path.join(tmp, "sysroot")]


def esc(b):
    """RSP's escaping of '#', '$', '}' and '*' in the binary data of qXfer replies."""
    out = bytearray()
    for c in b:
        if c in b"#$}*":
            out += bytes([0x7D, c ^ 0x20])
        else:
            out.append(c)
    return bytes(out)


def xfer(data, pkt):
    off, ln = pkt.rsplit(b":", 1)[1].split(b",")
    off, ln = int(off, 16), int(ln, 16)
    return (b"l" if off + ln >= len(data) else b"m") + esc(data[off:off + ln])


def reply(stub, pkt):
    if pkt.startswith(b"qSupported"):
        return stub.honest(pkt) + b";qXfer:libraries-svr4:read+;qXfer:threads:read+;multiprocess+"
    if pkt.startswith(b"qXfer:libraries-svr4:read:"):
        return xfer(LIBS, pkt)
    if pkt.startswith(b"qXfer:threads:read::"):
        return xfer(THREADS, pkt)
    if pkt == b"?":
        return b"T05thread:p1.1;"
    return stub.honest(pkt)


def check(out):
    for b in (b"\r", b"\x1b", b"\xff"):
        if b in out:
            return "a raw %r in the output" % b
    if any(line.startswith(b"#1  0x0000000000401000 in injected_frame") for line in out.split(b"\n")):
        return "a forged frame line"
    if b"libc" not in out and b"nonexistent" not in out:
        return "the library is not named (the check would prove nothing)"
    return None
