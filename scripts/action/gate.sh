#!/usr/bin/env bash
# Runs arkdiff for the composite action (action.yml): annotations in the log, the
# Markdown report in the job summary, status/violations/report/html in the step's outputs.
# The exit code is arkdiff's: 0 pass (or warnings), 1 a fail-level threshold exceeded,
# 2 the inputs could not be compared.
#
# Reads INPUT_BASE (one path per line), INPUT_HEAD, INPUT_CONFIG, INPUT_ARGS (quoted
# as in a shell) and INPUT_COMMENT (never, always, on-violation: a pull-request comment
# through the gh CLI and GH_TOKEN); ARKDIFF names the binary (default: arkdiff on PATH).
# With INPUT_HISTORY (a branch's run history, scripts/action/history.sh) instead of
# INPUT_BASE, HEAD's runs are gated against the history.
set -uo pipefail

bin=${ARKDIFF:-arkdiff}
out_dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/arkdiff"
mkdir -p "$out_dir"
report="$out_dir/report.json"
html="$out_dir/report.html"
markdown="$out_dir/report.md"
errors="$out_dir/stderr.txt"
rm -f "$report" "$html" "$markdown" "$errors"

output() {
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
        echo "$1" >>"$GITHUB_OUTPUT"
    fi
}

args=()
while IFS= read -r line; do
    line=${line%$'\r'}
    if [ -n "$line" ]; then
        args+=("$line")
    fi
done <<<"${INPUT_BASE:-}"
if [ -n "${INPUT_HISTORY:-}" ]; then
    # HEAD's runs against the branch's history: summarized as the history's runs are, and
    # functions matched by name and script, since the history spans commits.
    if [ ${#args[@]} -gt 0 ]; then
        echo "::error title=arkdiff::give base or history, not both (the history is BASE)"
        output "status=error"
        exit 2
    fi
    if ! compgen -G "$INPUT_HISTORY/*.json" >/dev/null; then
        # The first pull requests come before main has recorded any run.
        echo "::warning title=arkdiff::the history $INPUT_HISTORY holds no runs yet, so nothing is gated (pushes to the main branch record them)"
        output "status=pass"
        output "violations=0"
        exit 0
    fi
    head_runs="$out_dir/head-runs"
    if ! bash "$(dirname "$0")/history.sh" head "$head_runs"; then
        output "status=error"
        exit 2
    fi
    args=("$INPUT_HISTORY" "$head_runs" --ignore-positions)
elif [ ${#args[@]} -eq 0 ]; then
    echo "::error title=arkdiff::the base input is empty (give base, or history and head)"
    output "status=error"
    exit 2
elif [ -n "${INPUT_HEAD:-}" ]; then
    args+=("$INPUT_HEAD")
fi
if [ -n "${INPUT_CONFIG:-}" ]; then
    args+=(--config "$INPUT_CONFIG")
fi
extra_args=${INPUT_ARGS:-}
if [ -n "${extra_args//[[:space:]]/}" ]; then
    # xargs splits the words as a shell would (quotes, backslashes) and runs nothing
    # but printf; lines are joined first, so the input may hold one option per line.
    words="$out_dir/args"
    if ! printf '%s' "${extra_args//$'\n'/ }" | xargs printf '%s\0' >"$words" 2>/dev/null; then
        echo "::error title=arkdiff::the args input has an unmatched quote"
        output "status=error"
        exit 2
    fi
    mapfile -d '' extra <"$words"
    args+=("${extra[@]}")
fi

# arkdiff writes the summary and the status outputs itself (--format github).
"$bin" "${args[@]}" --format github --format "json=$report" --format "html=$html" \
    --format "markdown=$markdown" 2>"$errors"
code=$?
cat "$errors" >&2

if [ -f "$report" ]; then
    output "report=$report"
fi
if [ -f "$html" ]; then
    output "html=$html"
fi
if [ "$code" -ge 2 ]; then
    output "status=error"
    # arkdiff's own errors start "arkdiff: error: ", the command line's "error: ".
    message=$(grep -m1 -E '^(arkdiff: )?error: ' "$errors" || echo "arkdiff exited with $code")
    message=${message#arkdiff: }
    message=${message#error: }
    message=${message//'%'/'%25'}
    message=${message//$'\r'/'%0D'}
    echo "::error title=arkdiff::${message}"
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        {
            echo "### arkdiff: error"
            echo
            echo "arkdiff stopped with exit $code (bad arguments, or inputs it could not read or compare):"
            echo
            echo '```text'
            cat "$errors"
            echo '```'
        } >>"$GITHUB_STEP_SUMMARY"
    fi
fi

# The pull-request comment: one per pull request, found again by its marker line.
comment=${INPUT_COMMENT:-never}
case $comment in
never | always | on-violation) ;;
*)
    echo "::warning title=arkdiff::comment: '$comment' is not never, always or on-violation; no comment"
    comment=never
    ;;
esac
pr=""
if [[ ${GITHUB_REF:-} =~ ^refs/pull/([0-9]+)/ ]]; then
    pr=${BASH_REMATCH[1]}
fi
if [ "$comment" != never ] && [ -n "$pr" ] && [ -f "$markdown" ]; then
    marker="<!-- arkdiff gate: ${GITHUB_WORKFLOW:-}/${GITHUB_JOB:-} -->"
    body="$out_dir/comment.md"
    { echo "$marker"; cat "$markdown"; } >"$body"
    comments="repos/${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}/issues/$pr/comments"
    existing=$(gh api "$comments" --paginate --jq ".[] | select(.body | startswith(\"$marker\")) | .id" 2>/dev/null | head -n1)
    # arkdiff has written violations=N to the step's outputs.
    violations=$(grep '^violations=' "${GITHUB_OUTPUT:-/dev/null}" 2>/dev/null | tail -n1)
    violations=${violations#violations=}
    if [ -n "$existing" ]; then
        gh api -X PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$existing" -F "body=@$body" >/dev/null ||
            echo "::warning title=arkdiff::could not update the pull-request comment (does the token have pull-requests: write?)"
    elif [ "$comment" = always ] || [ "${violations:-0}" != 0 ]; then
        gh api -X POST "$comments" -F "body=@$body" >/dev/null ||
            echo "::warning title=arkdiff::could not comment on the pull request (does the token have pull-requests: write?)"
    fi
fi
exit "$code"
