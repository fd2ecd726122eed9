// Runs the bundle of the source-map tests (dist/main.js) with allocation tracking on,
// through node:inspector, and writes two heap snapshots of one process to OUT_DIR:
//   base.heapsnapshot  after the bundle is loaded and has run ROUNDS rounds
//   head.heapsnapshot  after it was loaded a second time (its module evaluated again, as a
//                      reload does) and has run ROUNDS more
// so that HEAD's new objects (carts, line items, receipts, products, and the reloaded
// module's closures) carry allocation stacks through the bundle's functions. Each load's
// `shop` function is kept in a list of listeners here (and `globalThis.app` dropped), so
// that the carts are held through the bundle's closure `shop` and its context: their
// retainer paths pass through `Function l` at its bundle position.
//   node tests/data/bundle/gen/track.js OUT_DIR [ROUNDS]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const inspector = require('node:inspector');

const [out, rounds = '2'] = process.argv.slice(2);
const bundle = path.join(__dirname, '..', 'dist', 'main.js');
const session = new inspector.Session();
session.connect();

function post(method, params) {
  let error;
  session.post(method, params, (e) => { error = e; });
  if (error) throw error;
}

function snapshot(file) {
  const chunks = [];
  const take = (m) => chunks.push(m.params.chunk);
  session.on('HeapProfiler.addHeapSnapshotChunk', take);
  post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  session.removeListener('HeapProfiler.addHeapSnapshotChunk', take);
  fs.writeFileSync(path.join(out, file), chunks.join(''));
}

const listeners = [];
function load() {
  delete require.cache[bundle];
  process.argv[2] = rounds;
  require(bundle);
  listeners.push(globalThis.app.shop);
  delete globalThis.app;
}

post('HeapProfiler.enable');
post('HeapProfiler.startTrackingHeapObjects', { trackAllocations: true });
load();
snapshot('base.heapsnapshot');
load();
snapshot('head.heapsnapshot');
post('HeapProfiler.stopTrackingHeapObjects', { reportProgress: false });
session.disconnect();
