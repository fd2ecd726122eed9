#!/usr/bin/env bash
# Benchmark arkdiff's heap diff side by side with its peers, Chrome DevTools' own heap
# snapshot code and memlab, on the same inputs, and against the time it takes just to read
# the bytes (`wc -l`). A benchmark, not a test: it prints Markdown tables (wall time, CPU
# time over wall time, peak RSS, ratios). The one thing it checks is that the fast paths
# give the reference path's answer: each arkdiff row's JSON report equals the one of the
# same command with ARKDIFF_SEQUENTIAL=1 (every snapshot read on one thread), byte for byte.
#
# Usage: scripts/bench.sh [--dir DIR] [--runs K] [--synthetic] [--nodes N] [--smoke]
#                         [--big] [--huge] [--huge-nodes N] [--series] [--no-peers]
#                         [--peer-timeout S]
#
#   --dir DIR        where inputs are made and kept (default ${TMPDIR:-/tmp}/arkdiff-bench)
#   --runs K         run each command K times and keep the median (default 3); the peers
#                    run K times on the pair, once on the big pair; on the >4 GB file
#                    every command runs once
#   --synthetic      make the snapshots with arkdiff's own generator even when Node.js is
#                    present (it is used anyway when Node.js is missing)
#   --nodes N        nodes of the synthetic HEAD snapshot (default 5500000, about 300 MB);
#                    BASE has 90% of them
#   --big            also the big pair (about 1.4 + 1.6 GB, 17.6 + 20.4 M nodes; in DIR/big)
#   --huge           also a snapshot over 4 GB (in DIR/huge)
#   --huge-nodes N   nodes of that snapshot (default 75000000, 4.9 GB)
#   --series         also a series of ten snapshots of about 300 MB (in DIR/series)
#   --no-peers       leave DevTools and memlab out
#   --peer-timeout S give a peer S seconds per run (default 900), then record a timeout
#   --smoke          a small synthetic run of every section (60000 nodes, one run, no
#                    peers, the debug build): checks that every row works; what CI runs
#
# Inputs (made once, kept in DIR; Node.js's --max-old-space-size as given):
#   pair:    node scripts/bench/heap-workload.js DIR 310000 40000       (--max-old-space-size=8000)
#            -> heap-0.heapsnapshot (about 270 MB) and heap-1.heapsnapshot (about 305 MB)
#            (one minute or two)
#   --big:   node scripts/bench/heap-workload.js DIR/big 1550000 230000 (--max-old-space-size=16000)
#            -> 1.43 GB (17.6 M nodes) and 1.65 GB (20.4 M nodes, 1.78 M records of the
#            workload); about 4 minutes and 10.5 GB of memory for Node.js
#   --series: node scripts/bench/heap-workload.js DIR/series 320000 3000 10
#            -> heap-0 .. heap-9, 281 to 305 MB, one process (about 3 minutes, 2.2 GB)
#   --huge:  cargo run --release --example bench-inputs -- snapshot N DIR/huge/synthetic-N.heapsnapshot
#            for N = --huge-nodes and N / 10 (BASE): V8-format snapshots of the same heap,
#            4.9 GB and 0.46 GB by default (20 to 50 s; Node.js needed 10.5 GB to write
#            the 1.65 GB one, so about three times as much for this one)
#   without Node.js or with --synthetic, every snapshot is made by bench-inputs: the pair
#            of --nodes N, the big pair of 22.5 M and 25 M nodes (1.4 + 1.5 GB), the
#            series of 91% .. 100% of N
#   and:     cargo run --release --example bench-inputs -- htrace pair.htrace heap-0 heap-1
#            cargo run --release --example bench-inputs -- rawheap 1|2 heap-K heap-K-vN.rawheap
#            (BASE and HEAD, and with --series the ten, as ArkTS .rawheap dumps of
#            versions 1 and 2, by the test support's writer, tests/it/support/rawheap.rs,
#            laid out as the VM's writer lays them out: objects and each name's objects in
#            marking order, version 2's synthetic addresses; about 1 and 0.5 minutes a
#            300 MB snapshot, and 1.7 GB of memory)
#
# Rows, each timed with /usr/bin/time -f "%e %M %U %S" (wall seconds, peak RSS, user and
# system CPU seconds) after the files were read once (warm page cache):
#   read:      wc -l HEAD, wc -l BASE HEAD  (the yardstick: reading the bytes once, one core;
#              each arkdiff row is also given as a multiple of it)
#   parse:     arkdiff HEAD --head-snapshot 0 --no-retained   (one snapshot)
#              examples/parse-snapshot HEAD   (the reader alone, with the edges into the
#              graph, as a diff with retained sizes reads a snapshot; its digest of what
#              was read must equal the one with ARKDIFF_SEQUENTIAL=1)
#   pair:      arkdiff BASE HEAD                              (classes, new/deleted,
#                                                              dominators, retained sizes)
#              arkdiff BASE HEAD --no-retained                (classes, new/deleted)
#              examples/leak-clusters BASE HEAD  (the leak traces of HEAD's new objects
#              and the duplicated values the reports list, each stage's time from its
#              stderr: read, dominators, leak traces, duplicates)
#   htrace:    arkdiff pair.htrace [--no-retained]            (both snapshots streamed out
#              of the capture, trend, paths; also as a multiple of the plain pair's time)
#              arkdiff BASE.htrace HEAD.htrace            (each snapshot in a capture of its
#              own: the plain pair's diff, so the multiple is what the container costs)
#   rawheap:   the same heap as a .heapsnapshot and as .rawheap dumps of versions 2 and 1,
#              side by side (one run of each in turn, K times, so that a change in the
#              machine's load falls on all three alike; the median of each): parse only
#              (HEAD --head-snapshot 0 --no-retained; per object against per node), HEAD
#              against itself with retained sizes (HEAD --head-snapshot 0), the pair with
#              retained sizes (BASE HEAD), and with --series the ten; each row also as a
#              multiple of the snapshot's time and peak memory. Next to parse only and
#              HEAD against itself, a version-3 dump (the static VM) of another heap of
#              about as many objects (bench-inputs static; at most a million), per object
#   --big and --huge: read, arkdiff BASE HEAD [--no-retained] and the peers on that pair
#   --series:  read, arkdiff heap-0 .. heap-9 (trend, suspects, owners, retained sizes)
#              next to arkdiff heap-7 heap-8 heap-9 (a series of three: the same work but
#              for fewer middle snapshots) and heap-8 heap-9 (the largest pair alone)
#   peers:     Chrome DevTools' diff: node scripts/bench/devtools-diff.mjs BASE HEAD
#              (npm heap-snapshot-toolkit's diffFromStreams), and
#              memlab find-leaks --baseline BASE --target HEAD --final HEAD (memlab's CLI),
#              each with node --max-old-space-size at 60% of the memory (at most 16000),
#              under `timeout`. A peer that fails (out of memory, "Invalid string length",
#              the timeout) is a row saying so, not a failure of the script. They are
#              found in DIR/node_modules, REPO/node_modules or BENCH_NODE_MODULES:
#                PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix DIR heap-snapshot-toolkit@1.1.3 memlab@2.0.5
#              (memlab's browser is not needed to read snapshot files).
#
# Prerequisites: cargo, /usr/bin/time (Debian package `time`), coreutils `timeout`.
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
big=false
huge=false
huge_nodes=75000000
series=false
peers=true
peer_timeout=900
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) [[ $# -ge 2 ]] || usage; dir=$2; shift 2 ;;
    --runs) [[ $# -ge 2 ]] || usage; runs=$2; shift 2 ;;
    --nodes) [[ $# -ge 2 ]] || usage; nodes=$2; shift 2 ;;
    --huge-nodes) [[ $# -ge 2 ]] || usage; huge_nodes=$2; shift 2 ;;
    --peer-timeout) [[ $# -ge 2 ]] || usage; peer_timeout=$2; shift 2 ;;
    --synthetic) synthetic=true; shift ;;
    --big) big=true; shift ;;
    --huge) huge=true; shift ;;
    --series) series=true; shift ;;
    --no-peers) peers=false; shift ;;
    --smoke) smoke=true; shift ;;
    -h | --help) usage ;;
    *) echo "bench: unknown argument: $1" >&2; usage ;;
  esac
