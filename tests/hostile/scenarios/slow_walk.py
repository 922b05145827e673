"""Honest at connect; then every memory read answered 0.8 s late, each in time, the walk (some
fifty reads) not: the run's deadline ends rspwalk, and rspwalkd's per-request --deadline ends
the walk of one request (the link is made again) instead of holding the link thread."""
EXPECT = r"^rspwalk: .*'m[0-9a-f]+,[0-9a-f]+'.*deadline of 3 s"


def reply(stub, pkt):
    if pkt.startswith(b"m"):
        stub.sleep(0.8)
    return stub.honest(pkt)
