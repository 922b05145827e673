#!/usr/bin/env bash
# tests/integration/run-threads.sh -- three threads blocked in libc (read, nanosleep, cond_wait),
# then main -> a -> b -> c stops; every thread is walked and matched by LWP.
# Stop methods s0 and s1, dynamic and static, under gdbserver: rspwalk against gdb (lib.sh).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_matrix threads