done
if $smoke; then
  synthetic=true nodes=60000 runs=1 peers=false big=true huge=true series=true
  huge_nodes=300000
fi
for v in runs nodes huge_nodes peer_timeout; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v/_/-} needs a positive integer, got '${!v}'"
done

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

# The smoke run checks that every row works, not how fast: it takes the debug build, which
# `cargo test` has just made in CI, instead of paying for a release build there.
if $smoke; then profile=debug; flag=(); else profile=release; flag=(--release); fi
echo "building arkdiff and the input generator ($profile)..." >&2
(cd "$root" && cargo build "${flag[@]}" --locked --quiet && cargo build "${flag[@]}" --locked --quiet --example bench-inputs --example parse-snapshot --example leak-clusters)
arkdiff=$root/target/$profile/arkdiff
clusters=$root/target/$profile/examples/leak-clusters
gen=$root/target/$profile/examples/bench-inputs
reader=$root/target/$profile/examples/parse-snapshot

# --- inputs -----------------------------------------------------------------------------
# synth DIR N: DIR/synthetic-N.heapsnapshot, made once; prints its path.
synth() {
  local f=$1/synthetic-$2.heapsnapshot
  mkdir -p "$1"
  [[ -s $f ]] || "$gen" snapshot "$2" "$f" >&2
  echo "$f"
}
# workload DIR BASE_RECORDS GROWTH_RECORDS PHASES HEAP_MB: DIR/heap-0 .. heap-(PHASES-1),
# snapshots of one Node.js process, made once.
workload() {
  local last=$1/heap-$(($4 - 1)).heapsnapshot
  mkdir -p "$1"
  if [[ ! -s $last ]]; then
    echo "making $4 heap snapshots of one Node.js process in $1 ..." >&2
    node --max-old-space-size="$5" "$root/scripts/bench/heap-workload.js" "$1" "$2" "$3" "$4" > /dev/null
  fi
}

