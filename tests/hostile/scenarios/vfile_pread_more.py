"""Host I/O offered; the reply to every vFile:pread carries twice the bytes asked for (and says
so): refused, never copied past the buffer; the walk goes on without the file."""
import struct

EXPECT = None
SIZE = 1 << 20


def esc(b):
    out = bytearray()
    for c in b:
        if c in b"#$}*":
            out += bytes([0x7D, c ^ 0x20])
        else:
            out.append(c)
    return bytes(out)


def reply(stub, pkt):
    if pkt.startswith(b"qSupported"):
        return stub.honest(pkt) + b";qXfer:exec-file:read+"
    if pkt.startswith(b"qXfer:exec-file:read:"):
        return stub.honest(b"x") if False else b"l/bin/hostile-exe"
    if pkt.startswith(b"vFile:setfs:"):
        return b"F0"
    if pkt.startswith(b"vFile:open:"):
        return b"F5"
    if pkt.startswith(b"vFile:fstat:"):
        st = struct.pack(">IIIIIIQQQIII", 0, 0, 0o100644, 1, 0, 0, 0, SIZE, 4096, 0, 0, 0)
        return b"F%x;" % len(st) + esc(st)
    if pkt.startswith(b"vFile:pread:"):
        _, count, _ = pkt[len(b"vFile:pread:"):].split(b",")
        n = 2 * int(count, 16)
        return b"F%x;" % n + esc(b"\x7fELF" + b"\0" * (n - 4))
    if pkt.startswith(b"vFile:close:"):
        return b"F0"
    return stub.honest(pkt)
