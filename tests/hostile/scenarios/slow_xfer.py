"""target.xml one byte at a time, each reply 0.5 s late: every reply is in time, the run is not."""
EXPECT = r"^rspwalk: .*qXfer:features:read:target\.xml.*deadline of 3 s"


def reply(stub, pkt):
    if pkt.startswith(b"qXfer:features:read:target.xml:"):
        stub.sleep(0.5)
        off = pkt.rsplit(b":", 1)[1].split(b",")[0]
        return stub.honest(pkt[:-len(pkt.rsplit(b":", 1)[1])] + off + b",1")
    return stub.honest(pkt)
