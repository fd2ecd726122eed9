// Chrome DevTools' own heap snapshot diff (npm heap-snapshot-toolkit, diffFromStreams) on
// two files, for arkdiff's benchmark: the peer that arkdiff's pair diff is timed against.
//
//   node --max-old-space-size=16000 devtools-diff.mjs NODE_MODULES BASE.heapsnapshot HEAD.heapsnapshot
//
// Prints one line: the number of classes in the diff and their summed count and size
// deltas, so that a run can be checked against arkdiff's totals. When the toolkit gives up
// without an error, it says so on stderr.
import { createReadStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [modules, basePath, headPath] = process.argv.slice(2);
if (!modules || !basePath || !headPath) {
  console.error('usage: devtools-diff.mjs NODE_MODULES BASE HEAD');
  process.exit(2);
}
const toolkit = await import(pathToFileURL(path.join(modules, 'heap-snapshot-toolkit', 'index.js')));
// What the toolkit was doing, for the message when it stops without a result or an error
// (then Node.js exits with code 13 and would print nothing).
let phase = 'reading BASE';
process.on('exit', () => {
  if (!diff) console.error(`devtools diff: no result: the toolkit stopped while ${phase}, without an error`);
});
let diff;
for await (const item of toolkit.diffFromStreams(createReadStream(basePath), createReadStream(headPath))) {
  if (item.type === 'start') phase = 'reading HEAD';
  if (item.type === 'end') phase = 'comparing';
  if (item.type === 'diff') diff = item.result;
}
let classes = 0, countDelta = 0, sizeDelta = 0;
for (const d of Object.values(diff)) {
  classes++;
  countDelta += d.countDelta;
  sizeDelta += d.sizeDelta;
}
console.log(`devtools diff: ${classes} classes, count delta ${countDelta}, size delta ${sizeDelta}`);
