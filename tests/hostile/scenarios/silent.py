"""The stub accepts the connection and never says anything: the first request times out."""
EXPECT = r"^rspwalk: .*no reply to 'qSupported:.*within 1 s"


def reply(stub, pkt):
    stub.stall()
