#!/usr/bin/env bash
# tests/integration/run-qemu-aarch64.sh -- every fixture under qemu-aarch64 -cpu max,sve=off
# (-L /usr/aarch64-linux-gnu), behind rsp_proxy.py: rspwalk against gdb on the same stop.
# SVE off because gdb 13 cannot read an SVE signal frame ("Invalid vector length in signal
# frame", peers.md 0.4); run-qemu-aarch64-sve.sh covers qemu's default CPU without gdb.
IT_STUB=qemu
IT_ARCH=aarch64
IT_QEMU_CPU=max,sve=off
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_qemu_matrix
