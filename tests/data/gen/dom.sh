#!/usr/bin/env bash
# Makes the DOM-state captures of tests/data/dom/ and DevTools' class tables for them
# (tests/data/devtools/dom-*.classes.tsv); see tests/data/README.md, "Detached DOM".
#
# Usage: tests/data/gen/dom.sh OUT_DIR DEVTOOLS_DIR NODE_MODULES
#
#   OUT_DIR       gets dom-node-{0,1}.heapsnapshot.gz (tests/data/gen/dom-node.js, one
#                 Node.js process) and dom-chromium-{0,1}.heapsnapshot.gz (headless
#                 Chromium on tests/data/gen/dom-page.html, before and after
#                 window.detach(), driven by scripts/capture-browser-cdp.js)
#   DEVTOOLS_DIR  gets NAME.classes.tsv for each of them: DevTools' class names, counts
#                 and self sizes (scripts/devtools-classes.mjs)
#   NODE_MODULES  the folder holding heap-snapshot-toolkit 1.1.3
#                 (npm install --prefix DIR heap-snapshot-toolkit@1.1.3: DIR/node_modules)
#
# Needs Node.js, Chromium (Debian's `chromium`, or CHROMIUM=binary) and gzip. Each run
# makes new captures: ids, sizes and counts change a little from run to run.
set -euo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: $0 OUT_DIR DEVTOOLS_DIR NODE_MODULES" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=$1 devtools=$2 modules=$3
mkdir -p "$out" "$devtools"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

node --version
"${CHROMIUM:-chromium}" --version 2>/dev/null || true
# The program and the page run from the temporary folder, so that the captures name no
# checkout's path.
cp "$here/dom-node.js" "$here/dom-page.html" "$work/"
(cd "$work" && node dom-node.js .)
node "$root/scripts/capture-browser-cdp.js" heap "file://$work/dom-page.html" \
  "$work/dom-chromium" 'window.detach()'
for name in dom-node-0 dom-node-1 dom-chromium-0 dom-chromium-1; do
  node "$root/scripts/devtools-classes.mjs" "$modules" "$work/$name.heapsnapshot" \
    > "$devtools/$name.classes.tsv"
  gzip -9 -n -c "$work/$name.heapsnapshot" > "$out/$name.heapsnapshot.gz"
  sha256sum "$work/$name.heapsnapshot" | sed "s#$work/##"
  wc -c < "$work/$name.heapsnapshot"
done
