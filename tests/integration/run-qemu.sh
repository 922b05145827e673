#!/usr/bin/env bash
# tests/integration/run-qemu.sh [NAME...] -- the rows of qemu.tab: each row's cases under
# qemu-user (lib.sh's it_run_qemu_matrix, it_run_opt_matrix or it_run_stepper_matrix).
# tests/integration/run-qemu.sh --list -- the rows' names, one a line, in the table's order.
#
# Runs the rows NAMEd (default: every row) one after the other, each in a process of its own
# (lib.sh's temporary directory, counters and traps are a row's), with IT_STUB=qemu, IT_ARCH
# and the row's IT_* settings over the environment's; prints the case lines as lib.sh does.
# run-all runs each row as a job of its own (qemu:NAME), not this loop.
# Exit status: 0 when every case passed, 1 when one failed, 2 (before any case) when a NAME is
# not a row or qemu.tab has a line that is not one.

set -u

QT_DIR=$(cd "$(dirname "$0")" && pwd)
QT_TABLE=$QT_DIR/qemu.tab
QT_NAMES=()
declare -A QT_ROW=()
# One IT_VAR=VALUE of a row, then the rest of the row.
QT_SET_RE="^(IT_[A-Z0-9_]+)=('[^']*'|[^[:space:]']*)([[:space:]]+|$)(.*)$"

# qt_load: every row of qemu.tab into QT_NAMES (in order) and QT_ROW[NAME] (the row, its
# continuation lines joined); 1, naming the line on stderr, for a line that is no row.
qt_load() {
    local line next='' n=0 at name arch matrix rest var
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        at=$n
        while [[ $line == *\\ ]] && { IFS= read -r next || [ -n "$next" ]; }; do
            n=$((n + 1))
            line=${line%\\}$next
        done
        case $line in '#'* | '') continue ;; esac
        [[ $line =~ ^[[:space:]]*$ ]] && continue
        read -r name arch matrix rest <<<"$line"
        if ! [[ $name =~ ^[A-Za-z0-9_-]+$ ]] || [ -n "${QT_ROW[$name]+set}" ]; then
            echo "$QT_TABLE:$at: not a new row name: '$name'" >&2
            return 1
        fi
        case ${matrix:-} in
        qemu | opt | stepper) ;;
        *)
            echo "$QT_TABLE:$at: $name: no such matrix: '${matrix:-}' (qemu, opt or stepper)" >&2
            return 1
            ;;
        esac
        while [ -n "$rest" ]; do
            if ! [[ $rest =~ $QT_SET_RE ]]; then
                echo "$QT_TABLE:$at: $name: not IT_VAR=VALUE: $rest" >&2
                return 1
            fi
            var=${BASH_REMATCH[1]} rest=${BASH_REMATCH[4]}
            # A misspelt setting would change nothing and say nothing: only lib.sh's own,
            # and not the two the runner sets from the row itself.
            if [ "$var" = IT_STUB ] || [ "$var" = IT_ARCH ] ||
                ! grep -qw -- "$var" "$QT_DIR/lib.sh"; then
                echo "$QT_TABLE:$at: $name: not a setting of lib.sh's rows: $var" >&2
                return 1
            fi
        done
        QT_NAMES+=("$name")
        QT_ROW[$name]=$line
    done <"$QT_TABLE"
}

# qt_apply NAME: the row's IT_ARCH and settings as variables of this shell, for lib.sh.
qt_apply() {
    local name arch matrix rest var value
    read -r name arch matrix rest <<<"${QT_ROW[$1]}"
    IT_STUB=qemu
    IT_ARCH=$arch
    QT_MATRIX=$matrix
    while [[ $rest =~ $QT_SET_RE ]]; do
        var=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]} rest=${BASH_REMATCH[4]}
        value=${value#\'} && value=${value%\'}
        printf -v "$var" '%s' "$value"
    done
}

qt_load || exit 2
if [ "${1:-}" = --list ]; then
    printf '%s\n' "${QT_NAMES[@]}"
    exit 0
fi
for name in "$@"; do
    if [ -z "${QT_ROW[$name]+set}" ]; then
        echo "run-qemu.sh: no such row in $QT_TABLE: $name (--list names them)" >&2
        exit 2
    fi
done

if [ $# != 1 ]; then
    [ $# -gt 0 ] || set -- "${QT_NAMES[@]}"
    status=0
    for name in "$@"; do
        "$QT_DIR/run-qemu.sh" "$name" || status=1
    done
    exit "$status"
fi

# One row, in this process: lib.sh reads its settings when sourced.
qt_apply "$1"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$QT_DIR/lib.sh"
# shellcheck disable=SC2119  # a row runs the whole matrix: the script's NAME is no variant
case $QT_MATRIX in
qemu) it_run_qemu_matrix ;;
opt) it_run_opt_matrix ;;
stepper) it_run_stepper_matrix ;;
esac
