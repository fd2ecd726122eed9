// The program of the CPU gate benchmark (scripts/bench-cpu-gate.sh): ten functions of
// known weight, from about 100 ms of self time down to about 3 ms, called in turns so
// that a machine getting busier weighs on each alike.
//   node --cpu-prof --no-turbo-inlining cpu-gate-prog.js [SLOWDOWN]
// SLOWDOWN (default 0) is the share of extra work hot() does: 0.2 makes it 20% slower.
'use strict';
const slowdown = Number(process.argv[2] || '0');

function hot(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i) * Math.sin(i);
  return s;
}

function warm(n) {
  const a = [];
  for (let i = 0; i < n; i++) a.push(i % 7);
  return a.reduce((x, y) => x + y, 0);
}

function parse(n) {
  let s = 0;
  const text = 'key=value;other=1234;name=arkdiff;';
  for (let i = 0; i < n; i++) s += text.indexOf('=', i % 20) + text.charCodeAt(i % 30);
  return s;
}

function hash(n) {
  let h = 2166136261;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ (i & 255), 16777619);
  return h;
}

function sortRows(n) {
  const rows = [];
  for (let i = 0; i < n; i++) rows.push((i * 7919) % 10007);
  rows.sort((a, b) => a - b);
  return rows[0];
}

function format(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += String(i).length;
  return s;
}

function mapTable(n) {
  const m = new Map();
  for (let i = 0; i < n; i++) m.set(i % 512, i);
  return m.size;
}

function clamp(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.min(Math.max(i % 97, 10), 90);
  return s;
}

function tiny(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s ^= Math.imul(i, 31);
  return s;
}

function rare(n) {
  let s = 1;
  for (let i = 1; i < n; i++) s = (s * i) % 1000003;
  return s;
}

const work = {
  hot: Math.round(190000 * (1 + slowdown)),
  warm: 45000,
  parse: 60000,
  hash: 90000,
  sortRows: 2500,
  format: 20000,
  mapTable: 25000,
  clamp: 30000,
  tiny: 20000,
  rare: 12000,
};
let r = 0;
for (let k = 0; k < 60; k++) {
  r += hot(work.hot);
  r += warm(work.warm);
  r += parse(work.parse);
  r += hash(work.hash);
  r += sortRows(work.sortRows);
  r += format(work.format);
  r += mapTable(work.mapTable);
  r += clamp(work.clamp);
  r += tiny(work.tiny);
  r += rare(work.rare);
}
if (r === 42) console.log(r);
