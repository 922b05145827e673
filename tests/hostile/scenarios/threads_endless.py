"""qfThreadInfo and qsThreadInfo answer 'm' with a thousand new thread ids each, never 'l': with
--max-threads 50 the list is cut at 50, the first 50 are walked, and one warning says so."""
ARGS = ["--max-threads", "50"]
EXIT = 0
EXPECT = r"^rspwalk: warning: .*more than 50 threads: the first 50 are walked"

_next = [1]


def reply(stub, pkt):
    if pkt in (b"qfThreadInfo", b"qsThreadInfo"):
        ids = range(_next[0], _next[0] + 1000)
        _next[0] += 1000
        return b"m" + b",".join(b"%x" % i for i in ids)
    return stub.honest(pkt)
