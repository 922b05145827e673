#!/usr/bin/env bash
# tests/integration/run-qemu-steppers-i386.sh -- the analysis alone under qemu-i386 on the
# fixtures without CFI (lib.sh's it_run_stepper_matrix), checked against the fixture's
# expectation: without CFI gdb cannot walk frameless x86 code (docs/gdb-differences.md
# section 6).  The analysis runs with the debug stepper (analysis-cfi): it does not get
# through glibc's i386 __libc_start_main (not mine there, static or dynamic), whose CFI
# does; the fixture's own frames are still the analysis' (--fixture-callers analysis).
# The wanderer is left out on i386: the dynamic programs' libc (/lib32, libc6-i386) has no
# symbols, and in the static ones a syscall's `call *%gs:0x10` leaves return addresses in
# main's frame that pass for its caller's.
IT_STUB=qemu
IT_ARCH=i386
IT_STEPPER_EXPECT='*-O2nocfi-*'
IT_WANDER_SKIP='*'
IT_ANALYSIS_CFI='*'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_stepper_matrix
