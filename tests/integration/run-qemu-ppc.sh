#!/usr/bin/env bash
# tests/integration/run-qemu-ppc.sh -- every fixture under qemu-ppc (-L /usr/powerpc-linux-gnu),
# behind rsp_proxy.py: rspwalk against gdb on the same stop (lib.sh).
IT_STUB=qemu
IT_ARCH=ppc
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_qemu_matrix
