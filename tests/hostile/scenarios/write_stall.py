"""Ack mode; at 'g' the stub floods 'O' packets and never reads again: rspwalk's acks fill
the socket and its write must time out instead of blocking forever."""
NOACK = False
RCVBUF = 2048
# Long enough for the acks to fill the socket's buffers (megabytes) before 'g' times out.
TIMEOUT = 6
DEADLINE = 8
LIMIT = TIMEOUT + 1
EXPECT = r"^rspwalk: .*'g'.*(the stub read nothing|within 6 s)"


def reply(stub, pkt):
    if pkt == b"g":
        one = b"$O00#" + b"%02x" % ((ord("O") + 2 * ord("0")) & 0xFF)
        while True:
            stub.send_raw(one * 512)
    return stub.honest(pkt)
