"""scripts/bench_server.py -- make bench's server part: rspwalkd against N rspwalk and N gdb runs.

For N = 1, 16, 64, 256 (BENCH_SERVER_NS) gdbserver targets of 4 threads each:
  stopped   threads-s0-O0-dyn at its stop (`rspwalk -c`): N sequential `rspwalk -f json`
            runs, N sequential gdb-multiarch `thread apply all bt` runs, then one rspwalkd
            with all N registered: GET /v1/stacks cold (the first after the links are up)
            and warm (nothing resumed since: answered from what the server has)
  running   tests/integration/server_spin.c, resumed through the API: GET /v1/stacks cold
            and warm, each target interrupted, walked and resumed; target 0 through a
            counting relay, which gives the packets and round trips of one warm snapshot
Plus requests per second of warm single-target snapshots (wrk, or Python threads without it)
and rspwalkd's resident memory per target.  Medians of BENCH_SERVER_RUNS (5) where repeated.
scripts/bench calls run() and writes section() into docs/bench.md.  Loopback only; kills
only what it started (tests/integration/srvlib.py).
"""

import http.client
import json
import os
import re
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests/integration"))
import srvlib  # noqa: E402

NS = [int(n) for n in os.environ.get("BENCH_SERVER_NS", "1 16 64 256").split()]
RUNS = int(os.environ.get("BENCH_SERVER_RUNS", "5"))
GDB = os.environ.get("GDB", "gdb-multiarch")
FIXTURE = "threads-s0-O0-dyn"
RPS_SECONDS = 5
RPS_CONNECTIONS = 8
# A packet's kind: Hg/Hc, a v or q/Q packet's name, else its first letter (m, g, p, c, ...).
LOAD = []  # the load average (1 min) when run() began and ended
RPS_TOTAL = [0]  # the requests of the last rps() run
PACKET_KIND = re.compile(rb"\$(H.|v[A-Za-z]+|[qQ][A-Za-z]+|[^#])")


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Tap:
    """A relay in front of one stub that counts what its client sends: packets ('$' frames and
    the interrupt byte) and round trips (bursts of client packets between stub replies; a
    burst of bare acks is none; a resume, which has no reply, ends its burst)."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.lock = threading.Lock()
        self.packets = 0
        self.round_trips = 0
        self.bursts = []  # per round trip: the packet kinds the client sent in it
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.port = self.lsock.getsockname()[1]
        self.stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    def counts(self):
        with self.lock:
            return self.packets, self.round_trips

    def count_kind(self, kind, first):
        """Packets of KIND sent in round trips FIRST.. ."""
        with self.lock:
            return sum(b.count(kind) for b in self.bursts[first:])

    def trips(self, first, last):
        """Round trips FIRST..LAST-1 as text: the packet kinds of each, trips apart by |."""
        with self.lock:
            return " | ".join(" ".join(b) for b in self.bursts[first:last])

    def _serve(self):
        while not self.stop:
            try:
                client, _ = self.lsock.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            self._relay(client, up)

    def _relay(self, client, up):
        for s in (client, up):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ, up)
        sel.register(up, selectors.EVENT_READ, client)
        replied = True  # the last bytes were the stub's: the next client bytes start a trip
        try:
            while True:
                for key, _ in sel.select():
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
                    if key.fileobj is client:
                        kinds = (["^C"] * data.count(b"\x03") +
                                 [m.group(1).decode(errors="replace")
                                  for m in PACKET_KIND.finditer(data)])
                        with self.lock:
                            self.packets += len(kinds)
                            if kinds and replied:
                                self.round_trips += 1
                                self.bursts.append([])
                                replied = False
                            if kinds:
                                self.bursts[-1] += kinds
                            # A resume has no reply: what follows it is a trip of its own.
                            if kinds and kinds[-1] in ("vCont", "c", "C"):
                                replied = True
                    elif data.strip(b"+"):
                        replied = True
        except OSError:
            return
        finally:
            sel.close()
            client.close()
            up.close()

    def close(self):
        self.stop = True
        self.lsock.close()


def gdb_bt(stub):
    r = subprocess.run([GDB, "-nx", "-batch", "-ex", "set debuginfod enabled off", "-ex",
                        "set sysroot /", "-ex", "set backtrace past-main on", "-ex",
                        "set pagination off", "-ex", "set confirm off", "-ex", "set remotetimeout 30",
                        "-ex", "file " + stub.prog, "-ex", "target remote " + stub.target, "-ex", "thread apply all bt",
                        "-ex", "disconnect"], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=120)
    frames = sum(1 for line in r.stdout.splitlines() if line.startswith("#"))
    if frames == 0:
        raise RuntimeError("gdb printed no frames: %s" % (r.stdout + r.stderr)[-200:])
    return frames


def timed_ms(fn, *args):
    t0 = time.monotonic()
    v = fn(*args)
    return v, (time.monotonic() - t0) * 1000.0


def snapshot_all(srv, n, threads=4):
    """GET /v1/stacks: (ms, the documents); RuntimeError unless all N have THREADS threads."""
    t0 = time.monotonic()
    st, ctype, raw = srv.request("GET", "/v1/stacks", timeout=300)
    ms = (time.monotonic() - t0) * 1000.0
    if st != 200:
        raise RuntimeError("GET /v1/stacks: %d %s" % (st, raw[:200]))
    docs = json.loads(raw)["targets"]
    bad = [d for d in docs if "error" in d or len(d.get("threads", [])) != threads]
    if len(docs) != n or bad:
        raise RuntimeError("GET /v1/stacks: %d documents for %d targets, %d without %d threads: %s"
                           % (len(docs), n, len(bad), threads,
                              (bad[0].get("error") if bad else "")))
    return ms, docs


def rps(srv, path, seconds=RPS_SECONDS, conns=RPS_CONNECTIONS):
    """Requests per second of GET PATH with CONNS keep-alive connections: wrk when installed,
    else Python threads.  (rate, non-2xx count, tool)."""
    url = "http://127.0.0.1:%d%s" % (srv.port, path)
    if shutil.which("wrk"):
        r = subprocess.run(["wrk", "-t2", "-c%d" % conns, "-d%ds" % seconds, url],
                           capture_output=True, text=True, timeout=seconds + 60)
        rate, non2xx = None, 0
        for line in r.stdout.splitlines():
            if line.startswith("Requests/sec:"):
                rate = float(line.split()[1])
            if " requests in " in line:
                RPS_TOTAL[0] = int(line.split()[0])
            if "Non-2xx or 3xx responses:" in line:
                non2xx = int(line.split()[-1])
        if rate is None:
            raise RuntimeError("wrk: %s" % (r.stdout + r.stderr)[-200:])
        return rate, non2xx, "wrk -t2 -c%d" % conns
    count, errors, lock = [0], [0], threading.Lock()
    deadline = time.monotonic() + seconds

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        while time.monotonic() < deadline:
            conn.request("GET", path)
            resp = conn.getresponse()
            resp.read()
            with lock:
                count[0] += 1
                errors[0] += resp.status != 200
        conn.close()
    ts = [threading.Thread(target=worker) for _ in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    RPS_TOTAL[0] = count[0]
    return count[0] / seconds, errors[0], "%d Python threads" % conns


def bench_stopped(n, work, cache, out):
    prog = os.path.join(srvlib.FIXTURES, "x86_64", FIXTURE)
    stubs = srvlib.start_many(work, prog, n, cache=cache, jobs=8, tag="s%d-" % n)
    try:
        # N sequential rspwalk runs and N gdb runs on the same stops, before the server holds
        # the links (gdbserver serves one client at a time).
        t0 = time.monotonic()
        for s in stubs:
            doc, err = srvlib.rspwalk(s.target, s.prog, "/", cache=cache)
            if doc is None or len(doc["threads"]) != 4:
                raise RuntimeError("rspwalk %s: %s" % (s.target, err[:200]))
        out["rspwalk_ms"] = (time.monotonic() - t0) * 1000.0
        # A gdb run that printed no frames (on a loaded machine gdb has given up on a
        # connection) is run again, and counted.
        t0 = time.monotonic()
        out["gdb_retried"] = 0
        for s in stubs:
            try:
                gdb_bt(s)
            except RuntimeError:
                out["gdb_retried"] += 1
                gdb_bt(s)
        out["gdb_ms"] = (time.monotonic() - t0) * 1000.0
        srv = srvlib.Server(work, db=os.path.join(work, "stopped-%d.db" % n),
                            env={"XDG_CACHE_HOME": cache}, name="stopped-%d" % n).start()
        try:
            base = rss_kib(srv.proc.pid)
            ids = [srv.add_target(s.target, exe=s.prog, sysroot=None) for s in stubs]
            for tid in ids:
                srv.wait_state(tid, ("stopped",), 120)
            out["cold_ms"], docs = snapshot_all(srv, n)
            warm = [snapshot_all(srv, n)[0] for _ in range(RUNS)]
            out["warm_stopped_ms"] = med(warm)
            out["stopped_rss_kib"] = rss_kib(srv.proc.pid)
            out["base_rss_kib"] = base
            out["frames"] = sum(len(t["frames"]) for d in docs for t in d["threads"])
            if n == 16:
                out["rps_stopped"] = rps(srv, "/v1/targets/%s/stacks" % ids[0])
        finally:
            srv.stop()
    finally:
        for s in stubs:
            s.kill()


def bench_running(n, work, cache, spin, out):
    stubs = [srvlib.Stub(work, spin, tag="r%d-%d" % (n, i)).launch() for i in range(n)]
    tap = None
    try:
        for s in stubs:
            s.wait_ready()
        tap = Tap(stubs[0].port)
        srv = srvlib.Server(work, db=os.path.join(work, "running-%d.db" % n),
                            env={"XDG_CACHE_HOME": cache}, name="running-%d" % n).start()
        try:
            targets = ["127.0.0.1:%d" % tap.port] + [s.target for s in stubs[1:]]
            ids = [srv.add_target(t, exe=spin, sysroot=None) for t in targets]
            for tid in ids:
                srv.wait_state(tid, ("stopped",), 120)
            for tid in ids:
                st, doc = srv.json("POST", "/v1/targets/%s/resume" % tid)
                if st not in (200, 202, 204):
                    raise RuntimeError("POST resume %s: %d %r" % (tid, st, doc))
            for tid in ids:
                srv.wait_state(tid, ("running",), 60)
            if not srvlib.wait_for(lambda: all(len(s.task_states()) == 4 for s in stubs), 60):
                raise RuntimeError("server_spin: not every copy has its 4 threads")
            time.sleep(0.3)
            out["cold_running_ms"], _ = snapshot_all(srv, n)
            warm, docs = [], None
            for _ in range(RUNS):
                ms, docs = snapshot_all(srv, n)
                warm.append(ms)
            out["warm_running_ms"] = med(warm)
            # One target alone, through the relay: what one warm snapshot sends.
            pk, rt, doc_rt = [], [], []
            for _ in range(RUNS):
                p0, r0 = tap.counts()
                doc = srv.stacks(ids[0])
                time.sleep(0.05)  # the resume, written after the answer, reaches the relay
                p1, r1 = tap.counts()
                pk.append(p1 - p0)
                rt.append(r1 - r0)
                doc_rt.append(doc.get("stats", {}).get("round_trips", 0))
            out["tap_packets"], out["tap_rt"] = med(pk), med(rt)
            out["tap_trips"] = tap.trips(r0, r1)
            # The document's counters: per walk, or the session's so far (then the differences).
            if all(b > a for a, b in zip(doc_rt, doc_rt[1:])):
                doc_rt = [b - a for a, b in zip(doc_rt, doc_rt[1:])]
            out["doc_rt"] = med(doc_rt)
            out["running_rss_kib"] = rss_kib(srv.proc.pid)
            if n == 16:
                out["rps_running"] = rps(srv, "/v1/targets/%s/stacks" % ids[1])
                # Through the relay: how many interrupts (walks) served how many requests.
                first = tap.counts()[1]
                rps(srv, "/v1/targets/%s/stacks" % ids[0], seconds=2)
                out["rps_walks"] = (tap.count_kind("^C", first), RPS_TOTAL[0])
        finally:
            srv.stop()
    finally:
        if tap:
            tap.close()
        for s in stubs:
            s.kill()


def run(work):
    """Every N: {"n", figures...}; errors as strings.  Never raises."""
    rows, errors = [], []
    LOAD.append(os.getloadavg()[0])
    cache = os.path.join(work, "server-cache")
    try:
        spin = srvlib.build_spin(os.path.join(work, "server-bin"))
    except srvlib.Failure as f:
        return rows, ["server: %s" % f.summary]
    for n in NS:
        out = {"n": n}
        for what, fn, args in (("stopped", bench_stopped, (n, work, cache, out)),
                               ("running", bench_running, (n, work, cache, spin, out))):
            t0 = time.monotonic()
            try:
                fn(*args)
            except (RuntimeError, OSError, ValueError, KeyError, srvlib.Failure,
                    subprocess.TimeoutExpired) as exc:
                errors.append("server N=%d %s: %s" % (n, what, getattr(exc, "summary", exc)))
                print("bench: %s" % errors[-1], file=sys.stderr)
            print("bench: server N=%d %s done in %.0f s" % (n, what, time.monotonic() - t0),
                  file=sys.stderr)
            srvlib.PROCS.stop_all()
        rows.append(out)
    LOAD.append(os.getloadavg()[0])
    return rows, errors


def fmt(v, nd=0):
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    return ("%%.%df" % nd) % v


def section(rows, errors):
    """The markdown lines of the server section."""
    L = ["## rspwalkd, the stack server", "",
         "scripts/bench_server.py. N gdbserver targets of 4 threads each on loopback, one",
         "rspwalkd (release build) with all of them registered; every time is the wall time of",
         "one HTTP request as the client sees it, median of %d where repeated. Load average" % RUNS,
         "(1 min) %s at the start of this part, %s at its end." % (
             fmt(LOAD[0], 1) if LOAD else "-", fmt(LOAD[-1], 1) if LOAD else "-"), "",
         "- *stopped*: `%s` at its stop. *rspwalk xN* and *gdb xN*: N sequential `rspwalk -f" % FIXTURE,
         "  json` runs (a process each, warm cache directory), and N gdb-multiarch runs (connect,",
         "  `thread apply all bt`, disconnect) on the same stops. *cold*: the first `GET",
         "  /v1/stacks` after all N links are up; *warm stopped*: the next ones (no target",
         "  resumed since: answered from what the server has).",
         "- *running*: tests/integration/server_spin.c (4 threads asleep), resumed through `POST",
         "  /v1/targets/ID/resume`; every `GET /v1/stacks` interrupts, walks and resumes each",
         "  target. *cold running*: the first; *warm running*: the next ones.",
         "- *RT/snapshot*: the round trips one warm snapshot of a running target (alone, `GET",
         "  /v1/targets/ID/stacks`) sends, counted by a relay in front of target 0 (bursts of",
         "  client packets between stub replies; the resume is one of them), the packets in",
         "  them, and the document's own `stats.round_trips` (per snapshot: the difference",
         "  between two when the document counts the session's).",
         "- *RSS/target*: rspwalkd's resident memory with the N targets walked, less its",
         "  resident memory before the first target, divided by N.", ""]
    hdr = ("| N | rspwalk xN ms | gdb xN ms | cold ms | warm stopped ms | cold running ms | "
           "warm running ms | RT/snapshot (relay packets; doc) | RSS/target KiB (stopped, running) |")
    L += [hdr, "|" + " --- |" * (hdr.count("|") - 1)]
    for r in rows:
        base = r.get("base_rss_kib")
        per = lambda k: (r[k] - base) / r["n"] if base and k in r else None  # noqa: E731
        L.append("| %d | %s | %s | %s | %s | %s | %s | %s (%s; %s) | %s, %s |" % (
            r["n"], fmt(r.get("rspwalk_ms"), 1), fmt(r.get("gdb_ms"), 1), fmt(r.get("cold_ms"), 1),
            fmt(r.get("warm_stopped_ms"), 1), fmt(r.get("cold_running_ms"), 1),
            fmt(r.get("warm_running_ms"), 1), fmt(r.get("tap_rt")), fmt(r.get("tap_packets")),
            fmt(r.get("doc_rt")), fmt(per("stopped_rss_kib")), fmt(per("running_rss_kib"))))
    L.append("")
    for r in rows:
        for key, what in (("rps_stopped", "a stopped target (answered from the cache)"),
                          ("rps_running", "a running target (each walk interrupts, walks and resumes it)")):
            if key in r:
                rate, non2xx, tool = r[key]
                L.append("- Warm single-target snapshots of %s: **%.0f requests per second** "
                         "(%s, %d s, N=%d; %d answers not 200)." % (what, rate, tool,
                                                                    RPS_SECONDS, r["n"], non2xx))
                if key == "rps_running" and r.get("rps_walks"):
                    walks, reqs = r["rps_walks"]
                    L.append("  Requests that arrive together share a walk: through the relay "
                             "(2 s), %d requests were answered by %d interrupts and walks." % (
                                 reqs, walks))
    for r in rows:
        if r.get("gdb_retried"):
            L.append("- N=%d: %d gdb run(s) printed no frames and were run again (in *gdb xN*)."
                     % (r["n"], r["gdb_retried"]))
    trips = {}
    for r in rows:
        if r.get("tap_trips"):
            trips.setdefault(r["tap_trips"], []).append(str(r["n"]))
    for text, ns in trips.items():
        L.append("- One warm snapshot of a running target as the relay saw it, N=%s (packet "
                 "kinds, round trips apart by |): `%s`." % (", ".join(ns), text))
    L += ["", "### Judged figures (server)", ""]
    big = [r for r in rows if r["n"] == 256]
    if big:
        r = big[0]
        for key, what in (("warm_stopped_ms", "warm stopped"), ("warm_running_ms", "warm running")):
            v = r.get(key)
            L.append("- 256 targets snapshot concurrently in under 1 s of wall time (%s): %s ms "
                     "-- **%s**." % (what, fmt(v, 1), "not measured" if v is None else
                                     "met" if v < 1000 else "NOT met"))
    rt = [r.get("tap_rt") for r in rows if r.get("tap_rt") is not None]
    if rt:
        worst = max(rt)
        L.append("- A warm snapshot of a running gdbserver target costs at most 2 round trips "
                 "(interrupt and stop reply, one batched read) plus the resume: %s round trips "
                 "counted by the relay, the resume included (worst over N) -- **%s**." % (
                     fmt(worst), "met" if worst <= 3 else "NOT met"))
    L.append("")
    if errors:
        L += ["Not measured (server):", ""] + ["- " + e for e in errors] + [""]
    return L


BEGIN = "<!-- bench_server: begin -->"
END = "<!-- bench_server: end -->"


def splice(doc_text, lines):
    """DOC_TEXT with the server section (between BEGIN and END) replaced by LINES, or added
    at the end."""
    block = "\n".join([BEGIN] + lines + [END])
    if BEGIN in doc_text and END in doc_text:
        head, rest = doc_text.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return doc_text.rstrip("\n") + "\n\n" + block + "\n"
