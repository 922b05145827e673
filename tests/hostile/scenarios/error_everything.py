"""'E01' as the reply to every packet, qSupported and '?' included."""
EXPECT = r"^rspwalk: .*(E01|refused|error)"


def reply(stub, pkt):
    return b"E01"
