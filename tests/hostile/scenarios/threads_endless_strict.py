"""The thread list without end of threads_endless, with --all-threads: the cut list is an error."""
ARGS = ["--max-threads", "50", "--all-threads"]
EXPECT = r"^rspwalk: .*more than 50 threads \(--max-threads\) and --all-threads"

_next = [1]


def reply(stub, pkt):
    if pkt in (b"qfThreadInfo", b"qsThreadInfo"):
        ids = range(_next[0], _next[0] + 1000)
        _next[0] += 1000
        return b"m" + b",".join(b"%x" % i for i in ids)
    return stub.honest(pkt)
