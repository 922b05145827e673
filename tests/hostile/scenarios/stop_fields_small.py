"""The stop reply to '?' carries 5000 fields of names no stub uses, within the reply's size limit:
ignored (as gdb ignores them) in bounded time, and the walk ends normally."""
EXPECT = None


def reply(stub, pkt):
    if pkt == b"?":
        fields = b"".join(b"zz%d:%x;" % (i, i) for i in range(5000))
        return b"T05thread:01;" + fields
    return stub.honest(pkt)
