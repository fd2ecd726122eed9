// Two heap snapshots of one Node.js process for arkdiff's DOM-state tests
// (tests/data/README.md, "Detached DOM"):
//
//   node tests/data/gen/dom-node.js OUT_DIR
//
// writes OUT_DIR/dom-node-0.heapsnapshot and OUT_DIR/dom-node-1.heapsnapshot, through
// node:inspector (HeapProfiler.takeHeapSnapshot, after HeapProfiler.collectGarbage), so that
// the `v8` module is not loaded before the first one. Between the two, the program loads
// built-in modules whose bindings keep their state in native objects (a `BindingData` with
// the typed arrays it shares with JavaScript: `v8`'s heap statistics, `perf_hooks`'
// milestones, `http`'s parser), opens a `dns` resolver (a `ChannelWrap`) and keeps a
// MessageChannel. Node.js marks such binding objects detached in its snapshots, and DevTools
// passes that state on to the native objects they hold.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const inspector = require('node:inspector/promises');

const out = process.argv[2];
if (!out) {
  console.error('usage: node dom-node.js OUT_DIR');
  process.exit(2);
}
fs.mkdirSync(out, { recursive: true });

const session = new inspector.Session();
session.connect();

async function snapshot(name) {
  const fd = fs.openSync(path.join(out, name), 'w');
  const write = (m) => fs.writeSync(fd, m.params.chunk);
  session.on('HeapProfiler.addHeapSnapshotChunk', write);
  try {
    await session.post('HeapProfiler.collectGarbage');
    await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  } finally {
    session.removeListener('HeapProfiler.addHeapSnapshotChunk', write);
    fs.closeSync(fd);
  }
}

async function main() {
  await snapshot('dom-node-0.heapsnapshot');
  const kept = [];
  for (const name of ['node:v8', 'node:perf_hooks', 'node:http', 'node:zlib', 'node:crypto', 'node:worker_threads', 'node:os']) {
    kept.push(require(name));
  }
  kept.push(new (require('node:dns').Resolver)());
  const channel = new (require('node:worker_threads').MessageChannel)();
  kept.push(channel);
  await snapshot('dom-node-1.heapsnapshot');
  session.disconnect();
  channel.port1.close();
  return kept.length;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
