#!/usr/bin/env python3
# tests/integration/oocd_stub.py -- a scripted stub that answers as OpenOCD's GDB server does.
#
# Serves a Cortex-M3 state recorded under qemu-system-arm (tests/integration/run-openocd.sh:
# the registers of the stop, RAM and code dumped by gdb) with the packets of OpenOCD's
# src/server/gdb_server.c and src/rtos/rtos.c (0.12 and after): qSupported with
# PacketSize=4000 and qXfer:memory-map:read+; '?' answered S05; qSymbol look-ups of the
# FreeRTOS names (src/rtos/FreeRTOS.c's list) that turn its RTOS threads on once every
# mandatory one is answered; then the threads by TCB address (qfThreadInfo in one reply,
# qsThreadInfo 'l', qC, qXfer:threads, qThreadExtraInfo), each task's 17 registers (r0-pc,
# xPSR) by Hg/g, others by 'p' from the CPU; memory reads anywhere answered, unreadable
# addresses with zeros (gdb_report_data_abort disabled, the default); %oocd_keepalive
# notifications before the replies to long reads; empty $O#4f keep-alives while the target
# runs.  The memory map is OpenOCD's (flash banks, the gaps between them reported as RAM) or,
# with --map regions, only the memory the board has.
# Usage: oocd_stub.py STATE_DIR LOG [--map openocd|regions] [--rtos freertos|zephyr|none]
#                    [--xfer-threads yes|no]
# Prints its port, serves one client, exits when it hangs up or after 60 s.  Every 'm' is
# logged to LOG ("m ADDR LEN"), every qSymbol answer ("sym NAME VALUE"), every resume
# ("run") and keep-alive console packet ("O").
import json
import os
import socket
import sys
import time

STATE = sys.argv[1]
LOG = open(sys.argv[2], "w", buffering=1)
OPTS = dict(zip(sys.argv[3::2], sys.argv[4::2]))
MAP = OPTS.get("--map", "openocd")
RTOS = OPTS.get("--rtos", "freertos")
# --xfer-threads no: qXfer:threads not offered (OpenOCD before 0.8 had none), so the client
# lists threads by qfThreadInfo, all in one reply.
XFER_THREADS = OPTS.get("--xfer-threads", "yes") == "yes"

regs = json.load(open(os.path.join(STATE, "regs.json")))
MEM = []  # (start, bytes)
for name, start in (("code.bin", 0x0), ("ram.bin", 0x20000000)):
    with open(os.path.join(STATE, name), "rb") as f:
        MEM.append((start, f.read()))

# The board: SSRAM1 (code) at 0, SSRAM2 at 0x20000000, 4 MiB each (the AN385).  OpenOCD's
# map names its flash banks and reports every gap as RAM up to the end of the address space
# (gdb_memory_map); the other map lists only what is there, as pyOCD's does.
REGIONS = [(0x0, 0x400000), (0x20000000, 0x400000)]
if MAP == "openocd":
    MEMORY_MAP = (b'<memory-map>\n<memory type="flash" start="0x00000000" length="0x400000">\n'
                  b'<property name="blocksize">0x1000</property>\n</memory>\n'
                  b'<memory type="ram" start="0x00400000" length="0xffc00000"/>\n</memory-map>\n')
else:
    MEMORY_MAP = (b'<memory-map>\n<memory type="ram" start="0x0" length="0x400000"/>\n'
                  b'<memory type="ram" start="0x20000000" length="0x400000"/>\n</memory-map>\n')

TARGET_XML = (
    b'<?xml version="1.0"?>\n<!DOCTYPE target SYSTEM "gdb-target.dtd">\n<target version="1.0">\n'
    b'<architecture>arm</architecture>\n<feature name="org.gnu.gdb.arm.m-profile">\n'
    + b"".join(b'<reg name="r%d" bitsize="32" regnum="%d" type="int" group="general"/>\n' % (i, i)
               for i in range(13))
    + b'<reg name="sp" bitsize="32" regnum="13" type="data_ptr" group="general"/>\n'
    b'<reg name="lr" bitsize="32" regnum="14" type="int" group="general"/>\n'
    b'<reg name="pc" bitsize="32" regnum="15" type="code_ptr" group="general"/>\n'
    b'<reg name="xPSR" bitsize="32" regnum="16" type="int" group="general"/>\n</feature>\n'
    b'<feature name="org.gnu.gdb.arm.m-system">\n'
    b'<reg name="msp" bitsize="32" regnum="17" type="data_ptr" group="system"/>\n'
    b'<reg name="psp" bitsize="32" regnum="18" type="data_ptr" group="system"/>\n'
    b'</feature>\n</target>\n')

