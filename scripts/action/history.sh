#!/usr/bin/env bash
# The branch's run history for the composite action (action.yml): a directory of small
# per-run summaries that `arkdiff history` keeps (see docs/ci.md, "A CPU gate against the
# branch's history").
#
#   history.sh record     adds the runs of INPUT_RECORD (paths, one per line: profiles or
#                         directories of them) to INPUT_HISTORY, keeping the newest
#                         INPUT_KEEP runs (and none older than INPUT_MAX_AGE, if given)
#   history.sh head DIR   summarizes the runs of INPUT_HEAD into DIR, as the history's are,
#                         so that the two sides say alike where they ran
#
# Each summary records the runtime (INPUT_RUNTIME; by default `node --version` when node
# is on PATH) and the CPU model of this machine, which a .cpuprofile does not say, and,
# when recording, the commit (GITHUB_SHA) as the runs' label; their time is when they are
# recorded, which orders the history and ages it. ARKDIFF names the binary (default:
# arkdiff on PATH).
set -uo pipefail

bin=${ARKDIFF:-arkdiff}

# The paths of a multi-line input, one per line.
paths() {
    local line
    while IFS= read -r line; do
        line=${line%$'\r'}
        if [ -n "$line" ]; then
            printf '%s\0' "$line"
        fi
    done <<<"$1"
}

environment=()
runtime=${INPUT_RUNTIME:-}
if [ -z "$runtime" ] && command -v node >/dev/null 2>&1; then
    runtime="node $(node --version)"
fi
if [ -n "$runtime" ]; then
    environment+=(--runtime "$runtime")
fi
cpu=""
if [ -r /proc/cpuinfo ]; then
    cpu=$(grep -m1 -E '^model name' /proc/cpuinfo | cut -d: -f2-)
elif command -v sysctl >/dev/null 2>&1; then
    cpu=$(sysctl -n machdep.cpu.brand_string 2>/dev/null || true)
fi
cpu=$(echo "$cpu" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
if [ -n "$cpu" ]; then
    environment+=(--cpu-model "$cpu")
fi

if [ -z "${INPUT_HISTORY:-}" ]; then
    echo "::error title=arkdiff::the history input is empty"
    exit 2
fi

case ${1:-} in
record)
    mapfile -d '' runs < <(paths "${INPUT_RECORD:-}")
    if [ ${#runs[@]} -eq 0 ]; then
        echo "::error title=arkdiff::the record input is empty"
        exit 2
    fi
    args=(history "$INPUT_HISTORY" "${runs[@]}" --keep "${INPUT_KEEP:-30}" "${environment[@]}")
    if [ -n "${INPUT_MAX_AGE:-}" ]; then
        args+=(--max-age "$INPUT_MAX_AGE")
    fi
    if [ -n "${GITHUB_SHA:-}" ]; then
        args+=(--label "$GITHUB_SHA")
    fi
    "$bin" "${args[@]}"
    code=$?
    if [ "$code" -ne 0 ]; then
        echo "::error title=arkdiff::could not add the runs to the history $INPUT_HISTORY (exit $code)"
    fi
    exit "$code"
    ;;
head)
    out=${2:?history.sh head DIR}
    mapfile -d '' runs < <(paths "${INPUT_HEAD:-}")
    if [ ${#runs[@]} -eq 0 ]; then
        echo "::error title=arkdiff::with a history, the head input names the pull request's runs"
        exit 2
    fi
    rm -rf "$out"
    # Every run is kept: the directory holds only this job's runs.
    "$bin" history "$out" "${runs[@]}" --keep 1000000 --quiet "${environment[@]}"
    ;;
*)
    echo "history.sh: record, or head DIR" >&2
    exit 2
    ;;
esac