if $synthetic; then
  base=$(synth "$dir" $((nodes * 9 / 10)))
  head=$(synth "$dir" "$nodes")
  source_note="synthetic V8-format snapshots from examples/bench-inputs.rs"
else
  workload "$dir" 310000 40000 2 8000
  base=$dir/heap-0.heapsnapshot
  head=$dir/heap-1.heapsnapshot
  source_note="V8 heap snapshots of one Node.js $(node --version) process (scripts/bench/heap-workload.js)"
fi
htrace=$dir/$(basename "$base" .heapsnapshot)+$(basename "$head" .heapsnapshot).htrace
[[ -s $htrace ]] || "$gen" htrace "$htrace" "$base" "$head"
base_htrace=$dir/$(basename "$base" .heapsnapshot).htrace
head_htrace=$dir/$(basename "$head" .heapsnapshot).htrace
[[ -s $base_htrace ]] || "$gen" htrace "$base_htrace" "$base"
[[ -s $head_htrace ]] || "$gen" htrace "$head_htrace" "$head"
# rawheap SNAPSHOT V: SNAPSHOT as a version-V .rawheap laid out as the VM's writer lays it
# out, made once (one made by an older script, laid out sorted or with version-2 roots
# that reach nothing, is made again), with its object count in .objects; prints its path.
rawheap() {
  local raw=${1%.heapsnapshot}-v$2.rawheap
  if [[ ! -s $raw || ! -s $raw.objects || ! -e $raw.roots ]]; then
    "$gen" rawheap "$2" "$1" "$raw" 2> "$raw.log" || { cat "$raw.log" >&2; exit 1; }
    sed -n 's/.*, \([0-9]*\) objects$/\1/p' "$raw.log" > "$raw.objects"
    : > "$raw.roots"
  fi
  echo "$raw"
}
echo "the rawheaps (made once)..." >&2
rawheap1=$(rawheap "$head" 1)
rawheap2=$(rawheap "$head" 2)
base_rawheap1=$(rawheap "$base" 1)
base_rawheap2=$(rawheap "$base" 2)
# The static VM's version-3 dump of an app heap of about as many objects as HEAD's
# version-2 rawheap, at most a million (a different heap: the static VM's own objects,
# strings with their contents, primitive fields as value nodes; the test support's writer
# takes about 5 minutes for a million, more than linearly), made once.
v3_objects=$(cat "$rawheap2.objects")
((v3_objects > 1000000)) && v3_objects=1000000
rawheap3=$dir/static-$v3_objects.rawheap
if [[ ! -s $rawheap3 || ! -s $rawheap3.objects ]]; then
  "$gen" static "$v3_objects" "$rawheap3" > "$rawheap3.objects" 2> "$rawheap3.log" || { cat "$rawheap3.log" >&2; exit 1; }
fi
warm=("$base" "$head" "$htrace" "$base_htrace" "$head_htrace" "$rawheap1" "$rawheap2" "$base_rawheap1" "$base_rawheap2" "$rawheap3")

if $big; then
  if $synthetic; then
    big_nodes=$(if $smoke; then echo $((nodes * 4)); else echo 25000000; fi)
    big_base=$(synth "$dir/big" $((big_nodes * 9 / 10)))
    big_head=$(synth "$dir/big" "$big_nodes")
  else
    workload "$dir/big" 1550000 230000 2 16000
    big_base=$dir/big/heap-0.heapsnapshot
    big_head=$dir/big/heap-1.heapsnapshot
  fi
