#!/usr/bin/env bash
# tests/integration/run-qemu-steppers-ppc64.sh -- one stepper at a time under qemu-ppc64
# (lib.sh's it_run_stepper_matrix).  gdb cannot unwind qemu 7.2's ppc64 signal trampoline
# (docs/gdb-differences.md section 1): signal-* and sigleaf-* are checked against the
# fixture's expectation, and coldbig-s0-O2nocfi-* (without CFI gdb stops in split.cold,
# section 6).  Left out: the stripped programs (ELFv1 symbols name .opd
# descriptors, which compare.py --names-from does not follow, as in run-qemu-opt-ppc64.sh),
# for the wanderer the frames in the stripped cross libc and for the analysis alloca-*
# (both as in run-qemu-steppers-ppc.sh).
IT_STUB=qemu
IT_ARCH=ppc64
IT_STEPPER_EXPECT='signal-* sigleaf-* coldbig-s0-O2nocfi-*'
IT_WANDER_SKIP='*-s1-O0-dyn signal-*-dyn threads-*-dyn *-strip'
IT_ANALYSIS_SKIP='alloca-*'
IT_ANALYSIS_CFI='*-dyn'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_stepper_matrix
