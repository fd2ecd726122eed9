#!/usr/bin/env bash
# Benchmark arkdiff's heap diff side by side with Chrome DevTools' own heap snapshot code on
# the same inputs: a pair of large snapshots of one process, and an htrace carrying both.
# A benchmark, not a test: it prints a Markdown table (wall time, CPU time over wall time,
# peak RSS, ratios). The one thing it checks is that the fast paths give the reference
# path's answer: each arkdiff row's JSON report equals the one of the same command with
# ARKDIFF_SEQUENTIAL=1 (every snapshot read on one thread), byte for byte.
#
# Usage: scripts/bench.sh [--dir DIR] [--runs K] [--synthetic] [--nodes N] [--smoke]
#
#   --dir DIR      where inputs are made and kept (default ${TMPDIR:-/tmp}/arkdiff-bench)
#   --runs K       run each command K times and keep the median (default 3)
#   --synthetic    make the snapshots with arkdiff's own generator even when Node.js is
#                  present (it is used anyway when Node.js is missing)
#   --nodes N      nodes of the synthetic HEAD snapshot (default 5500000, about 300 MB);
#                  BASE has 90% of them
#   --smoke        a small synthetic run (60000 nodes, one run, no peers): checks that
#                  every row works; what CI runs
#
# Inputs (made once, kept in DIR):
#   with Node.js:  node --max-old-space-size=8000 scripts/bench/heap-workload.js DIR 310000 40000
#                  -> heap-0.heapsnapshot (about 270 MB) and heap-1.heapsnapshot (about 305 MB)
#   otherwise:     cargo run --release --example bench-inputs -- snapshot N ...
#   both:          cargo run --release --example bench-inputs -- htrace pair.htrace heap-0 heap-1
#   and            cargo run --release --example bench-inputs -- rawheap 1|2 heap-1 heap-1-vN.rawheap
#                  (HEAD as ArkTS .rawheap dumps of versions 1 and 2, by the test support's
#                  writer: tests/it/support/rawheap.rs)
#
# Rows, each timed with /usr/bin/time -f "%e %M %U %S" (wall seconds, peak RSS, user and
# system CPU seconds) after the files were read once (warm page cache):
#   1. parse only: arkdiff HEAD --head-snapshot 0 --no-retained   (one snapshot)
#   2. pair diff:  arkdiff BASE HEAD                              (classes, new/deleted,
#                                                                  dominators, retained sizes)
#   3. pair diff:  arkdiff BASE HEAD --no-retained                (classes, new/deleted)
#   4. htrace:     arkdiff pair.htrace                            (both snapshots streamed out
#                                                                  of the capture, trend, paths)
#      and         arkdiff pair.htrace --no-retained
#   6. rawheap:    arkdiff HEAD-vN.rawheap --head-snapshot 0 --no-retained   (versions 1 and 2,
#                  parse only, per object against row 1's per node)
#   5. Chrome DevTools' diff: node scripts/bench/devtools-diff.mjs BASE HEAD
#      (npm heap-snapshot-toolkit's diffFromStreams), when Node.js and the package are
#      present: npm install --prefix DIR heap-snapshot-toolkit@1.1.3
#      or point BENCH_NODE_MODULES at a node_modules folder that has it.
#
# Prerequisites: cargo, /usr/bin/time (Debian package `time`).
set -euo pipefail

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
}

die() {
  echo "bench: error: $*" >&2
  exit 1
}

dir=""
runs=3
synthetic=false
nodes=5500000
smoke=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) [[ $# -ge 2 ]] || usage; dir=$2; shift 2 ;;
    --runs) [[ $# -ge 2 ]] || usage; runs=$2; shift 2 ;;
    --nodes) [[ $# -ge 2 ]] || usage; nodes=$2; shift 2 ;;
    --synthetic) synthetic=true; shift ;;
    --smoke) smoke=true; synthetic=true; nodes=60000; runs=1; shift ;;
    -h | --help) usage ;;
    *) echo "bench: unknown argument: $1" >&2; usage ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs needs a positive integer, got '$runs'"
[[ $nodes =~ ^[1-9][0-9]*$ ]] || die "--nodes needs a positive integer, got '$nodes'"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -f $root/Cargo.toml ]] || die "no Cargo.toml in $root (the script must stay in scripts/)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing: install Debian's 'time' package (apt-get install time)"
command -v cargo > /dev/null || die "cargo is missing"
have_node=false
if command -v node > /dev/null; then have_node=true; fi
if ! $have_node; then synthetic=true; fi

made_dir=false
if $smoke && [[ -z $dir ]]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/arkdiff-bench-smoke.XXXXXX")
  made_dir=true
