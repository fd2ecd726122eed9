#!/usr/bin/env bash
# The CPU gate on run sets, measured on real repeated runs (docs/performance.md, "The CPU
# gate on run sets"): how often it fails an unchanged program (false alarms), and how often
# it catches one function made 10, 20 and 30% slower, with 5 runs against 5 and with 3
# runs of a pull request against a history of 20 runs. A benchmark, not a test: it prints
# a Markdown table.
#
# Usage: scripts/bench-cpu-gate.sh [--dir DIR] [--base-runs N] [--slow-runs N]
#                                  [--comparisons K] [--null-comparisons K]
#                                  [--limit PCT]... [--arkdiff BIN] [--seed S]
#                                  [--make-only]
#
#   --dir DIR        where the runs and the work files go (default
#                    ${TMPDIR:-/tmp}/arkdiff-cpu-gate); the runs are made once and kept
#                    in DIR/runs (delete it to make them again)
#   --base-runs N    runs of the unchanged program (default 120)
#   --slow-runs N    runs of each slowed variant (default 60)
#   --comparisons K  comparisons per row of a slowed variant (default 200)
#   --null-comparisons K
#                    comparisons per row of the unchanged program (default 1000)
#   --limit PCT      the limit of --max-function-self-growth, in percent (repeatable;
#                    default 10 and 5)
#   --arkdiff BIN    the binary (default target/release/arkdiff, built when missing)
#   --seed S         the seed of the random draws of runs (default 1)
#   --make-only      make the runs and stop
#   PRIO="chrt -f 50" (environment) runs each profiled program at real-time priority, as
#                    the project's figures were made on a shared machine
#
# The runs: `node --cpu-prof --no-turbo-inlining scripts/bench/cpu-gate-prog.js S`, ten
# functions from about 100 ms of self time down to about 3 ms; S = 0 (base), 0.1, 0.2 and
# 0.3 (hot() does that much more work: slow10, slow20, slow30). The variants take turns so
# that a machine getting busier weighs on all alike. Each base run is also summarized
# (`arkdiff summarize`), as a branch's history keeps it.
#
# Each comparison draws its runs at random, without replacement within the comparison:
#   unchanged, 5 vs 5:       5 base runs against 5 other base runs
#   unchanged, 3 vs 20:      3 base runs against the summaries of 20 other base runs
#   slowN, 5 vs 5:           5 base runs against 5 slowN runs
#   slowN, 3 vs 20:          3 slowN runs against the summaries of 20 base runs
# and runs `arkdiff BASE HEAD --max-function-self-growth PCT% --format json`. A false
# alarm is any violation on the unchanged program; a catch is a violation of hot().
# The rates come with Wilson 95% intervals; "hot detectable" is the median over the
# comparisons of what the report says these runs detect for hot() (gate.runs.tests).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${TMPDIR:-/tmp}/arkdiff-cpu-gate"
base_runs=120
slow_runs=60
comparisons=200
null_comparisons=1000
limits=()
bin=""
seed=1
make_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --dir) dir=$2; shift 2 ;;
    --base-runs) base_runs=$2; shift 2 ;;
    --slow-runs) slow_runs=$2; shift 2 ;;
    --comparisons) comparisons=$2; shift 2 ;;
    --null-comparisons) null_comparisons=$2; shift 2 ;;
    --limit) limits+=("$2"); shift 2 ;;
    --arkdiff) bin=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --make-only) make_only=1; shift ;;
    *) echo "bench-cpu-gate: unknown option $1" >&2; exit 2 ;;
    esac
