"""An 'O' console packet as the only reply to 'g': not the reply."""
EXPECT = r"^rspwalk: .*no reply to 'g' within 1 s"


def reply(stub, pkt):
    if pkt == b"g":
        stub.send_packet(b"O" + b"0123456789abcdef" * 16)
        return None
    return stub.honest(pkt)
