"""With --continue: %Stop notifications (all-stop mode: none asked for) without end, never a stop
reply: the stop's --timeout holds."""
ARGS = ["--continue"]
EXPECT = r"^rspwalk: .*no stop reply within 1 s \(\d+ notifications"


def reply(stub, pkt):
    if pkt.startswith(b"vCont;") or pkt == b"c" or pkt.startswith(b"C"):
        while True:
            stub.notify(b"Stop:T05thread:01;")
    return stub.honest(pkt)
