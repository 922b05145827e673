#!/usr/bin/env python3
"""tests/integration/rsp_interrupt.py -- resume an RSP target, stop it SECONDS later.

usage: rsp_interrupt.py HOST:PORT SECONDS [PID]

Connects (ack mode, as qemu-user keeps it), sends `c`, waits SECONDS, stops the target and
waits for the stop reply: with PID, by SIGINT to that process (qemu-user's gdbstub does not
read the link while the guest runs, so the interrupt byte is never seen; the signal is
reported as a stop before the guest gets it), else by the interrupt byte; prints it and disconnects.  Behind tests/tools/rsp_proxy.py
the upstream stays stopped there for the next client (rspwalk).  Exit 0 on a stop reply,
1 on a timeout or a closed link.  Python 3 standard library only.
"""
import os
import signal
import socket
import sys
import time


def frame(payload):
    return b"$" + payload + b"#%02x" % (sum(payload) & 0xFF)


def read_packet(sock, deadline):
    buf = b""
    while True:
        start = buf.find(b"$")
        if start >= 0:
            end = buf.find(b"#", start)
            if end >= 0 and len(buf) >= end + 3:
                sock.sendall(b"+")
                return buf[start + 1:end]
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        try:
            chunk = sock.recv(4096)
        except socket.timeout:
            return None
        if not chunk:
            return None
        buf += chunk


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    host, port = sys.argv[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    # qemu answers nothing before the client's first packets: ask the usual ones first.
    for q in (b"qSupported:multiprocess+;swbreak+;hwbreak+", b"?"):
        sock.sendall(frame(q))
        if read_packet(sock, time.monotonic() + 10) is None:
            print("rsp_interrupt: no reply to %s" % q.decode(), file=sys.stderr)
            return 1
    sock.sendall(frame(b"c"))
    time.sleep(float(sys.argv[2]))
    if len(sys.argv) == 4:
        os.kill(int(sys.argv[3]), signal.SIGINT)
    else:
        sock.sendall(b"\x03")
    reply = read_packet(sock, time.monotonic() + 10)
    while reply is not None and not reply[:1] in (b"T", b"S", b"W", b"X"):
        reply = read_packet(sock, time.monotonic() + 10)
    if reply is None:
        print("rsp_interrupt: no stop reply within 10 s", file=sys.stderr)
        return 1
    print(reply.decode("ascii", "replace"))
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
