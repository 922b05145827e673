#!/usr/bin/env bash
# tests/integration/run-qemu-opt-i386.sh -- issue 4's optimized fixtures under qemu-i386
# (lib.sh's it_run_opt_matrix).  Without CFI gdb cannot walk frameless x86 code (peers.md
# section 4): those cases are checked against the fixture's .rspwalk_expect only
# (docs/gdb-differences.md).
IT_STUB=qemu
IT_ARCH=i386
IT_OPT_EXPECT='*-O2nocfi-*'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_opt_matrix