fi
if $huge; then
  huge_base=$(synth "$dir/huge" $((huge_nodes / 10)))
  huge_head=$(synth "$dir/huge" "$huge_nodes")
fi
if $series; then
  snaps=()
  series_note="ten snapshots of one Node.js process (scripts/bench/heap-workload.js)"
  if $synthetic; then
    series_note="ten synthetic snapshots of one heap (examples/bench-inputs.rs)"
    for k in {91..100}; do snaps+=("$(synth "$dir/series" $((nodes * k / 100)))"); done
  else
    workload "$dir/series" 320000 3000 10 8000
    for k in {0..9}; do snaps+=("$dir/series/heap-$k.heapsnapshot"); done
  fi
  raw_snaps1=() raw_snaps2=()
  for s in "${snaps[@]}"; do
    raw_snaps1+=("$(rawheap "$s" 1)")
    raw_snaps2+=("$(rawheap "$s" 2)")
  done
fi

mb() { echo $(($(stat -c %s "$1") / 1000000)); }
# size of files in GB, e.g. "1.43 + 1.65"
gb() {
  local f out=""
  for f in "$@"; do out+="${out:+ + }$(awk -v s="$(stat -c %s "$f")" 'BEGIN { printf "%.2f", s / 1e9 }')"; done
  echo "$out"
}
node_count() { head -c 4096 "$1" | sed -n 's/.*"node_count":\([0-9]*\).*/\1/p'; }

# --- peers ------------------------------------------------------------------------------
devtools_ok=false memlab_ok=false peer_note=""
if ! $peers; then
  peer_note=$(if $smoke; then echo "smoke run"; else echo "--no-peers"; fi)
elif ! $have_node; then
  peer_note="no Node.js"
else
  for m in "$dir/node_modules" "$root/node_modules" "${BENCH_NODE_MODULES:-}"; do
    [[ -n $m ]] || continue
    if ! $devtools_ok && [[ -f $m/heap-snapshot-toolkit/index.js ]]; then devtools_ok=true devtools_modules=$m; fi
    if ! $memlab_ok && [[ -f $m/memlab/bin/memlab ]]; then memlab_ok=true memlab_bin=$m/memlab/bin/memlab; fi
  done
  $devtools_ok || peer_note="heap-snapshot-toolkit not installed"
  $memlab_ok || peer_note="${peer_note:+$peer_note; }memlab not installed"
fi
# Node.js heap for a peer: 60% of the machine's memory, at most 16000 MB.
peer_heap=$(awk '/^MemTotal/ { m = int($2 / 1024 * 0.6); print (m > 16000 ? 16000 : m) }' /proc/meminfo)

# --- measuring --------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/arkdiff-bench-run.XXXXXX")
if $made_dir; then
  trap 'rm -rf "$work" "$dir"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi

declare -A secs rss cpu fail

# why NAME STATUS: what made a run fail, in a few words.
why() {
  local err=$work/$1.err
  if (($2 == 124)); then
    echo "timed out after $peer_timeout s"
  elif grep -q "Invalid string length" "$err"; then
    echo "Invalid string length"
  elif grep -qiE "heap out of memory|allocation failed|out of memory" "$err"; then
    echo "out of memory"
  elif (($2 == 137)) || grep -q "signal 9" "$work/$1.time"; then
    echo "killed (signal 9, out of memory)"
  else
    echo "exit $2: $(grep -v '^[[:space:]]*$' "$err" | tail -n 1 | tr '|' '/' | cut -c 1-100)"
  fi
}

# timed NAME K CMD...: runs CMD K times (stopping at a failure); keeps "seconds rss_kb
# cpu_seconds" of the median run in secs/rss/cpu[NAME], and what a failed run died of in
# fail[NAME].
timed() {
  local name=$1 k=$2 i status
  shift 2
  : > "$work/$name.runs"
  for ((i = 0; i < k; i++)); do
    status=0
    /usr/bin/time -f "%e %M %U %S" -o "$work/$name.time" "$@" > "$work/$name.out" 2> "$work/$name.err" || status=$?
    tail -n 1 "$work/$name.time" >> "$work/$name.runs"
    if ((status != 0)); then
      fail[$name]=$(why "$name" "$status")
      tail -n 1 "$work/$name.time" > "$work/$name.runs"
      k=1
      break
    fi
  done
  median "$name" "$k"
}

