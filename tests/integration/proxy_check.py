#!/usr/bin/env python3
"""tests/integration/proxy_check.py -- tests/tools/rsp_proxy.py in front of gdbserver.

usage: proxy_check.py PROGRAM [PROXY]

Starts gdbserver on PROGRAM (a loopback port it picks; the threads fixture, whose trap stops
it with its threads started) and the proxy (PROXY, by default tests/tools/rsp_proxy.py) in
front of it, then:
  proxy/back-to-back  200 clients one after another, each connecting as soon as the last one
                      closed (as the tests run rspwalk, then gdb): every one answered `qC`;
  proxy/waiting       a client that connects while another is served is answered once that
                      one leaves, not before (no bytes), and not dropped;
  proxy/thread        a client that left with `Hg` on another thread: the next one's `g`
                      without `Hg` reads the stopped thread's registers again (as gdb does).
Prints "PASS proxy/NAME: ..." or "FAIL proxy/NAME: why" per case; exits 1 if any failed.
Python 3 standard library only.  Kills only what it started.
"""
import os
import socket
import subprocess
import sys
import time

PROXY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../tools/rsp_proxy.py")


def pkt(d):
    return b"$" + d + b"#%02x" % (sum(d) & 255)


def ask(s, d, timeout=10.0):
    """The reply payload to D (acked), or None when the proxy closed the connection or sent
    nothing for TIMEOUT seconds."""
    buf = b""
    try:
        s.settimeout(timeout)
        s.sendall(pkt(d))
        while True:
            x = s.recv(65536)
            if not x:
                return None
            buf += x
            i = buf.find(b"$")
            j = buf.find(b"#", i + 1) if i >= 0 else -1
            if j >= 0 and len(buf) >= j + 3:
                s.sendall(b"+")
                return buf[i + 1:j]
    except OSError:  # reset, broken pipe, timeout
        return None


def main():
    prog = sys.argv[1]
    proxy = sys.argv[2] if len(sys.argv) > 2 else PROXY
    procs, fails = [], 0
    try:
        gs = subprocess.Popen(["gdbserver", "127.0.0.1:0", prog], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        procs.append(gs)
        port = None
        deadline = time.monotonic() + 10
        while port is None and time.monotonic() < deadline:
            line = gs.stderr.readline()
            if line.startswith("Listening on port"):
                port = line.split()[-1]
        if port is None:
            print("FAIL proxy/setup: gdbserver did not start")
            return 1
        px = subprocess.Popen([sys.executable, proxy, "--idle", "60", "127.0.0.1:" + port],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(px)
        pport = int(px.stdout.readline())

        def client():
            return socket.create_connection(("127.0.0.1", pport), timeout=10)

        n, dropped = 200, 0
        for _ in range(n):
            s = client()
            if ask(s, b"qC") is None:
                dropped += 1
            s.close()
        if dropped:
            print("FAIL proxy/back-to-back: %d of %d clients dropped unanswered" % (dropped, n))
            fails += 1
        else:
            print("PASS proxy/back-to-back: %d clients one after another, every one answered" % n)

        a = client()
        ask(a, b"qC")
        b = client()
        b.sendall(pkt(b"qC"))
        b.settimeout(0.3)
        try:
            early = b.recv(100) or b"(closed)"
        except socket.timeout:
            early = None
        except ConnectionResetError:
            early = b"(reset)"
        a.close()
        late = ask(b, b"qC")  # the first qC's reply comes first; this one follows
        b.close()
        if early is not None:
            print("FAIL proxy/waiting: the waiting client got %r while another was served" % early)
            fails += 1
        elif late is None:
            print("FAIL proxy/waiting: the waiting client was dropped when its turn came")
            fails += 1
        else:
            print("PASS proxy/waiting: nothing while the first client was served, "
                  "answered once it left")

        # To the fixture's trap, its threads started; then another thread's registers.
        c = client()
        stop = ask(c, b"vCont;c", timeout=30) or b""
        tid = stop.split(b"thread:")[1].split(b";")[0] if b"thread:" in stop else b""
        listed, r = [], ask(c, b"qfThreadInfo")
        while r and r[:1] == b"m":
            listed += r[1:].split(b",")
            r = ask(c, b"qsThreadInfo")
        others = [t for t in listed if t != tid]
        ask(c, b"Hg" + tid)
        mine = ask(c, b"g")
        theirs = ask(c, b"Hg" + others[0]) and ask(c, b"g") if others else None
        c.close()
        d = client()
        after = ask(d, b"g")
        d.close()
        if not tid or theirs is None:
            print("FAIL proxy/thread: no trap stop with a second thread (stop %r, threads %r)"
                  % (stop[:60], listed))
            fails += 1
        elif theirs == mine:
            print("FAIL proxy/thread: two threads with the same registers: nothing to tell apart")
            fails += 1
        elif after != mine:
            print("FAIL proxy/thread: after a client's Hg%s, a bare g read %s, not the stopped "
                  "thread %s" % (others[0].decode(), "that thread" if after == theirs else
                                 repr(after), tid.decode()))
            fails += 1
        else:
            print("PASS proxy/thread: after a client's Hg to another of %d threads, the next "
                  "client's bare g reads the stopped thread %s" % (len(listed), tid.decode()))
    finally:
        for p in procs:
            p.kill()
            p.wait()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
