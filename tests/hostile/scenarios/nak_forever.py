"""Ack mode: the stub answers every packet of ours with '-' (asks for it again, forever)."""
NOACK = False
AUTO_ACK = False
EXPECT = r"^rspwalk: .*the stub refused it 4 times"


def reply(stub, pkt):
    stub.send_raw(b"-")
    return None