# median NAME K: the median of NAME's K runs (by wall time) into secs/rss/cpu[NAME].
median() {
  local name=$1 k=$2
  read -r "secs[$name]" "rss[$name]" "cpu[$name]" < <(sort -n "$work/$name.runs" | awk -v k="$k" 'NR == int((k + 1) / 2) { print $1, $2, $3 + $4 }')
  echo "  $name: ${secs[$name]} s, $((rss[$name] / 1024)) MB, CPU/wall $(ratio "${cpu[$name]}" "${secs[$name]}")${fail[$name]:+, FAILED: ${fail[$name]}}" >&2
}

# run_cmd NAME: one run of the command in the array cmd_NAME, timed into NAME's runs; a
# failure stops the script.
run_cmd() {
  local -n c=cmd_$1
  local status=0
  /usr/bin/time -f "%e %M %U %S" -o "$work/$1.time" "${c[@]}" > "$work/$1.out" 2> "$work/$1.err" || status=$?
  ((status == 0)) || { cat "$work/$1.err" >&2; die "'$1' failed"; }
  tail -n 1 "$work/$1.time" >> "$work/$1.runs"
}

# check_cmd NAME: the report of arkdiff command cmd_NAME equals the reference path's.
check_cmd() {
  local -n c=cmd_$1
  [[ ${c[0]} != "$arkdiff" ]] || same_as_reference "$1" "${c[@]:1}"
}

# side_by_side K NAME...: the commands cmd_NAME, one run of each in turn, K times (a change
# in the machine's load falls on them alike); the median of each, as timed keeps it; each
# arkdiff row's report checked against the reference path's.
side_by_side() {
  local k=$1 i name
  shift
  for name in "$@"; do : > "$work/$name.runs"; done
  for ((i = 0; i < k; i++)); do
    for name in "$@"; do run_cmd "$name"; done
  done
  for name in "$@"; do
    median "$name" "$k"
    check_cmd "$name"
  done
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
  rm -f "$work/$name.fast.json" "$work/$name.ref.json"
  echo "  $name: the report equals the reference path's" >&2
}

# same_digest NAME FILE: the reader's digest of FILE equals the one of the reference path
# (ARKDIFF_SEQUENTIAL=1), or the script fails.
same_digest() {
  local fast ref
  fast=$("$reader" "$2" | sed -n 's/^digest //p')
  ref=$(ARKDIFF_SEQUENTIAL=1 "$reader" "$2" | sed -n 's/^digest //p')
  [[ -n $fast && $fast == "$ref" ]] || die "'$1': the reader's digest $fast differs from the reference path's $ref"
  echo "  $1: the digest equals the reference path's" >&2
}

# row NAME CMD...: an arkdiff (or wc) row, $runs runs (or $row_runs); a failure stops the
# script.
row() {
  local name=$1
  shift
  timed "$name" "${row_runs:-$runs}" "$@"
  [[ -z ${fail[$name]:-} ]] || { cat "$work/$name.err" >&2; die "'$name' failed"; }
  if [[ $1 == "$arkdiff" ]]; then
    shift
    same_as_reference "$name" "$@"
  fi
}

