"""tests/integration/srvlib.py -- shared steps of the rspwalkd tests and of make bench's server part.

Starts rspwalkd, gdbserver and qemu-user targets on loopback, brings fixtures to their stop
(`rspwalk -c`), asks gdb for its walk of the same stop (gdb_oracle.sh) and compares (compare.py):
the same oracle and comparison as lib.sh's cases, called, not copied.  Prints the case lines
run-all counts ("PASS name (N ms)" / "FAIL name: why", details indented).  Kills only the
processes it started, by pid.  Python 3 standard library only.
"""

import concurrent.futures
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RSPWALK = os.environ.get("RSPWALK", os.path.join(ROOT, "build/release/rspwalk"))
RSPWALKD = os.environ.get("RSPWALKD", os.path.join(ROOT, "build/release/rspwalkd"))
FIXTURES = os.path.join(ROOT, "build/fixtures")
SPIN_SRC = os.path.join(HERE, "server_spin.c")
SYSROOTS = {"x86_64": "/", "i386": "/", "aarch64": "/usr/aarch64-linux-gnu",
            "ppc": "/usr/powerpc-linux-gnu", "ppc64": "/usr/powerpc64-linux-gnu",
            "ppc64le": "/usr/powerpc64le-linux-gnu"}
# Error statuses the server may answer with (server/registry.h, enum srv_err).
# server/registry.h's enum srv_err, and the door's refusals (server/http.c: 401 token, 403 a
# path outside --allow-root, 405 method, 413 body size, 415 body type).
ERROR_STATUSES = {400, 401, 403, 404, 405, 409, 413, 415, 429, 500, 502, 503, 504}


class Failure(Exception):
    """One case's failure: a one-line summary and detail lines."""

    def __init__(self, summary, details=()):
        super().__init__(summary)
        self.summary = summary
        self.details = list(details)


class Procs:
    """Every process started here, killed by pid (process group of one) at the end."""

    def __init__(self):
        self.lock = threading.Lock()
        self.procs = []

    def start(self, args, **kw):
        kw.setdefault("stdin", subprocess.DEVNULL)
        p = subprocess.Popen(args, **kw)
        with self.lock:
            self.procs.append(p)
        return p

    def stop_all(self):
        with self.lock:
            procs, self.procs = self.procs, []
        for p in reversed(procs):
            if p.poll() is None:
                try:
                    p.kill()
                except OSError:
                    pass
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


PROCS = Procs()


def wait_for(pred, timeout=10.0, step=0.02):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


# ---- the server --------------------------------------------------------------------------


