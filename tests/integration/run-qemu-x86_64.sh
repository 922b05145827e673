#!/usr/bin/env bash
# tests/integration/run-qemu-x86_64.sh -- every fixture under qemu-x86_64 (-L /), behind
# rsp_proxy.py: rspwalk against gdb (with tests/integration/tdesc/qemu-x86_64-linux.xml) on
# the same stop.  qemu lists no libraries: rspwalk reads them from the r_debug link map.
IT_STUB=qemu
IT_ARCH=x86_64
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_qemu_matrix
