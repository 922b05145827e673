#!/usr/bin/env bash
# tests/integration/run-signal.sh -- b raises SIGUSR1; the handler's callee d stops.
# The walk has to cross the kernel's signal frame to get back to b, a, main.
# Stop methods s0 and s1, dynamic and static, under gdbserver: rspwalk against gdb (lib.sh).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_matrix signal
