#!/usr/bin/env bash
# Minifies the HTML report's script and style into the files the binary embeds
# (src/report/html/report.min.{js,css}), with a pinned esbuild from npm.
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

status=0
for f in report.min.js report.min.css; do
  if $check; then
    if ! cmp -s "$out/$f" "$dir/$f"; then
      echo "build-assets: $dir/$f is not what $dir/${f/.min/} gives; run scripts/build-assets.sh" >&2
      status=1
    fi
  else
    cp "$out/$f" "$dir/$f"
    echo "$dir/$f: $(wc -c <"$dir/$f") bytes (from $(wc -c <"$dir/${f/.min/}"))"
  fi
done
exit $status
