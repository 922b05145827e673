"""The stop reply to '?' carries a hundred thousand fields (unknown names and register numbers
out of range), 1.5 MB: refused by the reply's size limit in one line, not parsed."""
EXPECT = r"^rspwalk: .*reply to '\?': longer than"


def reply(stub, pkt):
    if pkt == b"?":
        fields = b"".join(b"f%x:%x;" % (i, i) for i in range(50000))
        regs = b"".join(b"%x:0000000000000000;" % (1000 + i) for i in range(50000))
        return b"T05thread:01;" + fields + regs
    return stub.honest(pkt)
