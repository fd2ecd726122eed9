// The program of the heap-profile tests (tests/data/README.md): functions that allocate
// known amounts. `node prog.js VARIANT`: base, or head (makeOrders allocates 3x as much).
// Run under `node --heap-prof`, which writes the objects still live at exit, so what is
// allocated is kept (in globalThis) to the end. `node prog.js VARIANT cdp OUT` records the
// same work in-process over the inspector protocol instead, counting the objects the
// garbage collector took too (the allocation rate), keeps nothing, and writes the profile
// that HeapProfiler.getSamplingProfile returned to OUT.
'use strict';
const variant = process.argv[2] || 'base';
const cdpOut = process.argv[3] === 'cdp' ? process.argv[4] : null;
const kept = (globalThis.kept = []);

function keep(x) {
  if (cdpOut === null) kept.push(x);
  return x;
}

// The function whose allocation grows: 3x in head.
function makeOrders(n) {
  for (let i = 0; i < n; i++) keep({ id: i, sku: 'sku-' + i, qty: [i & 7, i & 3] });
}

// The same in both variants.
function buildIndex(n) {
  const index = new Map();
  for (let i = 0; i < n; i++) index.set('key-' + i, { at: i });
  keep(index);
}

// A few hundred KiB: sampling makes it noisy from run to run.
function smallCache(n) {
  for (let i = 0; i < n; i++) keep([i, i + 1]);
}

// Recursive: each level allocates, so its total counts a sample once per stack.
function nest(depth) {
  keep(new Array(24).fill(depth));
  if (depth > 0) nest(depth - 1);
}

function work() {
  const orders = variant === 'head' ? 3 * 40000 : 40000;
  for (let round = 0; round < 10; round++) {
    makeOrders(orders / 10);
    buildIndex(3000);
    smallCache(800);
    nest(60);
  }
}

// The sampling heap profiler names a function's script only while the script is alive:
// keeping the functions keeps it, so their frames have a url and a line at exit.
globalThis.functions = [keep, makeOrders, buildIndex, smallCache, nest, work];

if (cdpOut === null) {
  work();
} else {
  const inspector = require('node:inspector');
  const fs = require('node:fs');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  (async () => {
    await post('HeapProfiler.enable');
    await post('HeapProfiler.startSampling', {
      samplingInterval: 32768,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    work();
    const { profile } = await post('HeapProfiler.getSamplingProfile');
    await post('HeapProfiler.stopSampling');
    fs.writeFileSync(cdpOut, JSON.stringify(profile));
    session.disconnect();
  })();
}
