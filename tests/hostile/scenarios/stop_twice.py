"""A stop reply in place of the reply to 'g' (QEMU 7.2 user mode's second stop reply after an
interrupt), the real reply right after it: taken as a duplicate stop, the walk goes on."""
EXPECT = None


def reply(stub, pkt):
    if pkt == b"g":
        stub.send_packet(b"T05thread:01;")
    return stub.honest(pkt)
