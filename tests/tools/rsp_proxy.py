#!/usr/bin/env python3
"""tests/tools/rsp_proxy.py -- one upstream RSP connection, shared by clients one after another.

usage: rsp_proxy.py [--listen HOST] [--idle SEC] [--delay-ms N] [--delay-up-ms N]
                    [--delay-down-ms N] [--stats FILE] [--once] UPSTREAM

UPSTREAM is HOST:PORT or unix:PATH (qemu-user's `-g PATH`).  The proxy connects to it once,
then listens on HOST (default 127.0.0.1) port 0 and prints the port the kernel chose as the
first line on stdout ("PORT\\n", flushed).  Clients are served one at a time (one that connects
meanwhile waits its turn), each relaying bytes both ways unchanged; when a client disconnects
the upstream connection stays open, so the next client sees the same stop.  qemu-user resumes
the guest when its gdb connection closes and never listens again: the proxy is how rspwalk and
then gdb look at one qemu stop.

Acks pass through as bytes: qemu stays in ack mode (it offers no QStartNoAckMode) and each client acks
its own replies.  A client's QStartNoAckMode is refused by qemu itself, so no client can
leave the link in a mode the next one does not expect.  A second qSupported is fine for qemu.
One piece of stub state does outlive a client: the general thread (`Hg`).  gdb assumes after
`?` that it is the stopped thread and reads that thread's registers with a bare `g`; after
rspwalk has walked every thread it is the last one walked.  So when a client that sent `Hg`
leaves, the proxy sends `Hg<stopped thread>` itself (the thread of the last `T` stop reply)
and acks the reply (--transparent turns this off).
Bytes a stub sends while no client is connected (none are expected from a stopped target)
are held and delivered to the next client.

Tap mode (for scripts/bench): --delay-ms N holds every chunk N ms before forwarding it, both ways
(--delay-up-ms / --delay-down-ms for one direction: up = client to stub); --stats FILE
writes JSON with packets ('$' frames), acks, notifications and bytes per direction, per
client and in total, when the proxy exits.

--once: exit when the first client leaves, so the next client gets a fresh upstream connection
(gdbserver: a new connection starts in ack mode, as gdb and rspwalk each expect; scripts/bench).
--hold (with --once): when the client has left, wait for SIGTERM (or --idle) before exiting:
a Python interpreter's exit costs milliseconds of CPU, which on a small machine delayed the end
of the very client process a benchmark was timing (scripts/bench sends SIGTERM after reaping it).
SIGTERM ends the proxy like an interrupt, stats written.

Exits 0 when the upstream closes, or after --idle seconds (default 300) without traffic
either way (a silent client is dropped with it); 2 on bad usage, 3 if the upstream cannot be reached.  It never kills anything:
the caller owns the stub.  Python 3 standard library only.
"""

import argparse
import json
import os
import re
import selectors
import signal
import socket
import sys
import time

CHUNK = 65536
# What counts between packets: a packet or notification start, an ack, a nak, an interrupt.
BETWEEN = re.compile(rb"[$%+\-\x03]")


def frame(payload):
    return b"$" + payload + b"#%02x" % (sum(payload) & 0xFF)


class Counter:
    """RSP framing seen in one direction: '$' packets, '+'/'-' acks, '%' notifications."""

    def __init__(self):
        self.bytes = 0
        self.packets = 0
        self.acks = 0
        self.naks = 0
        self.notifications = 0
        self.interrupts = 0
        self._in_packet = False
        self._csum_left = 0
        self._payload = bytearray()
        self.completed = []  # payloads of '$' packets completed by the last feed()

    def feed(self, data):
        # Scans with bytes.find and a regex, not byte by byte: a 9 KiB 'm' reply is 18 KB of
        # hex, and a per-byte Python loop would add milliseconds to every such round trip.
        self.bytes += len(data)
        self.completed = []
        i, n = 0, len(data)
        while i < n:
            if self._csum_left:
                k = min(self._csum_left, n - i)
                self._csum_left -= k
                i += k
            elif self._in_packet:
                j = data.find(b"#", i)  # '#': two checksum digits follow
                if j < 0:
                    self._payload += data[i:]
                    return
                self._payload += data[i:j]
                self._in_packet = False
                self._csum_left = 2
                self.completed.append(bytes(self._payload))
                i = j + 1
            else:
                m = BETWEEN.search(data, i)
                if m is None:
                    return
                b = data[m.start()]
                i = m.start() + 1
                if b == 0x24:  # '$'
                    self.packets += 1
                    self._in_packet = True
                    self._payload = bytearray()
                elif b == 0x25:  # '%'
                    self.notifications += 1
                    self._in_packet = True
                    self._payload = bytearray()
                elif b == 0x2B:
                    self.acks += 1
                elif b == 0x2D:
                    self.naks += 1
                else:
                    self.interrupts += 1

    def as_dict(self):
        return {"bytes": self.bytes, "packets": self.packets, "acks": self.acks,
                "naks": self.naks, "notifications": self.notifications,
                "interrupts": self.interrupts}


