"""The reply to 'g' is a run-length bomb: three million bytes on the wire ('0*~' again and again)
that would expand to 97 MB: refused by the reply's size limit, not expanded."""
EXPECT = r"^rspwalk: .*'g'"


def reply(stub, pkt):
    if pkt == b"g":
        return b"0*~" * 1000000
    return stub.honest(pkt)
