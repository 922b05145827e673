"""With --continue, 'O' console packets every 10 ms and never a stop reply."""
ARGS = ["--continue"]
EXPECT = r"^rspwalk: .*no (stop )?reply.* within 1 s"


def reply(stub, pkt):
    if pkt.startswith(b"vCont;") or pkt in (b"c",) or pkt.startswith(b"C"):
        while True:
            stub.send_packet(b"O" + b"hello\n".hex().encode())
            stub.sleep(0.01)
    return stub.honest(pkt)