# peers SECTION K BASE HEAD: DevTools' diff and memlab on the pair, K runs each.
run_peers() {
  local s=$1 k=$2 b=$3 h=$4
  if $devtools_ok; then
    timed "devtools$s" "$k" timeout "$peer_timeout" node --max-old-space-size="$peer_heap" \
      "$root/scripts/bench/devtools-diff.mjs" "$devtools_modules" "$b" "$h"
  fi
  if $memlab_ok; then
    mkdir -p "$work/memlab$s"
    timed "memlab$s" "$k" timeout "$peer_timeout" node --expose-gc --max-old-space-size="$peer_heap" \
      "$memlab_bin" find-leaks --baseline "$b" --target "$h" --final "$h" --work-dir "$work/memlab$s"
    rm -rf "$work/memlab$s"
  fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
ratio2() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo "measuring ($runs run(s) each, median; peers: ${peer_note:-DevTools and memlab, Node.js heap $peer_heap MB, timeout $peer_timeout s})..." >&2
cat "${warm[@]}" > /dev/null # warm the page cache
row read_head wc -l "$head"
row read wc -l "$base" "$head"
# The same heap as a snapshot and as rawheaps of versions 2 and 1, side by side.
cmd_parse=("$arkdiff" "$head" --head-snapshot 0 --no-retained --top 0)
cmd_parse_raw2=("$arkdiff" "$rawheap2" --head-snapshot 0 --no-retained --top 0)
cmd_parse_raw1=("$arkdiff" "$rawheap1" --head-snapshot 0 --no-retained --top 0)
cmd_parse_raw3=("$arkdiff" "$rawheap3" --head-snapshot 0 --no-retained --top 0)
cmd_self=("$arkdiff" "$head" --head-snapshot 0 --top 0)
cmd_self_raw2=("$arkdiff" "$rawheap2" --head-snapshot 0 --top 0)
cmd_self_raw1=("$arkdiff" "$rawheap1" --head-snapshot 0 --top 0)
cmd_self_raw3=("$arkdiff" "$rawheap3" --head-snapshot 0 --top 0)
cmd_pair=("$arkdiff" "$base" "$head" --top 0)
cmd_pair_raw2=("$arkdiff" "$base_rawheap2" "$rawheap2" --top 0)
cmd_pair_raw1=("$arkdiff" "$base_rawheap1" "$rawheap1" --top 0)
side_by_side "$runs" parse parse_raw2 parse_raw1 parse_raw3
row parse_graph "$reader" "$head"
same_digest parse_graph "$head"
side_by_side "$runs" self self_raw2 self_raw1 self_raw3
side_by_side "$runs" pair pair_raw2 pair_raw1
row pair_counts "$arkdiff" "$base" "$head" --no-retained --top 0
row leak_traces "$clusters" "$base" "$head" --top 0
row htrace "$arkdiff" "$htrace" --top 0
row htrace_counts "$arkdiff" "$htrace" --no-retained --top 0
row htrace_pair "$arkdiff" "$base_htrace" "$head_htrace" --top 0
run_peers "" "$runs" "$base" "$head"

# pair_rows SECTION BASE HEAD K: a section's pair: the read, arkdiff with and without
# retained sizes (K runs each) and the peers (one run each).
pair_rows() {
  local s=$1 b=$2 h=$3
  cat "$b" "$h" > /dev/null
  row "read$s" wc -l "$b" "$h"
  row_runs=$4
  row "pair$s" "$arkdiff" "$b" "$h" --top 0
  row "pair_counts$s" "$arkdiff" "$b" "$h" --no-retained --top 0
  row "leak_traces$s" "$clusters" "$b" "$h" --top 0
  row_runs=""
  run_peers "$s" 1 "$b" "$h"
}
if $big; then
  echo "the big pair: $(gb "$big_base" "$big_head") GB" >&2
  pair_rows _big "$big_base" "$big_head" "$runs"
fi
if $huge; then
  echo "the huge snapshot: $(gb "$huge_head") GB, against $(gb "$huge_base") GB" >&2
  # Each arkdiff run on it takes a minute or more on a shared machine: one run.
  pair_rows _huge "$huge_base" "$huge_head" 1
fi
if $series; then
  cat "${snaps[@]}" > /dev/null
  row read_series wc -l "${snaps[@]}"
  cmd_series=("$arkdiff" "${snaps[@]}" --top 0)
  cmd_series_raw2=("$arkdiff" "${raw_snaps2[@]}" --top 0)
  cmd_series_raw1=("$arkdiff" "${raw_snaps1[@]}" --top 0)
  cat "${raw_snaps1[@]}" "${raw_snaps2[@]}" > /dev/null
  side_by_side "$runs" series series_raw2 series_raw1
  row series_three "$arkdiff" "${snaps[7]}" "${snaps[8]}" "${snaps[9]}" --top 0
  row series_pair "$arkdiff" "${snaps[8]}" "${snaps[9]}" --top 0
fi

# --- report -----------------------------------------------------------------------------
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f%%", 100 * a / b; else print "-" }'; }
header() {
  echo
  echo "| command | wall s | CPU/wall | peak RSS MB | × read (wc -l) | time vs DevTools | memory vs DevTools |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
}
# line NAME WHAT [READ] [SECTION]: a table row; READ is the wc -l row it is a multiple of,
# SECTION the suffix of the peers' rows it is compared with.
line() {
  local name=$1 what=$2 read=${3:-} s=${4-}
  local vs_t="" vs_m="" x_read="" dt=devtools$s
  if [[ -n $read && $name != read* ]]; then x_read="$(ratio2 "${secs[$name]}" "${secs[$read]}")x"; fi
  [[ $x_read != -x ]] || x_read=-
  if [[ $name == read* ]]; then
    :
  elif [[ -n ${secs[$dt]:-} && -z ${fail[$dt]:-} && $name != "$dt" ]]; then
    vs_t=$(awk -v a="${secs[$dt]}" -v b="${secs[$name]}" 'BEGIN { if (b >= a) printf "%.1fx slower", b / a; else printf "%.1fx faster", a / b }')
    vs_m=$(pct "${rss[$name]}" "${rss[$dt]}")
  elif [[ $name == "$dt" ]]; then
    vs_t=1x vs_m=100%
  fi
  if [[ -n ${fail[$name]:-} ]]; then
    what="$what: **failed after ${secs[$name]} s: ${fail[$name]}**"
    vs_t="" vs_m=""
  fi
  echo "| $what | ${secs[$name]} | $(ratio "${cpu[$name]}" "${secs[$name]}") | $((rss[$name] / 1024)) | $x_read | $vs_t | $vs_m |"
}
# peer_lines SECTION: the peers' rows of a section (or a note that they were not run).
peer_lines() {
  local s=$1
  [[ -n ${secs[devtools$s]:-} ]] && line "devtools$s" "Chrome DevTools' diffFromStreams BASE HEAD" "read$s" "$s"
  [[ -n ${secs[memlab$s]:-} ]] && line "memlab$s" "memlab find-leaks --baseline BASE --target HEAD --final HEAD" "read$s" "$s"
  return 0
}
# pair_table SECTION: the table of pair_rows' rows.
pair_table() {
  local s=$1
  header
  line "read$s" "wc -l BASE HEAD" "read$s"
  line "pair$s" "arkdiff BASE HEAD (with retained sizes)" "read$s" "$s"
  line "pair_counts$s" "arkdiff BASE HEAD --no-retained" "read$s" "$s"
  line "leak_traces$s" "$(stages_what "leak_traces$s")" "read$s" "$s"
  peer_lines "$s"
}
# stages_what NAME: the leak-clusters row's words, with the stage times its last run gave
# (the leak traces and the duplicated values are what every report with retained sizes
# adds to a pair's work).
stages_what() {
  local t
  t=$(sed -n 's/^\(read .*\), total .*/\1/p' "$work/$1.err" | tail -n 1)
  echo "examples/leak-clusters BASE HEAD: HEAD's leak traces and duplicated values, read and dominators included (last run: ${t:-no stage times})"
}
per() { awk -v n="$1" -v t="$2" 'BEGIN { if (t > 0 && n > 0) printf "%.0f ns", 1e9 * t / n; else print "-" }'; }

echo
echo "Machine: $(nproc) cores, $(awk '/^MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo); median of $runs run(s) (the peers on the big pair and everything on the >4 GB file: one run); wall time, CPU time and peak RSS from /usr/bin/time."
echo "Every arkdiff row's report equals the reference path's (ARKDIFF_SEQUENTIAL=1)."
if [[ -n $peer_note ]]; then
  echo "Peers not run: $peer_note."
else
  echo "Peers: heap-snapshot-toolkit 1.1.3 and memlab 2.0.5 on Node.js $(node --version), --max-old-space-size=$peer_heap, timeout $peer_timeout s."
fi
echo
echo "### The pair"
echo
echo "Inputs: $source_note; BASE $(mb "$base") MB ($(node_count "$base") nodes), HEAD $(mb "$head") MB ($(node_count "$head") nodes), htrace $(mb "$htrace") MB."
header
line read_head "wc -l HEAD (reading the bytes once, one core)" read_head
line read "wc -l BASE HEAD" read
line parse "arkdiff HEAD, parse only ($(awk -v s="$(stat -c %s "$head")" -v t="${secs[parse]}" 'BEGIN { if (t > 0) printf "%d", s / t / 1e6; else print "-" }') MB/s)" read_head ""
line parse_graph "examples/parse-snapshot HEAD: the reader alone, edges into the graph included ($(awk -v s="$(stat -c %s "$head")" -v t="${secs[parse_graph]}" 'BEGIN { if (t > 0) printf "%d", s / t / 1e6; else print "-" }') MB/s)" read_head ""
line pair "arkdiff BASE HEAD (with retained sizes)" read ""
line pair_counts "arkdiff BASE HEAD --no-retained" read ""
line leak_traces "$(stages_what leak_traces)" read ""
line htrace "arkdiff pair.htrace ($(ratio2 "${secs[htrace]}" "${secs[pair]}")x the pair's time; both snapshots streamed from the capture; trend, retained sizes, retainer paths)" read ""
line htrace_counts "arkdiff pair.htrace --no-retained ($(ratio2 "${secs[htrace_counts]}" "${secs[pair_counts]}")x the pair's)" read ""
line htrace_pair "arkdiff BASE.htrace HEAD.htrace (each in a capture of its own: the plain pair's diff; $(ratio2 "${secs[htrace_pair]}" "${secs[pair]}")x its time)" read ""
peer_lines ""

# raw_table: the same heaps as a snapshot and as rawheaps, each rawheap row as a multiple of
# the snapshot's time and peak memory.
raw_line() {
  local name=$1 work=$2 input=$3 snap=$4 per=${5:-}
  echo "| $work | $input | ${secs[$name]} | ${cpu[$name]} | $(ratio "${cpu[$name]}" "${secs[$name]}") | $((rss[$name] / 1024)) | $(ratio2 "${secs[$name]}" "${secs[$snap]}")x | $(ratio2 "${rss[$name]}" "${rss[$snap]}")x |$per"
}
echo
echo "### The same heaps as ArkTS rawheaps"
echo
head_nodes=$(node_count "$head")
echo "Inputs: BASE and HEAD above, each also written as ArkTS .rawheap dumps by the test support's writer, laid out as the VM's writer lays them out (objects and each name's objects in marking order; version 2: synthetic addresses): HEAD as version 2 $(mb "$rawheap2") MB ($(cat "$rawheap2.objects") objects), as version 1 $(mb "$rawheap1") MB ($(cat "$rawheap1.objects") objects: version 1 adds the writer's hidden classes, layouts and property keys to the $head_nodes nodes). Version 3 (the static VM) is another heap of about as many objects (at most a million), $(mb "$rawheap3") MB ($(cat "$rawheap3.objects") objects: an app's listeners with strings, callbacks, i32 arrays and primitive fields, by the test support's version-3 writer): compare it per object. Each work's commands ran one after the other, in turn, $runs time(s)."
echo
echo "| work | input | wall s | CPU s | CPU/wall | peak RSS MB | time vs the snapshot | memory vs the snapshot | per node or object |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for v in "" 2 1 3; do
  if [[ -z $v ]]; then input=".heapsnapshot" n=$head_nodes; else raw=rawheap$v; input="version-$v .rawheap" n=$(cat "${!raw}.objects"); fi
  raw_line "parse${v:+_raw$v}" "HEAD, parse only" "$input" parse " $(per "$n" "${secs[parse${v:+_raw$v}]}") |"
done
for v in "" 2 1 3; do
  input=$(if [[ -z $v ]]; then echo .heapsnapshot; else echo "version-$v .rawheap"; fi)
  per_object=" |"
  if [[ -n $v ]]; then raw=rawheap$v; per_object=" $(per "$(cat "${!raw}.objects")" "${secs[self_raw$v]}") |"; fi
  raw_line "self${v:+_raw$v}" "HEAD against itself, with retained sizes" "$input" self "$per_object"
done
for v in "" 2 1; do
  input=$(if [[ -z $v ]]; then echo .heapsnapshot; else echo "version-$v .rawheap"; fi)
  raw_line "pair${v:+_raw$v}" "BASE HEAD, with retained sizes" "$input" pair " |"
done
if $series; then
  for v in "" 2 1; do
    input=$(if [[ -z $v ]]; then echo .heapsnapshot; else echo "version-$v .rawheap"; fi)
    raw_line "series${v:+_raw$v}" "the series of ten (trend, suspects, owners, retained sizes)" "$input" series " |"
  done
fi

if $big; then
  echo
  echo "### The big pair"
  echo
  echo "Inputs: $(gb "$big_base" "$big_head") GB ($(node_count "$big_base") + $(node_count "$big_head") nodes), DIR/big."
  pair_table _big
fi
if $huge; then
  echo
  echo "### Beyond 4 GB"
  echo
  echo "Inputs: HEAD $(gb "$huge_head") GB ($(node_count "$huge_head") nodes), BASE $(gb "$huge_base") GB ($(node_count "$huge_base") nodes), DIR/huge."
  pair_table _huge
fi
if $series; then
  echo
  echo "### A series of ten"
  echo
  echo "Inputs: $series_note, $(mb "${snaps[0]}") to $(mb "${snaps[9]}") MB, DIR/series."
  header
  # No peer runs on the series: section _series has none to compare with.
  line read_series "wc -l on the ten" read_series _series
  line series "arkdiff on the ten (trend, suspects, owners, retained sizes): peak RSS $(ratio2 "${rss[series]}" "${rss[series_pair]}")x the largest pair's" read_series _series
  line series_three "arkdiff on the last three (the same work with one middle snapshot): peak RSS $(ratio2 "${rss[series]}" "${rss[series_three]}")x its" "" _series
  line series_pair "arkdiff on the largest pair alone (the last two)" "" _series
fi