# FreeRTOS.c's symbol list: (name, optional).
FREERTOS = [("pxCurrentTCB", False), ("pxReadyTasksLists", False),
            ("xDelayedTaskList1", False), ("xDelayedTaskList2", False),
            ("pxDelayedTaskList", False), ("pxOverflowDelayedTaskList", False),
            ("xPendingReadyList", False), ("xTasksWaitingTermination", True),
            ("xSuspendedTaskList", True), ("uxCurrentNumberOfTasks", False),
            ("uxTopUsedPriority", True), ("xSchedulerRunning", False)]
ZEPHYR = [("_kernel", False), ("_kernel_thread_info_offsets", False),
          ("_kernel_thread_info_num_offsets", False), ("_kernel_thread_info_size_t_size", True)]
SYMBOLS = {"freertos": FREERTOS, "zephyr": ZEPHYR, "none": []}[RTOS]

CPU = [regs["r%d" % i] for i in range(13)] + [regs["sp"], regs["lr"], regs["pc"], regs["xpsr"]]
# The tasks, by TCB address: the running one has the CPU's registers; the one SysTick
# interrupted has its context as a task switch would have stacked it (the registers of the
# interrupted frame, recorded by gdb); one task's saved SP lies where the board has no memory,
# one's in RAM nobody wrote (zeros), both with the PC after p1's call.
TASKS = [
    (0x20003000, "Tmr Svc", "Running", CPU),
    (0x20003100, "spinner", "Ready", [regs["int_r%d" % i] for i in range(13)]
     + [regs["int_sp"], regs["int_lr"], regs["int_pc"], regs["int_xpsr"]]),
    (0x20003200, "lost", "Blocked", [0] * 7 + [0x30000100] + [0] * 5
     + [0x30000100, 0, regs["p1_ret"], 0x01000000]),
    (0x20003300, "blank", "Suspended", [0] * 7 + [0x20200100] + [0] * 5
     + [0x20200100, 0, regs["p1_ret"], 0x01000000]),
]

state = {"sym": 0, "rtos": False, "thread": TASKS[0][0], "running": False}


def escape(data):
    out = bytearray()
    for b in data:
        if b in b"#$}*":
            out += bytes([0x7D, b ^ 0x20])
        else:
            out.append(b)
    return bytes(out)


def packet(body, kind=b"$"):
    return kind + body + b"#%02x" % (sum(body) & 0xFF)


def xfer(doc, rest):
    off, length = (int(x, 16) for x in rest.rsplit(b":", 1)[1].split(b","))
    part = doc[off:off + length]
    return (b"l" if off + length >= len(doc) else b"m") + escape(part)


def read_mem(addr, length):
    out = bytearray(length)  # unreadable: zeros, as OpenOCD answers by default
    for start, data in MEM:
        lo, hi = max(addr, start), min(addr + length, start + len(data))
        if lo < hi:
            out[lo - addr:hi - addr] = data[lo - start:hi - start]
    return bytes(out)


def task_regs():
    if not state["rtos"]:
        return CPU
    for tid, _, _, r in TASKS:
        if tid == state["thread"]:
            return r
    return CPU


def threads_xml():
    rows = b"".join(b'<thread id="%x">Name: %s, State: %s</thread>' % (t, n.encode(), s.encode())
                    for t, n, s, _ in TASKS)
    return b'<?xml version="1.0"?>\n<threads>' + rows + b"</threads>"


def qsymbol(body):
    # "qSymbol::" starts the look-ups; "qSymbol:VALUE:NAME" answers one ("qSymbol::NAME":
    # not found).  A mandatory symbol not found ends the look-ups without an RTOS.
    rest = body[len(b"qSymbol:"):]
    if rest != b":":
        value, name = rest.split(b":", 1)
        name = bytes.fromhex(name.decode()).decode()
        LOG.write("sym %s %s\n" % (name, value.decode() or "-"))
        want, optional = SYMBOLS[state["sym"]] if state["sym"] < len(SYMBOLS) else (None, True)
        if name == want:
            if not value and not optional:
                state["sym"] = len(SYMBOLS) + 1  # this RTOS is not there
                return b"OK"
            state["sym"] += 1
    else:
        state["sym"] = 0
    if state["sym"] < len(SYMBOLS):
        return b"qSymbol:" + SYMBOLS[state["sym"]][0].encode().hex().encode()
    if state["sym"] == len(SYMBOLS) and SYMBOLS:
        state["rtos"] = True
        state["thread"] = TASKS[0][0]
        LOG.write("rtos on\n")
    return b"OK"


