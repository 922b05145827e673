#!/usr/bin/env python3
"""tests/integration/door_relay.py -- a counting relay with a delay, for run-door.sh.

usage: door_relay.py [--delay-ms N] --log FILE UPSTREAM

Connects to UPSTREAM (HOST:PORT), listens on 127.0.0.1 port 0, prints the port on stdout,
relays one client's bytes both ways, each chunk held N ms (default 0) before it goes on.  The
log gets one line per '$' packet the client sends ("> payload", cut at 60 characters) and a
line "STOP" for each stop reply ('T', 'S', 'W', 'X') the stub sends, "< ENN" for an error
reply and "<" for any other,
so that the requests after a stop can be counted, and the round trips: a run of requests
with no reply between them went out together (a client that pipelines) and waits once.  Exits when either side closes.  Python standard library only.
"""
import argparse
import socket
import sys
import threading
import time


class Scanner:
    """Splits a byte stream into '$...#cc' packet payloads."""

    def __init__(self):
        self.state = 0
        self.cur = bytearray()
        self.left = 0

    def feed(self, data):
        out = []
        for b in data:
            if self.state == 0:
                if b == ord("$"):
                    self.state, self.cur = 1, bytearray()
            elif self.state == 1:
                if b == ord("#"):
                    self.state, self.left = 2, 2
                else:
                    self.cur.append(b)
            else:
                self.left -= 1
                if self.left == 0:
                    self.state = 0
                    out.append(bytes(self.cur))
        return out


def pump(src, dst, delay, scan, log, lock, up):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            for p in scan.feed(data):
                with lock:
                    if up:
                        log.write("> %s\n" % p[:60].decode("latin-1"))
                    elif p[:1] in (b"T", b"S", b"W", b"X"):
                        log.write("STOP\n")
                    elif p[:1] == b"E" and len(p) == 3:
                        log.write("< %s\n" % p.decode("latin-1"))  # a refused request
                    else:
                        log.write("<\n")
                    log.flush()
            if delay:
                time.sleep(delay)
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--log", required=True)
    ap.add_argument("upstream")
    a = ap.parse_args()
    host, port = a.upstream.rsplit(":", 1)
    up = socket.create_connection((host, int(port)))
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    print(ls.getsockname()[1], flush=True)
    cl, _ = ls.accept()
    for s in (up, cl):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    log = open(a.log, "w")
    lock = threading.Lock()
    d = a.delay_ms / 1000.0
    t1 = threading.Thread(target=pump, args=(cl, up, d, Scanner(), log, lock, True))
    t2 = threading.Thread(target=pump, args=(up, cl, d, Scanner(), log, lock, False))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
