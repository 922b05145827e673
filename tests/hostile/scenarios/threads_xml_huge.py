"""qXfer:threads offered, its document a million <thread> entries (about 40 MB): read in bounded
memory and time, cut at the thread cap or refused, never walked to the end of it."""
EXPECT = r"^rspwalk: .*(threads|deadline)"

_doc = []


def doc():
    if not _doc:
        rows = b"".join(b'<thread id="p1.%x" core="0" name="w"/>' % i for i in range(1, 1000001))
        _doc.append(b'<?xml version="1.0"?><threads>' + rows + b"</threads>")
    return _doc[0]


if __name__.startswith("scenario_"):  # the stub's copy: made before it listens, not on demand
    doc()


def reply(stub, pkt):
    if pkt.startswith(b"qSupported"):
        return stub.honest(pkt) + b";qXfer:threads:read+;multiprocess+"
    if pkt.startswith(b"qXfer:threads:read::"):
        off, ln = pkt.rsplit(b":", 1)[1].split(b",")
        off, ln = int(off, 16), int(ln, 16)
        d = doc()
        return (b"l" if off + ln >= len(d) else b"m") + d[off:off + ln]
    if pkt == b"?":
        return b"T05thread:p1.1;"
    return stub.honest(pkt)
