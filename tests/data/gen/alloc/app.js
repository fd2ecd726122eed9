// Allocation-site workload for arkdiff's tests: leaks allocated in distinct functions and
// files, a closure-held leak and per-iteration churn, captured through `node:inspector`
// with allocation tracking on (what DevTools' "Allocation instrumentation on timeline"
// does: HeapProfiler.startTrackingHeapObjects {trackAllocations: true}).
//
//   node app.js OUT series SNAPSHOTS ITERATIONS N
//   node app.js OUT timeline ITERATIONS N
//
// Each iteration of the workload:
// - placeOrder (this file) makes N Order objects, kept in the Map `orders`;
// - recordAudit (audit.js) makes N AuditEntry objects, kept only by the array that the
//   closure `recordAudit` captures;
// - subscribe (this file) adds N listeners `onTick` to the EventEmitter `bus`, each a
//   closure holding its Order;
// - churn (this file) makes N Scratch objects and drops them (not a leak).
//
// series: tracking starts, then SNAPSHOTS snapshots are taken with
// HeapProfiler.takeHeapSnapshot, with ITERATIONS iterations run straight through before
// each but the first: OUT/alloc-K.heapsnapshot.
// timeline: tracking starts, then ITERATIONS iterations each followed by a 60 ms wait, so
// that the inspector's 50 ms timer records a sample (timestamp, last assigned object id)
// between any two; the recording ends with HeapProfiler.stopTrackingHeapObjects
// {reportProgress: true}, which takes the final snapshot with the allocation trace, as
// DevTools ends a timeline recording and as the ArkTS plugin's TIMELINE mode does:
// OUT/alloc-timeline.heapsnapshot.
//
// V8 drops the trace of an object that moves after it was given an id (the 50 ms timer
// gives every live object one), so in the timeline most survivors carry no trace; the
// series, with no wait inside an interval, keeps them.
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');
const { EventEmitter } = require('node:events');
const { makeAuditor } = require('./audit.js');

const out = process.argv[2] || '.';
const mode = process.argv[3] || 'series';
const timeline = mode === 'timeline';
const snapshots = timeline ? 1 : Number(process.argv[4] || 3);
const iterations = Number(process.argv[timeline ? 4 : 5] || 4);
const N = Number(process.argv[timeline ? 5 : 6] || 200);

class Order {
  constructor(id) {
    this.id = id;
    this.items = [id, id + 1];
  }
}
class Scratch {
  constructor(i) {
    this.buf = [i, i, i, i];
  }
}

const orders = new Map();
const bus = new EventEmitter();
bus.setMaxListeners(0);
const recordAudit = makeAuditor();
let seq = 0;

function placeOrder(id) {
  const order = new Order(id);
  orders.set(id, order);
  return order;
}

function subscribe(order) {
  bus.on('tick', function onTick() { return order.id; });
}

function churn() {
  let scratch = [];
  for (let i = 0; i < N; i++) scratch.push(new Scratch(i));
  scratch = null;
}

function iteration() {
  for (let i = 0; i < N; i++) {
    const order = placeOrder(seq++);
    recordAudit(order);
    subscribe(order);
  }
  churn();
}

const session = new inspector.Session();
session.connect();
const post = (method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params || {}, (err, res) => (err ? reject(err) : resolve(res))));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let chunks = [];
session.on('HeapProfiler.addHeapSnapshotChunk', (m) => chunks.push(m.params.chunk));

function save(name) {
  const file = path.join(out, `alloc-${name}.heapsnapshot`);
  fs.writeFileSync(file, chunks.join(''));
  chunks = [];
  console.log(file);
}

async function series() {
  for (let k = 0; k < snapshots; k++) {
    if (k > 0) for (let j = 0; j < iterations; j++) iteration();
    await post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    save(k);
  }
}

async function recording() {
  await sleep(120);
  for (let j = 0; j < iterations; j++) {
    iteration();
    await sleep(60);
  }
  await post('HeapProfiler.stopTrackingHeapObjects', { reportProgress: true });
  save('timeline');
}

(async () => {
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startTrackingHeapObjects', { trackAllocations: true });
  await (timeline ? recording() : series());
  session.disconnect();
})();
