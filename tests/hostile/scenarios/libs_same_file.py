"""The svr4 library list names the same file a hundred thousand times (6 MB of XML): the list
is read in bounded memory, the file looked for once (or the list cut at its cap with a
warning), and the walk ends in time."""
EXIT = 0
# Six megabytes of list through a Python stub and 10^5 names under ASan, beside the other
# scenarios on a shared machine: 1.7 to 3.5 s measured, so more room than the default 3 s.
DEADLINE = 8
EXPECT = r"^rspwalk: warning: .*100000 modules, more than the limit"

_doc = []


def doc():
    if not _doc:
        rows = b"".join(b'<library name="/nonexistent/libsame.so" lm="0x%x" l_addr="0x7f0000000000" '
                        b'l_ld="0x7f0000001000"/>' % (0x10000 + i * 0x40) for i in range(100000))
        _doc.append(b'<library-list-svr4 version="1.0" main-lm="0x1000">' + rows +
                    b"</library-list-svr4>")
    return _doc[0]


if __name__.startswith("scenario_"):
    doc()


def reply(stub, pkt):
    if pkt.startswith(b"qSupported"):
        return stub.honest(pkt) + b";qXfer:libraries-svr4:read+"
    if pkt.startswith(b"qXfer:libraries-svr4:read:"):
        off, ln = pkt.rsplit(b":", 1)[1].split(b",")
        off, ln = int(off, 16), int(ln, 16)
        d = doc()
        return (b"l" if off + ln >= len(d) else b"m") + d[off:off + ln]
    return stub.honest(pkt)