def connect_upstream(spec, timeout_s):
    if spec.startswith("unix:"):
        addr, family = spec[5:], socket.AF_UNIX
    else:
        host, sep, port = spec.rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError("upstream: expected HOST:PORT or unix:PATH, got %r" % spec)
        addr, family = (host.strip("[]") or "127.0.0.1", int(port)), socket.AF_INET
        if ":" in addr[0]:
            family = socket.AF_INET6
    deadline = time.monotonic() + timeout_s
    while True:
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.connect(addr)
            break
        except OSError as exc:
            s.close()
            if time.monotonic() >= deadline:
                raise OSError("upstream %s: %s" % (spec, exc))
            time.sleep(0.05)
    if family != socket.AF_UNIX:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


class Proxy:
    def __init__(self, upstream, listener, args):
        self.up = upstream
        self.listener = listener
        self.client = None
        self.idle_s = args.idle
        self.delay = {"up": args.delay_up_ms / 1000.0, "down": args.delay_down_ms / 1000.0}
        self.queue = {"up": [], "down": []}  # (due time, bytes)
        self.held_down = b""  # stub output while no client is connected
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.up, selectors.EVENT_READ, "up")
        self.sel.register(self.listener, selectors.EVENT_READ, "listen")
        self.total = {"up": Counter(), "down": Counter()}
        self.clients = []  # per-client counters
        self.last_activity = time.monotonic()
        self.transparent = args.transparent
        self.once = args.once
        self.hold = args.hold
        self.stop_thread = None  # thread id of the last 'T' stop reply
        self.client_set_hg = False
        self.restores = 0
        self.waiting = []  # connections accepted while a client was served, oldest first

    def _watch(self, direction, counter):
        """Follow the stop thread and the client's Hg from the packets just counted."""
        for payload in counter.completed:
            if direction == "down" and payload[:1] == b"T":
                for field in payload[3:].split(b";"):
                    if field.startswith(b"thread:"):
                        self.stop_thread = field[7:]
            elif direction == "up" and payload.startswith(b"Hg"):
                self.client_set_hg = payload[2:] != self.stop_thread

    def _restore_thread(self):
        """Hg back to the stopped thread, acking the stub's reply ourselves."""
        for _, chunk in self.queue["up"]:
            self.up.sendall(chunk)
        self.queue["up"] = []
        self.client_set_hg = False
        if self.stop_thread is None:
            return
        self.up.sendall(frame(b"Hg" + self.stop_thread))
        self.restores += 1
        reader = Counter()
        deadline = time.monotonic() + 5.0
        try:
            while time.monotonic() < deadline:
                self.up.settimeout(max(0.01, deadline - time.monotonic()))
                data = self.up.recv(CHUNK)
                if not data:
                    return
                reader.feed(data)
                done = False
                for payload in reader.completed:
                    self.up.sendall(b"+")
                    if payload == b"OK" or payload[:1] == b"E":
                        done = True
                if done:
                    return
        except OSError:
            return
        finally:
            self.up.settimeout(None)

    def _take_client(self, conn):
        if conn.family != socket.AF_UNIX:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client = conn
        self.clients.append({"up": Counter(), "down": Counter()})
        self.sel.register(conn, selectors.EVENT_READ, "client")
        self.last_activity = time.monotonic()
        if self.held_down:
            data, self.held_down = self.held_down, b""
            self._write("down", data)

    def _drop_client(self):
        if self.client is None:
            return
        self.sel.unregister(self.client)
        self.client.close()
        self.client = None
        self.queue["down"] = []  # undelivered replies belonged to that client's requests
        self.last_activity = time.monotonic()
        if self.client_set_hg and not self.transparent:
            self._restore_thread()
        if self.waiting and not self.once:
            self._take_client(self.waiting.pop(0))

    def _send(self, direction, data):
        """Forward now, or queue for later when a delay is set."""
        if self.delay[direction] > 0:
            self.queue[direction].append((time.monotonic() + self.delay[direction], data))
            return True
        return self._write(direction, data)

    def _write(self, direction, data):
        if direction == "up":
            self.up.sendall(data)
            return True
        if self.client is None:
            self.held_down += data
            return True
        try:
            self.client.sendall(data)
        except OSError:
            self._drop_client()
        return True

    def _flush_due(self):
        now = time.monotonic()
        for direction in ("up", "down"):
            q = self.queue[direction]
            while q and q[0][0] <= now:
                self._write(direction, q.pop(0)[1])

    def _next_timeout(self):
        due = [q[0][0] for q in self.queue.values() if q]
        t = self.last_activity + self.idle_s - time.monotonic()
        if due:
            t = min(t, min(due) - time.monotonic())
        return max(0.0, t)

    def run(self):
        while True:
            if self.once and self.clients and self.client is None and not self.queue["up"]:
                if self.hold:
                    # Quiet until told to go: the caller times a client's whole
                    # process, whose end this proxy's own must not compete with.
                    self.sel.unregister(self.listener)
                    self.listener.close()
                    time.sleep(self.idle_s)
                    return "the client left (--once --hold), no signal for %g s" % self.idle_s
                return "the client left (--once)"
            events = self.sel.select(self._next_timeout())
            self._flush_due()
            if not events and not any(self.queue.values()):
                if time.monotonic() - self.last_activity >= self.idle_s:
                    return "no traffic for %g s" % self.idle_s
            for key, _ in events:
                what = key.data
                if what == "listen":
                    conn, _ = self.listener.accept()
                    if self.client is not None:
                        # One client at a time: the next waits, unread, until this one
                        # leaves.  (Its leaving may be the next event of this very select:
                        # a client that starts as soon as the last one exited.)
                        self.waiting.append(conn)
                        continue
                    self._take_client(conn)
                elif what == "client":
                    try:
                        data = self.client.recv(CHUNK)
                    except OSError:
                        data = b""
                    if not data:
                        self._drop_client()
                        continue
                    self.last_activity = time.monotonic()
                    self.total["up"].feed(data)
                    self.clients[-1]["up"].feed(data)
                    self._watch("up", self.total["up"])
                    try:
                        self._send("up", data)
                    except OSError as exc:
                        return "upstream write failed: %s" % exc
                elif what == "up":
                    try:
                        data = self.up.recv(CHUNK)
                    except OSError:
                        data = b""
                    if not data:
                        # Deliver what is still queued, then stop.
                        for due, chunk in self.queue["down"]:
                            self._write("down", chunk)
                        return "upstream closed"
                    self.last_activity = time.monotonic()
                    self.total["down"].feed(data)
                    self._watch("down", self.total["down"])
                    if self.client is not None:
                        self.clients[-1]["down"].feed(data)
                    self._send("down", data)

    def stats(self):
        return {
            "total": {d: c.as_dict() for d, c in self.total.items()},
            "clients": [{d: c.as_dict() for d, c in cl.items()} for cl in self.clients],
            "thread_restores": self.restores,
        }


