#!/usr/bin/env bash
# tests/integration/run-opt.sh -- under gdbserver: the optimized fixtures
# (-O2 -fomit-frame-pointer with and without CFI; a tail call, alloca and VLA frames, a signal
# in a frameless leaf; stripped programs), lib.sh's it_run_opt_matrix.  Without CFI gdb cannot
# walk frameless x86 code: those cases are checked against the
# fixture's .rspwalk_expect only (docs/gdb-differences.md); rspwalk walks them with the
# wanderer (stack scanning).
IT_OPT_EXPECT='*-O2nocfi-*'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_opt_matrix
