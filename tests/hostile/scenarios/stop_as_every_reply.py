"""A stop reply in place of every reply to 'g', without end: stray stops, never the reply."""
EXPECT = r"^rspwalk: .*no reply to 'g' within 1 s \(\d+ stray stop repl"


def reply(stub, pkt):
    if pkt == b"g":
        while True:
            stub.send_packet(b"T05thread:01;")
            stub.sleep(0.001)
    return stub.honest(pkt)
