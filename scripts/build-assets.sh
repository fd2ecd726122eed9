#!/usr/bin/env bash
# Minifies the HTML report's script and style into the files the binary embeds
# (src/report/html/report.min.{js,css}), with a pinned esbuild from npm, and writes the
# script's SHA-256 (report.min.js.sha256, base64) for the page's content security policy.
#
#   scripts/build-assets.sh           rewrite the minified files
#   scripts/build-assets.sh --check   fail if they are not what the sources give
set -euo pipefail
cd "$(dirname "$0")/.."

ESBUILD_VERSION=0.28.2
dir=src/report/html
check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
command -v npx >/dev/null || { echo "build-assets: npx (Node.js) is needed" >&2; exit 2; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
esbuild() { npx --yes "esbuild@$ESBUILD_VERSION" "$@" --log-level=warning; }
# The script runs as it is in the page: no bundling, no module wrapper.
esbuild "$dir/report.js" --minify --target=chrome100,firefox100,safari15 --charset=utf8 \
  --legal-comments=none --outfile="$out/report.min.js"
esbuild "$dir/report.css" --minify --target=chrome100,firefox100,safari15 --charset=utf8 \
  --outfile="$out/report.min.css"

# The hash the page's policy allows its one script by (so no other script runs).
node -e 'const c = require("crypto"), fs = require("fs");
  process.stdout.write(c.createHash("sha256").update(fs.readFileSync(process.argv[1])).digest("base64") + "\n")' \
  "$out/report.min.js" >"$out/report.min.js.sha256"

status=0
for f in report.min.js report.min.css report.min.js.sha256; do
  if $check; then
    if ! cmp -s "$out/$f" "$dir/$f"; then
      echo "build-assets: $dir/$f is not what the sources give; run scripts/build-assets.sh" >&2
      status=1
    fi
  else
    cp "$out/$f" "$dir/$f"
    echo "$dir/$f: $(wc -c <"$dir/$f") bytes"
  fi
done
exit $status
