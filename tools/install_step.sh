#!/usr/bin/env bash
# One line per install step (`make venv`): what it does, then how long it took, so a two-minute
# install is never silent. The command's own output is kept for when it fails.
#     tools/install_step.sh "LABEL" COMMAND [ARGS...]
set -uo pipefail
label=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s ... ' "$label"
start=$SECONDS
"$@" >"$log" 2>&1
status=$?
if [ "$status" -ne 0 ]; then
    echo "failed (exit $status) after $((SECONDS - start)) s:"
    cat "$log" >&2
    exit "$status"
fi
echo "done in $((SECONDS - start)) s"
