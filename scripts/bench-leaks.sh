#!/usr/bin/env bash
# Benchmark arkdiff's leak-hunting work (dominators, retained sizes, the trend over a
# series, retainer paths) side by side with its peers on the same files. A benchmark,
# not a test: it prints a Markdown report and checks nothing.
#
# Usage: scripts/bench-leaks.sh [--dir DIR] [--records N] [--runs K] [--timeout SECS]
#
#   --dir DIR        folder holding leak-0.heapsnapshot .. leak-3.heapsnapshot
#                    (default: ${TMPDIR:-/tmp}/arkdiff-bench-leaks). When they are missing,
#                    they are made with Node by the shared fixture generator:
#                      node --max-old-space-size=8000 ../shared/fixtures/gen/leak.js DIR 4 N leak
#                    (path relative to the repository root; the project sits beside `shared`).
#   --records N      records leaked per phase when generating (default 115000, which makes
#                    the last snapshot about 300 MB); ignored when the snapshots exist.
#   --runs K         run each command K times and keep the fastest run (default 1).
#   --timeout SECS   give up on memlab after SECS seconds (default 1800); reported as
#                    "not finished".
#
# Rows measured, each with `/usr/bin/time -f "%e %M"` (wall seconds, max RSS of the largest
# process) after warming the page cache (LAST = DIR/leak-3.heapsnapshot):
#   1. arkdiff LAST --head-snapshot 0 --no-retained --top 0    parse only (nodes)
#   2. arkdiff LAST --head-snapshot 0 --top 0                  dominators + retained sizes
#   3. arkdiff DIR/leak-{0..3}.heapsnapshot --top 0            the whole leak hunt
#   4. Chrome DevTools' heap snapshot code (npm heap-snapshot-toolkit) loading LAST, which
#      computes dominators, retained sizes and distances (node --max-old-space-size=16000)
#   5. memlab analyze unbound-shape --snapshot-dir DIR         (every *.heapsnapshot in DIR)
#
# Rows 4 and 5 need Node and the npm packages; they are skipped with a note otherwise.
# The packages are looked for in REPO/node_modules, then in $BENCH_NODE_MODULES:
#   npm install --prefix DIR heap-snapshot-toolkit@1.1.3 memlab@2.0.5
#   BENCH_NODE_MODULES=DIR/node_modules scripts/bench-leaks.sh
#
# Prerequisites: cargo, /usr/bin/time (Debian package `time`), coreutils `timeout`;
# Node.js for generating the snapshots and for rows 4 and 5.
set -euo pipefail

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
}

die() {
  echo "bench-leaks: error: $*" >&2
  exit 1
}