done
[ ${#limits[@]} -gt 0 ] || limits=(10 5)
if [ -z "$bin" ]; then
    bin=target/release/arkdiff
    [ -x "$bin" ] || cargo build --release --locked --bin arkdiff >&2
fi
for tool in node jq awk; do
    command -v "$tool" >/dev/null || { echo "bench-cpu-gate: $tool is needed" >&2; exit 2; }
done
prog=$PWD/scripts/bench/cpu-gate-prog.js
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
runs=$dir/runs

# ---- The runs ----
one() { # VARIANT SLOWDOWN INDEX
    local out="$runs/$1" tmp
    mkdir -p "$out"
    tmp=$(mktemp -d)
    ${PRIO:-} node --cpu-prof --cpu-prof-dir="$tmp" --no-turbo-inlining "$prog" "$2"
    mv "$tmp"/*.cpuprofile "$out/$(printf 'run%03d' "$3").cpuprofile"
    rmdir "$tmp"
}
if [ ! -f "$runs/done" ]; then
    rm -rf "$runs"
    echo "making $base_runs base runs and $slow_runs of each slowed variant in $runs ..." >&2
    i=1
    done_slow=0
    while [ "$i" -le "$base_runs" ]; do
        one base 0 "$i"
        due=$((i * slow_runs / base_runs))
        while [ "$done_slow" -lt "$due" ]; do
            done_slow=$((done_slow + 1))
            one slow10 0.1 "$done_slow"
            one slow20 0.2 "$done_slow"
            one slow30 0.3 "$done_slow"
        done
        i=$((i + 1))
    done
    mkdir -p "$runs/summaries"
    runtime="node $(node --version)"
    for f in "$runs"/base/*.cpuprofile; do
        "$bin" summarize "$f" --runtime "$runtime" -q -o "$runs/summaries/$(basename "$f" .cpuprofile).json"
    done
    {
        echo "node $(node --version), $(uname -sm), $(nproc) cores"
        echo "PRIO=${PRIO:-}"
        date -u +%Y-%m-%dT%H:%M:%SZ
    } >"$runs/done"
fi
[ "$make_only" = 1 ] && exit 0

# ---- The comparisons ----
work=$dir/work
mkdir -p "$work"
draw=0
# pick K FROM_DIR...: K files drawn at random among those of the directories, one per line.
pick() {
    local k=$1
    shift
    draw=$((draw + 1))
    find "$@" -maxdepth 1 -type f \( -name '*.cpuprofile' -o -name '*.json' \) | sort |
        awk -v s="$seed" -v d="$draw" 'BEGIN { srand(s * 100003 + d) } { print rand() "\t" $0 }' |
        sort -n | cut -f2 | awk -v k="$k" 'NR <= k'
}
# fill DIR: a fresh directory holding links to the files read on stdin.
fill() {
    rm -rf "$1"
    mkdir -p "$1"
    while read -r f; do ln -s "$f" "$1/"; done
}
# compare NAME LIMIT EXTRA...: runs arkdiff on work/a and work/b; prints
# "<any violation> <hot violated> <hot detectable %>".
compare() {
    local limit=$1
    shift
    local code=0
    "$bin" "$work/a" "$work/b" --max-function-self-growth "$limit%" --quiet "$@" \
        --format json -o "$work/r.json" || code=$?
    if [ "$code" -ge 2 ]; then
        echo "bench-cpu-gate: arkdiff failed (exit $code)" >&2
        exit 2
    fi
    jq -r '[(.gate.violations | length > 0),
            (.gate.violations | map(select(.subject | startswith("hot "))) | length > 0),
            ((.gate.runs.tests // []) | map(select(.subject | startswith("hot ")) | select(.level == "fail"))
             | first | if . == null or .detectable == null then "null" else (100 * .detectable / .base) end)]
           | map(tostring) | join(" ")' "$work/r.json"
}
# wilson K N: "K of N (P%, 95% CI L–H%)".
wilson() {
    awk -v k="$1" -v n="$2" 'BEGIN {
        z = 1.959964; p = k / n; d = 1 + z * z / n
        c = (p + z * z / (2 * n)) / d; h = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
        lo = c - h; hi = c + h; if (lo < 0) lo = 0; if (hi > 1) hi = 1
        printf "%d of %d (%.1f%%, %.1f–%.1f%%)", k, n, 100 * p, 100 * lo, 100 * hi }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "–"; else if (NR % 2) printf "%.1f%%", v[(NR + 1) / 2]; else printf "%.1f%%", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# row LABEL LIMIT HEAD_VARIANT DESIGN [EXTRA...]: K comparisons; prints a table row.
row() {
    local label=$1 limit=$2 variant=$3 design=$4
    shift 4
    local any=0 hot=0 other=0 i=0 det="$work/detectable" count=$comparisons v h d
    [ "$variant" = base ] && count=$null_comparisons
    : >"$det"
    : >"$work/draws"
    while [ "$i" -lt "$count" ]; do
        i=$((i + 1))
        case "$design/$variant" in
        5v5/base)
            pick 10 "$runs/base" >"$work/drawn"
            head -n 5 "$work/drawn" | fill "$work/a"
            tail -n 5 "$work/drawn" | fill "$work/b"
            ;;
        3v20/base)
            pick 23 "$runs/base" >"$work/drawn"
            # The history holds the summaries of the first 20 runs drawn.
            head -n 20 "$work/drawn" | sed "s#/base/\(run[0-9]*\)\.cpuprofile#/summaries/\1.json#" | fill "$work/a"
            tail -n 3 "$work/drawn" | fill "$work/b"
            ;;
        5v5/*)
            # pick writes to a file, never into a pipe: in a pipe it would run in a
            # subshell, and its count of draws would not move on.
            pick 5 "$runs/base" >"$work/drawn"
            fill "$work/a" <"$work/drawn"
            pick 5 "$runs/$variant" >"$work/drawn"
            fill "$work/b" <"$work/drawn"
            ;;
        3v20/*)
            pick 20 "$runs/summaries" >"$work/drawn"
            fill "$work/a" <"$work/drawn"
            pick 3 "$runs/$variant" >"$work/drawn"
            fill "$work/b" <"$work/drawn"
            ;;
        esac
        # What was drawn, to count the distinct draws of the row.
        (cd "$work" && find a b -maxdepth 1 | sort | tr '\n' ' ' && echo) >>"$work/draws"
        read -r v h d <<<"$(compare "$limit" "$@")"
        [ "$v" = true ] && any=$((any + 1))
        [ "$h" = true ] && hot=$((hot + 1))
        [ "$v" = true ] && [ "$h" = false ] && other=$((other + 1))
        [ "$d" = null ] || echo "$d" >>"$det"
    done
    # Each comparison should draw runs of its own: a row whose draws repeat measures
    # one comparison many times over.
    local distinct
    distinct=$(sort -u "$work/draws" | wc -l)
    if [ "$count" -ge 20 ] && [ "$distinct" -lt $((count * 9 / 10)) ]; then
        echo "bench-cpu-gate: $label drew only $distinct distinct sets of runs in $count comparisons" >&2
        exit 2
    fi
    local result
    if [ "$variant" = base ]; then
        result="false alarms: $(wilson "$any" "$count")"
    else
        result="caught: $(wilson "$hot" "$count")"
        [ "$other" -eq 0 ] || result="$result; another function failed alone in $other"
    fi
    echo "| $label | $limit% | $result | $(median <"$det") |"
}

echo "runs: $(head -n1 "$runs/done"); $(sed -n 2p "$runs/done"); made $(sed -n 3p "$runs/done")"
echo "arkdiff: $("$bin" --version); $null_comparisons comparisons per row of the unchanged program, $comparisons per slowed one; seed $seed"
echo
echo "| comparison | limit | result | hot detectable (median) |"
echo "| --- | --- | --- | --- |"
for limit in "${limits[@]}"; do
    row "unchanged, 5 vs 5" "$limit" base 5v5
    row "unchanged, 3 vs 20 history" "$limit" base 3v20
    for v in slow10 slow20 slow30; do
        row "hot ${v#slow}% slower, 5 vs 5" "$limit" "$v" 5v5
        row "hot ${v#slow}% slower, 3 vs 20 history" "$limit" "$v" 3v20
    done
    row "hot 30% slower, 5 vs 5, --function hot" "$limit" slow30 5v5 --function hot
done
