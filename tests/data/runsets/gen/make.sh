#!/bin/sh
# Makes the run sets of tests/data/runsets (see tests/data/README.md): repeated
# `node --cpu-prof` runs of prog.js, gzip-compressed.
#   tests/data/runsets/gen/make.sh [OUT] [BASE_RUNS] [OTHER_RUNS] [SLOWDOWN]
# writes OUT/base (BASE_RUNS runs of the unchanged program), OUT/slow (hot() does
# SLOWDOWN more work) and OUT/tiny (only tiny() changes). Inlining is off so that each
# function keeps its own samples.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/..}
base_runs=${2:-20}
other_runs=${3:-10}
slowdown=${4:-0.2}
one() { # VARIANT DIR INDEX
  mkdir -p "$2"
  tmp=$(mktemp -d)
  ${PRIO:-} node --cpu-prof --cpu-prof-dir="$tmp" --no-turbo-inlining "$here/prog.js" "$1" "$slowdown"
  f=$(ls "$tmp"/*.cpuprofile)
  gzip -9n <"$f" >"$2/$(printf 'run%02d' "$3").cpuprofile.gz"
  rm -rf "$tmp"
}
# The variants take turns (BASE's extra runs spread evenly among them), so that a
# machine getting busier or quieter while the runs are made weighs on every variant
# alike.
i=1
done_other=0
while [ "$i" -le "$base_runs" ]; do
  one base "$out/base" "$i"
  due=$((i * other_runs / base_runs))
  while [ "$done_other" -lt "$due" ]; do
    done_other=$((done_other + 1))
    one slow "$out/slow" "$done_other"
    one tiny "$out/tiny" "$done_other"
  done
  i=$((i + 1))
done
