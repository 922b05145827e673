#!/usr/bin/env bash
# tests/integration/run-qemu-opt-ppc.sh -- issue 4's optimized fixtures under qemu-ppc
# (lib.sh's it_run_opt_matrix), all against gdb.
IT_STUB=qemu
IT_ARCH=ppc
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_opt_matrix
