#!/usr/bin/env node
// Runs memlab on the leak captures of capture-leaks.mjs and writes what it reports, as the
// expected data of arkdiff's leak clusters (tests/data/web/leaks/memlab-expected.json).
//
//   node tests/browser/memlab-expected.mjs --memlab DIR/node_modules/.bin/memlab \
//       --captures tests/data/web/leaks --out tests/data/web/leaks/memlab-expected.json
//
// memlab comes from npm (in a scratch directory: PUPPETEER_SKIP_DOWNLOAD=1 npm install
// memlab@2.0.5); it reads the snapshot files and needs no browser. For each step of the
// web scenario (web-00 … web-08: the final snapshot of one step is the baseline of the
// next), `memlab find-leaks --baseline B --target T --final F` with memlab's defaults; for
// the oversized step also with `--trace-object-size-above 1000000` (memlab's example of an
// oversized object); `memlab analyze string` and `analyze object-shallow` on plateau-1.
// Each cluster of memlab's report (data/out/leaks.txt in its work directory) is written
// with its count, retained size (as memlab prints it) and trace, node ids included; every
// run with its wall-clock time.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    memlab: { type: 'string' },
    captures: { type: 'string' },
    out: { type: 'string' },
  },
});
if (!values.memlab || !values.captures || !values.out) {
  process.stderr.write('usage: memlab-expected.mjs --memlab PATH --captures DIR --out FILE\n');
  process.exit(2);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memlab-expected-'));
/** The capture NAME unpacked into the work directory (memlab reads plain files). */
function plain(name) {
  const file = path.join(work, `${name}.heapsnapshot`);
  if (!fs.existsSync(file)) {
    fs.writeFileSync(file, zlib.gunzipSync(fs.readFileSync(path.join(values.captures, `${name}.heapsnapshot.gz`))));
  }
  return file;
}

function memlab(args) {
  const started = Date.now();
  const r = spawnSync(values.memlab, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = Date.now() - started;
  if (r.status !== 0) throw new Error(`memlab ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  // memlab draws progress with escape codes and carriage returns.
  const text = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*[a-zA-Z]/g, '').replace(/\r/g, '\n');
  return { ms, text };
}

// "[Window / file://] (native) @36219 [2KB]", "[Detached <div> (native) @57987 [104 bytes]"
const NODE = /^\[(.*?)\]? \(([a-z ]+)\) @(\d+) \[([^\]]+)\]$/;
// "  --__injectedValue (property)--->  [Array] (object) @57271 [2.5KB]"
const STEP = /^\s*--(.*) \(([a-z]+)\)--->\s+(.*)$/;

/** The clusters of memlab's leaks.txt. */
function clusters(text) {
  const out = [];
  let cluster = null;
  for (const line of text.split('\n')) {
    const count = line.match(/^--Similar leaks in this run: (\d+)--$/);
    if (count) {
      cluster = { count: Number(count[1]), retained: null, steps: [] };
      out.push(cluster);
      continue;
    }
    const retained = line.match(/^--Retained size of leaked objects: (.+)--$/);
    if (retained && cluster) {
      cluster.retained = retained[1];
      continue;
    }
    if (!cluster || !line.trim()) continue;
    const step = line.match(STEP);
    const nodeText = step ? step[3] : line.trim();
    const node = nodeText.match(NODE);
    if (!node) continue;
    cluster.steps.push({
      edge: step ? step[1] : null,
      edge_type: step ? step[2] : null,
      node: node[1],
      node_type: node[2],
      id: Number(node[3]),
      retained: node[4],
    });
  }
  return out;
}

function findLeaks(name, baseline, target, final, extra = []) {
  const dir = path.join(work, `run-${name}`);
  fs.mkdirSync(dir);
  const args = ['find-leaks', '--baseline', plain(baseline), '--target', plain(target), '--final', plain(final), '--work-dir', dir, ...extra];
  const { ms } = memlab(args);
  const report = fs.readFileSync(path.join(dir, 'data', 'out', 'leaks.txt'), 'utf8');
  return {
    name,
    baseline,
    target,
    final,
    command: `memlab ${['find-leaks', '--baseline', `${baseline}.heapsnapshot`, '--target', `${target}.heapsnapshot`, '--final', `${final}.heapsnapshot`, ...extra].join(' ')}`,
    ms,
    clusters: clusters(report),
  };
}

/** "·[200KB, 10000]: "duplicated string value0"" lines after a heading. */
function topList(text, heading) {
  const at = text.indexOf(heading);
  if (at < 0) return [];
  const items = [];
  for (const line of text.slice(at + heading.length).split('\n').slice(1)) {
    const m = line.match(/^\s*·\[([^,\]]+), ([^\]]+)\]: (.*)$/);
    if (m) items.push({ size: m[1], count: m[2], value: m[3] });
    else if (!/^\s+node examples/.test(line) && line.trim()) break;
  }
  return items;
}

function analyze(kind, snapshot) {
  const { ms, text } = memlab(['analyze', kind, '--snapshot', plain(snapshot)]);
  return {
    command: `memlab analyze ${kind} --snapshot ${snapshot}.heapsnapshot`,
    ms,
    top_in_size: topList(text, kind === 'string' ? 'Top duplicated strings in size:' : 'Top duplicated objects in size:'),
  };
}

const version = memlab(['version']).text.match(/memlab\/cli@([\d.]+)/)?.[1] ?? null;
const steps = [
  ['detached', 'web-00', 'web-01', 'web-02'],
  ['tagged', 'web-02', 'web-03', 'web-04'],
  ['table', 'web-04', 'web-05', 'web-06'],
  ['oversized', 'web-06', 'web-07', 'web-08'],
];
const runs = steps.map(([name, b, t, f]) => findLeaks(name, b, t, f));
runs.push(findLeaks('oversized-1MB', 'web-06', 'web-07', 'web-08', ['--trace-object-size-above', '1000000']));
const expected = {
  memlab: version,
  machine: `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), shared with other work; node ${process.version}`,
  runs,
  duplicates: {
    strings: analyze('string', 'plateau-1'),
    objects: analyze('object-shallow', 'plateau-1'),
  },
};
fs.writeFileSync(values.out, `${JSON.stringify(expected, null, 2)}\n`);
fs.rmSync(work, { recursive: true, force: true });
process.stdout.write(`wrote ${values.out}: ${runs.map((r) => `${r.name} ${r.clusters.length} clusters ${r.ms} ms`).join(', ')}\n`);