fi
dir=${dir:-${TMPDIR:-/tmp}/arkdiff-bench}
mkdir -p "$dir"
dir=$(realpath -- "$dir")

echo "building arkdiff and the input generator (release)..." >&2
(cd "$root" && cargo build --release --locked --quiet && cargo build --release --locked --quiet --example bench-inputs)
arkdiff=$root/target/release/arkdiff
gen=$root/target/release/examples/bench-inputs

# --- inputs -----------------------------------------------------------------------------
if $synthetic; then
  base=$dir/synthetic-$((nodes * 9 / 10)).heapsnapshot
  head=$dir/synthetic-$nodes.heapsnapshot
  [[ -s $base ]] || "$gen" snapshot $((nodes * 9 / 10)) "$base"
  [[ -s $head ]] || "$gen" snapshot "$nodes" "$head"
  source_note="synthetic V8-format snapshots from examples/bench-inputs.rs"
else
  base=$dir/heap-0.heapsnapshot
  head=$dir/heap-1.heapsnapshot
  if [[ ! -s $base || ! -s $head ]]; then
    echo "making two heap snapshots of one Node.js process (about a minute)..." >&2
    node --max-old-space-size=8000 "$root/scripts/bench/heap-workload.js" "$dir" 310000 40000 > /dev/null
  fi
  source_note="V8 heap snapshots of one Node.js $(node --version) process (scripts/bench/heap-workload.js)"
fi
htrace=$dir/$(basename "$base" .heapsnapshot)+$(basename "$head" .heapsnapshot).htrace
[[ -s $htrace ]] || "$gen" htrace "$htrace" "$base" "$head"
for v in 1 2; do
  raw=$dir/$(basename "$head" .heapsnapshot)-v$v.rawheap
  if [[ ! -s $raw || ! -s $raw.objects ]]; then
    "$gen" rawheap "$v" "$head" "$raw" 2> "$raw.log" || { cat "$raw.log" >&2; exit 1; }
    sed -n 's/.*, \([0-9]*\) objects$/\1/p' "$raw.log" > "$raw.objects"
  fi
done
rawheap1=$dir/$(basename "$head" .heapsnapshot)-v1.rawheap
rawheap2=$dir/$(basename "$head" .heapsnapshot)-v2.rawheap

mb() { echo $(( $(stat -c %s "$1") / 1000000 )); }
cat "$base" "$head" "$htrace" "$rawheap1" "$rawheap2" > /dev/null # warm the page cache

# --- peers ------------------------------------------------------------------------------
modules=""
for m in "$root/node_modules" "$dir/node_modules" "${BENCH_NODE_MODULES:-}"; do
  if [[ -n $m && -f $m/heap-snapshot-toolkit/index.js ]]; then modules=$m; break; fi
done

# --- measuring --------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/arkdiff-bench-run.XXXXXX")
if $made_dir; then
  trap 'rm -rf "$work" "$dir"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi

# measure NAME CMD...: runs CMD $runs times; prints "seconds rss_kb cpu_seconds" of the
# median run.
measure() {
  local name=$1
  shift
  : > "$work/$name.runs"
  for ((i = 0; i < runs; i++)); do
    if ! /usr/bin/time -f "%e %M %U %S" -o "$work/$name.time" "$@" > "$work/$name.out" 2> "$work/$name.err"; then
      echo "bench: '$name' failed:" >&2
      cat "$work/$name.err" >&2
      return 1
    fi
    cat "$work/$name.time" >> "$work/$name.runs"
  done
  sort -n "$work/$name.runs" | awk -v k="$runs" 'NR == int((k + 1) / 2) { print $1, $2, $3 + $4 }'
}

# same_as_reference NAME ARKDIFF_ARGS...: the JSON report of the arkdiff command equals the
# one of the reference path (ARKDIFF_SEQUENTIAL=1), or the script fails.
same_as_reference() {
  local name=$1
  shift
  "$arkdiff" "$@" -q --format json > "$work/$name.fast.json" 2> "$work/$name.fast.err" || true
  ARKDIFF_SEQUENTIAL=1 "$arkdiff" "$@" -q --format json > "$work/$name.ref.json" 2> "$work/$name.ref.err" || true
  if ! cmp -s "$work/$name.fast.json" "$work/$name.ref.json" || ! cmp -s "$work/$name.fast.err" "$work/$name.ref.err"; then
    echo "bench: '$name': the report differs from the reference path's (ARKDIFF_SEQUENTIAL=1):" >&2
    diff "$work/$name.ref.json" "$work/$name.fast.json" | head -20 >&2 || true
    exit 1
  fi
  [[ -s $work/$name.fast.json ]] || die "'$name' wrote no report: $(cat "$work/$name.fast.err")"
  echo "  $name: the report equals the reference path's" >&2
}

