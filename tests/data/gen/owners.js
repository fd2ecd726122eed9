// Leak shapes for arkdiff's leak-owner tests: writes one V8 heap snapshot per phase.
//
//   node owners.js OUT PHASES ITERATIONS N
//
// Every phase after the first runs ITERATIONS iterations of one action. Each iteration:
// - adds N Session objects to the Set `app.sessions` (a Set on the module's object);
// - pushes N log lines into `lines`, an array only a closure (`log`) captures;
// - adds N listeners to `hub` (an EventEmitter, event `data`), each holding a Widget;
// - keeps N Job objects in the Map `jobs` of one long-lived interval timer (a timer
//   holding objects);
// - puts N entries into a bounded LRU cache (a Map kept at CACHE entries: filled before
//   the first snapshot, then entries are only replaced) - not a leak;
// - makes and drops N Scratch objects (per-iteration churn) - not a leak.
const v8 = require('node:v8');
const path = require('node:path');
const { EventEmitter } = require('node:events');

const out = process.argv[2] || '.';
const phases = Number(process.argv[3] || 4);
const iterations = Number(process.argv[4] || 2);
const N = Number(process.argv[5] || 250);
const CACHE = 1000;

class Session { constructor(i) { this.id = i; this.user = 'user-' + i; this.started = [i, i]; } }
class Widget { constructor(i) { this.id = i; this.label = 'widget-' + i; } }
class Job { constructor(i) { this.id = i; this.args = [i, i + 1]; } }
class CacheEntry { constructor(i) { this.key = i; this.value = 'v' + i; } }
class Scratch { constructor(i) { this.buf = [i, i, i, i]; } }

const app = { sessions: new Set() };
const log = (() => { const lines = []; return (text) => { lines.push(text); }; })();
const hub = new EventEmitter();
hub.setMaxListeners(0);
hub.on('data', () => {}); // two listeners: the listener array exists from the start
hub.on('data', () => {});
const timer = setInterval(function poll() { return this.jobs.size; }, 1 << 30);
timer.jobs = new Map();
const cache = new Map();
let seq = 0;

function cachePut(key) {
  if (cache.has(key)) cache.delete(key);
  cache.set(key, new CacheEntry(key));
  if (cache.size > CACHE) cache.delete(cache.keys().next().value);
}
for (let i = 0; i < CACHE; i++) cachePut(i);

function iteration() {
  let scratch = [];
  for (let i = 0; i < N; i++) {
    const n = seq++;
    app.sessions.add(new Session(n));
    log('line ' + n + ' ' + 'x'.repeat(24));
    const w = new Widget(n);
    hub.on('data', () => w.id);
    timer.jobs.set(n, new Job(n));
    cachePut(CACHE + n);
    scratch.push(new Scratch(n));
  }
  scratch = null;
}

for (let p = 0; p < phases; p++) {
  if (p > 0) for (let k = 0; k < iterations; k++) iteration();
  const f = v8.writeHeapSnapshot(path.join(out, `owners-${p}.heapsnapshot`));
  console.log(f);
}
clearInterval(timer);
