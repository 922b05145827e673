"""The stub starts the reply to 'g' and closes the connection in the middle of the packet."""
import socket

EXPECT = r"^rspwalk: .*'g'.*(closed|connection|reset)"


def reply(stub, pkt):
    if pkt == b"g":
        stub.send_raw(b"$0000000000")
        stub.sleep(0.1)
        stub.conn.shutdown(socket.SHUT_RDWR)
        stub.conn.close()
        raise SystemExit(0)
    return stub.honest(pkt)
