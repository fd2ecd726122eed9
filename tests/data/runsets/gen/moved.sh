#!/bin/sh
# Makes tests/data/runsets/moved (see tests/data/README.md): runs of prog.js unchanged but
# for two comment lines put before it, so that every function sits two lines lower, as
# after a commit that moves code; its URL is then written as the other run sets' is.
#   tests/data/runsets/gen/moved.sh [OUT] [RUNS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../moved}
runs=${2:-5}
work=$(mktemp -d)
{ printf '// Two lines added above the program,\n// as a commit that moves code does.\n'; cat "$here/prog.js"; } >"$work/prog.js"
mkdir -p "$out"
i=1
while [ "$i" -le "$runs" ]; do
  tmp=$(mktemp -d)
  ${PRIO:-} node --cpu-prof --cpu-prof-dir="$tmp" --no-turbo-inlining "$work/prog.js" base
  f=$(ls "$tmp"/*.cpuprofile)
  sed "s#file://$work/prog.js#file:///arkdiff/tests/data/runsets/gen/prog.js#g" "$f" |
    gzip -9n >"$out/$(printf 'run%02d' "$i").cpuprofile.gz"
  rm -rf "$tmp"
  i=$((i + 1))
done
rm -rf "$work"
