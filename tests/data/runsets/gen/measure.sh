#!/bin/sh
# The figures of docs/guide.md's run-set section (see tests/data/README.md):
#   measure.sh ARKDIFF WORKDIR
# 1. how often a single-run 10% gate fails on the unchanged program (every pair of
#    tests/data/runsets/base) against the run-set gate (splits of the same 20 runs);
# 2. which slowdowns of hot() the run-set gate detects with 5 and with 10 runs per side
#    (fresh runs from make.sh: SLOWDOWNS, REPEATS sets of each).
set -eu
bin=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
base=$here/../base
gate="--max-function-self-growth 10% --quiet"
mkdir -p "$work"

# 1a. Single runs: every ordered pair of different runs.
pairs=0; fails=0
for a in "$base"/*; do
  for b in "$base"/*; do
    [ "$a" = "$b" ] && continue
    pairs=$((pairs + 1))
    # shellcheck disable=SC2086
    "$bin" "$a" "$b" $gate --format json -o /tmp/measure-ignore.json || fails=$((fails + 1))
  done
done
echo "single-run 10% gate on the unchanged program: $fails of $pairs pairs fail"

# 1b. Run sets: splits of the 20 runs into two sets of K, by a fixed shuffle.
for k in 5 10; do
  splits=0; fails=0
  seed=1
  while [ "$seed" -le 40 ]; do
    rm -rf "$work/a" "$work/b"; mkdir -p "$work/a" "$work/b"
    ls "$base" | awk -v s="$seed" 'BEGIN{srand(s)}{print rand() "\t" $0}' | sort | cut -f2 >"$work/order"
    head -n "$k" "$work/order" | while read -r f; do cp "$base/$f" "$work/a/"; done
    sed -n "$((k + 1)),$((2 * k))p" "$work/order" | while read -r f; do cp "$base/$f" "$work/b/"; done
    splits=$((splits + 1))
    # shellcheck disable=SC2086
    "$bin" "$work/a" "$work/b" $gate --format json -o /tmp/measure-ignore.json || fails=$((fails + 1))
    seed=$((seed + 1))
  done
  echo "run-set 10% gate on the unchanged program, $k against $k runs: $fails of $splits splits fail"
done

# 2. Slowdowns.
for s in ${SLOWDOWNS:-0.1 0.15 0.2 0.3}; do
  r=1
  while [ "$r" -le "${REPEATS:-2}" ]; do
    out="$work/s$s-$r"
    rm -rf "$out"
    "$here/make.sh" "$out" 10 10 "$s" >/dev/null
    for k in 5 10; do
      rm -rf "$work/a" "$work/b"; mkdir -p "$work/a" "$work/b"
      ls "$out/base" | head -n "$k" | while read -r f; do cp "$out/base/$f" "$work/a/"; done
      ls "$out/slow" | head -n "$k" | while read -r f; do cp "$out/slow/$f" "$work/b/"; done
      for narrow in "" "--function hot"; do
        # shellcheck disable=SC2086
        if "$bin" "$work/a" "$work/b" $gate $narrow --format json -o "$work/r.json"; then
          verdict=pass
        else
          verdict=FAIL
        fi
        shift=$(node -e 'const r = require(process.argv[1]); const f = r.cpu.functions.find((f) => f.name === "hot"); console.log((100 * f.self_stats.shift_us / f.self_us_base).toFixed(1) + "% p=" + f.self_stats.p_value.toExponential(1))' "$work/r.json")
        echo "slowdown $s set $r, $k against $k runs${narrow:+ ($narrow)}: $verdict (hot shift $shift)"
      done
    done
    r=$((r + 1))
  done
done
