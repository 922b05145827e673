#!/usr/bin/env bash
# tests/integration/run-qemu-i386.sh -- every fixture under qemu-i386 (-L /: the host's
# /lib32 glibc), behind rsp_proxy.py: rspwalk against gdb (with tdesc/qemu-i386-linux.xml)
# on the same stop (lib.sh).
IT_STUB=qemu
IT_ARCH=i386
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_qemu_matrix
