#!/usr/bin/env bash
# Rebuilds the fuzz targets' seed corpora (fuzz/seeds/TARGET/) from the project's test
# data; see fuzz/README.md for where each seed comes from. Needs cargo and Node.js. The
# seeds are made in a scratch directory and replace fuzz/seeds only once all are made.
set -euo pipefail
cd "$(dirname "$0")/.."
data=tests/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seeds="$work/seeds"
mkdir -p "$seeds"/{htrace,heapsnapshot,cpuprofile,trace_event,selfprof,capture,rawheap,heapprofile}

inputs() { cargo run --quiet --example bench-inputs -- "$@"; }

# Heap snapshots: five real ArkTS snapshots (small, some cut short by the device) and a
# synthetic V8 snapshot with every edge kind.
cp "$data"/arkts-real/snapshot-{1,2,5,8,12}.heapsnapshot "$seeds/heapsnapshot/"
inputs snapshot 40 "$seeds/heapsnapshot/synthetic-40.heapsnapshot"

# htrace: a real non-ArkTS capture; two snapshots in 256-byte chunks with a CPU profile
# message; a synthetic snapshot pair in 1 KB chunks.
cp "$data/pbreader_ffrt.htrace" "$seeds/htrace/"
HTRACE_CHUNK=256 inputs htrace "$seeds/htrace/arkts-2-snapshots-cpu.htrace" \
    "$data"/arkts-real/snapshot-{1,2}.heapsnapshot "$data/arkts-real/profile-1.cpuprofile"
inputs snapshot 30 "$work/30.heapsnapshot"
inputs snapshot 36 "$work/36.heapsnapshot"
HTRACE_CHUNK=1024 inputs htrace "$seeds/htrace/synthetic-pair.htrace" \
    "$work/30.heapsnapshot" "$work/36.heapsnapshot"

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

# Rawheaps: the synthetic 40-node snapshot as version 1 and 2, plain and with every
# optional part (header strings, root groups, global references, hashes in the ids), laid
# out as the VM's writer lays them out; and version 2 laid out sorted.
for v in 1 2; do
    inputs rawheap "$v" "$seeds/heapsnapshot/synthetic-40.heapsnapshot" "$seeds/rawheap/synthetic-40-v$v.rawheap"
    RAWHEAP_PARTS=1 inputs rawheap "$v" "$seeds/heapsnapshot/synthetic-40.heapsnapshot" \
        "$seeds/rawheap/synthetic-40-v$v-parts.rawheap"
done
inputs rawheap 2 "$seeds/heapsnapshot/synthetic-40.heapsnapshot" \
    "$seeds/rawheap/synthetic-40-v2-sorted.rawheap" sorted

# Sampling heap profiles: a node --heap-prof run, an inspector-protocol recording and the
# bundle's profile (each under 40 KB uncompressed).
gunzip -c "$data/heapprof/base/run01.heapprofile.gz" >"$seeds/heapprofile/run01.heapprofile"
gunzip -c "$data/heapprof/cdp-base.heapprofile.gz" >"$seeds/heapprofile/cdp-base.heapprofile"
gunzip -c "$data/bundle/main.heapprofile.gz" >"$seeds/heapprofile/bundle.heapprofile"

# JS Self-Profiling traces.
cp "$data"/web/selfprof-{fast,slow}.json "$seeds/selfprof/"

# The whole input path: one seed of each format, a gzip-wrapped snapshot, and a baseline.
cp "$seeds/htrace/synthetic-pair.htrace" "$seeds/heapsnapshot/synthetic-40.heapsnapshot" \
    "$data/arkts-real/profile-1.cpuprofile" "$data/web/selfprof-fast.json" \
    "$seeds/trace_event/chrome-profile-events.json" "$seeds/rawheap/synthetic-40-v2-parts.rawheap" \
    "$seeds/heapprofile/cdp-base.heapprofile" "$seeds/capture/"
gzip -9 -n -c "$seeds/heapsnapshot/snapshot-2.heapsnapshot" >"$seeds/capture/snapshot-2.heapsnapshot.gz"
# (From the scratch directory, so that the baseline names its source the same each time.)
root=$PWD
(cd "$work" && cargo run --quiet --manifest-path "$root/Cargo.toml" -- summarize \
    seeds/heapsnapshot/synthetic-40.heapsnapshot -o seeds/capture/baseline.json)

rm -rf fuzz/seeds
cp -r "$seeds" fuzz/seeds
ls -l fuzz/seeds/*