class Server:
    """rspwalkd on 127.0.0.1 port 0, its stderr in LOG; WRAP is a command prefix (valgrind).
    Clients may name files (exe, sysroot) under the tree, WORK and the cross sysroots only
    (--allow-root)."""

    def __init__(self, work, db=None, args=(), wrap=(), binary=None, env=None, name="rspwalkd"):
        self.work = work
        self.db = db or os.path.join(work, "rspwalkd.db")
        self.log = os.path.join(work, "%s.log" % name)
        roots = [ROOT, work] + [d for d in SYSROOTS.values() if d != "/" and os.path.isdir(d)]
        self.args = [a for r in roots for a in ("--allow-root", r)] + list(args)
        self.wrap = list(wrap)
        self.binary = binary or RSPWALKD
        self.env = env
        self.proc = None
        self.port = None

    def start(self, timeout=30.0):
        if not os.access(self.binary, os.X_OK):
            raise Failure("rspwalkd not built: %s (make %s)" % (self.binary,
                                                              os.path.relpath(self.binary, ROOT)))
        env = dict(os.environ)
        env.update(self.env or {})
        env.setdefault("XDG_STATE_HOME", os.path.join(self.work, "state"))
        env.setdefault("XDG_CACHE_HOME", os.path.join(self.work, "cache"))
        with open(self.log, "ab") as log:
            self.proc = PROCS.start(self.wrap + [self.binary, "--listen", "127.0.0.1:0",
                                                 "--db", self.db] + self.args,
                                    stdout=log, stderr=log, env=env)
        mark = "rspwalkd: listening on http://"

        def listening():
            try:
                with open(self.log, errors="replace") as f:
                    for line in f:
                        if line.startswith(mark) and line.endswith("/\n"):
                            return line[len(mark):].rstrip("/\n")
            except OSError:
                pass
            return None
        addr = wait_for(lambda: listening() or self.proc.poll() is not None, timeout)
        addr = listening()
        if not addr:
            raise Failure("rspwalkd did not start: %s" % self.tail())
        self.port = int(addr.rsplit(":", 1)[1])
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def tail(self, n=3):
        try:
            with open(self.log, errors="replace") as f:
                lines = [ln.rstrip() for ln in f if ln.strip()]
            return " | ".join(lines[-n:]) or "(no output)"
        except OSError:
            return "(no log)"

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self, timeout=60.0):
        """SIGTERM, then the exit status (None: had to be killed)."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            return None

    # -- HTTP --
    def request(self, method, path, body=None, timeout=60.0, headers=None):
        """(status, content type, body bytes); raises OSError when the server does not answer."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            hdrs = dict(headers or {})
            data = None
            if body is not None:
                data = body if isinstance(body, (bytes, str)) else json.dumps(body)
                if isinstance(data, str):
                    data = data.encode()
                hdrs.setdefault("Content-Type", "application/json")
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type", ""), resp.read()
        finally:
            conn.close()

    def json(self, method, path, body=None, timeout=60.0, expect=None):
        """(status, parsed body).  EXPECT: the status wanted, else Failure naming the answer."""
        status, ctype, raw = self.request(method, path, body, timeout)
        try:
            doc = json.loads(raw.decode()) if raw else None
        except ValueError:
            raise Failure("%s %s: %d, not JSON: %r" % (method, path, status, raw[:200]))
        if expect is not None and status != expect:
            raise Failure("%s %s: status %d, expected %d: %s"
                          % (method, path, status, expect, raw[:300].decode(errors="replace")))
        return status, doc

    def add_target(self, target, exe=None, sysroot=None, name=None):
        body = {"target": target}
        for k, v in (("exe", exe), ("sysroot", sysroot), ("name", name)):
            if v is not None:
                body[k] = v
        status, doc = self.json("POST", "/v1/targets", body)
        if status != 201 or not isinstance(doc, dict) or "id" not in doc:
            raise Failure("POST /v1/targets %s: %d %r" % (target, status, doc))
        return doc["id"]

    def target(self, tid):
        return self.json("GET", "/v1/targets/%s" % tid, expect=200)[1]

    def targets(self):
        doc = self.json("GET", "/v1/targets", expect=200)[1]
        return doc["targets"] if isinstance(doc, dict) else doc

    def wait_state(self, tid, states, timeout=30.0):
        """The target's record once its state is one of STATES, else Failure."""
        last = {}

        def ok():
            last["t"] = self.target(tid)
            return last["t"].get("state") in states
        if not wait_for(ok, timeout, 0.05):
            raise Failure("target %s: state %r after %.0f s, expected %s (error %r)"
                          % (tid, last["t"].get("state"), timeout, "/".join(states),
                             last["t"].get("error")))
        return last["t"]

    def stacks(self, tid, query=""):
        return self.json("GET", "/v1/targets/%s/stacks%s" % (tid, query), expect=200)[1]


class Events:
    """GET /v1/events read on a thread of its own: [(event, data)] as they come."""

    def __init__(self, server):
        self.events = []
        self.lock = threading.Lock()
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        self.conn.request("GET", "/v1/events", headers={"Accept": "text/event-stream"})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        event, data = "message", []
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    return
                line = line.decode(errors="replace").rstrip("\r\n")
                if line == "":
                    if data:
                        with self.lock:
                            self.events.append((event, "\n".join(data)))
                    event, data = "message", []
                elif line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip())
        except (OSError, ValueError):
            return

    def seen(self, pred):
        with self.lock:
            evs = list(self.events)
        for ev, data in evs:
            try:
                obj = json.loads(data)
            except ValueError:
                obj = None
            if pred(ev, obj):
                return True
        return False

    def close(self):
        try:
            self.conn.sock.shutdown(2)
        except (OSError, AttributeError):
            pass
        self.conn.close()


# ---- targets -----------------------------------------------------------------------------