def answer(body, conn):
    if body.startswith(b"qSupported"):
        return (b"PacketSize=4000;qXfer:memory-map:read+;qXfer:features:read+;"
                b"qXfer:threads:read%s;QStartNoAckMode+;vContSupported+"
                % (b"+" if XFER_THREADS else b"-"))
    if body == b"QStartNoAckMode":
        return b"OK"
    if body == b"?":
        return b"S05"
    if body.startswith(b"qXfer:features:read:target.xml:"):
        return xfer(TARGET_XML, body)
    if body.startswith(b"qXfer:memory-map:read::"):
        return xfer(MEMORY_MAP, body)
    if body.startswith(b"qXfer:threads:read::") and XFER_THREADS:
        return xfer(threads_xml() if state["rtos"] else b"<threads></threads>", body)
    if body.startswith(b"qSymbol:"):
        return qsymbol(body)
    if body.startswith(b"qfThreadInfo"):
        LOG.write("qfThreadInfo\n")
        if not state["rtos"]:
            return b"l"
        return b"m" + b",".join(b"%016x" % t for t, _, _, _ in TASKS)
    if body.startswith(b"qsThreadInfo"):
        return b"l"
    if body == b"qC":
        return b"QC%016x" % TASKS[0][0] if state["rtos"] else b"QC0"
    if body.startswith(b"qThreadExtraInfo,"):
        tid = int(body.split(b",")[1], 16)
        for t, n, s, _ in TASKS:
            if t == tid:
                return ("Name: %s, State: %s" % (n, s)).encode().hex().encode()
        return b"E01"
    if body.startswith(b"Hg") or body.startswith(b"Hc"):
        tid = int(body[2:], 16) if body[2:] not in (b"", b"-1") else 0
        if body.startswith(b"Hg") and tid != 0:
            state["thread"] = tid
        return b"OK"
    if body.startswith(b"T"):
        return b"OK"
    if body == b"g":
        return b"".join(w.to_bytes(4, "little").hex().encode() for w in task_regs())
    if body.startswith(b"p"):
        n = int(body[1:], 16)
        if n < 17:
            return task_regs()[n].to_bytes(4, "little").hex().encode()
        if n in (17, 18):
            return regs["msp" if n == 17 else "psp"].to_bytes(4, "little").hex().encode()
        return b"E0e"
    if body.startswith(b"m"):
        addr, length = (int(x, 16) for x in body[1:].split(b","))
        LOG.write("m %x %x\n" % (addr, length))
        if length >= 256:
            # A long read: OpenOCD's keep_alive() sends its notification meanwhile.
            conn.sendall(packet(b"oocd_keepalive:%02x" % (length & 0xFF), b"%"))
        return read_mem(addr, length).hex().encode()
    if body == b"D" or body.startswith(b"D;"):
        return b"OK"
    return b""


def stop_reply(sig):
    if state["rtos"]:
        return b"T%02xthread:%016x;" % (sig, TASKS[0][0])
    return b"T%02x" % sig


def main():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    print(srv.getsockname()[1], flush=True)
    srv.settimeout(60)
    try:
        conn, _ = srv.accept()
    except OSError:
        return
    deadline = time.monotonic() + 60
    buf = b""
    noack = False
    run_until = 0.0
    conn.settimeout(0.05)
    while time.monotonic() < deadline:
        if state["running"]:
            # While the target runs: an empty console packet every 50 ms (gdb_keep_client_alive),
            # and a stop of its own after a while (a breakpoint).
            conn.sendall(b"$O#4f")
            LOG.write("O\n")
            if time.monotonic() >= run_until:
                state["running"] = False
                conn.sendall(packet(stop_reply(5)))
        try:
            data = conn.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not data:
            break
        buf += data
        while True:
            buf = buf.lstrip(b"+-")
            if buf[:1] == b"\x03":
                buf = buf[1:]
                if state["running"]:
                    state["running"] = False
                    conn.sendall(packet(stop_reply(2)))
                continue
            start = buf.find(b"$")
            end = buf.find(b"#", start)
            if start < 0 or end < 0 or len(buf) < end + 3:
                break
            body = buf[start + 1:end]
            buf = buf[end + 3:]
            ack = b"" if noack else b"+"
            if body in (b"c", b"vCont;c") or body.startswith(b"vCont;c:"):
                conn.sendall(ack)
                state["running"] = True
                LOG.write("run\n")
                run_until = time.monotonic() + 0.3
                continue
            if body == b"vCont?":
                conn.sendall(ack + packet(b"vCont;c;C;s;S"))
                continue
            reply = answer(body, conn)
            if body == b"QStartNoAckMode":
                conn.sendall(b"+" + packet(reply))
                noack = True
                continue
            conn.sendall(ack + packet(reply))
            if body == b"D" or body.startswith(b"D;"):
                conn.close()
                return
    conn.close()


main()
