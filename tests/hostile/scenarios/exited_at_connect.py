"""'W00' as the reply to '?': the process is gone before the walk; exit 3 with one line."""
EXIT = 3
EXPECT = r"^rspwalk: .*exited"


def reply(stub, pkt):
    if pkt == b"?":
        return b"W00"
    return stub.honest(pkt)
