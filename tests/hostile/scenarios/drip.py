"""The reply to 'g' one byte every 0.3 s: the request's timeout holds mid-packet."""
EXPECT = r"^rspwalk: .*no reply to 'g' within 1 s"


def reply(stub, pkt):
    if pkt == b"g":
        from stub import frame
        for c in frame(stub.honest(pkt)):
            stub.send_raw(bytes([c]))
            stub.sleep(0.3)
        return None
    return stub.honest(pkt)
