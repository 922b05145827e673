"""--exe names a FIFO nobody writes to: opening it blocks, and the run's deadline (or a refusal to
open what is not a regular file) must end the run anyway."""
import os

EXPECT = r"^rspwalk: .*(the run's deadline of 3 s has passed|not a regular file|FIFO|fifo)"


def args(tmp):
    path = os.path.join(tmp, "fifo")
    os.mkfifo(path)
    return ["--exe", path]
