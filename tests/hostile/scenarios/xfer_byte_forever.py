"""qXfer of target.xml answers 'm' with one byte, at once and without end, never 'l': each reply
is in time, the object never ends; a size cap or the run's deadline ends it in one line."""
EXPECT = r"^rspwalk: .*target\.xml"


def reply(stub, pkt):
    if pkt.startswith(b"qXfer:features:read:target.xml:"):
        return b"m "
    return stub.honest(pkt)
