#!/usr/bin/env bash
# tests/integration/run-qemu-opt-aarch64.sh -- issue 4's optimized fixtures under qemu-aarch64
# -cpu max,sve=off (lib.sh's it_run_opt_matrix).  Without CFI gdb 13's prologue analysis
# loses the alloca/VLA frames and loops in the frameless leaf a signal interrupted
# ("previous frame identical to this frame"), and stops in the cold part split.cold entered
# by a jump (coldbig): those are checked against the fixture's .rspwalk_expect only
# (docs/gdb-differences.md).
IT_STUB=qemu
IT_ARCH=aarch64
IT_QEMU_CPU=max,sve=off
IT_OPT_EXPECT='alloca-s0-O2nocfi-* sigleaf-s0-O2nocfi-* coldbig-s0-O2nocfi-*'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_opt_matrix
