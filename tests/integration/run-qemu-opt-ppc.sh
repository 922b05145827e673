#!/usr/bin/env bash
# tests/integration/run-qemu-opt-ppc.sh -- issue 4's optimized fixtures under qemu-ppc
# (lib.sh's it_run_opt_matrix), all against gdb but coldbig-s0-O2nocfi-*: without CFI gdb
# stops in the cold part split.cold, entered by a jump (docs/gdb-differences.md section 6).
IT_STUB=qemu
IT_ARCH=ppc
IT_OPT_EXPECT='coldbig-s0-O2nocfi-*'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_opt_matrix
