"""A 0x03 byte every 0.2 s instead of the reply to 'g'."""
EXPECT = r"^rspwalk: .*no reply to 'g' within 1 s"


def reply(stub, pkt):
    if pkt == b"g":
        while True:
            stub.send_raw(b"\x03")
            stub.sleep(0.2)
    return stub.honest(pkt)
