"""A flood of %Stop notifications (all-stop mode: none was asked for) instead of the reply to 'g'."""
EXPECT = r"^rspwalk: .*no reply to 'g' within 1 s"


def reply(stub, pkt):
    if pkt == b"g":
        while True:
            stub.notify(b"Stop:T05thread:01;")
    return stub.honest(pkt)
