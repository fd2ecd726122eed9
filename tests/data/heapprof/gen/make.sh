#!/bin/sh
# Makes the heap profiles of tests/data/heapprof (see tests/data/README.md):
#   tests/data/heapprof/gen/make.sh [OUT] [RUNS]
# writes OUT/base and OUT/head, RUNS `node --heap-prof` runs of prog.js each (head:
# makeOrders allocates 3x as much), and OUT/cdp-base.heapprofile.gz and
# OUT/cdp-head.heapprofile.gz, one in-process inspector-protocol recording of each. The
# variants take turns. Inlining is off so that each function keeps its own allocations.
# The script's path inside the profiles is rewritten to /arkdiff/tests/data/heapprof/gen
# so that the files do not depend on the checkout they were made in.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/..}
runs=${2:-10}
interval=32768
# Gzips FILE into DEST with the checkout's path replaced.
store() { # FILE DEST
  node -e '
    const fs = require("fs");
    const [file, from, to] = process.argv.slice(1);
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").split(from).join(to));
  ' "$1" "$here/prog.js" /arkdiff/tests/data/heapprof/gen/prog.js
  gzip -9n <"$1" >"$2"
}
one() { # VARIANT INDEX
  mkdir -p "$out/$1"
  tmp=$(mktemp -d)
  ${PRIO:-} node --heap-prof --heap-prof-interval=$interval --heap-prof-dir="$tmp" \
    --no-turbo-inlining "$here/prog.js" "$1"
  store "$(ls "$tmp"/*.heapprofile)" "$out/$1/$(printf 'run%02d' "$2").heapprofile.gz"
  rm -rf "$tmp"
}
i=1
while [ "$i" -le "$runs" ]; do
  one base "$i"
  one head "$i"
  i=$((i + 1))
done
for variant in base head; do
  tmp=$(mktemp -d)
  node --no-turbo-inlining "$here/prog.js" "$variant" cdp "$tmp/p.heapprofile"
  store "$tmp/p.heapprofile" "$out/cdp-$variant.heapprofile.gz"
  rm -rf "$tmp"
done
