#!/usr/bin/env bash
# tests/integration/run-chain.sh -- main -> a -> b -> c -> d -> e, and e stops.
# The plain case: five calls deep, frame pointers and CFI everywhere.
# Stop methods s0 and s1, dynamic and static, under gdbserver: rspwalk against gdb (lib.sh).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_matrix chain
