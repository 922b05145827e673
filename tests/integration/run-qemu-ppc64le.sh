#!/usr/bin/env bash
# tests/integration/run-qemu-ppc64le.sh -- every fixture under qemu-ppc64le
# (-L /usr/powerpc64le-linux-gnu), behind rsp_proxy.py: rspwalk against gdb on the same
# stop, except the signal fixtures: gdb 13 cannot unwind qemu 7.2's ppc64 signal trampoline
# (peers.md 0.4), so those are checked against the fixture's .rspwalk_expect only
# (docs/gdb-differences.md).
IT_STUB=qemu
IT_ARCH=ppc64le
IT_QEMU_EXPECT='signal-*'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_qemu_matrix
