"""Every reply 0.8 s late, each within --timeout 1: only the run's --deadline 3 ends the run."""
EXPECT = r"^rspwalk: .*within the run's deadline of 3 s"


def reply(stub, pkt):
    stub.sleep(0.8)
    return stub.honest(pkt)
