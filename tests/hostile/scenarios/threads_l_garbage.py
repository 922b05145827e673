"""qsThreadInfo answers 'l' followed by a line break, an escape sequence and a forged frame line:
the error that quotes the reply is one line, its control bytes escaped."""
EXPECT = r"^rspwalk: .*qsThreadInfo.*expected .m. or .l., got .l\\x0d\\x0a\\x1b\[2J"


def reply(stub, pkt):
    if pkt == b"qsThreadInfo":
        # '#' escaped as RSP binary data wants it ('}' then the byte xor 0x20)
        return b"l\r\n\x1b[2J}\x031  0x0000000000401000 in injected_frame ()"
    return stub.honest(pkt)