dir=""
records=115000
runs=1
timeout_s=1800
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) [[ $# -ge 2 ]] || usage; dir=$2; shift 2 ;;
    --records) [[ $# -ge 2 ]] || usage; records=$2; shift 2 ;;
    --runs) [[ $# -ge 2 ]] || usage; runs=$2; shift 2 ;;
    --timeout) [[ $# -ge 2 ]] || usage; timeout_s=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "bench-leaks: unknown argument: $1" >&2; usage ;;
  esac
done
[[ $records =~ ^[1-9][0-9]*$ ]] || die "--records needs a positive integer, got '$records'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs needs a positive integer, got '$runs'"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout needs a positive number of seconds, got '$timeout_s'"
dir=${dir:-${TMPDIR:-/tmp}/arkdiff-bench-leaks}
dir=$(realpath -m -- "$dir")

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -f $root/Cargo.toml ]] || die "no Cargo.toml in $root (the script must stay in scripts/)"

[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing: install Debian's 'time' package (apt-get install time)"
command -v timeout > /dev/null || die "'timeout' (coreutils) is missing"
command -v cargo > /dev/null || die "cargo is missing"
have_node=false
if command -v node > /dev/null; then have_node=true; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-leaks.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- inputs -----------------------------------------------------------------------------
snaps=()
for i in 0 1 2 3; do snaps+=("$dir/leak-$i.heapsnapshot"); done
last=${snaps[3]}
missing=false
for f in "${snaps[@]}"; do [[ -f $f ]] || missing=true; done
if $missing; then
  gen=$(realpath -m -- "$root/../shared/fixtures/gen")
  [[ -f $gen/leak.js ]] || die "$dir has no leak-0..3.heapsnapshot, and the generator $gen/leak.js that makes them is missing (the project must sit beside the 'shared' folder)"
  $have_node || die "$dir has no leak-0..3.heapsnapshot, and 'node' is needed to generate them with $gen/leak.js"
  mkdir -p "$dir"
  echo "bench-leaks: generating leak-0..3.heapsnapshot in $dir ($records records per phase)..." >&2
  if ! node --max-old-space-size=8000 "$gen/leak.js" "$dir" 4 "$records" leak > "$work/gen.log" 2>&1; then
    cat "$work/gen.log" >&2
    die "generating the snapshots failed"
  fi
  for f in "${snaps[@]}"; do [[ -f $f ]] || die "the generator did not write $f"; done
fi

# --- build ------------------------------------------------------------------------------
if ! (cd "$root" && cargo build --release --quiet) > "$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  die "cargo build --release failed"
fi
arkdiff=$root/target/release/arkdiff
[[ -x $arkdiff ]] || die "cargo build did not produce $arkdiff"

# --- peers ------------------------------------------------------------------------------
nm_candidates=("$root/node_modules")
if [[ -n ${BENCH_NODE_MODULES:-} ]]; then nm_candidates+=("$BENCH_NODE_MODULES"); fi
toolkit="" memlab="" notes=()
for nm in "${nm_candidates[@]}"; do
  if [[ -z $toolkit && -f $nm/heap-snapshot-toolkit/index.js ]]; then toolkit=$nm/heap-snapshot-toolkit; fi
  if [[ -z $memlab && -x $nm/.bin/memlab ]]; then memlab=$nm/.bin/memlab; fi
done
install_hint="install with: npm install --prefix DIR heap-snapshot-toolkit@1.1.3 memlab@2.0.5, then set BENCH_NODE_MODULES=DIR/node_modules"
if ! $have_node; then
  notes+=("rows 4 and 5 skipped: node is not installed")
  toolkit="" memlab=""
else
  [[ -n $toolkit ]] || notes+=("DevTools row skipped: heap-snapshot-toolkit not found in ${nm_candidates[*]} ($install_hint)")
  [[ -n $memlab ]] || notes+=("memlab row skipped: node_modules/.bin/memlab not found in ${nm_candidates[*]} ($install_hint)")
fi

# Loads one snapshot fully with DevTools' code (heap-snapshot-toolkit's parse(), which runs
# the worker's initialization: dominators, retained sizes, distances) and prints the
# root's retained size. argv: index.js of the package, snapshot path.
read_devtools_js() {
  cat << 'EOF'
'use strict';
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');
const [pkg, snap] = process.argv.slice(1);
(async () => {
  const { parse } = await import(pathToFileURL(pkg).href);
  const s = await parse(fs.createReadStream(snap, 'utf-8'));
  const root = s.rootNodeIndex / s.nodeFieldCount;
  console.log(`nodes ${s.nodeCount}, root retained size ${s.retainedSizes[root]}`);
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
EOF
}
devtools_js=$(read_devtools_js)

# --- measuring --------------------------------------------------------------------------
# measure NAME LIMIT CMD...: runs CMD $runs times under /usr/bin/time (and `timeout LIMIT`
# when LIMIT > 0), sets wall/rss (KB) of the fastest run and status (ok|timeout|failed).
# stdout/stderr of the fastest run are kept in $work/NAME.out / $work/NAME.err.
measure() {
  local name=$1 limit=$2 k rc line w m
  shift 2
  wall="" rss="" status=ok
  for ((k = 0; k < runs; k++)); do
    rc=0
    if [[ $limit -gt 0 ]]; then
      /usr/bin/time -f "%e %M" -o "$work/time" timeout -k 30 "$limit" "$@" > "$work/run.out" 2> "$work/run.err" || rc=$?
    else
      /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/run.out" 2> "$work/run.err" || rc=$?
    fi
    line=$(tail -n 1 "$work/time")
    read -r w m <<< "$line"
    if [[ $limit -gt 0 && ($rc -eq 124 || $rc -eq 137) ]]; then
      status=timeout wall=$w rss=$m
      mv "$work/run.out" "$work/$name.out"; mv "$work/run.err" "$work/$name.err"
      return 0
    fi
    if [[ $rc -ne 0 ]]; then
      status=failed
      mv "$work/run.out" "$work/$name.out"; mv "$work/run.err" "$work/$name.err"
      echo "bench-leaks: $name exited with status $rc: $*" >&2
      tail -n 20 "$work/$name.err" >&2
      return 0
    fi
    if [[ -z $wall ]] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then
      wall=$w rss=$m
      mv "$work/run.out" "$work/$name.out"; mv "$work/run.err" "$work/$name.err"
    fi
  done
}

mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

rows=()
add_row() { # tool what input
  local shown_wall shown_rss
  case $status in
    ok) shown_wall=$wall shown_rss=$(mb "$rss") ;;
    timeout) shown_wall="not finished (> $timeout_s s)" shown_rss="≥ $(mb "$rss")" ;;
    *) shown_wall=failed shown_rss=- ;;
  esac
  rows+=("| $1 | $2 | $3 | $shown_wall | $shown_rss |")
}

# ratio A B: A / B with two decimals, or n/a.
ratio() {
  if [[ -z $1 || -z $2 ]]; then echo "n/a"; return; fi
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "n/a" }'
}

cat "${snaps[@]}" > /dev/null # warm the page cache

last_name=$(basename "$last")
series_name="leak-0..3 (4 files)"

measure parse 0 "$arkdiff" "$last" --head-snapshot 0 --no-retained --top 0
[[ $status == ok ]] || die "arkdiff (parse only) failed; see above"
add_row arkdiff "parse only (nodes, --no-retained)" "$last_name"

measure dom 0 "$arkdiff" "$last" --head-snapshot 0 --top 0
[[ $status == ok ]] || die "arkdiff (dominators) failed; see above"
add_row arkdiff "dominators + retained sizes, one snapshot" "$last_name"
dom_wall=$wall dom_rss=$rss

measure series 0 "$arkdiff" "${snaps[@]}" --top 0
[[ $status == ok ]] || die "arkdiff (series) failed; see above"
add_row arkdiff "leak hunt: trend, suspects, dominators, retainer paths" "$series_name"
series_wall=$wall series_rss=$rss

dt_wall="" dt_rss="" dt_status=skipped
if [[ -n $toolkit ]]; then
  measure devtools 0 node --max-old-space-size=16000 -e "$devtools_js" "$toolkit/index.js" "$last"
  add_row "Chrome DevTools (heap-snapshot-toolkit)" "load: dominators + retained sizes + distances" "$last_name"
  dt_status=$status
  if [[ $status == ok ]]; then
    dt_wall=$wall dt_rss=$rss
    notes+=("DevTools on $last_name: $(tail -n 1 "$work/devtools.out")")
  fi
fi

ml_wall="" ml_rss="" ml_status=skipped
if [[ -n $memlab ]]; then
  other=$(find "$dir" -maxdepth 1 -name '*.heapsnapshot' ! -name 'leak-[0-3].heapsnapshot' | wc -l)
  if [[ $other -gt 0 ]]; then
    notes+=("memlab also read $other other *.heapsnapshot file(s) in $dir")
  fi
  cd "$work" # whatever memlab writes to its working directory goes to the scratch folder
  measure memlab "$timeout_s" "$memlab" analyze unbound-shape --snapshot-dir "$dir"
  cd "$OLDPWD"
  add_row memlab "analyze unbound-shape (every snapshot: dominators, retained sizes)" "$series_name"
  ml_status=$status ml_wall=$wall ml_rss=$rss
fi

# arkdiff's own warnings (stderr) are part of the result.
for name in parse dom series; do
  if [[ -s $work/$name.err ]]; then
    while IFS= read -r line; do notes+=("arkdiff stderr ($name): $line"); done < <(head -n 5 "$work/$name.err")
  fi
done

# --- report -----------------------------------------------------------------------------
node_version=n/a memlab_version=n/a
if $have_node; then node_version=$(node --version); fi
if [[ -n $memlab ]]; then
  memlab_version=$(node -p 'require(process.argv[1]).version' "$(dirname "$(dirname "$memlab")")/memlab/package.json" 2> /dev/null || echo "?")
fi
toolkit_version=n/a
if [[ -n $toolkit ]]; then
  toolkit_version=$(node -p 'require(process.argv[1]).version' "$toolkit/package.json" 2> /dev/null || echo "?")
fi

echo "# arkdiff leak-hunt benchmark"
echo
echo "- machine: $(nproc) CPUs, $(uname -m)"
echo "- arkdiff: $("$arkdiff" --version) ($arkdiff)"
echo "- node: $node_version; memlab: $memlab_version; heap-snapshot-toolkit: $toolkit_version"
echo "- runs per command: $runs (best wall time, and the peak RSS of that run)"
echo "- inputs ($dir):"
for f in "${snaps[@]}"; do
  printf '  - %s: %s bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
echo
echo "| tool | what | input | wall s | peak RSS MB |"
echo "|---|---|---|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "Ratios:"
case $ml_status in
  ok)
    echo "- memlab wall / arkdiff series wall: $(ratio "$ml_wall" "$series_wall")"
    echo "- memlab RSS / arkdiff series RSS: $(ratio "$ml_rss" "$series_rss")"
    ;;
  timeout)
    echo "- memlab wall / arkdiff series wall: > $(ratio "$ml_wall" "$series_wall") (memlab not finished)"
    echo "- memlab RSS / arkdiff series RSS: ≥ $(ratio "$ml_rss" "$series_rss") (memlab not finished)"
    ;;
  *) echo "- memlab: $ml_status (no ratio)" ;;
esac
if [[ $dt_status == ok ]]; then
  echo "- DevTools wall / arkdiff dominators wall: $(ratio "$dt_wall" "$dom_wall")"
  echo "- DevTools RSS / arkdiff dominators RSS: $(ratio "$dt_rss" "$dom_rss")"
else
  echo "- DevTools: $dt_status (no ratio)"
fi
if [[ ${#notes[@]} -gt 0 ]]; then
  echo
  echo "Notes:"
  printf -- '- %s\n' "${notes[@]}"
fi
