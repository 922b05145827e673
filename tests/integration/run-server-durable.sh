#!/usr/bin/env bash
# tests/integration/run-server-durable.sh -- rspwalkd killed with SIGKILL in the middle of a
# sample and started again on the same --db: targets, snapshots and every sample tick it
# reported as stored are back (server_durable.py).  Prints the case lines as lib.sh does.
exec python3 "$(dirname "$0")/server_durable.py" "$@"
