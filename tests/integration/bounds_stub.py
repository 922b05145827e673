#!/usr/bin/env python3
# tests/integration/bounds_stub.py -- a scripted GDB stub that grows what a stub can grow.
#
# One stopped x86_64 thread whose memory is unreadable (the walk is one frame), plus what the
# scenario asks for: many libraries (svr4 list), many threads, a vFile whose pread never reaches
# EOF, a library file served over vFile, names with control and invalid bytes.  Prints its port,
# serves one client, exits when it hangs up or after 60 s.  Not a conformance test of the protocol.
import socket
import sys
import time

MODE = sys.argv[1]
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
PID = 0x4D2
PC = 0x401000
TARGET_XML = b'<?xml version="1.0"?><target><architecture>i386:x86-64</architecture></target>'
EVIL = b"evil\x1b[2J\n#1  0x0000000000401000 in injected_frame () from /x\xff;x\"y\x1b[1m\nz"


DOCS = {}


def cached(fn):
    if fn not in DOCS:
        DOCS[fn] = fn()
    return DOCS[fn]


def libraries():
    if MODE == "libs":
        n = int(ARG)
        rows = [b'<library name="/nonexistent/lib%d.so" lm="0x%x" l_addr="0x%x" l_ld="0x%x"/>'
                % (i, 0x10000000 + i * 0x40, 0x7f0000000000 + i * 0x100000,
                   0x7f0000000000 + i * 0x100000 + 0x1000) for i in range(n)]
        return b'<library-list-svr4 version="1.0">' + b"".join(rows) + b"</library-list-svr4>"
    if MODE in ("vfile-eof", "vfile-file"):
        return (b'<library-list-svr4 version="1.0"><library name="/target/libbig.so" lm="0x1000" '
                b'l_addr="0x7f0000000000" l_ld="0x7f0000001000"/></library-list-svr4>')
    if MODE == "lib":
        return (b'<library-list-svr4 version="1.0"><library name="/target/libserved.so" '
                b'lm="0x1000" l_addr="0x7f0000000000" l_ld="0x7f0000001000"/></library-list-svr4>')
    if MODE == "names":
        nm = EVIL.replace(b"&", b"&amp;").replace(b'"', b"&quot;").replace(b"<", b"&lt;")
        return (b'<library-list-svr4 version="1.0"><library name="/lib/' + nm + b'" lm="0x1000" '
                b'l_addr="0x7f0000000000" l_ld="0x7f0000001000"/></library-list-svr4>')
    return b'<library-list-svr4 version="1.0"></library-list-svr4>'


def threads():
    n = int(ARG) if MODE == "threads" else 1
    rows = [b'<thread id="p%x.%x" core="0"/>' % (PID, PID + i) for i in range(n)]
    if MODE == "names":
        rows = [b'<thread id="p%x.%x" core="0" name="t\x1b[31m\n#9 x\xff"/>' % (PID, PID)]
    return b"<threads>" + b"".join(rows) + b"</threads>"


def escape(data):
    out = bytearray()
    for b in data:
        if b in b"#$}*":
            out += bytes([0x7D, b ^ 0x20])
        else:
            out.append(b)
    return bytes(out)


def packet(body):
    return b"$" + body + b"#%02x" % (sum(body) & 0xFF)


def xfer(doc, rest):
    off, length = (int(x, 16) for x in rest.rsplit(b":", 1)[1].split(b","))
    part = doc[off:off + length]
    return (b"l" if off + length >= len(doc) else b"m") + escape(part)


def regs():
    # rax..r15 (16), rip, eflags, cs ss ds es fs gs: as gdbserver sends them for amd64.
    words = [0] * 16 + [PC]
    words[6] = 0x7FFFF000  # rbp
    words[7] = 0x7FFFE000  # rsp
    return b"".join(w.to_bytes(8, "little").hex().encode() for w in words) + b"00000000" * 7


FILE_BYTES = b""
if MODE in ("vfile-file", "vfile-eof", "names", "lib"):
    with open(ARG, "rb") as f:
        FILE_BYTES = f.read()
if MODE in ("names", "lib"):
    # the served file is a PIE loaded at l_addr: the thread stops at its entry point
    PC = 0x7F0000000000 + int.from_bytes(FILE_BYTES[24:32], "little")


def vfile(body):
    if body.startswith(b"vFile:setfs:"):
        return b"F0"
    if body.startswith(b"vFile:open:"):
        return b"F5"
    if body.startswith(b"vFile:close:"):
        return b"F0"
    if body.startswith(b"vFile:fstat:"):
        size = len(FILE_BYTES) if FILE_BYTES else 8192
        st = bytearray(64)
        st[28:36] = size.to_bytes(8, "big")
        return b"F%x;" % len(st) + escape(bytes(st))
    if body.startswith(b"vFile:pread:"):
        _, count, off = (int(x, 16) for x in body[len(b"vFile:pread:"):].split(b","))
        data = FILE_BYTES[off:off + count]
        if MODE == "vfile-eof":
            # the file, then zeros for ever: the end of the file never comes
            data = (data + bytes(count))[:count]
        return b"F%x;" % len(data) + escape(data)
    return b""


def answer(body):
    if body.startswith(b"qSupported"):
        feats = b"PacketSize=4000;QStartNoAckMode+;qXfer:features:read+;" \
                b"qXfer:libraries-svr4:read+;qXfer:threads:read+"
        return feats
    if body == b"QStartNoAckMode":
        return b"OK"
    if body == b"?":
        return b"T05thread:p%x.%x;" % (PID, PID)
    if body.startswith(b"qXfer:features:read:target.xml:"):
        return xfer(TARGET_XML, body)
    if body.startswith(b"qXfer:libraries-svr4:read:"):
        return xfer(cached(libraries), body)
    if body.startswith(b"qXfer:threads:read:"):
        return xfer(cached(threads), body)
    if body.startswith(b"qXfer:exec-file:read:"):
        return xfer(b"/target/prog", body)
    if body == b"g":
        return regs()
    if body.startswith(b"H"):
        return b"OK"
    if body.startswith(b"vFile:") and MODE in ("vfile-eof", "vfile-file", "names", "lib"):
        return vfile(body)
    if body.startswith(b"m") or body.startswith(b"x"):
        return b"E01"
    if body.startswith(b"qfThreadInfo"):
        return b"mp%x.%x" % (PID, PID)
    if body.startswith(b"qsThreadInfo"):
        return b"l"
    if body == b"D" or body.startswith(b"D;"):
        return b"OK"
    return b""


def main():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    print(srv.getsockname()[1], flush=True)
    srv.settimeout(60)
    try:
        conn, _ = srv.accept()
    except OSError:
        return
    deadline = time.monotonic() + 60
    buf = b""
    noack = False
    conn.settimeout(1)
    while time.monotonic() < deadline:
        try:
            data = conn.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not data:
            break
        buf += data
        while True:
            buf = buf.lstrip(b"+-")
            if buf[:1] == b"\x03":
                buf = buf[1:]
                conn.sendall(packet(b"T02thread:p%x.%x;" % (PID, PID)))
                continue
            start = buf.find(b"$")
            end = buf.find(b"#", start)
            if start < 0 or end < 0 or len(buf) < end + 3:
                break
            body = buf[start + 1:end]
            buf = buf[end + 3:]
            reply = answer(body)
            if body == b"QStartNoAckMode":
                conn.sendall(b"+" + packet(reply))
                noack = True
                continue
            conn.sendall((b"" if noack else b"+") + packet(reply))
            if body == b"D" or body.startswith(b"D;") or body == b"k":
                conn.close()
                return
    conn.close()


main()
