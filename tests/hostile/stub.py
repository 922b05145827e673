#!/usr/bin/env python3
"""tests/hostile/stub.py -- a scripted GDB remote stub that misbehaves on purpose.

usage: stub.py SCENARIO.py

Listens on 127.0.0.1 port 0, prints the port as the first line on stdout, serves one
client and exits when it leaves (or after 120 s in any case).  Without a scenario's
say-so it is an honest, minimal x86-64 stub: one process (pid 1) of one thread (tid 1),
stopped by SIGTRAP, registers from the table below, every memory read refused (E01),
every other packet unsupported (empty reply).  A scenario (tests/hostile/scenarios/*.py,
read by tests/hostile/run too) changes what it needs:

  def reply(stub, pkt)   called for every packet the client sends (bytes, without '$'
                         and checksum); return the reply payload (bytes, framed here),
                         or None when the scenario has written (or withheld) it itself
                         through stub.send_packet / send_raw / notify / sleep /
                         stall.  stub.honest(pkt) is the honest reply.
  NOACK = False          do not offer QStartNoAckMode (the link stays in ack mode)
  AUTO_ACK = False       in ack mode, send no '+' for the client's packets (the scenario does)
  RCVBUF = N             the stub's socket receive buffer (small: writes stall sooner)

Python 3 standard library only.
"""

import importlib.util
import os
import socket
import sys
import time

REGS64 = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
          "r12", "r13", "r14", "r15", "rip"]
REGS32 = ["eflags", "cs", "ss", "ds", "es", "fs", "gs"]


def target_xml():
    rows = []
    for i, n in enumerate(REGS64):
        rows.append('<reg name="%s" bitsize="64" regnum="%d"/>' % (n, i))
    for i, n in enumerate(REGS32):
        rows.append('<reg name="%s" bitsize="32" regnum="%d"/>' % (n, len(REGS64) + i))
    return ('<?xml version="1.0"?><!DOCTYPE target SYSTEM "gdb-target.dtd"><target>'
            '<architecture>i386:x86-64</architecture><osabi>GNU/Linux</osabi>'
            '<feature name="org.gnu.gdb.i386.core">' + "".join(rows) +
            '</feature></target>').encode()


def regs_hex():
    vals = {"rsp": 0x7ffc0000f000, "rbp": 0x7ffc0000f010, "rip": 0x401000}
    out = b""
    for n in REGS64:
        out += vals.get(n, 0).to_bytes(8, "little").hex().encode()
    for n in REGS32:
        out += (0x246 if n == "eflags" else 0).to_bytes(4, "little").hex().encode()
    return out


def frame(payload, start=b"$"):
    return start + payload + b"#%02x" % (sum(payload) & 0xFF)


def xfer_slice(data, pkt):
    """The reply to qXfer:OBJECT:read:ANNEX:OFF,LEN over DATA."""
    off, ln = pkt.rsplit(b":", 1)[1].split(b",")
    off, ln = int(off, 16), int(ln, 16)
    chunk = data[off:off + ln]
    return (b"l" if off + ln >= len(data) else b"m") + chunk


class Stub:
    def __init__(self, conn, scenario):
        self.conn = conn
        self.sc = scenario
        self.noack = False
        self.buf = b""

    # ---- what a scenario writes with ----
    def send_raw(self, data):
        self.conn.sendall(data)

    def send_packet(self, payload):
        self.conn.sendall(frame(payload))

    def notify(self, payload):
        self.conn.sendall(frame(payload, b"%"))

    def sleep(self, sec):
        time.sleep(sec)

    def stall(self):
        """Read nothing more and write nothing more: the client's writes pile up."""
        time.sleep(120)
        raise SystemExit(0)

    def honest(self, pkt):
        if pkt.startswith(b"qSupported"):
            feats = b"PacketSize=4000;qXfer:features:read+"
            if getattr(self.sc, "NOACK", True):
                feats += b";QStartNoAckMode+"
            return feats
        if pkt == b"QStartNoAckMode":
            return b"OK"
        if pkt == b"?":
            return b"T05thread:01;"
        if pkt.startswith(b"qXfer:features:read:target.xml:"):
            return xfer_slice(target_xml(), pkt)
        if pkt == b"qfThreadInfo":
            return b"m01"
        if pkt == b"qsThreadInfo":
            return b"l"
        if pkt == b"qC":
            return b"QC01"
        if pkt.startswith(b"qAttached"):
            return b"1"
        if pkt.startswith(b"Hg") or pkt.startswith(b"Hc"):
            return b"OK"
        if pkt == b"g":
            return regs_hex()
        if pkt.startswith(b"m"):
            return b"E01"
        if pkt.startswith(b"D"):
            return b"OK"
        return b""

    # ---- the wire ----
    def read_packet(self):
        """The next packet's payload; acks, naks and 0x03 between packets are skipped."""
        while True:
            i = self.buf.find(b"$")
            if i >= 0:
                j = self.buf.find(b"#", i)
                if j >= 0 and len(self.buf) >= j + 3:
                    pkt = self.buf[i + 1:j]
                    self.buf = self.buf[j + 3:]
                    return pkt
            else:
                self.buf = b""
            data = self.conn.recv(65536)
            if not data:
                return None
            self.buf += data

    def serve(self):
        while True:
            pkt = self.read_packet()
            if pkt is None:
                return
            if not self.noack and getattr(self.sc, "AUTO_ACK", True):
                self.send_raw(b"+")
            fn = getattr(self.sc, "reply", None)
            out = fn(self, pkt) if fn is not None else self.honest(pkt)
            if out is not None:
                self.send_packet(out)
            if pkt == b"QStartNoAckMode" and out == b"OK":
                self.noack = True


def load_scenario(path):
    spec = importlib.util.spec_from_file_location(
        "scenario_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: stub.py SCENARIO.py\n")
        return 2
    sc = load_scenario(sys.argv[1])
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    rcvbuf = getattr(sc, "RCVBUF", None)
    if rcvbuf:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    ls.settimeout(120)
    print(ls.getsockname()[1], flush=True)
    try:
        conn, _ = ls.accept()
    except socket.timeout:
        return 1
    conn.settimeout(120)
    try:
        Stub(conn, sc).serve()
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
