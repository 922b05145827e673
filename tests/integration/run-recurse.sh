#!/usr/bin/env bash
# tests/integration/run-recurse.sh -- rec() calls itself 200 frames deep, then stops.
# A long walk: depth limits, the cost of many frames, identical frames.
# Stop methods s0 and s1, dynamic and static, under gdbserver: rspwalk against gdb (lib.sh).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_matrix recurse
