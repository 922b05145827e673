#!/usr/bin/env bash
# tests/integration/run-qemu-steppers-aarch64.sh -- one stepper at a time under qemu-aarch64
# -cpu max,sve=off (lib.sh's it_run_stepper_matrix): the wanderer alone, the analysis alone
# on the fixtures without CFI.  gdb is known wrong on alloca-s0-O2nocfi-*,
# sigleaf-s0-O2nocfi-* and coldbig-s0-O2nocfi-* (docs/gdb-differences.md section 6): checked
# against the fixture's expectation.
# Left out for the wanderer, which must know the function a frame is in to tell a return
# address from a leftover: frames in the stripped cross libc (/usr/aarch64-linux-gnu has no
# .symtab, peers.md 4) -- raise's internals at the stop of *-s1-*-dyn, the code a signal
# interrupted in signal-*-dyn, the blocking calls and the clone3 bottom of threads-*-dyn --
# where the link register may be a leftover of a call the frame made, and the stripped
# static program, where no function has a name.
# In the dynamic programs the analysis runs with the debug stepper (analysis-cfi): it has
# no symbols to analyse the stripped libc's start code by, its CFI does; the fixture's own
# frames, which have no CFI, are still the analysis' (--fixture-callers analysis).
IT_STUB=qemu
IT_ARCH=aarch64
IT_QEMU_CPU=max,sve=off
IT_STEPPER_EXPECT='alloca-s0-O2nocfi-* sigleaf-s0-O2nocfi-* coldbig-s0-O2nocfi-*'
IT_WANDER_SKIP='*-s1-O0-dyn signal-*-dyn threads-*-dyn chain-s0-O2-static-strip'
IT_ANALYSIS_CFI='*-dyn'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_stepper_matrix