class Stub:
    """A program under gdbserver (127.0.0.1) or qemu-user (-g SOCKET behind rsp_proxy.py)."""

    def __init__(self, work, prog, arch="x86_64", kind="gdbserver", cpu=None, port=0, tag=""):
        self.work = work
        self.prog = prog
        self.arch = arch
        self.kind = kind
        self.cpu = cpu
        self.sysroot = SYSROOTS[arch]
        self.want_port = port
        self.tag = tag or "%s-%d" % (os.path.basename(prog), id(self) & 0xFFFFFF)
        self.proc = None
        self.proxy = None
        self.port = None
        self.pid = None  # the inferior's pid (gdbserver) or qemu's (its main thread)

    @property
    def target(self):
        return "127.0.0.1:%d" % self.port

    @property
    def api_sysroot(self):
        """The "sysroot" to register: none for the host's own libraries."""
        return None if self.sysroot == "/" else self.sysroot

    def launch(self):
        """Start without waiting for the port (start many, then wait_ready each)."""
        if self.kind == "gdbserver":
            self.log = os.path.join(self.work, "gdbserver-%s.log" % self.tag)
            with open(self.log, "w") as log:
                self.proc = PROCS.start(["gdbserver", "127.0.0.1:%d" % self.want_port, self.prog],
                                        stdout=log, stderr=subprocess.STDOUT)
            return self
        sock = os.path.join(self.work, "qemu-%s.sock" % self.tag)
        if os.path.exists(sock):
            os.unlink(sock)
        self.log = os.path.join(self.work, "qemu-%s.log" % self.tag)
        cpu = ["-cpu", self.cpu] if self.cpu else []
        with open(self.log, "w") as log:
            self.proc = PROCS.start(["qemu-" + self.arch] + cpu + ["-L", self.sysroot, "-g", sock,
                                                                   self.prog],
                                    stdout=log, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        self.sock = sock
        return self

    def wait_ready(self, timeout=20.0):
        if self.kind == "gdbserver":
            def port():
                try:
                    text = open(self.log).read()
                except OSError:
                    return None
                for line in text.splitlines(True):
                    if line.startswith("Listening on port ") and line.endswith("\n"):
                        return int(line.split()[-1])
                return None
            self.port = wait_for(lambda: port() or self.proc.poll() is not None, timeout)
            self.port = port()
            if not self.port:
                raise Failure("gdbserver did not start: %s" % open(self.log).read()[-200:])
            for line in open(self.log):
                if line.startswith("Process ") and "created; pid = " in line:
                    self.pid = int(line.rsplit("=", 1)[1])
            return self
        if not wait_for(lambda: os.path.exists(self.sock) or self.proc.poll() is not None,
                        timeout):
            raise Failure("qemu-%s did not start" % self.arch)
        self.proxy = PROCS.start([sys.executable, os.path.join(ROOT, "tests/tools/rsp_proxy.py"),
                                  "--idle", "300", "unix:" + self.sock],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proxy.stdout.readline().strip()
        if not line.isdigit():
            raise Failure("rsp_proxy.py did not start for qemu-%s" % self.arch)
        self.port = int(line)
        return self

    def start(self):
        return self.launch().wait_ready()

    def kill(self):
        """The inferior (gdbserver's), then the stub; only these pids."""
        if self.kind == "gdbserver" and self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        for p in (self.proc, self.proxy):
            if p is not None and p.poll() is None:
                p.kill()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass

    def task_states(self):
        """{tid: state letter} of the inferior's threads from /proc ('t': stopped by the
        tracer, 'S': asleep, i.e. running)."""
        out = {}
        base = "/proc/%d/task" % self.pid
        try:
            for tid in os.listdir(base):
                with open("%s/%s/stat" % (base, tid)) as f:
                    out[int(tid)] = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            pass
        return out


def rspwalk(target, exe, sysroot, extra=(), cache=None, timeout=60):
    """`rspwalk -f json` of TARGET: (document or None, stderr)."""
    args = [RSPWALK, "-f", "json", "--sysroot", sysroot, "--exe", exe]
    if cache:
        args += ["--cache-dir", cache]
    r = subprocess.run(args + list(extra) + [target], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return json.loads(r.stdout), r.stderr


def to_stop(stub, cache=None):
    """Resume the fixture to its stop with `rspwalk -c` (it leaves it stopped there)."""
    doc, err = rspwalk(stub.target, stub.prog, stub.sysroot, ["-c"], cache)
    if doc is None:
        raise Failure("rspwalk -c %s (%s): %s" % (stub.target, os.path.basename(stub.prog),
                                                   err.splitlines()[0] if err else "failed"))
    return doc


def oracle(stub, out_path, timeout=60):
    """gdb's walk of the stub's stop into OUT_PATH (gdb_oracle.sh); Failure when gdb gives none."""
    env = dict(os.environ, ORACLE_TIMEOUT=str(timeout), ORACLE_SYSROOT=stub.sysroot)
    if stub.kind == "qemu" and stub.arch in ("x86_64", "i386"):
        env["ORACLE_TDESC"] = os.path.join(HERE, "tdesc/qemu-%s-linux.xml" % stub.arch)
    with open(out_path, "w") as out:
        r = subprocess.run([os.path.join(HERE, "gdb_oracle.sh"), stub.target, stub.prog],
                           stdout=out, stderr=subprocess.PIPE, text=True, env=env,
                           stdin=subprocess.DEVNULL, timeout=timeout + 15)
    if r.returncode != 0:
        raise Failure("gdb oracle failed (%d): %s" % (r.returncode, r.stderr.strip()[:200]))
    return out_path


def compare(stub, ours_path, oracle_path):
    """compare.py: the server's document against gdb's walk and the fixture's expectation."""
    args = [sys.executable, os.path.join(HERE, "compare.py"), "--exe", stub.prog]
    if stub.kind == "qemu":
        args += ["--main-lwp", str(stub.pid)]
    r = subprocess.run(args + [ours_path, oracle_path], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    if r.returncode != 0:
        lines = (r.stdout + r.stderr).strip().splitlines() or ["compare.py failed"]
        raise Failure(lines[0], lines[1:40])
    return r.stdout.strip()


def frames_key(doc):
    """{lwp: [(pc, function)]} of a stack document: what must not change across a stop."""
    return {t.get("lwp", t["id"]): [(f["pc"], f["function"]) for f in t["frames"]]
            for t in doc["threads"]}


def build_spin(work_dir):
    """tests/integration/server_spin.c built into WORK_DIR (once per source change)."""
    out = os.path.join(work_dir, "server_spin")
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(SPIN_SRC):
        return out
    os.makedirs(work_dir, exist_ok=True)
    r = subprocess.run(["cc", "-O0", "-g", "-pthread", "-o", out + ".tmp", SPIN_SRC],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure("cc server_spin.c: %s" % r.stderr.strip()[:300])
    os.replace(out + ".tmp", out)
    return out


def start_many(work, prog, n, kind="gdbserver", stop=True, cache=None, jobs=4, tag="t"):
    """N stubs of PROG, started together; each brought to its stop when STOP."""
    stubs = [Stub(work, prog, kind=kind, tag="%s%d" % (tag, i)).launch() for i in range(n)]
    for s in stubs:
        s.wait_ready()
    if stop:
        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            list(ex.map(lambda s: to_stop(s, cache), stubs))
    return stubs


# ---- reporting ---------------------------------------------------------------------------


class Report:
    """PASS/FAIL lines as lib.sh prints them; the exit status counts the failures."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.failed = 0
        self.passed = 0

    def case(self, name, fn, *args):
        t0 = time.monotonic()
        try:
            note = fn(*args)
        except Failure as f:
            self.failed += 1
            print("FAIL %s/%s: %s" % (self.prefix, name, f.summary), flush=True)
            for line in f.details[:80]:
                print("    " + line, flush=True)
            return False
        except Exception as exc:  # a broken test or a server that went away: one failed case
            self.failed += 1
            print("FAIL %s/%s: %s: %s" % (self.prefix, name, type(exc).__name__, exc), flush=True)
            return False
        self.passed += 1
        print("PASS %s/%s (%d ms)%s" % (self.prefix, name, (time.monotonic() - t0) * 1000,
                                         " " + note if isinstance(note, str) and note else ""),
              flush=True)
        return True

    def fail(self, name, why):
        self.failed += 1
        print("FAIL %s/%s: %s" % (self.prefix, name, why), flush=True)


def workdir(name):
    base = os.environ.get("TMPDIR", "/tmp")
    return tempfile.mkdtemp(prefix="rspwalk-%s." % name, dir=base)


def cleanup(work, keep_on_failure=None):
    PROCS.stop_all()
    if keep_on_failure:
        dest = os.path.join(ROOT, "build/integration", keep_on_failure)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(work, dest, ignore=shutil.ignore_patterns("*.sock", "cache", "state"),
                        ignore_dangling_symlinks=True)
    shutil.rmtree(work, ignore_errors=True)
