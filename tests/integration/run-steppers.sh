#!/usr/bin/env bash
# tests/integration/run-steppers.sh -- one stepper at a time under gdbserver (x86_64), lib.sh's
# it_run_stepper_matrix: the wanderer alone on every fixture, the analysis alone on the ones
# without CFI.  Without CFI gdb cannot walk frameless x86 code (docs/gdb-differences.md
# section 6): those are checked against the fixture's expectation.  Left out for the
# wanderer: the stripped static program, where no symbol says which function a frame is in,
# so any call fits, and a pointer to main stored just after a call of abort passes for a
# return address.
IT_STEPPER_EXPECT='*-O2nocfi-*'
IT_WANDER_SKIP='chain-s0-O2-static-strip'
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
it_run_stepper_matrix

# A name that is no stepper: a one-line usage error (exit 2), before any connection.
it_bad_steppers() {
    local out rc
    out=$("$RSPWALK" --steppers stackbottom,nosuch 127.0.0.1:1 2>&1)
    rc=$?
    if [ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
        [[ $out == "rspwalk: --steppers: unknown stepper 'nosuch' (stackbottom, "* ]]; then
        echo "PASS $(it_label)/steppers-unknown-name"
        return 0
    fi
    echo "FAIL $(it_label)/steppers-unknown-name: exit $rc: $out"
    IT_FAILED=$((IT_FAILED + 1))
    return 1
}
it_bad_steppers
[ "$IT_FAILED" = 0 ]
