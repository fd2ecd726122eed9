#!/usr/bin/env bash
# Rebuilds the fuzz targets' seed corpora (fuzz/seeds/TARGET/) from the project's test
# data; see fuzz/README.md for where each seed comes from. Needs cargo and Node.js.
set -euo pipefail
cd "$(dirname "$0")/.."
data=tests/data
seeds=fuzz/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{htrace,heapsnapshot,cpuprofile,trace_event,selfprof,capture}

cargo build --quiet --example bench-inputs
inputs=target/debug/examples/bench-inputs

# Heap snapshots: twelve real ArkTS snapshots (small, some cut short by the device) and
# a synthetic V8 snapshot with every edge kind.
cp "$data"/arkts-real/snapshot-{1,2,5,8,12}.heapsnapshot "$seeds/heapsnapshot/"
"$inputs" snapshot 40 "$seeds/heapsnapshot/synthetic-40.heapsnapshot" 2>/dev/null

# htrace: a real non-ArkTS capture; two snapshots in 256-byte chunks with a CPU profile
# message; a synthetic snapshot pair in 1 KB chunks.
cp "$data/pbreader_ffrt.htrace" "$seeds/htrace/"
HTRACE_CHUNK=256 "$inputs" htrace "$seeds/htrace/arkts-2-snapshots-cpu.htrace" \
    "$data"/arkts-real/snapshot-{1,2}.heapsnapshot "$data/arkts-real/profile-1.cpuprofile" 2>/dev/null
"$inputs" snapshot 30 /tmp/arkdiff-seed-30.heapsnapshot 2>/dev/null
"$inputs" snapshot 36 /tmp/arkdiff-seed-36.heapsnapshot 2>/dev/null
HTRACE_CHUNK=1024 "$inputs" htrace "$seeds/htrace/synthetic-pair.htrace" \
    /tmp/arkdiff-seed-30.heapsnapshot /tmp/arkdiff-seed-36.heapsnapshot 2>/dev/null
rm -f /tmp/arkdiff-seed-30.heapsnapshot /tmp/arkdiff-seed-36.heapsnapshot

# CPU profiles: a Node.js profile, an ArkTS one, and ArkTS protocol messages.
cp "$data/fast.cpuprofile" "$data/arkts-real/profile-1.cpuprofile" "$seeds/cpuprofile/"
cp "$data/arkts-real/messages-1.jsonl" "$seeds/cpuprofile/"

# Trace Event JSON: the Chromium trace's CPU profile events and thread names only.
gunzip -c "$data/web/chrome-trace-fast.json.gz" | node -e '
let text = "";
process.stdin.on("data", (d) => (text += d));
process.stdin.on("end", () => {
  const t = JSON.parse(text);
  const keep = t.traceEvents.filter((e) => e.name === "Profile" || e.name === "ProfileChunk" ||
    (e.ph === "M" && e.name === "thread_name" && e.pid === 17026));
  process.stdout.write(JSON.stringify({ traceEvents: keep }));
});' >"$seeds/trace_event/chrome-profile-events.json"

# JS Self-Profiling traces.
cp "$data"/web/selfprof-{fast,slow}.json "$seeds/selfprof/"

# The whole input path: one seed of each format, gzip-wrapped too, and a baseline.
cp "$seeds/htrace/synthetic-pair.htrace" "$seeds/heapsnapshot/synthetic-40.heapsnapshot" \
    "$data/arkts-real/profile-1.cpuprofile" "$data/web/selfprof-fast.json" "$seeds/capture/"
gzip -9 -n -c "$seeds/heapsnapshot/snapshot-2.heapsnapshot" >"$seeds/capture/snapshot-2.heapsnapshot.gz"
cargo run --quiet -- summarize "$seeds/heapsnapshot/synthetic-40.heapsnapshot" \
    -o "$seeds/capture/baseline.json"
ls -l "$seeds"/*
