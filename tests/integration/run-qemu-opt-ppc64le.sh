#!/usr/bin/env bash
# tests/integration/run-qemu-opt-ppc64le.sh -- issue 4's optimized fixtures under qemu-ppc64le
# (lib.sh's it_run_opt_matrix).  gdb 13 cannot unwind qemu 7.2's ppc64 signal trampoline
# (peers.md 0.4), and without CFI stops in the cold part split.cold, entered by a jump: the
# sigleaf and coldbig-s0-O2nocfi cases are checked against the fixture's .rspwalk_expect
# only (docs/gdb-differences.md).
IT_STUB=qemu
IT_ARCH=ppc64le
IT_OPT_EXPECT='sigleaf-* coldbig-s0-O2nocfi-*'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_opt_matrix
