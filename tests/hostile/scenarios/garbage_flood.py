"""Bytes that are no packet, without end, in place of the reply to 'g'."""
EXPECT = r"^rspwalk: .*no reply to 'g' within 1 s \(\d+ bytes of garbage"


def reply(stub, pkt):
    if pkt == b"g":
        while True:
            stub.send_raw(b"hello world " * 100)
    return stub.honest(pkt)
