// The program of the run-set tests (tests/data/README.md): three functions of known
// weight. `node prog.js VARIANT [SLOWDOWN]`: base; slow (hot does SLOWDOWN more work,
// default 0.2); tiny (only tiny changes, by +30% of its little work).
'use strict';
const variant = process.argv[2] || 'base';
const slowdown = Number(process.argv[3] || '0.2');

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

function tiny(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s ^= Math.imul(i, 31);
  return s;
}

const hotWork = Math.round(250000 * (variant === 'slow' ? 1 + slowdown : 1));
const tinyWork = Math.round(100000 * (variant === 'tiny' ? 1.3 : 1));
let r = 0;
for (let k = 0; k < 20; k++) {
  r += hot(hotWork);
  r += warm(60000);
  r += tiny(tinyWork);
}
if (r === 42) console.log(r);