def _terminated(signum, frame):
    raise KeyboardInterrupt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("upstream", help="HOST:PORT or unix:PATH")
    ap.add_argument("--listen", default="127.0.0.1", help="address to listen on (loopback)")
    ap.add_argument("--idle", type=float, default=300.0,
                    help="exit after this many seconds without a client or traffic")
    ap.add_argument("--connect-timeout", type=float, default=10.0,
                    help="seconds to keep retrying the upstream connection")
    ap.add_argument("--delay-ms", type=float, default=0.0, help="delay both directions")
    ap.add_argument("--delay-up-ms", type=float, default=None, help="client to stub")
    ap.add_argument("--delay-down-ms", type=float, default=None, help="stub to client")
    ap.add_argument("--stats", metavar="FILE", help="write JSON counters here on exit")
    ap.add_argument("--once", action="store_true",
                    help="exit when the first client leaves (a fresh upstream per client)")
    ap.add_argument("--hold", action="store_true",
                    help="with --once: after the client leaves, exit on SIGTERM (or --idle)")
    ap.add_argument("--transparent", action="store_true",
                    help="never send anything of our own (no Hg restore between clients)")
    args = ap.parse_args()
    if args.delay_up_ms is None:
        args.delay_up_ms = args.delay_ms
    if args.delay_down_ms is None:
        args.delay_down_ms = args.delay_ms
    if min(args.delay_up_ms, args.delay_down_ms) < 0 or args.idle <= 0:
        ap.error("delays must be >= 0 and --idle > 0")

    try:
        up = connect_upstream(args.upstream, args.connect_timeout)
    except (OSError, ValueError) as exc:
        print("rsp_proxy: %s" % exc, file=sys.stderr)
        return 3
    family = socket.AF_INET6 if ":" in args.listen else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.listen, 0))
    listener.listen(1)
    print(listener.getsockname()[1], flush=True)

    proxy = Proxy(up, listener, args)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        why = proxy.run()
    except KeyboardInterrupt:
        why = "interrupted"
    finally:
        if args.stats:
            tmp = args.stats + ".tmp"
            with open(tmp, "w") as f:
                json.dump(proxy.stats(), f, indent=1)
                f.write("\n")
            os.replace(tmp, args.stats)
        if proxy.client is not None:
            proxy.client.close()
        for conn in proxy.waiting:
            conn.close()
        listener.close()
        up.close()
    print("rsp_proxy: %s" % why, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
