// Makes real V8 heap snapshots of one Node.js process for arkdiff's benchmarks.
//
//   node --max-old-space-size=8000 heap-workload.js OUT_DIR BASE_RECORDS GROWTH_RECORDS [PHASES]
//
// Phase 0 builds BASE_RECORDS long-lived records (a Map of objects with a string, an
// array and a closure each, the shapes of an app's model); every later phase adds
// GROWTH_RECORDS more and churns short-lived buffers that are freed before the snapshot.
// Each phase ends with v8.writeHeapSnapshot(OUT_DIR/heap-<phase>.heapsnapshot), whose path
// is printed. About 0.87 KB of snapshot text per record: 310000 and 40000 give snapshots
// of about 270 and 305 MB.
'use strict';
const v8 = require('node:v8');
const path = require('node:path');
const { EventEmitter } = require('node:events');

const [out, baseArg, growthArg, phasesArg] = process.argv.slice(2);
if (!out || !baseArg || !growthArg) {
  console.error('usage: heap-workload.js OUT_DIR BASE_RECORDS GROWTH_RECORDS [PHASES]');
  process.exit(2);
}
const base = Number(baseArg);
const growth = Number(growthArg);
const phases = Number(phasesArg || 2);

class Session { constructor(i) { this.id = i; this.user = 'user-' + i + '-' + 'u'.repeat(48); this.scopes = [i, i + 1, i + 2]; } }
class Scratch { constructor(i) { this.cells = new Array(24).fill(i); } }

const sessions = new Map();
const bus = new EventEmitter();
bus.setMaxListeners(0);
let seq = 0;

function add(n) {
  let scratch = [];
  for (let i = 0; i < n; i++) {
    scratch.push(new Scratch(i));
    const s = new Session(seq++);
    sessions.set(s.id, s);
    bus.on('expire', function onExpire() { return s.id; });
  }
  scratch = null;
}

for (let p = 0; p < phases; p++) {
  add(p === 0 ? base : growth);
  console.log(v8.writeHeapSnapshot(path.join(out, `heap-${p}.heapsnapshot`)));
}
