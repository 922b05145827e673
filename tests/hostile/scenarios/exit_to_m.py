"""'W00' (the process exited) as the reply to the first 'm': an error, not a refused read."""
EXPECT = r"^rspwalk: .*(the target|the process) has exited"


def reply(stub, pkt):
    if pkt.startswith(b"m"):
        return b"W00"
    return stub.honest(pkt)
