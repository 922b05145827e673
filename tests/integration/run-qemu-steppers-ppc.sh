#!/usr/bin/env bash
# tests/integration/run-qemu-steppers-ppc.sh -- one stepper at a time under qemu-ppc (lib.sh's
# it_run_stepper_matrix): the wanderer alone, the analysis alone on the fixtures without
# CFI; all against gdb but coldbig-s0-O2nocfi-* (gdb stops in split.cold without CFI,
# docs/gdb-differences.md section 6), checked against the fixture's expectation.
# Left out for the wanderer: frames in the stripped cross libc (*-s1-*-dyn, signal-*-dyn,
# threads-*-dyn), as in run-qemu-steppers-aarch64.sh.
# Left out for the analysis: alloca-*: it does not walk the alloca and VLA frames on
# PowerPC (not mine at `al`); the default walk follows the back chain there (frame-func).
# The dynamic programs' analysis runs with the debug stepper for the stripped libc
# (analysis-cfi, see run-qemu-steppers-aarch64.sh).
IT_STUB=qemu
IT_ARCH=ppc
IT_STEPPER_EXPECT='coldbig-s0-O2nocfi-*'
IT_WANDER_SKIP='*-s1-O0-dyn signal-*-dyn threads-*-dyn'
IT_ANALYSIS_SKIP='alloca-*'
IT_ANALYSIS_CFI='*-dyn'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_stepper_matrix
