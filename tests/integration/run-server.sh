#!/usr/bin/env bash
# tests/integration/run-server.sh -- rspwalkd's HTTP API against fixtures under gdbserver and
# qemu-user, each stack checked against gdb's walk of the same stop (server_api.py says what
# each case checks).  Prints the case lines as lib.sh does; exit status 1 when one failed.
exec python3 "$(dirname "$0")/server_api.py" "$@"
