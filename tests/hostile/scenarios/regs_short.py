"""The reply to 'g' has 6 bytes where target.xml's registers need 164: the registers that are
missing are unknown, the walk does not read past the reply, one line or a walk that stops."""
EXPECT = r"^rspwalk: .*(regist|'g')"


def reply(stub, pkt):
    if pkt == b"g":
        return b"00100000c0ff"
    return stub.honest(pkt)