declare -A secs rss cpu
row() {
  local name=$1
  shift
  local r
  r=$(measure "$name" "$@") || exit 1
  read -r "secs[$name]" "rss[$name]" "cpu[$name]" <<< "$r"
  echo "  $name: ${secs[$name]} s, $((rss[$name] / 1024)) MB, CPU/wall $(ratio "${cpu[$name]}" "${secs[$name]}")" >&2
  if [[ $1 == "$arkdiff" ]]; then
    shift
    same_as_reference "$name" "$@"
  fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
echo "measuring ($runs run(s) each, median)..." >&2
row parse "$arkdiff" "$head" --head-snapshot 0 --no-retained --top 0
row pair "$arkdiff" "$base" "$head" --top 0
row pair_counts "$arkdiff" "$base" "$head" --no-retained --top 0
row htrace "$arkdiff" "$htrace" --top 0
row htrace_counts "$arkdiff" "$htrace" --no-retained --top 0
row rawheap1 "$arkdiff" "$rawheap1" --head-snapshot 0 --no-retained --top 0
row rawheap2 "$arkdiff" "$rawheap2" --head-snapshot 0 --no-retained --top 0
have_peer=false
if ! $smoke && $have_node && [[ -n $modules ]]; then
  row devtools node --max-old-space-size=16000 "$root/scripts/bench/devtools-diff.mjs" "$modules" "$base" "$head"
  have_peer=true
fi

# --- report -----------------------------------------------------------------------------
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f%%", 100 * a / b; else print "-" }'; }
line() {
  local name=$1 what=$2
  local vs_t="" vs_m=""
  if $have_peer; then
    vs_t="$(ratio "${secs[devtools]}" "${secs[$name]}")x faster"
    vs_m=$(pct "${rss[$name]}" "${rss[devtools]}")
  fi
  echo "| $what | ${secs[$name]} | $(ratio "${cpu[$name]}" "${secs[$name]}") | $((rss[$name] / 1024)) | $vs_t | $vs_m |"
}

echo
echo "Inputs: $source_note; BASE $(mb "$base") MB, HEAD $(mb "$head") MB, htrace $(mb "$htrace") MB."
echo "Machine: $(nproc) cores; median of $runs run(s); wall time, CPU time and peak RSS from /usr/bin/time."
echo "Every arkdiff row's report equals the reference path's (ARKDIFF_SEQUENTIAL=1)."
echo
echo "| command | wall s | CPU/wall | peak RSS MB | time vs DevTools | memory vs DevTools |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
line parse "arkdiff HEAD, parse only ($(awk -v s="$(stat -c %s "$head")" -v t="${secs[parse]}" 'BEGIN { if (t > 0) printf "%d", s / t / 1e6; else print "-" }') MB/s)"
line pair "arkdiff BASE HEAD (with retained sizes)"
line pair_counts "arkdiff BASE HEAD --no-retained"
line htrace "arkdiff pair.htrace (both snapshots streamed from the capture; trend, retained sizes, retainer paths)"
line htrace_counts "arkdiff pair.htrace --no-retained"
# Per object: the rawheap's objects (the writer's own objects included) against HEAD's nodes.
head_nodes=$(head -c 4096 "$head" | sed -n 's/.*"node_count":\([0-9]*\).*/\1/p')
per() { awk -v n="$1" -v t="$2" 'BEGIN { if (t > 0 && n > 0) printf "%.0f ns", 1e9 * t / n; else print "-" }'; }
for v in 1 2; do
  raw=rawheap$v
  objects=$(cat "${!raw}.objects")
  line "$raw" "arkdiff HEAD as a version-$v .rawheap ($(mb "${!raw}") MB, $objects objects), parse only: $(per "$objects" "${secs[$raw]}") per object, against $(per "$head_nodes" "${secs[parse]}") per node for HEAD"
done
if $have_peer; then
  echo "| Chrome DevTools' diffFromStreams BASE HEAD | ${secs[devtools]} | $(ratio "${cpu[devtools]}" "${secs[devtools]}") | $((rss[devtools] / 1024)) | 1x | 100% |"
else
  echo
  echo "(Chrome DevTools' code was not run: $(if $smoke; then echo "smoke run"; elif ! $have_node; then echo "no Node.js"; else echo "heap-snapshot-toolkit not installed"; fi).)"
fi
