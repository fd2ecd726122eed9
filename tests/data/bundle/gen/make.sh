#!/bin/sh
# Makes the bundle of the source-map tests (see tests/data/README.md): bundles and
# minifies src/ with esbuild from npm, runs the bundle once under node with --cpu-prof
# and --heap-prof and once more, shorter, with
# allocation tracking and a heap snapshot at the end, and writes, in tests/data/bundle:
#   dist/main.js, dist/main.js.map       esbuild's bundle and its source map
#   main.cpuprofile.gz, main.heapprofile.gz, main.heapsnapshot.gz   the captures
#   expected.tsv                         each bundle position of the profiles looked up in
#                                        the map by Node.js's own module.SourceMap
# The bundle's path inside the captures is rewritten to /arkdiff/tests/data/bundle/dist
# so that they do not depend on the checkout they were made in.
#   tests/data/bundle/gen/make.sh [ESBUILD_VERSION]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
version=${1:-0.28.2}
cd "$here"
npx --yes "esbuild@$version" src/main.ts --bundle --minify --sourcemap --sources-content=false \
  --platform=node --target=node20 --outfile=dist/main.js --log-level=warning
tmp=$(mktemp -d)
node --cpu-prof --cpu-prof-dir="$tmp/cpu" --heap-prof --heap-prof-interval=16384 \
  --heap-prof-dir="$tmp/heap" dist/main.js 60
# The snapshot from a shorter run (3 rounds keep it near 1 MB gzipped), with allocation
# tracking on so that it holds allocation sites (trace_function_infos) too.
SNAPSHOT="$tmp/main.heapsnapshot" node --track-heap-objects dist/main.js 3
store() { # FILE DEST
  node -e '
    const fs = require("fs");
    const [file, dir] = process.argv.slice(1);
    const text = fs.readFileSync(file, "utf8");
    // The CPU profile names the script by file URL, the heap profile and snapshot by path.
    const to = "/arkdiff/tests/data/bundle/dist/main.js";
    fs.writeFileSync(file, text.split("file://" + dir + "/main.js").join("file://" + to)
      .split(dir + "/main.js").join(to));
  ' "$1" "$here/dist"
  gzip -9n <"$1" >"$2"
}
store "$(ls "$tmp"/cpu/*.cpuprofile)" main.cpuprofile.gz
store "$(ls "$tmp"/heap/*.heapprofile)" main.heapprofile.gz
store "$tmp/main.heapsnapshot" main.heapsnapshot.gz
rm -rf "$tmp"
node gen/expected.js main.cpuprofile.gz main.heapprofile.gz >expected.tsv
