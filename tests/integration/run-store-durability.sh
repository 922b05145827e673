#!/usr/bin/env bash
# tests/integration/run-store-durability.sh -- rspwalkd's store keeps every stack it reported
# stored across a kill -9 of the process that stored it.
#
# Builds store_durability.c against server/store*.c and runs its rounds on one database in a
# temporary directory: a writer adds sample stacks, reporting each on a pipe once stored, and
# is killed with SIGKILL at a random moment; the reopened store must hold every reported stack
# byte for byte and pass PRAGMA integrity_check.  One line per round, "PASS ..." or
# "FAIL ...: why".  STORE_ROUNDS (default 12) and STORE_SEED (default: the time) select runs;
# a failure prints the seed that reproduces it.  The server-level kill -9 test is not this one.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

rounds=${STORE_ROUNDS:-12}
seed=${STORE_SEED:-$(date +%s%N)}
work=$IT_TMP/store
mkdir -p "$work"
if ! cc -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I"$IT_ROOT" \
    -o "$work/store_durability" "$IT_DIR/store_durability.c" "$IT_ROOT"/server/store*.c \
    -lsqlite3 -lpthread 2>"$work/cc.err"; then
    echo "FAIL store-durability/build: $(head -c 300 "$work/cc.err")"
    exit 1
fi
timeout 120 "$work/store_durability" "$work/state/rspwalkd.db" "$rounds" "$seed"
rc=$?
if [ "$rc" -gt 1 ]; then
    echo "FAIL store-durability/driver: exited $rc (seed $seed)"
fi
exit "$rc"
