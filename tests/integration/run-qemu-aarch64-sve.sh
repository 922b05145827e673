#!/usr/bin/env bash
# tests/integration/run-qemu-aarch64-sve.sh -- every fixture under qemu-aarch64 with its
# default CPU (max: SVE on, so signal frames carry an SVE context), checked against the
# fixture's .rspwalk_expect only: gdb 13 is no oracle here (docs/gdb-differences.md).
IT_STUB=qemu
IT_ARCH=aarch64
IT_ORACLE=expect
IT_LABEL_TAG=sve
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_qemu_matrix
