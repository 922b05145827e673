"""The reply to 'g' is 30000 bytes of registers where target.xml's need 164: the extra is not
taken for registers nor read past; the walk goes on with the registers described, or the reply
is refused in one line."""
EXPECT = None


def reply(stub, pkt):
    if pkt == b"g":
        return stub.honest(pkt) + b"ab" * 29836
    return stub.honest(pkt)
