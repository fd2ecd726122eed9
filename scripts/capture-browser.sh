#!/usr/bin/env bash
# Capture real browser CPU profiles of the slow/fast test page with headless Chromium.
#
# Usage: scripts/capture-browser.sh OUT_DIR
#
# Writes to OUT_DIR:
#   trace-fast.json.gz, trace-slow.json.gz
#       Trace Event JSON (object form: {"traceEvents":[...],"metadata":{...}}) recorded with
#       the DevTools protocol (Tracing.start / Tracing.end, categories
#       disabled-by-default-v8.cpu_profiler plus the DevTools timeline ones) while the page
#       calls window.runPlain() $RUNS times. Holds one Profile / ProfileChunk series per
#       renderer that ran JavaScript, keyed by (pid, id). Compressed with `gzip -9 -n`.
#   selfprof-fast.json, selfprof-slow.json
#       What window.runProfiled() returns: JSON.stringify of a JS Self-Profiling API trace
#       (Profiler.stop(): frames / resources / stacks / samples), written as-is.
#
# The page is capture-browser-page.html next to this script (a byte-for-byte copy of the
# shared fixture generator gen/page.html). `?v=fast` or `?v=slow` picks the variant; in slow,
# parseRecord runs its loop 3 times instead of once (in Chromium its self time about
# doubles, as it also pays a fixed cost per call for its string argument). The page is
# served from 127.0.0.1 by capture-browser-serve.py with the header
# `Document-Policy: js-profiling`, which the Self-Profiling API requires.
#
# Chromium writes trace JSON only in the object form (Tracing.start with streamFormat json,
# and also --trace-startup-format=json / --enable-tracing-format=json), so no array-form
# capture is made here.
#
# Prerequisites: chromium (Debian package `chromium`; the checked-in captures used 156),
# Node.js 20 (no npm packages), python3, gzip.
#
# Environment:
#   CHROMIUM  browser binary (default: chromium)
#   RUNS      runPlain() calls per trace capture (default: 5, which is about 2 s of work
#             for fast and 3.5 s for slow)
#   PORT      port for the page server (default: 8765; it appears in the captured URLs)
#
# Each capture starts a fresh browser with a temporary profile. Timings, pids and sample
# counts differ from run to run.

set -euo pipefail

if [ "$#" -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1
runs=${RUNS:-5}
port=${PORT:-8765}
export CHROMIUM=${CHROMIUM:-chromium}

mkdir -p "$out"
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

python3 "$here/capture-browser-serve.py" "$here/capture-browser-page.html" "$port" \
  >"$work/port" 2>"$work/serve.log" &
server_pid=$!
for _ in $(seq 100); do
  [ -s "$work/port" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "the page server did not start:" >&2
    cat "$work/serve.log" >&2
    exit 1
  fi
  sleep 0.1
done
if [ ! -s "$work/port" ]; then
  echo "the page server did not report its port" >&2
  exit 1
fi
page="http://127.0.0.1:$(cat "$work/port")/page.html"

"$CHROMIUM" --version 2>/dev/null || true
for variant in fast slow; do
  echo "trace-$variant.json.gz"
  node "$here/capture-browser-cdp.js" trace "$page?v=$variant" "$work/trace-$variant.json" "$runs"
  gzip -9 -n -c "$work/trace-$variant.json" >"$out/trace-$variant.json.gz"

  echo "selfprof-$variant.json"
  node "$here/capture-browser-cdp.js" selfprof "$page?v=$variant" "$out/selfprof-$variant.json"
done
